package io.dumpstream.cli;

import io.dumpstream.options.KafkaClientProperties;
import io.dumpstream.options.UsageException;
import io.dumpstream.options.Cli;

import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.dumpstream.format.DumpBuilder;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.publish.DumpPublisher;
import io.dumpstream.publish.PublishResult;
import io.dumpstream.publish.PublisherConfig;
import io.dumpstream.publish.SpoolAgent;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.simulate.SyntheticRanks;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code simulate}: synthetic ranks ({@link SyntheticRanks}) publishing dumps to Kafka, one thread
 * and one publisher per rank, or writing spool pairs to a directory.
 */
public final class SimulateCommand implements Command {
    private static final double MIB = 1024.0 * 1024.0;
    /** Dumps up to this size are built in memory; larger ones go through a temporary file. */
    static final long IN_MEMORY_LIMIT = 64L * 1024 * 1024;
    private static final JsonFactory JSON = new JsonFactory();

    @Override
    public String name() {
        return "simulate";
    }

    @Override
    public String summary() {
        return "synthetic ranks publishing deterministic dumps to Kafka or a spool directory";
    }

    /** The options of simulate; --bootstrap (with the publisher options) or --out says where the dumps go. */
    static final class Options {
        @Mixin
        PublisherOptions publisher = new PublisherOptions();
        @Option(names = "--out", paramLabel = "DIR", description = "instead of --bootstrap: write NAME"
                + SpoolAgent.BUFFER_SUFFIX + " then NAME" + SpoolAgent.MANIFEST_SUFFIX + " per dump into DIR, each"
                + " atomically")
        Path out;
        @Option(names = "--ranks", paramLabel = "N", description = "ranks (threads; with --bootstrap"
                + " each publishes and waits for its acks), also the manifests' world_size")
        Integer ranks;
        @Option(names = "--launches", paramLabel = "K", description = "launches per rank; launch ids"
                + " 0..K-1")
        Long launches;
        @Option(names = "--records", paramLabel = "R", description = "records per dump (default ${DEFAULT-VALUE}, at most"
                + " 4096)")
        int records = new SyntheticRanks.Config().records;
        @Option(names = "--payload-bytes", paramLabel = "B", description = "typical bytes per record (default"
                + " ${DEFAULT-VALUE}; sizes vary from 1/2 to 3/2 of it)")
        long payloadBytes = new SyntheticRanks.Config().payloadBytes;
        @Option(names = "--dtypes", paramLabel = "a,b,...", description = "dtypes to draw from (default"
                + " ${DEFAULT-VALUE})")
        String dtypes = String.join(",", SyntheticRanks.DEFAULT_DTYPES);
        @Option(names = "--seed", paramLabel = "S", description = "generator seed (default ${DEFAULT-VALUE}); the same seed"
                + " gives identical bytes")
        long seed = 1;
        @Option(names = "--rate", paramLabel = "DUMPS_PER_S", description = "total dumps per second over all ranks"
                + " (default: as fast as possible)")
        double rate;
        @Option(names = "--run-id", paramLabel = "ID", description = "run_id of the manifests (default sim-<seed>)")
        String runId;
        @Option(names = "--sent", paramLabel = "FILE", description = "append one JSON line per dump sent: run_id, rank,"
                + " launch_id, records, buffer_bytes, dump_id")
        Path sent;
    }

    @Override
    public String usage() {
        return Cli.usage(name(), "Synthetic ranks, one thread each, publishing deterministic dumps to Kafka (--bootstrap) or"
                + " writing spool pairs (--out).", "Progress goes to stderr; a summary line goes to stdout.", new Options(),
                new Verbosity());
    }

