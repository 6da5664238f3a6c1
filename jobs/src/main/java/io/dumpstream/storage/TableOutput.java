package io.dumpstream.storage;

import io.dumpstream.table.TableWriter;

import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.util.Comparator;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * The output root of a batch command ({@code decode}, {@code import-reference}): a local folder, or any
 * Flink file system (S3 and the like).
 *
 * <p>On a remote root, the {@link TableWriter} writes into a local staging folder and each file, once
 * committed there, is uploaded and deleted locally: at most the writer's open files are on local disk at
 * once. On an object store the file is written under its final name (an object appears only once complete);
 * elsewhere under a hidden name, then renamed, so readers never see a partial file.
 */
public final class TableOutput implements Closeable {
    private final String location;
    private final TableWriter writer;
    private final java.nio.file.Path staging;

    private TableOutput(String location, TableWriter writer, java.nio.file.Path staging) {
        this.location = location;
        this.writer = writer;
        this.staging = staging;
    }

    /**
     * Opens the root named by {@code option} (for messages): a remote one is checked first
     * ({@link StorageCheck#writable}), so wrong settings stop here with one line.
     */
    public static TableOutput open(String option, String location, TableWriter.Options options) throws IOException {
        if (!StorageCheck.remote(location)) {
            java.nio.file.Path root = java.nio.file.Path.of(location);
            return new TableOutput(root.toAbsolutePath().normalize().toString(), new TableWriter(root, options), null);
        }
        StorageCheck.writable(option, location, FlinkSettings.current());
        Path root = new Path(location);
        FileSystem fs = root.getFileSystem();
        boolean objectStore = StorageCheck.objectStore(location);
        java.nio.file.Path staging = Files.createTempDirectory("dumpstream-staging-");
        TableWriter writer = new TableWriter(staging, options);
        TableOutput out = new TableOutput(location, writer, staging);
        writer.onPublished((file, relative) -> {
            upload(fs, objectStore, file, new Path(root, relative));
            Files.delete(file);
        });
        return out;
    }

    private static void upload(FileSystem fs, boolean objectStore, java.nio.file.Path file, Path target) throws IOException {
        Path written = objectStore ? target
                : new Path(target.getParent(), "." + target.getName() + "." + UUID.randomUUID() + ".uploading");
        try (InputStream in = Files.newInputStream(file);
             FSDataOutputStream o = fs.create(written, FileSystem.WriteMode.NO_OVERWRITE)) {
            in.transferTo(o);
        }
        if (!objectStore && !fs.rename(written, target)) {
            fs.delete(written, false);
            throw new IOException("could not rename " + written + " to " + target);
        }
    }

    public TableWriter writer() {
        return writer;
    }

    /** The root as the user should see it: an absolute local path, or the URI given. */
    public String location() {
        return location;
    }

    /** Commits (and uploads) every open file. */
    @Override
    public void close() throws IOException {
        try {
            writer.close();
        } finally {
            deleteStaging();
        }
    }

    /** Discards the open files; files committed before stay, as with a local root. */
    public void abort() {
        writer.abort();
        deleteStaging();
    }

    private void deleteStaging() {
        if (staging == null) {
            return;
        }
        try (Stream<java.nio.file.Path> s = Files.walk(staging)) {
            for (java.nio.file.Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            // a leftover temporary folder is not worth failing a command that landed its tables
        }
    }
}
