package io.dumpstream.publish;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import io.dumpstream.format.DumpFormatException;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.schema.DumpManifest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes the dumps ranks drop into a spool directory.
 *
 * <p>A rank writes {@code NAME.bin}, then {@code NAME.manifest.json}: the manifest marks the pair
 * complete. Names starting with {@code .} or ending {@code .tmp} are never read. After every message
 * of a pair is acknowledged both files move to {@code done/}, the buffer first and the manifest
 * last, so a pair whose manifest is still in the spool but whose buffer is in {@code done/} was
 * published and is only finished moving. A defective buffer (shorter or longer than buffer_bytes,
 * a chunk that cannot be read) is published as it is, with a warning, and moves to {@code done/}:
 * the job records it with its reason. Only a pair that cannot be published at all (no buffer, a
 * manifest that does not parse, so no dump id) moves to {@code failed/} with {@code NAME.error.txt}. While Kafka is unreachable the pair stays and is retried with backoff.
 */
public final class SpoolAgent implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SpoolAgent.class);
    public static final String MANIFEST_SUFFIX = ".manifest.json";
    public static final String BUFFER_SUFFIX = ".bin";
    public static final String DONE = "done";
    public static final String FAILED = "failed";
    public static final long MAX_BACKOFF_MS = 30_000;

    private final Path spool;
    private final Path done;
    private final Path failed;
    private final PublisherConfig config;
    private final Function<PublisherConfig, DumpPublisher> publisherFactory;
    private final long pollMs;
    private DumpPublisher publisher;
    private volatile boolean stopped;

    /** One pass over the spool. {@code retryable} is the Kafka error that ended it early, if any. */
    public record Pass(int published, int failed, long bytes, Exception retryable) {
    }

    public SpoolAgent(Path spool, PublisherConfig config, long pollMs) {
        this(spool, config, pollMs, DumpPublisher::new);
    }

    SpoolAgent(Path spool, PublisherConfig config, long pollMs, Function<PublisherConfig, DumpPublisher> factory) {
        if (pollMs < 1) {
            throw new IllegalArgumentException("poll interval must be >= 1 ms, got " + pollMs);
        }
        this.spool = spool;
        this.done = spool.resolve(DONE);
        this.failed = spool.resolve(FAILED);
        this.config = config;
        this.pollMs = pollMs;
        this.publisherFactory = factory;
    }

    /** Publishes every complete pair now in the spool, in name order; stops at the first Kafka error. */
    public Pass runOnce() throws IOException {
        Files.createDirectories(done);
        Files.createDirectories(failed);
        int published = 0;
        int rejected = 0;
        long bytes = 0;
        for (String name : completeNames()) {
            if (stopped) {
                break;
            }
            Path manifestFile = spool.resolve(name + MANIFEST_SUFFIX);
            Path bufferFile = spool.resolve(name + BUFFER_SUFFIX);
            if (!Files.exists(bufferFile)) {
                if (finishMove(name, manifestFile)) {
                    continue;
                }
                reject(name, "buffer file " + bufferFile.getFileName() + " is missing: ranks write NAME" + BUFFER_SUFFIX
                        + " before NAME" + MANIFEST_SUFFIX);
                rejected++;
                continue;
            }
            DumpManifest manifest;
            try {
                manifest = readManifest(manifestFile);
            } catch (DumpFormatException e) {
                reject(name, "cannot be published at all, the manifest gives no dump id to key it by: " + e);
                rejected++;
                continue;
            }
            try {
                PublishResult r = publisher().publish(manifest, bufferFile);
                moveInto(done, bufferFile);
                moveInto(done, manifestFile);
                published++;
                bytes += r.bytes();
                LOG.info("published {} as dump {}: {} chunks, {} bytes", name, r.dumpId(), r.chunks(), r.bytes());
                for (String d : r.defects()) {
                    LOG.warn("{}: dump {} published with a defect, the job will record it; moved to {}/: {}", name,
                            r.dumpId(), DONE, d);
                }
            } catch (DumpFormatException e) {
                reject(name, e.toString());
                rejected++;
            } catch (PublishException e) {
                LOG.warn("publishing {} failed, will retry: {}", name, e.getMessage());
                closePublisher();
                return new Pass(published, rejected, bytes, e);
            } catch (org.apache.kafka.common.KafkaException e) {
                // e.g. the producer could not be created; also retryable
                LOG.warn("publishing {} failed, will retry: {}", name, e.toString());
                closePublisher();
                return new Pass(published, rejected, bytes, e);
            } catch (IOException e) {
                LOG.warn("reading {} failed, will retry: {}", name, e.toString());
                return new Pass(published, rejected, bytes, e);
            }
        }
        return new Pass(published, rejected, bytes, null);
    }

    /** Polls until {@link #stop()}, backing off (doubling up to 30 s) while Kafka fails. */
    public void run() throws IOException {
        long backoff = pollMs;
        while (!stopped) {
            Pass pass = runOnce();
            long sleep;
            if (pass.retryable() != null) {
                sleep = backoff;
                backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
            } else {
                sleep = pollMs;
                backoff = pollMs;
            }
            synchronized (this) {
                if (stopped) {
                    break;
                }
                try {
                    wait(sleep);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
    }

    /** Makes {@link #run()} return once the pair it is publishing, if any, is acknowledged and moved. */
    public void stop() {
        synchronized (this) {
            stopped = true;
            notifyAll();
        }
    }

    @Override
    public void close() {
        stop();
        closePublisher();
    }

    private List<String> completeNames() throws IOException {
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(spool)) {
            for (Path p : ds) {
                String f = p.getFileName().toString();
                if (f.startsWith(".") || f.endsWith(".tmp") || !f.endsWith(MANIFEST_SUFFIX)
                        || f.length() == MANIFEST_SUFFIX.length() || !Files.isRegularFile(p)) {
                    continue;
                }
                names.add(f.substring(0, f.length() - MANIFEST_SUFFIX.length()));
            }
        }
        names.sort(null);
        return names;
    }

    private DumpManifest readManifest(Path manifestFile) throws DumpFormatException, IOException {
        return ManifestParser.parseFile(manifestFile);
    }

    /** The buffer already moved on a previous run that stopped before the manifest: finish that move. */
    private boolean finishMove(String name, Path manifestFile) throws IOException {
        for (Path dir : new Path[] {done, failed}) {
            if (Files.exists(dir.resolve(name + BUFFER_SUFFIX))) {
                LOG.info("{}: buffer already in {}/, moving the manifest there too", name, dir.getFileName());
                moveInto(dir, manifestFile);
                return true;
            }
        }
        return false;
    }

    private void reject(String name, String error) throws IOException {
        LOG.warn("rejected {}: {}", name, error);
        Files.writeString(failed.resolve(name + ".error.txt"), error + "\n", StandardCharsets.UTF_8);
        Path bufferFile = spool.resolve(name + BUFFER_SUFFIX);
        if (Files.exists(bufferFile)) {
            moveInto(failed, bufferFile);
        }
        moveInto(failed, spool.resolve(name + MANIFEST_SUFFIX));
    }

    private static void moveInto(Path dir, Path file) throws IOException {
        Path target = dir.resolve(file.getFileName());
        try {
            Files.move(file, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(file, target, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    private DumpPublisher publisher() {
        if (publisher == null) {
            publisher = publisherFactory.apply(config);
        }
        return publisher;
    }

    private void closePublisher() {
        if (publisher != null) {
            try {
                publisher.close();
            } catch (RuntimeException e) {
                LOG.warn("closing the producer failed: {}", e.toString());
            }
            publisher = null;
        }
    }
}