    @Override
    public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Verbosity verbosity = new Verbosity();
        Options o = Cli.parse(new Options(), argv, verbosity);
        verbosity.apply();
        if ((o.publisher.bootstrap != null) == (o.out != null)) {
            throw new UsageException("give exactly one of --bootstrap and --out");
        }
        if (o.ranks == null || o.ranks < 1) {
            throw new UsageException("--ranks must be given and >= 1, got " + o.ranks);
        }
        if (o.launches == null || o.launches < 0) {
            throw new UsageException("--launches must be given and >= 0, got " + o.launches);
        }
        int ranks = o.ranks;
        long launches = o.launches;
        long seed = o.seed;
        double rate = o.rate;
        if (rate < 0 || Double.isNaN(rate) || Double.isInfinite(rate)) {
            throw new UsageException("--rate must be a positive number of dumps per second, got " + rate);
        }
        SyntheticRanks.Config c = new SyntheticRanks.Config();
        c.runId = o.runId != null ? o.runId : "sim-" + seed;
        c.worldSize = ranks;
        c.records = o.records;
        c.payloadBytes = o.payloadBytes;
        c.dtypes = java.util.Arrays.stream(o.dtypes.split(",")).map(String::trim).filter(x -> !x.isEmpty()).toList();
        if (o.publisher.chunkBytes != null) {
            c.chunkBytes = o.publisher.chunkBytes;
        }
        SyntheticRanks sim;
        try {
            sim = new SyntheticRanks(seed, c);
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }

        Path outDir = o.out;
        PublisherConfig pc = outDir == null ? o.publisher.config() : null;
        if (outDir != null) {
            Files.createDirectories(outDir);
        }
        SentLog sent = o.sent != null ? new SentLog(o.sent) : null;

        long total = (long) ranks * launches;
        AtomicLong done = new AtomicLong();
        AtomicLong bytes = new AtomicLong();
        AtomicLong ticket = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long t0 = System.nanoTime();
        Progress progress = new Progress(err, total, t0);
        List<Thread> threads = new ArrayList<>();
        for (int rank = 0; rank < ranks; rank++) {
            final int r = rank;
            Thread t = new Thread(() -> {
                try (DumpPublisher publisher = pc == null ? null : new DumpPublisher(pc)) {
                    for (long launch = 0; launch < launches && failure.get() == null; launch++) {
                        if (rate > 0) {
                            long due = t0 + (long) (ticket.getAndIncrement() * 1e9 / rate);
                            long wait = due - System.nanoTime();
                            if (wait > 0) {
                                Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                            }
                        }
                        DumpBuilder b = sim.dump(r, launch);
                        DumpManifest m = publisher == null ? writePair(b, outDir) : publish(b, publisher);
                        if (sent != null) {
                            sent.write(m);
                        }
                        bytes.addAndGet(m.getBufferBytes());
                        progress.dumpDone(done.incrementAndGet(), bytes.get());
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, new IOException("rank " + r + ": " + e.getMessage(), e));
                }
            }, "sim-rank-" + rank);
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        if (sent != null) {
            sent.close();
        }
        double s = Math.max(1e-9, (System.nanoTime() - t0) / 1e9);
        progress.finish(done.get(), bytes.get());
        if (failure.get() != null) {
            String auth = pc == null ? null : KafkaClientProperties.authenticationFailure(failure.get(),
                    o.publisher.bootstrap, o.publisher.kafka.properties());
            err.println("dumpstream simulate: " + (auth != null ? auth : failure.get().getMessage()));
            err.printf("%d of %d dumps sent%n", done.get(), total);
            return 1;
        }
        out.printf("simulated %d dumps (%d ranks x %d launches), %d bytes, %.1f s, run_id %s -> %s%n", done.get(),
                ranks, launches, bytes.get(), s, c.runId, outDir == null ? "topic " + pc.topic() : outDir.toString());
        return 0;
    }

