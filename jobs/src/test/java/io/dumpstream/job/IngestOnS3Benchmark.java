package io.dumpstream.job;

import io.dumpstream.local.LocalKafka;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.schema.RecordPlan;
import io.dumpstream.storage.FlinkSettings;
import io.dumpstream.table.HivePartition;
import io.dumpstream.testing.CephS3;

import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.S3Object;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Issue 31's cost on S3: the ingest job writing its tables and checkpoints to local disk and to the Ceph RADOS
 * Gateway ({@link CephS3}, Flink's {@code flink-s3-fs-hadoop} plugin), both dump shapes, compaction off and on,
 * in one JVM and one run.
 *
 * <p>Each job runs at a steady publish rate (4 dumps/s of 1 MiB, one 64 MiB dump per 4 s: rates a job keeps up with on
 * the shared 2-core machine, to S3 too) and is measured over a
 * window of whole checkpoint intervals: from the completion of the second checkpoint after publishing started to
 * the completion of the last checkpoint whose interval was fully published (publishing starts right after a
 * checkpoint completes and lasts {@code bench.seconds}). Over the window:
 * <ul>
 *   <li>job CPU per MiB: this JVM's CPU (Flink, broker, GC, JIT) less the harness's threads (publisher, poller, sampler),
 *       over the MiB the job read; the Ceph daemons' CPU (radosgw, OSD, monitor; {@code /proc/PID/stat}) per MiB
 *       separately;</li>
 *   <li>S3 requests per checkpoint, counted by the server: radosgw's {@code rgw.req} perf counter (read from its
 *       admin socket) less the requests this harness made itself, split by kind from the gateway's access log
 *       (the job's requests are the ones not made by the harness's AWS SDK v2 client);</li>
 *   <li>files per checkpoint: visible Parquet files (all tables; hidden files and parts waiting for compaction
 *       not counted) first listed in the window.</li>
 * </ul>
 * Over all dumps of the job: publish-to-commit p50/p95 from the job's own {@code publishToCommitMillis} (the
 * dump's {@code dumps} row committed) and publish-to-visible p50/p95 of its snapshot rows, from a listing polled
 * every {@code bench.pollMillis} (a dump's rows are visible when every snapshot partition it wrote has a visible
 * file listed after its publish; with compaction this is the merged file, a checkpoint later; a dump not visible
 * four intervals and 20 s after the last publish counts as infinitely late).
 *
 * <pre>
 * bash jobs/bench/ingest-on-s3.sh
 * # knobs: -Dbench.rounds=3 -Dbench.warmups=1 (untimed S3 jobs, one per compaction setting) -Dbench.interval=5 -Dbench.seconds=15 -Dbench.shapes=1MiB,64MiB
 * #   -Dbench.targets=local,s3 -Dbench.compact=0,1 -Dbench.pollMillis=500 -Dbench.rate1MiB=4 -Dbench.rate64MiB=0.25
 * #   -Dbench.flink.KEY=VALUE (a Flink setting for the S3 file system, e.g. -Dbench.flink.s3.upload.min.part.size=N)
 * </pre>
 */
@Tag("benchmark")
class IngestOnS3Benchmark {
    private static final int ROUNDS = Integer.getInteger("bench.rounds", 3);
    private static final int WARMUPS = Integer.getInteger("bench.warmups", 1);
    private static final Duration INTERVAL = Duration.ofSeconds(Long.getLong("bench.interval", 5));
    private static final long SECONDS = Long.getLong("bench.seconds", 15);
    private static final long POLL_MILLIS = Long.getLong("bench.pollMillis", 500);
    private static final String BUCKET = "ingest-bench";
    private static final double MIB = 1024.0 * 1024.0;
    private static final AtomicLong JOBS = new AtomicLong();

    /** What one job measured. */
    record Result(double jobCpuMsPerMib, double jitMsPerMib, double serverCpuMsPerMib, double requestsPerCheckpoint, double requestsPerMib,
                  double filesPerCheckpoint, double snapshotFilesPerCheckpoint, double p50, double p95, double visibleP50,
                  double visibleP95, long dumps, long notVisible, double checkpointMillis, double diskWriteMibPerMib,
                  double checkpoints, double mib, Map<String, long[]> kinds) {
    }

