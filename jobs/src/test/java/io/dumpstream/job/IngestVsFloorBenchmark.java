package io.dumpstream.job;

import io.dumpstream.local.LocalKafka;
import io.dumpstream.table.HivePartition;
import io.dumpstream.table.LandedTables;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Issue 15's figure: the job's CPU per MiB against the floor's, measured in the same JVM on the same
 * backlog, per shape. The backlog is the throughput benchmark's (the simulator's stage mix, 4 ranks);
 * per round the floor ({@link IngestFloorBenchmark.Mode#STATS_ZSTD1}: one consumer, CRC-32C, the
 * section-5 statistics, ZSTD-1 to a file) reads the topic, then the job (MiniCluster, parallelism 2)
 * drains it into committed Parquet. Both are process CPU time of this JVM (all threads: broker,
 * Flink, GC, JIT), per MiB of chunk values. Prints per shape one line
 * {@code ingest-vs-floor shape=1MiB job_ms_per_mib=X floor_ms_per_mib=Y ratio=Z files_per_checkpoint=N}
 * (medians over rounds; files per checkpoint = snapshot files landed / checkpoints the drain spanned,
 * its committed wall time over the interval, rounded up), then a line with the peak live heap (an
 * untimed first round with a full-GC probe that also warms the JIT up) and publish-to-commit p50/p95
 * at a steady publish rate with the same checkpoint interval. A second line per shape sets the job against
 * the floor with its output in as many part files as the job landed, each landed as the job's committer
 * lands a part ({@link IngestFloorBenchmark#consumeIntoParts}): the least the contract's partition
 * layout asks of any exactly-once ingest on a local file system.
 *
 * <pre>
 * bash jobs/bench/ingest-vs-floor.sh
 * # knobs: -Dbench.rounds=3 -Dbench.bytes=N -Dbench.interval=10 -Dbench.shapes=1MiB,64MiB -Dbench.latencySeconds=30
 * </pre>
 */
@Tag("benchmark")
class IngestVsFloorBenchmark {
    private static final int ROUNDS = Integer.getInteger("bench.rounds", 3);
    /**
     * Untimed rounds (floor and job) before the timed ones. A round is a new short job over a few
     * seconds of backlog, and the per-record code (called some 4,000 times a round for 1 MiB dumps)
     * reaches the JIT's last tier only in the second or third round: without warm-up the JIT's
     * compile threads were 1.7-6.8 ms/MiB of the job's figure, a start-up cost a long-running job
     * pays once (JMH's warm-up iterations, for the same reason).
     */
    private static final int WARMUPS = Integer.getInteger("bench.warmups", 2);
    private static final long TOTAL_BYTES = Long.getLong("bench.bytes", 256L << 20);
    private static final Duration INTERVAL = Duration.ofSeconds(Long.getLong("bench.interval", 10));
    private static final long LATENCY_SECONDS = Long.getLong("bench.latencySeconds", 30);
    private static final double MIB = 1024.0 * 1024.0;
    /**
     * An A/B in one JVM: {@code -Dbench.ab=property=a,b} sets the system property to {@code a} in
     * even timed rounds and to {@code b} in odd ones (warm-ups alternate too) and reports the two
     * arms' medians; the job's factories read it when each round's job starts (e.g.
     * {@code dumpstream.smallPartEncoder=true,false}). On a shared machine whose speed drifts over
     * minutes, arms in turn compare better than two runs one after the other.
     */
    private static final String AB = System.getProperty("bench.ab", "");
    /**
     * Each timed round is run again with this many times the backlog (0 or 1: not), and the extra
     * bytes' CPU over the extra MiB is the marginal cost per MiB of floor and job: a job started for a
     * few seconds of backlog pays its start (task deployment, Kafka clients, the JIT compiling their
     * code for each new job) and its stop in every round, which a long-running job pays once.
     */
    private static final int MARGINAL = Integer.getInteger("bench.marginal", 3);

    @Test
    void jobAgainstFloor() throws Exception {
        List<String> shapes = List.of(System.getProperty("bench.shapes", "1MiB,64MiB").split(","));
        List<String> report = new ArrayList<>();
        try (LocalKafka kafka = LocalKafka.startEphemeral()) {
            for (String name : shapes) {
                IngestThroughputBenchmark.Shape shape = name.trim().equals("64MiB")
                        ? new IngestThroughputBenchmark.Shape("64 MiB", 16, 4L << 20)
                        : new IngestThroughputBenchmark.Shape("1 MiB", 16, 48 << 10);
                double[] live = IngestThroughputBenchmark.memoryRound(kafka, shape, INTERVAL);
                List<Double> job = new ArrayList<>();
                List<Double> floor = new ArrayList<>();
                List<Double> layoutFloor = new ArrayList<>();
                List<Double> jit = new ArrayList<>();
                List<Double> filesPerCheckpoint = new ArrayList<>();
                String[] ab = AB.isEmpty() ? null : AB.split("[=,]");
                List<List<Double>> armRatio = List.of(new ArrayList<>(), new ArrayList<>());
                List<List<Double>> armJob = List.of(new ArrayList<>(), new ArrayList<>());
                List<Double> marginalJob = new ArrayList<>();
                List<Double> marginalFloor = new ArrayList<>();
                List<Double> fixedJob = new ArrayList<>();
                for (int round = -WARMUPS; round < ROUNDS; round++) {
                    int arm = Math.floorMod(round, 2);
                    if (ab != null) {
                        System.setProperty(ab[0], ab[1 + arm]);
                    }
                    String label = (round < 0 ? "warm-up (untimed)" : "round") + (ab == null ? "" : " [" + ab[0] + "=" + ab[1 + arm] + "]");
                    String topic = "vs-floor-" + shape.payloadBytes() + "-" + (round < 0 ? "w" + -round : round);
                    double[] r = round(kafka, shape, name, label, round < 0 ? -round : round, topic, round < 0 ? 100 - round : round,
                            TOTAL_BYTES);
                    System.out.printf(Locale.ROOT, "  the JIT compiled for %.0f ms during the job's run (its window's CPU: %.0f ms)%n",
                            r[6], r[5]);
                    if (round >= 0) {
                        floor.add(r[0]);
                        layoutFloor.add(r[7]);
                        jit.add(r[8]);
                        job.add(r[1]);
                        filesPerCheckpoint.add(r[2]);
                        armRatio.get(arm).add(r[1] / r[0]);
                        armJob.get(arm).add(r[1]);
                        if (MARGINAL > 1) {
                            // the same round's backlog MARGINAL times over: what the extra bytes cost is the
                            // job's cost per MiB without what every job pays once (start, JIT of its start-up
                            // code, the stop), as in a job that runs for days
                            double[] big = round(kafka, shape, name, label + " x" + MARGINAL, round, topic + "-x", 200 + round,
                                    TOTAL_BYTES * MARGINAL);
                            double extra = (big[3] - r[3]) / MIB;
                            marginalFloor.add((big[4] - r[4]) / extra);
                            marginalJob.add((big[5] - r[5]) / extra);
                            fixedJob.add(r[5] - r[3] / MIB * marginalJob.get(marginalJob.size() - 1));
                            System.out.printf(Locale.ROOT, "%s round %d marginal: floor %.2f ms/MiB, job %.2f ms/MiB, ratio %.2f;"
                                            + " the job's fixed cost %.0f ms of CPU%n", name, round,
                                    marginalFloor.get(marginalFloor.size() - 1), marginalJob.get(marginalJob.size() - 1),
                                    marginalJob.get(marginalJob.size() - 1) / marginalFloor.get(marginalFloor.size() - 1),
                                    fixedJob.get(fixedJob.size() - 1));
                        }
                    }
                }
                if (MARGINAL > 1) {
                    List<Double> ratios = new ArrayList<>();
                    for (int i = 0; i < marginalJob.size(); i++) {
                        ratios.add(marginalJob.get(i) / marginalFloor.get(i));
                    }
                    report.add(String.format(Locale.ROOT, "ingest-vs-floor-marginal shape=%s job_ms_per_mib=%.2f"
                                    + " floor_ms_per_mib=%.2f ratio=%.2f job_fixed_ms=%.0f (ratios %s)", name.trim(),
                            median(marginalJob), median(marginalFloor), median(marginalJob) / median(marginalFloor),
                            median(fixedJob), twoPlaces(ratios)));
                }
                if (ab != null) {
                    System.clearProperty(ab[0]);
                    for (int arm = 0; arm < 2; arm++) {
                        report.add(String.format(Locale.ROOT, "ingest-vs-floor-ab shape=%s %s=%s job_ms_per_mib=%.2f"
                                        + " ratio=%.2f over %d rounds (ratios %s)", name.trim(), ab[0], ab[1 + arm],
                                median(armJob.get(arm)), median(armRatio.get(arm)), armRatio.get(arm).size(),
                                twoPlaces(armRatio.get(arm))));
                    }
                }
                long latencyBytes = (long) (LATENCY_SECONDS * (shape.payloadBytes() > (1 << 20) ? 0.5 : 8)
                        * shape.records() * shape.payloadBytes());
                double[] lat = IngestThroughputBenchmark.latency(kafka, shape, INTERVAL, latencyBytes);
                report.add(String.format(Locale.ROOT, "ingest-vs-floor shape=%s job_ms_per_mib=%.2f floor_ms_per_mib=%.2f"
                                + " ratio=%.2f files_per_checkpoint=%.0f", name.trim(), median(job), median(floor),
                        median(job) / median(floor), median(filesPerCheckpoint)));
                report.add(String.format(Locale.ROOT, "  shape=%s against the floor in part files as the layout needs"
                                + " (as many as the job landed, each fsynced and renamed): layout_floor_ms_per_mib=%.2f ratio=%.2f",
                        name.trim(), median(layoutFloor), median(job) / median(layoutFloor)));
                List<Double> withoutJit = new ArrayList<>();
                for (int i = 0; i < job.size(); i++) {
                    withoutJit.add((job.get(i) - jit.get(i)) / floor.get(i));
                }
                report.add(String.format(Locale.ROOT, "  shape=%s the JIT compiler threads during the job: %.2f ms/MiB"
                                + " (median; rounds %s); the job without them against the floor, an estimate for a JVM past"
                                + " its warm-up (the ratio above keeps them): ratio %.2f (rounds %s)", name.trim(), median(jit),
                        twoPlaces(jit), median(withoutJit), twoPlaces(withoutJit)));
                report.add(String.format(Locale.ROOT, "  shape=%s peak_live_heap_mib=%.0f (job adds %.0f)"
                                + " peak_direct_mib=%.0f (job adds %.0f) publish_to_commit_p50_ms=%.0f"
                                + " p95_ms=%.0f over %.0f dumps, checkpoint %ds (goal p50 < %d ms); medians of %d rounds,"
                                + " %.0f MiB each", name.trim(), live[0] / MIB, (live[0] - live[1]) / MIB, live[2] / MIB,
                        (live[2] - live[3]) / MIB, lat[0], lat[1],
                        lat[2], INTERVAL.toSeconds(), INTERVAL.toMillis() + 2000, ROUNDS, TOTAL_BYTES / MIB)
                        + (WARMUPS > 0 ? " after " + WARMUPS + " untimed" : ""));
            }
        }
        report.add("  garbage collector: " + java.lang.management.ManagementFactory.getGarbageCollectorMXBeans().stream()
                .map(java.lang.management.GarbageCollectorMXBean::getName).toList() + "; "
                + Runtime.getRuntime().availableProcessors() + " cores");
        System.out.println();
        report.forEach(System.out::println);
    }

    /**
     * Publishes {@code bytes} of backlog to a new topic, reads it with the floor, drains it with the
     * job: {floor ms/MiB, job ms/MiB through the commit, snapshot files per checkpoint, backlog bytes,
     * floor CPU ms, job CPU ms, the JIT's compile ms from the job's start to its stop, the floor's ms/MiB
     * with its output in as many part files as the job landed, the JIT compiler threads' CPU ms/MiB in the job's window}. Before the floor's
     * and before the job's window the JIT is left to finish what the step before queued
     * ({@link #quiesceJit()}).
     */
    private static double[] round(LocalKafka kafka, IngestThroughputBenchmark.Shape shape, String name, String label,
                                  int index, String topic, long seed, long bytes) throws Exception {
        Path dir = Files.createTempDirectory("ingest-vs-floor-");
        Path out = Files.createTempFile("ingest-vs-floor-", ".zst");
        kafka.createTopic(topic, 2);
        kafka.createTopic(topic + ".dlq", 1);
        try {
            IngestThroughputBenchmark.Backlog b = IngestThroughputBenchmark.publish(kafka, topic, shape, seed, bytes, 0);
            quiesceJit();
            double[] f = IngestFloorBenchmark.consume(kafka, topic, b.messages(), IngestFloorBenchmark.Mode.STATS_ZSTD1, out);
            quiesceJit();
            long compiled = compileMillis();
            double[] j = IngestThroughputBenchmark.drain(kafka, topic, dir, b, INTERVAL, 0, true);
            compiled = compileMillis() - compiled;
            long files = new LandedTables(dir.resolve("out")).files(HivePartition.SNAPSHOTS).size();
            // the floor again with its output in as many part files as the job landed, each landed the way the
            // job's committer lands one (see IngestFloorBenchmark.consumeIntoParts)
            quiesceJit();
            double[] lf = IngestFloorBenchmark.consumeIntoParts(kafka, topic, b.messages(), dir.resolve("layout-floor"),
                    (Files.size(out) + files - 1) / Math.max(1, files));
            double committedSeconds = b.bytes() / MIB / j[1];
            double checkpoints = Math.max(1, Math.ceil(committedSeconds / INTERVAL.toSeconds()));
            System.out.printf(Locale.ROOT, "%s %s %d: %d dumps %.0f MiB; floor %.2f ms/MiB (%.1f MiB/s);"
                            + " job %.2f ms/MiB through the commit (%.2f to the last record decoded;"
                            + " %.1f MiB/s processing, %.1f MiB/s committed); ratio %.2f;"
                            + " %d snapshot files over %.0f checkpoints; the floor in %.0f part files %.2f ms/MiB (ratio %.2f)%n",
                    name, label, index, b.dumps(), b.bytes() / MIB, f[1], f[0], j[7], j[2], j[0], j[1], j[7] / f[1], files,
                    checkpoints, lf[2], lf[1], j[7] / lf[1]);
            double mib = b.bytes() / MIB;
            return new double[] {f[1], j[7], files / checkpoints, b.bytes(), f[1] * mib, j[7] * mib, compiled, lf[1], j[8]};
        } finally {
            IngestThroughputBenchmark.delete(dir);
            Files.deleteIfExists(out);
            try (var admin = kafka.admin()) {
                admin.deleteTopics(List.of(topic, topic + ".dlq")).all().get();
            }
        }
    }

    /**
     * Waits (at most 20 s) until the JIT has compiled nothing for half a second. Publisher, broker and
     * floor share this JVM with the job: the methods a publish makes hot (the producer, the broker's
     * produce path) are queued for compilation while it runs and compiled in the seconds after it,
     * which fell into the floor's window (the floor read 2.9-3.6 ms/MiB with the wait in rounds
     * where it read 3.4-4.9 without). What the floor or the job makes hot itself is compiled in its
     * own window and counted there.
     */
    private static void quiesceJit() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        long last = compileMillis();
        int quiet = 0;
        while (quiet < 5 && System.nanoTime() < deadline) {
            Thread.sleep(100);
            long now = compileMillis();
            quiet = now == last ? quiet + 1 : 0;
            last = now;
        }
    }

    /** The JIT's compile time so far in milliseconds (0 where the JVM does not tell). */
    private static long compileMillis() {
        java.lang.management.CompilationMXBean jit = java.lang.management.ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : 0;
    }

    private static List<String> twoPlaces(List<Double> xs) {
        return xs.stream().map(x -> String.format(Locale.ROOT, "%.2f", x)).toList();
    }

    private static double median(List<Double> xs) {
        List<Double> s = new ArrayList<>(xs);
        s.sort(null);
        return s.get(s.size() / 2);
    }
}