    private static DumpManifest publish(DumpBuilder b, DumpPublisher publisher) throws Exception {
        if (b.totalBytes() <= IN_MEMORY_LIMIT) {
            DumpBuilder.Dump d = b.build();
            PublishResult r = publisher.publish(d.manifest(), ByteBuffer.wrap(d.buffer()));
            return r.manifest();
        }
        Path tmp = Files.createTempFile("dumpstream-sim-", ".bin");
        try {
            DumpManifest m;
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                m = b.writeTo(ch);
            }
            return publisher.publish(m, tmp).manifest();
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /** Writes NAME.bin, then NAME.manifest.json, each to a hidden temporary file renamed into place. */
    static DumpManifest writePair(DumpBuilder b, Path dir) throws IOException {
        DumpManifest m;
        String name = null;
        Path tmpBin = Files.createTempFile(dir, ".sim-", SpoolAgent.BUFFER_SUFFIX + ".tmp");
        try {
            try (FileChannel ch = FileChannel.open(tmpBin, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                m = b.writeTo(ch);
                ch.force(true);
            }
            name = spoolName(m);
            Files.move(tmpBin, dir.resolve(name + SpoolAgent.BUFFER_SUFFIX), StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmpBin);
        }
        Path tmpManifest = dir.resolve("." + name + SpoolAgent.MANIFEST_SUFFIX + ".tmp");
        try {
            try (FileChannel ch = FileChannel.open(tmpManifest, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ByteBuffer json = ByteBuffer.wrap(ManifestParser.toJson(m));
                while (json.hasRemaining()) {
                    ch.write(json);
                }
                ch.force(true);
            }
            Files.move(tmpManifest, dir.resolve(name + SpoolAgent.MANIFEST_SUFFIX), StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmpManifest);
        }
        return m;
    }

    /**
     * {@code <run_id with unsafe characters as _>.r<rank>.l<launch_id>}, e.g. {@code sim-1.r0.l3}:
     * the first 100 code points of run_id, each kept when it is an ASCII letter, digit, {@code -},
     * {@code _} or a {@code .} not in first place. deploy/rank/l1_spool.py names pairs the same way.
     */
    static String spoolName(DumpManifest m) {
        StringBuilder s = new StringBuilder();
        m.getRunId().codePoints().limit(100).forEach(ch -> {
            boolean safe = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')
                    || ch == '-' || ch == '_' || (ch == '.' && s.length() > 0);
            s.append(safe ? (char) ch : '_');
        });
        return s.append(".r").append(m.getRank()).append(".l").append(m.getLaunchId()).toString();
    }

    /** The --sent file: one JSON object per line, written whole under a lock. */
    private static final class SentLog {
        private final OutputStream out;

        SentLog(Path file) throws IOException {
            this.out = Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        }

        synchronized void write(DumpManifest m) throws IOException {
            ByteArrayOutputStream line = new ByteArrayOutputStream(256);
            try (JsonGenerator g = JSON.createGenerator(line)) {
                g.writeStartObject();
                g.writeStringField("run_id", m.getRunId());
                g.writeNumberField("rank", m.getRank());
                g.writeNumberField("launch_id", m.getLaunchId());
                g.writeNumberField("records", m.getRecords().size());
                g.writeNumberField("buffer_bytes", m.getBufferBytes());
                g.writeStringField("dump_id", Manifests.dumpId(m));
                g.writeEndObject();
            }
            line.write('\n');
            out.write(line.toByteArray());
            out.flush();
        }

        synchronized void close() throws IOException {
            out.close();
        }
    }

    /** At most one progress line a second on stderr, and a last one at the end. */
    private static final class Progress {
        private final PrintStream err;
        private final long total;
        private final long t0;
        private long lastPrint;

        Progress(PrintStream err, long total, long t0) {
            this.err = err;
            this.total = total;
            this.t0 = t0;
            this.lastPrint = t0;
        }

        synchronized void dumpDone(long done, long bytes) {
            long now = System.nanoTime();
            if (now - lastPrint >= 1_000_000_000L) {
                lastPrint = now;
                print(done, bytes, now);
            }
        }

        synchronized void finish(long done, long bytes) {
            print(done, bytes, System.nanoTime());
        }

        private void print(long done, long bytes, long now) {
            double s = Math.max(1e-9, (now - t0) / 1e9);
            err.printf("simulate: %d/%d dumps, %.1f MiB, %.1f dumps/s, %.1f MiB/s%n", done, total, bytes / MIB,
                    done / s, bytes / MIB / s);
        }
    }
}