    @Test
    void ingestOnS3() throws Exception {
        List<String> shapes = List.of(System.getProperty("bench.shapes", "1MiB,64MiB").split(","));
        List<String> targets = List.of(System.getProperty("bench.targets", "local,s3").split(","));
        List<Integer> compacts = Stream.of(System.getProperty("bench.compact", "0,1").split(","))
                .map(s -> Integer.parseInt(s.trim())).toList();
        long t0 = System.nanoTime();
        CephS3 s3 = CephS3.shared();
        s3.createBucket(BUCKET);
        Map<String, String> flink = new LinkedHashMap<>(s3.flinkConfig());
        System.getProperties().stringPropertyNames().stream().filter(k -> k.startsWith("bench.flink."))
                .forEach(k -> flink.put(k.substring("bench.flink.".length()), System.getProperty(k)));
        FlinkSettings.install(flink);
        Map<String, String> shown = new TreeMap<>(flink);
        shown.remove("s3.access-key");
        shown.remove("s3.secret-key");
        System.out.println("Flink settings (keys left out): " + shown);
        Ceph ceph = new Ceph(s3.dir());
        Map<String, List<Result>> results = new LinkedHashMap<>();
        try (LocalKafka kafka = LocalKafka.startEphemeral()) {
            // untimed: the JIT compiles the job's, the S3 plugin's and the compactor's code in the first jobs of a JVM
            // (without them the first S3 job of a kind spent half its CPU in the JIT's threads)
            for (int w = 0; w < WARMUPS; w++) {
                for (int compact : compacts) {
                    run(kafka, s3, ceph, "1MiB", targets.get(targets.size() - 1).trim(), compact, "warm-up (untimed)",
                            2 * INTERVAL.toSeconds());
                }
            }
            for (int round = 0; round < ROUNDS; round++) {
                for (String shape : shapes) {
                    for (int compact : compacts) {
                        for (String target : targets) {
                            Result r = run(kafka, s3, ceph, shape.trim(), target.trim(), compact, "round " + round, SECONDS);
                            results.computeIfAbsent(key(shape.trim(), target.trim(), compact), k -> new ArrayList<>()).add(r);
                        }
                    }
                }
            }
        }
        System.out.println();
        System.out.printf(Locale.ROOT, "ingest-on-s3: %d rounds, checkpoint every %ds, %ds published per job, %.1f min in all;"
                        + " medians over rounds (each round's figure is over its window of %d checkpoints)%n", ROUNDS,
                INTERVAL.toSeconds(), SECONDS, (System.nanoTime() - t0) / 60e9, SECONDS / INTERVAL.toSeconds() - 1);
        System.out.println("| shape | target | compact | job CPU ms/MiB | of it the JIT's | Ceph CPU ms/MiB | S3 requests/checkpoint |"
                + " requests/MiB | files/checkpoint (snapshots) | checkpoint ms | publish-to-commit p50/p95 ms |"
                + " snapshot rows visible p50/p95 ms | dumps (not visible) | disk writes MiB/MiB |");
        System.out.println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        for (Map.Entry<String, List<Result>> e : results.entrySet()) {
            List<Result> rs = e.getValue();
            System.out.printf(Locale.ROOT, "| %s | %.1f | %.1f | %.1f | %.0f | %.1f | %.0f (%.0f) | %.0f | %.0f / %.0f | %.0f / %.0f"
                            + " | %d (%d) | %.2f |%n", e.getKey().replace(" ", " | "),
                    med(rs, Result::jobCpuMsPerMib), med(rs, Result::jitMsPerMib), med(rs, Result::serverCpuMsPerMib), med(rs, Result::requestsPerCheckpoint),
                    med(rs, Result::requestsPerMib), med(rs, Result::filesPerCheckpoint),
                    med(rs, Result::snapshotFilesPerCheckpoint), med(rs, Result::checkpointMillis), med(rs, Result::p50),
                    med(rs, Result::p95), med(rs, Result::visibleP50), med(rs, Result::visibleP95),
                    rs.stream().mapToLong(Result::dumps).sum(), rs.stream().mapToLong(Result::notVisible).sum(),
                    med(rs, Result::diskWriteMibPerMib));
        }
        System.out.println();
        for (String shape : shapes) {
            for (int compact : compacts) {
                List<Result> local = results.get(key(shape.trim(), "local", compact));
                List<Result> remote = results.get(key(shape.trim(), "s3", compact));
                if (local != null && remote != null) {
                    List<Double> ratios = new ArrayList<>();
                    List<Double> withoutJit = new ArrayList<>();
                    for (int i = 0; i < Math.min(local.size(), remote.size()); i++) {
                        Result l = local.get(i);
                        Result r = remote.get(i);
                        ratios.add(r.jobCpuMsPerMib() / l.jobCpuMsPerMib());
                        withoutJit.add((r.jobCpuMsPerMib() - r.jitMsPerMib()) / (l.jobCpuMsPerMib() - l.jitMsPerMib()));
                    }
                    System.out.printf(Locale.ROOT, "ingest-on-s3 shape=%s compact=%d job CPU s3/local=%.2f (rounds %s);"
                                    + " without the JIT's threads %.2f (rounds %s); with Ceph's CPU %.2f%n", shape.trim(),
                            compact, median(ratios), twoPlaces(ratios), median(withoutJit), twoPlaces(withoutJit),
                            (med(remote, Result::jobCpuMsPerMib) + med(remote, Result::serverCpuMsPerMib))
                                    / med(local, Result::jobCpuMsPerMib));
                }
            }
            if (compacts.size() > 1) {
                for (String target : targets) {
                    List<Result> off = results.get(key(shape.trim(), target.trim(), compacts.get(0)));
                    List<Result> on = results.get(key(shape.trim(), target.trim(), compacts.get(compacts.size() - 1)));
                    System.out.printf(Locale.ROOT, "ingest-on-s3 shape=%s target=%s compact %d against %d: job CPU %.2f,"
                                    + " requests/checkpoint %.2f, files/checkpoint %.2f, snapshot rows visible p50 %+.0f ms%n",
                            shape.trim(), target.trim(), compacts.get(compacts.size() - 1), compacts.get(0),
                            med(on, Result::jobCpuMsPerMib) / med(off, Result::jobCpuMsPerMib),
                            med(on, Result::requestsPerCheckpoint) / med(off, Result::requestsPerCheckpoint),
                            med(on, Result::filesPerCheckpoint) / med(off, Result::filesPerCheckpoint),
                            med(on, Result::visibleP50) - med(off, Result::visibleP50));
                }
            }
        }
        System.out.println();
        System.out.println("S3 requests of the jobs by kind, per checkpoint (all rounds' windows; mean server latency ms):");
        for (Map.Entry<String, List<Result>> e : results.entrySet()) {
            if (!e.getKey().contains(" s3 ")) {
                continue;
            }
            double checkpoints = e.getValue().stream().mapToDouble(Result::checkpoints).sum();
            double mib = e.getValue().stream().mapToDouble(Result::mib).sum();
            Map<String, long[]> kinds = new TreeMap<>();
            for (Result r : e.getValue()) {
                r.kinds().forEach((k, v) -> kinds.merge(k, v.clone(), (a, b) -> new long[] {a[0] + b[0], a[1] + b[1], a[2] + b[2]}));
            }
            StringBuilder b = new StringBuilder("  " + e.getKey() + ":");
            kinds.forEach((k, v) -> b.append(String.format(Locale.ROOT, " %s %.1f (%.1f ms, %.1f MiB/checkpoint);", k,
                    v[0] / checkpoints, v[1] / 1e6 / Math.max(1, v[0]), v[2] / MIB / checkpoints)));
            b.append(String.format(Locale.ROOT, " over %.0f checkpoints, %.0f MiB", checkpoints, mib));
            System.out.println(b);
        }
    }

