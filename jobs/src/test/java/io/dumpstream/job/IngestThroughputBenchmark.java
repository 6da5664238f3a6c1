package io.dumpstream.job;

import io.dumpstream.format.DumpBuilder;
import io.dumpstream.local.LocalKafka;
import io.dumpstream.publish.DumpPublisher;
import io.dumpstream.publish.PublisherConfig;
import io.dumpstream.simulate.SyntheticRanks;
import io.dumpstream.table.HivePartition;
import io.dumpstream.table.LandedTables;

import org.apache.flink.configuration.Configuration;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.stream.Stream;

/**
 * End-to-end ingestion throughput and latency on this machine: the job on a local MiniCluster
 * (parallelism 2) draining a backlog of dumps from the in-process broker into committed Parquet,
 * beside a plain KafkaConsumer reading the same topic in the same run (the transport floor), as a
 * ratio; then publish-to-commit latency from the job's own {@code publishToCommitMillis} histogram
 * with dumps published at a steady rate. Beside the rates: process CPU milliseconds per MiB for the
 * raw consumer and for the job, the job's CPU split by thread group (the machine is shared, so CPU
 * per MiB is the steadier figure), snapshot files and partitions landed, and per shape an untimed
 * first round with a full-GC heap probe for the peak live heap (it also warms the JIT up).
 * Excluded from the default build (tag {@code benchmark}):
 *
 * <pre>
 * mvn -B -q -pl jobs -am verify -Dtest=IngestThroughputBenchmark -Dsurefire.failIfNoSpecifiedTests=false -DexcludedTags=none
 * # knobs: -Dbench.rounds=3 -Dbench.intervals=10,2 -Dbench.bytes=N -Dbench.shapes="1 MiB" -Dbench.heapProbeMillis=1000 (0: no memory round)
 * </pre>
 */
@Tag("benchmark")
class IngestThroughputBenchmark {
    private static final int ROUNDS = Integer.getInteger("bench.rounds", 3);
    private static final long TOTAL_BYTES = Long.getLong("bench.bytes", 384L << 20);
    private static final double MIB = 1024.0 * 1024.0;
    /** Period of the full-GC heap probe in the untimed memory round; 0 skips that round. */
    private static final long HEAP_PROBE_MILLIS = Long.getLong("bench.heapProbeMillis", 1000);
    private static final List<Duration> INTERVALS = java.util.Arrays.stream(
            System.getProperty("bench.intervals", "10,2").split(",")).map(x -> Duration.ofSeconds(Long.parseLong(x.trim()))).toList();

    record Shape(String name, int records, long payloadBytes) {
    }

