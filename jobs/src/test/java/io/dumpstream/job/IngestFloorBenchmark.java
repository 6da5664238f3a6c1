package io.dumpstream.job;

import com.github.luben.zstd.Zstd;

import io.dumpstream.format.DumpBuilder;
import io.dumpstream.local.LocalKafka;
import io.dumpstream.publish.DumpPublisher;
import io.dumpstream.publish.PublisherConfig;
import io.dumpstream.simulate.SyntheticRanks;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.xerial.snappy.Snappy;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.zip.CRC32C;

/**
 * What the 80%-of-raw-consume target of issue 4 asks of any ingest on this machine, with no Flink,
 * no decode and no Parquet: the same topic read three ways in one run, each as a plain
 * {@code KafkaConsumer} loop in one thread, round after round:
 * <ol>
 *   <li>raw: read and discard (the benchmark's baseline),</li>
 *   <li>CRC: plus CRC-32C of every value (the integrity check the contract requires of every chunk),</li>
 *   <li>floor: plus ZSTD (level 3, parquet-java's default) of every value, written to a file, fsynced at
 *       the end: the least work that lands the bytes verified and compressed as CONTRACT section 6 asks;</li>
 *   <li>the same with ZSTD level 1 and with Snappy (the contract's other codec), for comparison.</li>
 * </ol>
 * It prints wall MiB/s and process CPU ms per MiB (the broker runs in this JVM and is counted in all
 * three), medians, and floor/raw as a ratio: an upper bound of what the ingest job's ratio can reach.
 *
 * <pre>
 * mvn -B -o -q -pl jobs verify -Dtest=IngestFloorBenchmark -Dsurefire.failIfNoSpecifiedTests=false -DexcludedTags=none -DskipITs
 * </pre>
 */
@Tag("benchmark")
class IngestFloorBenchmark {
    private static final int ROUNDS = Integer.getInteger("bench.rounds", 5);
    private static final long TOTAL_BYTES = Long.getLong("bench.bytes", 384L << 20);
    private static final double MIB = 1024.0 * 1024.0;
    private static final int ZSTD_LEVEL = 3;

    /** Read and discard; plus CRC-32C; plus ZSTD level 3 (the floor), level 1, or Snappy, written to a file. */
    enum Mode { RAW, CRC, FLOOR, ZSTD1, SNAPPY }

