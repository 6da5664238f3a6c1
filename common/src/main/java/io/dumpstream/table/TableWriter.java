package io.dumpstream.table;

import io.dumpstream.schema.DumpOutcome;
import io.dumpstream.schema.RejectedRecord;
import io.dumpstream.schema.TensorSnapshot;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;
import org.apache.parquet.hadoop.ParquetWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the three output tables of the offline driver under one root (CONTRACT §6), one open
 * Parquet file per partition directory.
 *
 * <p>A file is written as {@code .part-<uuid>.parquet.inprogress} (hidden from readers and from
 * {@code **}{@code /*.parquet}) and renamed atomically to {@code part-<uuid>.parquet} once
 * complete, on {@link #commit()} / {@link #close()} or earlier when memory asks for it: the
 * writer tracks {@link ParquetWriter#getDataSize()} of every open file and, while the total is
 * above {@link Options#openBytesBudget()}, commits the largest open file (a later row of that
 * partition starts a new file). At most {@link Options#maxOpenFiles()} files are open; beyond
 * that the least recently written one is committed.
 *
 * <p>Paths are built only by {@link HivePartition} and checked to stay under the root. Not
 * thread-safe. After a failed write or commit, only {@link #abort()} is allowed.
 */
public final class TableWriter implements Closeable {

    private static final Logger LOG = LoggerFactory.getLogger(TableWriter.class);

    /** Default {@link Options#openBytesBudget()}: 128 MiB. */
    public static final long DEFAULT_OPEN_BYTES_BUDGET = 128L << 20;
    /** Default {@link Options#maxOpenFiles()}. */
    public static final int DEFAULT_MAX_OPEN_FILES = 64;

    static final String IN_PROGRESS_PREFIX = ".part-";
    static final String IN_PROGRESS_SUFFIX = ".parquet.inprogress";
    static final String PART_PREFIX = "part-";
    static final String PART_SUFFIX = ".parquet";

    /**
     * @param parquet writer settings of every file
     * @param openBytesBudget most bytes (written plus buffered, summed over open files) before the largest file is committed
     * @param maxOpenFiles most files open at once
     */
    public record Options(ParquetWriters.Settings parquet, long openBytesBudget, int maxOpenFiles) {

        public Options {
            Objects.requireNonNull(parquet, "parquet");
            if (openBytesBudget < 1) {
                throw new IllegalArgumentException("openBytesBudget must be positive: " + openBytesBudget);
            }
            if (maxOpenFiles < 1) {
                throw new IllegalArgumentException("maxOpenFiles must be positive: " + maxOpenFiles);
            }
        }

        /** Default Parquet settings, 128 MiB budget, 64 open files. */
        public static Options defaults() {
            return new Options(ParquetWriters.Settings.defaults(), DEFAULT_OPEN_BYTES_BUDGET, DEFAULT_MAX_OPEN_FILES);
        }

        public Options withParquet(ParquetWriters.Settings value) {
            return new Options(value, openBytesBudget, maxOpenFiles);
        }

        public Options withOpenBytesBudget(long value) {
            return new Options(parquet, value, maxOpenFiles);
        }

        public Options withMaxOpenFiles(int value) {
            return new Options(parquet, openBytesBudget, value);
        }
    }

    private final Path root;
    private final Options options;
    /** Access order, so the first entry is the least recently written file. */
    private final LinkedHashMap<String, OpenFile<?>> open = new LinkedHashMap<>(16, 0.75f, true);
    private final List<Path> committed = new ArrayList<>();
    private Published published = (file, relative) -> { };
    private long openBytes;
    private boolean failed;
    private boolean closed;

    /** Creates the root directory if needed. */
    public TableWriter(Path root, Options options) throws IOException {
        this.root = root.toAbsolutePath().normalize();
        this.options = Objects.requireNonNull(options, "options");
        Files.createDirectories(this.root);
    }

    /** Receives each file once it is committed under the root (e.g. to upload it to object storage). */
    @FunctionalInterface
    public interface Published {
        /**
         * @param file the committed file
         * @param relative its path below the root, {@code /}-separated (the partition directories as written)
         */
        void published(Path file, String relative) throws IOException;
    }

    /** Calls {@code listener} after each commit; a failure of the listener fails the writer like a failed commit. */
    public TableWriter onPublished(Published listener) {
        this.published = Objects.requireNonNull(listener, "listener");
        return this;
    }

    /** Appends an accepted record to {@code snapshots/run=<runId>/rank=<rank>/stage=<stage>}. */
    public void write(TensorSnapshot row, String runId, int rank, String stage) throws IOException {
        append(HivePartition.snapshots(runId, rank, stage), TensorSnapshot.class, row);
    }

    /** Appends a dump outcome to {@code dumps/run=<runId>/rank=<rank>}; a null rank is the default partition. */
    public void write(DumpOutcome row, String runId, Integer rank) throws IOException {
        append(HivePartition.dumps(runId, rank), DumpOutcome.class, row);
    }

    /** Appends a rejected record to {@code rejects/run=<runId>/rank=<rank>}; a null rank is the default partition. */
    public void write(RejectedRecord row, String runId, Integer rank) throws IOException {
        append(HivePartition.rejects(runId, rank), RejectedRecord.class, row);
    }

    /** Completes and publishes every open file; returns the files this call published. */
    public List<Path> commit() throws IOException {
        checkUsable();
        List<Path> published = new ArrayList<>();
        for (OpenFile<?> file : new ArrayList<>(open.values())) {
            published.add(commit(file));
        }
        return published;
    }

    /** Deletes every in-progress file; files already committed stay. The writer is closed afterwards. */
    public void abort() {
        closed = true;
        for (OpenFile<?> file : new ArrayList<>(open.values())) {
            discard(file);
        }
        open.clear();
        openBytes = 0;
    }

    /** {@link #commit()} then close; aborts instead when the writer has failed. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        if (failed) {
            abort();
            return;
        }
        try {
            commit();
        } finally {
            abort(); // no-op after a full commit; removes leftovers when it failed midway
        }
    }

    /** Every file committed so far, in commit order. */
    public List<Path> committedFiles() {
        return List.copyOf(committed);
    }

    /** Bytes written plus buffered in the open files, as last reported by their writers. */
    public long openBytes() {
        return openBytes;
    }

    /** Number of files currently open. */
    public int openFiles() {
        return open.size();
    }

    /** The normalized absolute output root. */
    public Path root() {
        return root;
    }

    private <T extends SpecificRecord> void append(String relativeDir, Class<T> type, T row) throws IOException {
        Objects.requireNonNull(row, "row");
        checkUsable();
        OpenFile<T> file = openFile(relativeDir, type);
        try {
            file.writer.write(row);
        } catch (IOException | RuntimeException e) {
            failed = true;
            throw e;
        }
        long size = file.writer.getDataSize();
        openBytes += size - file.dataSize;
        file.dataSize = size;
        while (openBytes > options.openBytesBudget() && !open.isEmpty()) {
            OpenFile<?> largest = open.values().stream().max(Comparator.comparingLong(f -> f.dataSize)).orElseThrow();
            LOG.debug("open bytes {} over budget {}: committing {} ({} bytes)",
                    openBytes, options.openBytesBudget(), largest.target, largest.dataSize);
            commit(largest);
        }
    }

    @SuppressWarnings("unchecked")
    private <T extends SpecificRecord> OpenFile<T> openFile(String relativeDir, Class<T> type) throws IOException {
        OpenFile<?> existing = open.get(relativeDir);
        if (existing != null) {
            if (existing.type != type) {
                throw new IllegalStateException("partition " + relativeDir + " holds " + existing.type.getSimpleName());
            }
            return (OpenFile<T>) existing;
        }
        if (open.size() >= options.maxOpenFiles()) {
            commit(open.values().iterator().next());
        }
        Path dir = HivePartition.resolveUnder(root, relativeDir);
        Files.createDirectories(dir);
        // a symlink planted inside the tree must not lead the writer out of the root
        if (!dir.toRealPath().startsWith(root.toRealPath())) {
            throw new IOException("partition directory resolves outside the output root: " + dir);
        }
        String id = UUID.randomUUID().toString();
        Path inProgress = underRoot(dir.resolve(IN_PROGRESS_PREFIX + id + IN_PROGRESS_SUFFIX));
        Path target = underRoot(dir.resolve(PART_PREFIX + id + PART_SUFFIX));
        ChannelOutputFile output = new ChannelOutputFile(inProgress);
        SpecificData model = ParquetWriters.modelOf(type);
        ParquetWriter<T> writer;
        try {
            writer = ParquetWriters.create(output, model.getSchema(type), model, options.parquet());
        } catch (IOException | RuntimeException e) {
            output.discard();
            deleteQuietly(inProgress);
            throw e;
        }
        OpenFile<T> file = new OpenFile<>(relativeDir, type, inProgress, target, output, writer);
        open.put(relativeDir, file);
        return file;
    }

    private Path commit(OpenFile<?> file) throws IOException {
        open.remove(file.key);
        openBytes -= file.dataSize;
        try {
            file.writer.close();
            Files.move(file.inProgress, file.target, StandardCopyOption.ATOMIC_MOVE);
            published.published(file.target, root.relativize(file.target).toString().replace(java.io.File.separatorChar, '/'));
        } catch (IOException | RuntimeException e) {
            failed = true;
            deleteQuietly(file.inProgress);
            throw e;
        }
        committed.add(file.target);
        LOG.debug("committed {}", file.target);
        return file.target;
    }

    private void discard(OpenFile<?> file) {
        try {
            file.output.discard();
            file.writer.close();
        } catch (IOException | RuntimeException e) {
            LOG.debug("closing discarded writer of {} failed, as expected after discard", file.inProgress, e);
        }
        deleteQuietly(file.inProgress);
    }

    private static void deleteQuietly(Path path) {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            LOG.warn("could not delete in-progress file {}", path, e);
        }
    }

    private Path underRoot(Path path) {
        Path normalized = path.toAbsolutePath().normalize();
        if (!normalized.startsWith(root) || normalized.equals(root)) {
            throw new IllegalStateException("path escapes the output root " + root + ": " + path);
        }
        return normalized;
    }

    private void checkUsable() {
        if (closed) {
            throw new IllegalStateException("table writer is closed");
        }
        if (failed) {
            throw new IllegalStateException("a previous write or commit failed; only abort() is allowed");
        }
    }

    private static final class OpenFile<T> {
        final String key;
        final Class<T> type;
        final Path inProgress;
        final Path target;
        final ChannelOutputFile output;
        final ParquetWriter<T> writer;
        long dataSize;

        OpenFile(String key, Class<T> type, Path inProgress, Path target, ChannelOutputFile output, ParquetWriter<T> writer) {
            this.key = key;
            this.type = type;
            this.inProgress = inProgress;
            this.target = target;
            this.output = output;
            this.writer = writer;
        }
    }
}