    @Test
    void ingestThroughputAndLatency() throws Exception {
        List<Shape> shapes = new ArrayList<>(List.of(new Shape("1 MiB", 16, 48 << 10), new Shape("64 MiB", 16, 4L << 20)));
        String only = System.getProperty("bench.shapes"); // e.g. "1 MiB"
        if (only != null) {
            shapes.removeIf(x -> !java.util.Arrays.asList(only.split(",")).contains(x.name()));
        }
        List<String> report = new ArrayList<>();
        try (LocalKafka kafka = LocalKafka.startEphemeral()) {
            for (Shape shape : shapes) {
                for (Duration interval : INTERVALS) {
                    List<Double> processing = new ArrayList<>();
                    List<Double> committed = new ArrayList<>();
                    List<Double> consume = new ArrayList<>();
                    List<Double> rawCpu = new ArrayList<>();
                    List<Double> jobCpu = new ArrayList<>();
                    List<Double> peakHeap = new ArrayList<>();
                    if (HEAP_PROBE_MILLIS > 0 && interval.equals(INTERVALS.get(0))) {
                        // first, untimed: it also warms the JIT up for this shape (a cold first round spent
                        // half its CPU compiling)
                        double[] live = memoryRound(kafka, shape, interval);
                        report.add(String.format(Locale.ROOT, "%-7s dumps, checkpoint every %2ds: peak live heap %.0f MiB"
                                        + " (after a full GC every %d ms, untimed round; heap before the job %.0f MiB, so the job"
                                        + " adds %.0f MiB); largest payload slot %.0f KiB x parallelism 2 = %.2f MiB",
                                shape.name, interval.toSeconds(), live[0] / MIB, HEAP_PROBE_MILLIS, live[1] / MIB,
                                (live[0] - live[1]) / MIB, shape.payloadBytes / 1024.0, 2 * shape.payloadBytes / MIB));
                    }
                    for (int round = 0; round < ROUNDS; round++) {
                        Path dir = Files.createTempDirectory("ingest-bench-");
                        String topic = "bench-" + shape.payloadBytes + "-" + interval.toMillis() + "-" + round;
                        kafka.createTopic(topic, 2);
                        kafka.createTopic(topic + ".dlq", 1);
                        Backlog b = publish(kafka, topic, shape, round, TOTAL_BYTES, 0);
                        double[] rawAndCpu = consumeAll(kafka, topic, b.messages);
                        double raw = rawAndCpu[0];
                        long baseline = HeapWatch.liveNow();
                        double[] job = drain(kafka, topic, dir, b, interval, 0);
                        consume.add(raw);
                        processing.add(job[0]);
                        committed.add(job[1]);
                        rawCpu.add(rawAndCpu[1]);
                        jobCpu.add(job[2]);
                        peakHeap.add(job[3] / MIB);
                        List<Path> landed = new LandedTables(dir.resolve("out")).files(HivePartition.SNAPSHOTS);
                        long files = landed.size();
                        long partitions = landed.stream().map(Path::getParent).distinct().count();
                        System.out.printf(Locale.ROOT, "%s dumps, checkpoint %ds, round %d: %d dumps %.0f MiB; raw consumer"
                                + " %.1f MiB/s (%.1f CPU ms/MiB); job processing %.1f MiB/s (ratio %.2f; %.1f CPU ms/MiB,"
                                + " CPU ratio %.2f), to committed Parquet %.1f MiB/s; %d snapshot files in %d partitions (%.1f rows each);"
                                + " heap after GC: baseline %.0f MiB, peak during the drain %.0f MiB over %d collections;"
                                + " bound: largest payload slot %.2f MiB x parallelism 2 + constant%n",
                                shape.name, interval.toSeconds(), round, b.dumps, b.bytes / MIB, raw, rawAndCpu[1], job[0],
                                job[0] / raw, job[2], rawAndCpu[1] / job[2], job[1], files, partitions, (double) b.records / files,
                                baseline / MIB, job[3] / MIB, (long) job[4], shape.payloadBytes / MIB);
                        delete(dir);
                        try (var admin = kafka.admin()) {
                            admin.deleteTopics(List.of(topic, topic + ".dlq")).all().get();
                        }
                    }
                    report.add(String.format(Locale.ROOT, "%-7s dumps, checkpoint every %2ds: job %.1f MiB/s, raw consumer"
                                    + " %.1f MiB/s, ratio %.2f; to committed Parquet %.1f MiB/s; CPU ms/MiB job %.1f, raw %.1f"
                                    + " (CPU ratio %.2f); peak heap after GC %.0f MiB (medians of %d)",
                            shape.name, interval.toSeconds(), median(processing), median(consume),
                            median(processing) / median(consume), median(committed), median(jobCpu), median(rawCpu),
                            median(rawCpu) / median(jobCpu), median(peakHeap), ROUNDS));
                }
                double[] lat = latency(kafka, shape);
                report.add(String.format(Locale.ROOT, "%-7s dumps at a steady rate, checkpoint every 1s: publish-to-commit"
                        + " p50 %.0f ms, p95 %.0f ms over %.0f dumps", shape.name, lat[0], lat[1], lat[2]));
            }
        }
        report.add(0, "garbage collector: " + java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()
                .stream().map(java.lang.management.GarbageCollectorMXBean::getName).toList()
                + " (-Dtest.jvmArgs=-XX:+UseParallelGC to change it); " + Runtime.getRuntime().availableProcessors()
                + " cores");
        System.out.println();
        report.forEach(System.out::println);
    }

    record Backlog(int dumps, long bytes, long messages, long records) {
    }