    private static String key(String shape, String target, int compact) {
        return shape + " " + target + " " + compact;
    }

    /**
     * One job at a steady rate into {@code target} ("local" or "s3"), compacting every {@code compact} checkpoints
     * (0: off): starts it, waits for its first checkpoint, publishes for {@code seconds}, measures the window, waits
     * until every dump is visible (or a deadline), cancels it and removes what it wrote.
     */
    private static Result run(LocalKafka kafka, CephS3 s3, Ceph ceph, String shapeName, String target, int compact,
                              String label, long seconds) throws Exception {
        IngestThroughputBenchmark.Shape shape = shapeName.equals("64MiB")
                ? new IngestThroughputBenchmark.Shape("64 MiB", 16, 4L << 20)
                : new IngestThroughputBenchmark.Shape("1 MiB", 16, 48 << 10);
        double rate = shapeName.equals("64MiB") ? Double.parseDouble(System.getProperty("bench.rate64MiB", "0.25"))
                : Double.parseDouble(System.getProperty("bench.rate1MiB", "4"));
        long id = JOBS.incrementAndGet();
        String topic = "on-s3-" + id;
        kafka.createTopic(topic, 2);
        kafka.createTopic(topic + ".dlq", 1);
        Path dir = Files.createTempDirectory("ingest-on-s3-");
        String prefix = "job-" + id + "-" + ProcessHandle.current().pid() + "/";
        boolean onS3 = target.equals("s3");
        IngestConfig c = IngestThroughputBenchmark.config(kafka, topic, dir, INTERVAL);
        c.compactCheckpoints = compact;
        if (onS3) {
            c.out = "s3://" + BUCKET + "/" + prefix + "out";
            c.checkpoints = "s3://" + BUCKET + "/" + prefix + "ck";
        }
        c.validate();
        Poller poller = onS3 ? new Poller(s3, prefix + "out/") : new Poller(dir.resolve("out"));
        Map<DumpManifest, Long> published = new ConcurrentHashMap<>();
        ProgressReporter.forgetRetired();
        CheckpointWatch.reset();
        try (LocalIngest job = LocalIngest.start(c, CheckpointWatch.enable(new Configuration()))) {
            long first = awaitCheckpoint(job, 1);
            poller.start();
            // publishing starts right after a checkpoint completed: checkpoints first+2 .. first+k cover whole
            // intervals of publishing (first+1 covers the part after the completion)
            long k = Math.max(2, seconds / INTERVAL.toSeconds());
            long bytes = (long) Math.ceil(seconds * rate) * shape.records() * shape.payloadBytes();
            Properties client = new Properties();
            client.setProperty("client.id", "bench-publisher");
            Throwable[] failed = new Throwable[1];
            Thread publisher = new Thread(() -> {
                try {
                    IngestThroughputBenchmark.publish(kafka, topic, shape, 31 + id, bytes, rate, client,
                            (m, millis) -> published.put(m, millis));
                } catch (Throwable e) {
                    failed[0] = e;
                }
            }, "bench-publisher");
            publisher.start();
            awaitCheckpoint(job, first + 1);
            Snapshot s0 = Snapshot.take(ceph, poller);
            awaitCheckpoint(job, first + k);
            Snapshot s1 = Snapshot.take(ceph, poller);
            Map<String, Long> threadCpu = s0.threads.since();
            s0.threads.close();
            // the job's CPU: the process's (the groups add up to it) less the harness's threads: the publisher and
            // its producer's network thread, the poller, the per-thread sampler
            long harnessCpu = 0;
            long processCpu = 0;
            for (Map.Entry<String, Long> e : threadCpu.entrySet()) {
                processCpu += e.getValue();
                if (e.getKey().startsWith("bench-") || e.getKey().contains("| bench-publisher")
                        || e.getKey().startsWith("thread-cpu-sampler")) {
                    harnessCpu += e.getValue();
                }
            }
            publisher.join();
            if (failed[0] != null) {
                throw new AssertionError("publishing failed", failed[0]);
            }
            // every dump visible, or at most four intervals and 20 s after the last publish (the dumps not visible
            // by then count as infinitely late in the quantiles)
            long deadline = System.nanoTime() + INTERVAL.toNanos() * 4 + Duration.ofSeconds(20).toNanos();
            double[] visible = poller.visibility(published);
            while (visible[3] > 0 && System.nanoTime() < deadline) {
                Thread.sleep(POLL_MILLIS);
                visible = poller.visibility(published);
            }
            Thread.sleep(1000); // the committing checkpoint's notification reaches every subtask (the job's metric)
            String h = "publishToCommitMillis";
            double p50 = ProgressReporter.quantile(h, 0.5);
            double p95 = ProgressReporter.quantile(h, 0.95);
            poller.stop();
            job.cancel(Duration.ofMinutes(1));

            double checkpoints = s1.checkpoints - s0.checkpoints;
            double mib = (s1.bytesIn - s0.bytesIn) / MIB;
            double jobCpu = (processCpu - harnessCpu) / 1e6;
            long harness = s1.harnessRequests - s0.harnessRequests;
            long requests = onS3 ? s1.rgwRequests - s0.rgwRequests - harness : 0;
            Map<String, long[]> kinds = onS3 ? ceph.requestsByKind(s0.rgwLogOffset, s0.wallMillis, s1.wallMillis)
                    : Map.of();
            long[] files = poller.filesListedBetween(s0.wallMillis, s1.wallMillis);
            Result r = new Result(jobCpu / mib, threadCpu.getOrDefault(ThreadCpu.JIT, 0L) / 1e6 / mib,
                    (s1.cephCpu - s0.cephCpu) / 1e6 / mib, requests / checkpoints,
                    requests / mib, files[0] / checkpoints, files[1] / checkpoints, p50, p95, visible[0], visible[1],
                    (long) visible[2], (long) visible[3], s1.checkpointMillis, (s1.writeBytes - s0.writeBytes) / MIB / mib,
                    checkpoints, mib, kinds);
            System.out.printf(Locale.ROOT, "%s %s %s compact=%d: %.0f MiB over %.0f checkpoints (%.1f s); job CPU %.2f ms/MiB"
                            + " (the JIT's threads %.2f), Ceph %.2f ms/MiB; S3 requests %d (%.1f/checkpoint; the harness's own %d not counted);"
                            + " files %d/checkpoint %.1f; publish-to-commit p50 %.0f p95 %.0f ms; snapshot rows visible"
                            + " p50 %.0f p95 %.0f ms (%d dumps, %d not visible); last checkpoint %d ms; disk writes %.2f MiB/MiB;"
                            + " OSD resident %d MiB%n", shapeName, target, label, compact, mib, checkpoints,
                    (s1.wallMillis - s0.wallMillis) / 1e3, r.jobCpuMsPerMib(), r.jitMsPerMib(), r.serverCpuMsPerMib(), requests,
                    r.requestsPerCheckpoint(), harness, files[0], r.filesPerCheckpoint(), p50, p95, visible[0], visible[1],
                    (long) visible[2], (long) visible[3], s1.checkpointMillis, r.diskWriteMibPerMib(), ceph.osdResidentMib());
            if (onS3) {
                long counted = kinds.values().stream().mapToLong(v -> v[0]).sum();
                System.out.printf(Locale.ROOT, "  access log: %d requests of the job in the window %s (perf counter: %d)%n",
                        counted, kindsText(kinds), requests);
            }
            threadCpu.entrySet().stream().filter(e -> e.getValue() / 1e6 / mib >= 0.2)
                    .sorted((x, y) -> Long.compare(y.getValue(), x.getValue())).limit(10)
                    .forEach(e -> System.out.printf(Locale.ROOT, "  CPU %6.2f ms/MiB  %s%n", e.getValue() / 1e6 / mib, e.getKey()));
            return r;
        } finally {
            poller.stop();
            IngestThroughputBenchmark.delete(dir);
            if (onS3) {
                cleanUp(s3, ceph, prefix);
            }
            try (var admin = kafka.admin()) {
                admin.deleteTopics(List.of(topic, topic + ".dlq")).all().get();
            }
        }
    }