    @Test
    void consumeCrcAndCompressBesideRawConsume() throws Exception {
        try (LocalKafka kafka = LocalKafka.startEphemeral()) {
            String topic = "floor";
            kafka.createTopic(topic, 2);
            long messages = publish(kafka, topic);
            Path out = Files.createTempFile("ingest-floor-", ".zst");
            try {
                List<List<double[]>> runs = new ArrayList<>();
                for (Mode m : Mode.values()) {
                    runs.add(new ArrayList<>());
                }
                for (int round = -1; round < ROUNDS; round++) { // round -1 warms the JIT up
                    for (Mode m : Mode.values()) {
                        double[] r = consume(kafka, topic, messages, m, out);
                        if (round >= 0) {
                            runs.get(m.ordinal()).add(r);
                        }
                        System.out.printf(Locale.ROOT, "round %d %-5s %7.1f MiB/s %6.2f ms CPU/MiB%n", round, m, r[0], r[1]);
                    }
                }
                double[] raw = medians(runs.get(0));
                double[] crc = medians(runs.get(1));
                System.out.printf(Locale.ROOT, "ingest floor, %d rounds, %.0f MiB of chunk values, medians (one thread each;"
                        + " 2-core bound = 2000 ms / CPU ms per MiB, as if the work spread over both cores with nothing else):%n",
                        ROUNDS, TOTAL_BYTES / MIB);
                String[] names = {"raw consume", "+ CRC-32C", "+ ZSTD-3 to a file", "+ ZSTD-1 to a file", "+ Snappy to a file"};
                for (Mode m : Mode.values()) {
                    double[] x = medians(runs.get(m.ordinal()));
                    System.out.printf(Locale.ROOT, "  %-20s %7.1f MiB/s  %6.2f ms CPU/MiB  ratio to raw %.2f | 2-core bound %6.1f MiB/s,"
                            + " ratio to raw %.2f%n", names[m.ordinal()], x[0], x[1], x[0] / raw[0], 2000 / x[1], 2000 / x[1] / raw[0]);
                }
            } finally {
                Files.deleteIfExists(out);
            }
        }
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    private static double[] medians(List<double[]> xs) {
        double[] m = new double[2];
        for (int i = 0; i < 2; i++) {
            final int k = i;
            double[] v = xs.stream().mapToDouble(x -> x[k]).sorted().toArray();
            m[i] = v[v.length / 2];
        }
        return m;
    }

    /** The 1 MiB-dump backlog of IngestThroughputBenchmark (16 records of 48 KiB, bf16/fp16/fp32, 4 ranks). */
    private static long publish(LocalKafka kafka, String topic) throws Exception {
        SyntheticRanks.Config c = new SyntheticRanks.Config();
        c.runId = "floor";
        c.worldSize = 4;
        c.records = 16;
        c.payloadBytes = 48 << 10;
        c.dtypes = List.of("bfloat16", "float16", "float32");
        c.truncatedDumpShare = 0;
        SyntheticRanks sim = new SyntheticRanks(1, c.validate());
        long bytes = 0;
        long messages = 0;
        try (DumpPublisher p = new DumpPublisher(PublisherConfig.builder(kafka.bootstrapServers()).topic(topic).build())) {
            for (long launch = 0; bytes < TOTAL_BYTES; launch++) {
                for (int rank = 0; rank < 4 && bytes < TOTAL_BYTES; rank++) {
                    DumpBuilder.Dump d = sim.dump(rank, launch).build();
                    messages += 1 + p.publish(d.manifest(), ByteBuffer.wrap(d.buffer())).chunks();
                    bytes += d.buffer().length;
                }
            }
        }
        return messages;
    }

    /** {MiB/s, process CPU ms per MiB} of reading the whole topic once in {@code mode}. */
    private static double[] consume(LocalKafka kafka, String topic, long messages, Mode mode, Path out) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", kafka.bootstrapServers());
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("max.partition.fetch.bytes", Integer.toString(LocalKafka.MAX_MESSAGE_BYTES));
        p.put("fetch.max.bytes", Integer.toString(64 << 20));
        CRC32C crc = new CRC32C();
        byte[] dst = new byte[(int) Math.max(Zstd.compressBound(LocalKafka.MAX_MESSAGE_BYTES),
                Snappy.maxCompressedLength(LocalKafka.MAX_MESSAGE_BYTES))];
        long sink = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p);
             FileChannel file = FileChannel.open(out, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
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
                    byte[] v = r.value();
                    if (v == null) {
                        continue;
                    }
                    bytes += v.length;
                    if (mode != Mode.RAW) {
                        crc.reset();
                        crc.update(v, 0, v.length);
                        sink += crc.getValue();
                    }
                    if (mode.ordinal() >= Mode.FLOOR.ordinal()) {
                        long len = mode == Mode.SNAPPY ? Snappy.compress(v, 0, v.length, dst, 0)
                                : Zstd.compressByteArray(dst, 0, dst.length, v, 0, v.length, mode == Mode.ZSTD1 ? 1 : ZSTD_LEVEL);
                        if (mode != Mode.SNAPPY && Zstd.isError(len)) {
                            throw new IllegalStateException("zstd: " + Zstd.getErrorName(len));
                        }
                        ByteBuffer b = ByteBuffer.wrap(dst, 0, (int) len);
                        while (b.hasRemaining()) {
                            file.write(b);
                        }
                    }
                }
            }
            if (mode.ordinal() >= Mode.FLOOR.ordinal()) {
                file.force(false);
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            double cpuMs = (processCpuNanos() - cpu0) / 1e6;
            if (sink == 42) {
                System.out.println(); // keeps the CRC from being optimised away
            }
            return new double[] {bytes / MIB / secs, cpuMs / (bytes / MIB)};
        }
    }
}