    /** An untimed drain with the heap probe on: {peak live heap, live heap before the job}. */
    static double[] memoryRound(LocalKafka kafka, Shape shape, Duration interval) throws Exception {
        Path dir = Files.createTempDirectory("ingest-bench-mem-");
        String topic = "bench-mem-" + shape.payloadBytes + "-" + interval.toMillis();
        kafka.createTopic(topic, 2);
        kafka.createTopic(topic + ".dlq", 1);
        try {
            Backlog b = publish(kafka, topic, shape, 7, TOTAL_BYTES, 0);
            long baseline = HeapWatch.liveNow();
            long baselineDirect = io.dumpstream.table.OffHeapPages.directBytesInUse();
            double[] job = drain(kafka, topic, dir, b, interval, HEAP_PROBE_MILLIS);
            System.out.printf(Locale.ROOT, "%s dumps, checkpoint %ds, memory round: peak live heap %.0f MiB (baseline %.0f MiB),"
                    + " peak direct memory %.0f MiB (baseline %.0f MiB), job %.1f MiB/s with the probe's pauses%n",
                    shape.name, interval.toSeconds(), job[5] / MIB, baseline / MIB, job[6] / MIB, baselineDirect / MIB,
                    job[0]);
            return new double[] {job[5], baseline, job[6], baselineDirect};
        } finally {
            delete(dir);
            try (var admin = kafka.admin()) {
                admin.deleteTopics(List.of(topic, topic + ".dlq")).all().get();
            }
        }
    }

    static Backlog publish(LocalKafka kafka, String topic, Shape shape, long seed, long total, double rate)
            throws Exception {
        return publish(kafka, topic, shape, seed, total, rate, new Properties(), (manifest, millis) -> { });
    }

    /**
     * {@link #publish(LocalKafka, String, Shape, long, long, double)} with producer {@code client} properties
     * (e.g. a {@code client.id} that names its network thread), telling {@code sent} each dump's manifest and
     * the wall-clock millisecond its publish started.
     */
    static Backlog publish(LocalKafka kafka, String topic, Shape shape, long seed, long total, double rate,
                           Properties client, java.util.function.BiConsumer<io.dumpstream.schema.DumpManifest, Long> sent)
            throws Exception {
        SyntheticRanks.Config c = new SyntheticRanks.Config();
        c.runId = "bench";
        c.worldSize = 4;
        c.records = shape.records;
        c.payloadBytes = shape.payloadBytes;
        c.dtypes = List.of("bfloat16", "float16", "float32");
        c.truncatedDumpShare = 0;
        SyntheticRanks sim = new SyntheticRanks(seed + 1, c.validate());
        int dumps = 0;
        long bytes = 0;
        long messages = 0;
        long records = 0;
        long t0 = System.nanoTime();
        try (DumpPublisher p = new DumpPublisher(PublisherConfig.builder(kafka.bootstrapServers()).topic(topic)
                .clientProperties(client).build())) {
            for (long launch = 0; bytes < total; launch++) {
                for (int rank = 0; rank < 4 && bytes < total; rank++) {
                    if (rate > 0) {
                        long wait = t0 + (long) (dumps * 1e9 / rate) - System.nanoTime();
                        if (wait > 0) {
                            Thread.sleep(wait / 1_000_000);
                        }
                    }
                    DumpBuilder.Dump d = sim.dump(rank, launch).build();
                    sent.accept(d.manifest(), System.currentTimeMillis());
                    var r = p.publish(d.manifest(), ByteBuffer.wrap(d.buffer()));
                    dumps++;
                    bytes += d.buffer().length;
                    messages += 1 + r.chunks();
                    records += d.manifest().getRecords().size();
                }
            }
        }
        return new Backlog(dumps, bytes, messages, records);
    }

    /** CPU time of this whole process (broker, consumers, MiniCluster): the machine is shared, so CPU per MiB is the steadier figure. */
    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /**
     * A plain consumer reading every message of the topic: {MiB/s of message values, process CPU
     * milliseconds per MiB (the broker serving the fetches included)}.
     */
    private static double[] consumeAll(LocalKafka kafka, String topic, long messages) {
        return consumeAll(kafka, topic, messages, v -> { });
    }

    /** {@link #consumeAll(LocalKafka, String, long)} with {@code work} done on every message value in the loop. */
    static double[] consumeAll(LocalKafka kafka, String topic, long messages, java.util.function.Consumer<byte[]> work) {
        return consumeAll(kafka, topic, messages, new Properties(), work);
    }