    private static String kindsText(Map<String, long[]> kinds) {
        StringBuilder b = new StringBuilder();
        kinds.forEach((k, v) -> b.append(b.length() == 0 ? "" : ", ").append(k).append(' ').append(v[0]));
        return "(" + b + ")";
    }

    /** Removes the job's objects and unfinished uploads and has the gateway free their space now (memstore is RAM). */
    private static void cleanUp(CephS3 s3, Ceph ceph, String prefix) throws Exception {
        for (MultipartUpload u : s3.client().listMultipartUploads(b -> b.bucket(BUCKET).prefix(prefix)).uploads()) {
            s3.client().abortMultipartUpload(b -> b.bucket(BUCKET).key(u.key()).uploadId(u.uploadId()));
        }
        s3.deletePrefix(BUCKET, prefix);
        ceph.collectGarbage();
    }

    /** Waits until the job has completed {@code n} checkpoints; returns how many it has. */
    private static long awaitCheckpoint(LocalIngest job, long n) throws Exception {
        long deadline = System.nanoTime() + INTERVAL.toNanos() * 6 + Duration.ofSeconds(60).toNanos();
        while (CheckpointWatch.completed() < n) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("checkpoint " + n + " not completed in time (" + CheckpointWatch.completed() + ")");
            }
            if (job.ended()) {
                throw new AssertionError("the job ended: " + job.status());
            }
            Thread.sleep(10);
        }
        return CheckpointWatch.completed();
    }

    /** The figures read at a checkpoint completion. */
    private static final class Snapshot {
        long wallMillis;
        long checkpoints;
        long checkpointMillis;
        long cephCpu;
        long rgwRequests;
        long harnessRequests;
        long rgwLogOffset;
        long bytesIn;
        long writeBytes;
        ThreadCpu threads;

        static Snapshot take(Ceph ceph, Poller poller) throws IOException {
            Snapshot s = new Snapshot();
            s.checkpoints = CheckpointWatch.completed();
            s.checkpointMillis = CheckpointWatch.lastDurationMillis();
            s.wallMillis = System.currentTimeMillis();
            s.bytesIn = ProgressReporter.count("bytesIn");
            s.harnessRequests = poller.requests.get();
            s.rgwRequests = ceph.requests();
            s.rgwLogOffset = ceph.logLength();
            s.cephCpu = ceph.cpuNanos();
            s.writeBytes = writeBytes();
            s.threads = new ThreadCpu();
            return s;
        }
    }

    /** Bytes this process caused to be written to storage ({@code write_bytes} of {@code /proc/self/io}). */
    private static long writeBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/io"))) {
                if (line.startsWith("write_bytes:")) {
                    return Long.parseLong(line.substring(12).trim());
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return 0;
    }

    /**
     * Lists the visible Parquet files of the output (a local folder or an S3 prefix) every {@link #POLL_MILLIS} in a
     * thread of its own and remembers when each was first listed. Visible: no path segment starts with '.' or '_'.
     */
    private static final class Poller {
        private final CephS3 s3;
        private final String prefix;
        private final Path local;
        private final Map<String, Long> firstSeen = new ConcurrentHashMap<>();
        final AtomicLong requests = new AtomicLong();
        private volatile Thread thread;
        private volatile boolean stop;

        Poller(CephS3 s3, String prefix) {
            this.s3 = s3;
            this.prefix = prefix;
            this.local = null;
        }

        Poller(Path local) {
            this.s3 = null;
            this.prefix = null;
            this.local = local;
        }

        void start() {
            thread = new Thread(() -> {
                while (!stop) {
                    try {
                        poll();
                        Thread.sleep(POLL_MILLIS);
                    } catch (InterruptedException e) {
                        return;
                    } catch (Exception e) {
                        System.out.println("  poller: " + e);
                    }
                }
            }, "bench-poller");
            thread.setDaemon(true);
            thread.start();
        }

        void stop() throws InterruptedException {
            stop = true;
            Thread t = thread;
            if (t != null) {
                t.interrupt();
                t.join();
            }
        }

        private void poll() throws IOException {
            long now = System.currentTimeMillis();
            for (String path : list()) {
                if (visible(path)) {
                    firstSeen.putIfAbsent(path, now);
                }
            }
        }

        private List<String> list() throws IOException {
            List<String> paths = new ArrayList<>();
            if (s3 != null) {
                String token = null;
                do {
                    ListObjectsV2Request.Builder req = ListObjectsV2Request.builder().bucket(BUCKET).prefix(prefix);
                    if (token != null) {
                        req.continuationToken(token);
                    }
                    requests.incrementAndGet();
                    ListObjectsV2Response page = s3.client().listObjectsV2(req.build());
                    for (S3Object o : page.contents()) {
                        paths.add(o.key().substring(prefix.length()));
                    }
                    token = Boolean.TRUE.equals(page.isTruncated()) ? page.nextContinuationToken() : null;
                } while (token != null);
            } else if (Files.isDirectory(local)) {
                try (Stream<Path> s = Files.walk(local)) {
                    s.filter(Files::isRegularFile).forEach(p -> paths.add(local.relativize(p).toString().replace('\\', '/')));
                } catch (java.io.UncheckedIOException e) {
                    // a file renamed or deleted while walking: the next poll sees it
                }
            }
            return paths;
        }

        private static boolean visible(String path) {
            if (!path.endsWith(".parquet")) {
                return false;
            }
            for (String segment : path.split("/")) {
                if (segment.startsWith(".") || segment.startsWith("_")) {
                    return false;
                }
            }
            return true;
        }

        /** {all tables, snapshots} files first listed in (from, to]. */
        long[] filesListedBetween(long from, long to) {
            long all = 0;
            long snapshots = 0;
            for (Map.Entry<String, Long> e : firstSeen.entrySet()) {
                if (e.getValue() > from && e.getValue() <= to) {
                    all++;
                    if (e.getKey().startsWith(HivePartition.SNAPSHOTS + "/")) {
                        snapshots++;
                    }
                }
            }
            return new long[] {all, snapshots};
        }

        /**
         * {p50, p95, dumps, dumps not yet visible} of publish-to-visible milliseconds of the snapshot rows: a dump's
         * rows are visible once every snapshot partition it writes has a visible file first listed after its publish.
         */
        double[] visibility(Map<DumpManifest, Long> published) {
            Map<String, List<Long>> byPartition = new java.util.HashMap<>();
            for (Map.Entry<String, Long> e : firstSeen.entrySet()) {
                int slash = e.getKey().lastIndexOf('/');
                byPartition.computeIfAbsent(e.getKey().substring(0, Math.max(0, slash)), k -> new ArrayList<>())
                        .add(e.getValue());
            }
            List<Double> latencies = new ArrayList<>();
            long missing = 0;
            for (Map.Entry<DumpManifest, Long> d : published.entrySet()) {
                DumpManifest m = d.getKey();
                Set<String> partitions = new TreeSet<>();
                for (RecordPlan r : m.getRecords()) {
                    partitions.add(HivePartition.snapshots(m.getRunId(), m.getRank(), r.getStage()));
                }
                long visibleAt = 0;
                for (String p : partitions) {
                    long first = Long.MAX_VALUE;
                    for (long t : byPartition.getOrDefault(p, List.of())) {
                        if (t >= d.getValue() && t < first) {
                            first = t;
                        }
                    }
                    visibleAt = Math.max(visibleAt, first);
                }
                if (visibleAt == Long.MAX_VALUE) {
                    // not visible yet: counts as later than any visible one (a quantile that lands here is infinite)
                    missing++;
                    latencies.add(Double.POSITIVE_INFINITY);
                } else {
                    latencies.add((double) (visibleAt - d.getValue()));
                }
            }
            Collections.sort(latencies);
            double p50 = latencies.isEmpty() ? Double.NaN : latencies.get((int) Math.round(0.5 * (latencies.size() - 1)));
            double p95 = latencies.isEmpty() ? Double.NaN : latencies.get((int) Math.round(0.95 * (latencies.size() - 1)));
            // (infinite when the dump at that rank was not visible by the deadline)
            return new double[] {p50, p95, published.size(), missing};
        }
    }

    /** The Ceph daemons of the test server: their CPU, the gateway's request counter and access log. */
    private static final class Ceph {
        private static final Pattern ACCESS = Pattern.compile(
                "beast: \\S+: \\S+ - \\S+ \\[([^\\]]+)\\] \"(\\S+) (\\S+) [^\"]*\" (\\d+) (\\d+) - \"([^\"]*)\".*latency=([0-9.]+)s");
        private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("dd/MMM/yyyy:HH:mm:ss.SSS Z", Locale.ENGLISH);
        private final Path dir;

        Ceph(Path dir) {
            this.dir = dir;
        }

        /** radosgw's {@code rgw.req}: requests it has served. */
        long requests() throws IOException {
            String json = adminSocket(dir.resolve("run/client.rgw.a.asok"), "{\"prefix\": \"perf dump\"}");
            Matcher m = Pattern.compile("\"rgw\":\\s*\\{\\s*\"req\":\\s*(\\d+)").matcher(json);
            if (!m.find()) {
                throw new IllegalStateException("no rgw.req in radosgw's perf dump");
            }
            return Long.parseLong(m.group(1));
        }

        /** A command to a Ceph daemon's admin socket: the command's JSON and a NUL, answered by a length and JSON. */
        private static String adminSocket(Path socket, String command) throws IOException {
            try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
                ch.write(ByteBuffer.wrap((command + "\0").getBytes(StandardCharsets.UTF_8)));
                ByteBuffer len = ByteBuffer.allocate(4);
                while (len.hasRemaining() && ch.read(len) >= 0) {
                    // reading the length
                }
                int n = len.flip().getInt();
                if (n < 0 || n > (64 << 20)) {
                    throw new IOException("admin socket " + socket + " answered a length of " + n);
                }
                ByteBuffer body = ByteBuffer.allocate(n);
                while (body.hasRemaining() && ch.read(body) >= 0) {
                    // reading the answer
                }
                return new String(body.array(), 0, body.position(), StandardCharsets.UTF_8);
            }
        }

        /** CPU nanoseconds of radosgw, the OSD and the monitor so far. */
        long cpuNanos() {
            long sum = 0;
            for (String d : List.of("rgw.a", "osd.0", "mon.a")) {
                try {
                    String pid = Files.readString(dir.resolve("run/" + d + ".script.pid")).trim();
                    String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    sum += (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10_000_000L; // USER_HZ 100
                } catch (IOException | RuntimeException e) {
                    throw new IllegalStateException("cannot read the CPU time of Ceph's " + d + ": " + e, e);
                }
            }
            return sum;
        }

        long osdResidentMib() {
            try {
                String pid = Files.readString(dir.resolve("run/osd.0.script.pid")).trim();
                for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                    if (line.startsWith("VmRSS:")) {
                        return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024;
                    }
                }
            } catch (IOException | RuntimeException e) {
                // reported as -1
            }
            return -1;
        }

        private Path log() {
            return dir.resolve("log/client.rgw.a.log");
        }

        long logLength() throws IOException {
            return Files.size(log());
        }

        /**
         * The job's requests (not the harness's AWS SDK v2 client) in the gateway's access log from byte
         * {@code offset} on, stamped in (from, to]: per kind {count, server latency ns, bytes sent or received}.
         */
        Map<String, long[]> requestsByKind(long offset, long from, long to) throws Exception {
            Thread.sleep(1500); // Ceph's log is written by a thread of its own, a moment later
            Map<String, long[]> kinds = new TreeMap<>();
            try (RandomAccessFile f = new RandomAccessFile(log().toFile(), "r")) {
                f.seek(offset);
                byte[] rest = new byte[(int) Math.min(Integer.MAX_VALUE - 8, f.length() - offset)];
                f.readFully(rest);
                for (String line : new String(rest, StandardCharsets.UTF_8).split("\n")) {
                    Matcher m = ACCESS.matcher(line);
                    if (!m.find() || m.group(6).contains("aws-sdk-java/2")) {
                        continue;
                    }
                    long at = ZonedDateTime.parse(m.group(1), STAMP).toInstant().toEpochMilli();
                    if (at <= from || at > to) {
                        continue;
                    }
                    String kind = kind(m.group(2), m.group(3));
                    long[] v = kinds.computeIfAbsent(kind, k -> new long[3]);
                    v[0]++;
                    v[1] += (long) (Double.parseDouble(m.group(7)) * 1e9);
                    v[2] += Long.parseLong(m.group(5));
                }
            }
            return kinds;
        }

        /** The S3 operation of a request line (method and URI). */
        static String kind(String method, String uri) {
            String q = uri.contains("?") ? uri.substring(uri.indexOf('?') + 1) : "";
            String path = uri.contains("?") ? uri.substring(0, uri.indexOf('?')) : uri;
            boolean bucketOnly = path.indexOf('/', 1) < 0 || path.indexOf('/', 1) == path.length() - 1;
            return switch (method) {
                case "PUT" -> q.contains("partNumber=") ? "UploadPart" : "PutObject";
                case "POST" -> q.startsWith("uploads") || q.contains("&uploads") ? "CreateMultipartUpload"
                        : q.contains("uploadId=") ? "CompleteMultipartUpload" : q.contains("delete") ? "DeleteObjects" : "POST";
                case "DELETE" -> q.contains("uploadId=") ? "AbortMultipartUpload" : "DeleteObject";
                case "HEAD" -> bucketOnly ? "HeadBucket" : "HeadObject";
                case "GET" -> bucketOnly ? (q.contains("uploads") ? "ListMultipartUploads" : "ListObjects")
                        : q.contains("uploadId=") ? "ListParts" : "GetObject";
                default -> method;
            };
        }

        /** Has the gateway delete what was deleted now instead of after its two-hour grace period. */
        void collectGarbage() throws Exception {
            ProcessBuilder b = new ProcessBuilder("radosgw-admin", "-n", "client.admin", "gc", "process", "--include-all")
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD);
            b.environment().put("CEPH_CONF", dir.resolve("ceph.conf").toString());
            Process p = b.start();
            if (!p.waitFor(120, java.util.concurrent.TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IllegalStateException("radosgw-admin gc process failed or took over 2 minutes");
            }
        }
    }

    private static double med(List<Result> rs, java.util.function.ToDoubleFunction<Result> f) {
        return median(rs.stream().map(f::applyAsDouble).toList());
    }

    private static double median(List<Double> xs) {
        List<Double> s = new ArrayList<>(xs);
        s.removeIf(x -> x.isNaN());
        if (s.isEmpty()) {
            return Double.NaN;
        }
        s.sort(null);
        return s.get(s.size() / 2);
    }

    private static List<String> twoPlaces(List<Double> xs) {
        return xs.stream().map(x -> String.format(Locale.ROOT, "%.2f", x)).toList();
    }
}