    /**
     * As {@link #consumeAll(LocalKafka, String, long, java.util.function.Consumer)} with {@code settings}
     * over the loop's own consumer settings; {MiB/s, process CPU ms per MiB, MiB of values read}.
     */
    static double[] consumeAll(LocalKafka kafka, String topic, long messages, Properties settings,
                               java.util.function.Consumer<byte[]> work) {
        Properties p = new Properties();
        p.put("bootstrap.servers", kafka.bootstrapServers());
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("max.partition.fetch.bytes", Integer.toString(LocalKafka.MAX_MESSAGE_BYTES));
        p.put("fetch.max.bytes", Integer.toString(64 << 20));
        p.putAll(settings);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            List<TopicPartition> parts = new ArrayList<>();
            consumer.partitionsFor(topic).forEach(i -> parts.add(new TopicPartition(topic, i.partition())));
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            long n = 0;
            long bytes = 0;
            long t0 = System.nanoTime();
            long cpu0 = processCpuNanos();
            while (n < messages) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    n++;
                    if (r.value() != null) {
                        bytes += r.value().length;
                        work.accept(r.value());
                    }
                }
            }
            return new double[] {bytes / MIB / ((System.nanoTime() - t0) / 1e9), (processCpuNanos() - cpu0) / 1e6 / (bytes / MIB),
                bytes / MIB};
        }
    }

    /**
     * The job drains the backlog: {processing MiB/s, committed MiB/s}. Processing runs from the first
     * message the job reads to the last record decoded and handed to the Parquet writers (the job's
     * own counters); committed runs from the same start to the last dumps row visible in committed
     * files, so it includes the wait for the final checkpoint. Also the process CPU milliseconds per
     * MiB over the processing span and the peak heap in use after a collection over the drain.
     */
    static double[] drain(LocalKafka kafka, String topic, Path dir, Backlog b, Duration interval,
                                  long heapProbeMillis) throws Exception {
        return drain(kafka, topic, dir, b, interval, heapProbeMillis, false);
    }

    /**
     * {@link #drain(LocalKafka, String, Path, Backlog, Duration, long)}; with {@code commitByStop}
     * the job is stopped with a savepoint as soon as the last record is decoded, which closes and
     * commits every open part at once (the work the next checkpoint would do, without the idle wait
     * for it), and the result has an eighth value: the process CPU milliseconds per MiB from the first
     * message to the stopped job with every dump committed, per-thread CPU over that span printed; and a
     * ninth: the JIT compiler threads' share of it.
     */
    static double[] drain(LocalKafka kafka, String topic, Path dir, Backlog b, Duration interval,
                                  long heapProbeMillis, boolean commitByStop) throws Exception {
        LandedTables tables = new LandedTables(dir.resolve("out"));
        ProgressReporter.forgetRetired();
        try (HeapWatch heap = new HeapWatch(heapProbeMillis);
             LocalIngest job = LocalIngest.start(config(kafka, topic, dir, interval), new Configuration())) {
            long start = 0;
            ThreadCpu threads = null;
            long cpuStart = 0;
            long cpuProcessed = 0;
            long processed = 0;
            long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
            while (System.nanoTime() < deadline) {
                long now = System.nanoTime();
                if (start == 0 && ProgressReporter.count("messagesIn") > 0) {
                    start = now;
                    cpuStart = processCpuNanos();
                    threads = new ThreadCpu();
                }
                if (processed == 0 && ProgressReporter.count("recordsDecoded") >= b.records) {
                    processed = now;
                    cpuProcessed = processCpuNanos();
                    double mib = b.bytes / MIB;
                    if (!commitByStop) {
                        printThreads(threads, mib);
                        threads.close();
                    } else {
                        ThreadCpu stopThreads = Boolean.getBoolean("bench.stopThreads") ? new ThreadCpu() : null;
                        job.stop(Duration.ofMinutes(2));
                        long stopped = System.nanoTime();
                        long cpuStopped = processCpuNanos();
                        if (stopThreads != null) {
                            System.out.println("  the stop's CPU by thread:");
                            printThreads(stopThreads, mib);
                            stopThreads.close();
                        }
                        if (tables.rowCount(HivePartition.DUMPS) < b.dumps) {
                            throw new AssertionError("the stop's savepoint committed " + tables.rowCount(HivePartition.DUMPS)
                                    + " of " + b.dumps + " dumps");
                        }
                        System.out.printf(Locale.ROOT, "  stop with savepoint: %.0f ms, %.1f ms/MiB of CPU after the last"
                                + " record decoded%n", (stopped - processed) / 1e6, (cpuStopped - cpuProcessed) / 1e6 / mib);
                        java.util.Map<String, Long> spent = threads.since();
                        printThreads(spent, mib);
                        double jit = spent.getOrDefault(ThreadCpu.JIT, 0L) / 1e6 / mib;
                        threads.close();
                        return new double[] {mib / ((processed - start) / 1e9), mib / ((stopped - start) / 1e9),
                            (cpuProcessed - cpuStart) / 1e6 / mib, heap.peakAfterGcBytes(), heap.collections(),
                            heap.peakLiveBytes(), heap.peakDirectBytes(), (cpuStopped - cpuStart) / 1e6 / mib, jit};
                    }
                }
                if (processed != 0 && tables.rowCount(HivePartition.DUMPS) >= b.dumps) {
                    return new double[] {b.bytes / MIB / ((processed - start) / 1e9), b.bytes / MIB / ((now - start) / 1e9),
                        (cpuProcessed - cpuStart) / 1e6 / (b.bytes / MIB), heap.peakAfterGcBytes(), heap.collections(),
                        heap.peakLiveBytes(), heap.peakDirectBytes()};
                }
                if (job.ended()) {
                    throw new AssertionError("job ended early");
                }
                Thread.sleep(20);
            }
            throw new AssertionError("backlog not drained in 10 minutes");
        }
    }

    private static void printThreads(ThreadCpu threads, double mib) {
        printThreads(threads.since(), mib);
    }

    /** Prints the CPU per MiB of each thread group in {@code spent} (nanoseconds) from 0.1 ms/MiB up, largest first. */
    private static void printThreads(java.util.Map<String, Long> spent, double mib) {
        spent.entrySet().stream().filter(e -> e.getValue() / 1e6 / mib >= 0.1)
                .sorted((x, y) -> Long.compare(y.getValue(), x.getValue()))
                .forEach(e -> System.out.printf(Locale.ROOT, "  CPU %6.1f ms/MiB  %s%n", e.getValue() / 1e6 / mib, e.getKey()));
    }

    /** Dumps published at a steady rate well under the throughput: {p50, p95, count} of publish-to-commit. */
    private static double[] latency(LocalKafka kafka, Shape shape) throws Exception {
        long bytes = shape.payloadBytes > (1 << 20) ? 640L << 20 : 40L << 20;
        return latency(kafka, shape, Duration.ofSeconds(1), bytes);
    }

    /** {@link #latency(LocalKafka, Shape)} with checkpoints every {@code interval} and {@code bytes} published. */
    static double[] latency(LocalKafka kafka, Shape shape, Duration interval, long bytes) throws Exception {
        ProgressReporter.forgetRetired();
        Path dir = Files.createTempDirectory("ingest-latency-");
        String topic = "latency-" + shape.payloadBytes + "-" + interval.toMillis();
        kafka.createTopic(topic, 2);
        kafka.createTopic(topic + ".dlq", 1);
        LandedTables tables = new LandedTables(dir.resolve("out"));
        try (LocalIngest job = LocalIngest.start(config(kafka, topic, dir, interval), new Configuration())) {
            double rate = shape.payloadBytes > (1 << 20) ? 0.5 : 8;
            Thread.sleep(3000); // the job is up and polling
            Backlog b = publish(kafka, topic, shape, 99, bytes, rate);
            long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
            while (tables.rowCount(HivePartition.DUMPS) < b.dumps && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            Thread.sleep(1500 + interval.toMillis() / 2); // the committing checkpoint's notification reaches every subtask
            String h = "publishToCommitMillis";
            return new double[] {ProgressReporter.quantile(h, 0.5), ProgressReporter.quantile(h, 0.95),
                ProgressReporter.histogramCount(h)};
        } finally {
            delete(dir);
        }
    }

    static IngestConfig config(LocalKafka kafka, String topic, Path dir, Duration interval) {
        IngestConfig c = new IngestConfig();
        c.bootstrap = kafka.bootstrapServers();
        c.topic = topic;
        c.group = "bench-" + topic;
        c.out = dir.resolve("out").toString();
        c.checkpoints = dir.resolve("ck").toString();
        c.checkpointInterval = interval;
        c.parallelism = 2;
        c.resume = false;
        c.sinkBufferBytes = Long.getLong("bench.sinkBufferBytes", c.sinkBufferBytes);
        c.zstdLevel = Integer.getInteger("bench.zstdLevel", c.zstdLevel);
        c.compactCheckpoints = Integer.getInteger("bench.compactCheckpoints", c.compactCheckpoints);
        return c.validate();
    }

    private static double median(List<Double> xs) {
        List<Double> s = new ArrayList<>(xs);
        s.sort(null);
        return s.get(s.size() / 2);
    }

    static void delete(Path dir) throws Exception {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
