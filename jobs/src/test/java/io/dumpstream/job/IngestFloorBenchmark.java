package io.dumpstream.job;

import com.github.luben.zstd.Zstd;

import io.dumpstream.local.LocalKafka;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.xerial.snappy.Snappy;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
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
 *   <li>the same with ZSTD level 1 and with Snappy (the contract's other codec), for comparison;</li>
 *   <li>CRC, the statistics of section 5 over every value (read as float16, bfloat16 and float32 in turn,
 *       the benchmark's dtypes) and ZSTD level 1 to a file: the least per-byte work the issue asks of
 *       the job (checked, with statistics, compressed at ZSTD's cheapest common level), still without
 *       Flink, decoding of the record table or Parquet.</li>
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

    /**
     * Read and discard; plus CRC-32C; plus ZSTD level 3 (the floor), level 1, or Snappy, written to a
     * file; plus statistics and ZSTD level 1.
     */
    enum Mode { RAW, CRC, FLOOR, ZSTD1, SNAPPY, STATS_ZSTD1 }

    private static final io.dumpstream.format.Dtype[] STATS_DTYPES = {io.dumpstream.format.Dtype.FLOAT16,
        io.dumpstream.format.Dtype.BFLOAT16, io.dumpstream.format.Dtype.FLOAT32};

    @Test
    void consumeCrcAndCompressBesideRawConsume() throws Exception {
        try (LocalKafka kafka = LocalKafka.startEphemeral()) {
            String topic = "floor";
            kafka.createTopic(topic, 2);
            long messages = IngestThroughputBenchmark.publish(kafka, topic,
                    new IngestThroughputBenchmark.Shape("1 MiB", 16, 48 << 10), 0, TOTAL_BYTES, 0).messages();
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
                String[] names = {"raw consume", "+ CRC-32C", "+ ZSTD-3 to a file", "+ ZSTD-1 to a file", "+ Snappy to a file",
                    "+ stats + ZSTD-1"};
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

    /** Column by column, the median of rows of equal length. */
    static double[] medians(List<double[]> xs) {
        double[] m = new double[xs.get(0).length];
        for (int i = 0; i < m.length; i++) {
            final int k = i;
            double[] v = xs.stream().mapToDouble(x -> x[k]).sorted().toArray();
            m[i] = v[v.length / 2];
        }
        return m;
    }

    /** {MiB/s, process CPU ms per MiB} of reading the whole topic once in {@code mode}. */
    static double[] consume(LocalKafka kafka, String topic, long messages, Mode mode, Path out) throws Exception {
        try (FileChannel file = FileChannel.open(out, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            return consume(kafka, topic, messages, mode, new Output() {
                @Override
                public void write(byte[] b, int len) {
                    IngestFloorBenchmark.write(file, ByteBuffer.wrap(b, 0, len));
                }

                @Override
                public void land() throws java.io.IOException {
                    // one fsync of the whole output: 0.0-0.15 ms/MiB, most of the file having been written back
                    // by the kernel's flusher threads, outside this process, meanwhile (left out of the timing
                    // until 2026-12-07)
                    file.force(true);
                }
            });
        }
    }

    /**
     * {@link Mode#STATS_ZSTD1} with its output in part files of {@code partBytes} instead of one file,
     * each written the way Flink's local committer lands a part (the least the contract's
     * {@code run/rank/stage} layout asks of any exactly-once ingest on a local file system): its
     * partition directory made ({@code run=/rank=/stage=}, a new stage directory per part, as every part
     * of a fresh run is a partition of its own), a temporary file created, written, {@code fsync}ed at
     * close, renamed to its final name. The last part's close and rename are counted too.
     * {MiB/s, process CPU ms per MiB, parts written}.
     */
    static double[] consumeIntoParts(LocalKafka kafka, String topic, long messages, Path dir, long partBytes)
            throws Exception {
        Parts parts = new Parts(dir, Math.max(1, partBytes));
        double[] r = consume(kafka, topic, messages, Mode.STATS_ZSTD1, parts);
        return new double[] {r[0], r[1], parts.count};
    }

    /** Where a mode that writes puts its compressed values, and how it lands them once all are written. */
    private interface Output {
        void write(byte[] b, int len);

        void land() throws java.io.IOException;
    }

    /**
     * {MiB/s, process CPU ms per MiB} of reading the whole topic once in {@code mode}, writing to
     * {@code out}; landed means durable, so the landing (the fsync) is counted, as the job's of every part is.
     */
    private static double[] consume(LocalKafka kafka, String topic, long messages, Mode mode, Output out)
            throws Exception {
        CRC32C crc = new CRC32C();
        byte[] dst = new byte[(int) Math.max(Zstd.compressBound(LocalKafka.MAX_MESSAGE_BYTES),
                Snappy.maxCompressedLength(LocalKafka.MAX_MESSAGE_BYTES))];
        long[] sink = new long[2];
        double[] r = IngestThroughputBenchmark.consumeAll(kafka, topic, messages, v -> {
            if (mode != Mode.RAW) {
                crc.reset();
                crc.update(v, 0, v.length);
                sink[0] += crc.getValue();
            }
            if (mode == Mode.STATS_ZSTD1) {
                io.dumpstream.format.Dtype dt = STATS_DTYPES[(int) (sink[1]++ % STATS_DTYPES.length)];
                int whole = v.length - v.length % dt.elementSize();
                sink[0] += io.dumpstream.decode.TensorStats.compute(dt, v, 0, whole).hashCode();
            }
            if (mode.ordinal() >= Mode.FLOOR.ordinal()) {
                out.write(dst, compress(mode, v, dst));
            }
        });
        if (mode.ordinal() >= Mode.FLOOR.ordinal()) {
            long cpu = IngestThroughputBenchmark.processCpuNanos();
            out.land();
            r[1] += (IngestThroughputBenchmark.processCpuNanos() - cpu) / 1e6 / r[2];
        }
        if (sink[0] == 42) {
            System.out.println(); // keeps the CRC from being optimised away
        }
        return new double[] {r[0], r[1]};
    }

    /** Part files as a local committer lands them: see {@link #consumeIntoParts}. */
    private static final class Parts implements Output {
        private final Path dir;
        private final long partBytes;
        private FileChannel file;
        private Path temp;
        private Path target;
        private long inPart;
        int count;

        Parts(Path dir, long partBytes) {
            this.dir = dir;
            this.partBytes = partBytes;
        }

        @Override
        public void write(byte[] b, int len) {
            try {
                int off = 0;
                while (off < len) {
                    if (file == null) {
                        Path partition = dir.resolve("run=floor").resolve("rank=" + count % 4).resolve("stage=" + count);
                        Files.createDirectories(partition);
                        target = partition.resolve("part-" + count + ".zst");
                        temp = partition.resolve(".part-" + count + ".zst.inprogress");
                        file = FileChannel.open(temp, StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW);
                        inPart = 0;
                    }
                    int n = (int) Math.min(len - off, partBytes - inPart);
                    IngestFloorBenchmark.write(file, ByteBuffer.wrap(b, off, n));
                    off += n;
                    inPart += n;
                    if (inPart >= partBytes) {
                        land();
                    }
                }
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        /** Lands the open part: fsync, close, rename. */
        @Override
        public void land() throws java.io.IOException {
            if (file != null) {
                file.force(true);
                file.close();
                file = null;
                Files.move(temp, target, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
                count++;
            }
        }
    }

    private static int compress(Mode mode, byte[] v, byte[] dst) {
        try {
            if (mode == Mode.SNAPPY) {
                return Snappy.compress(v, 0, v.length, dst, 0);
            }
            long len = Zstd.compressByteArray(dst, 0, dst.length, v, 0, v.length, mode == Mode.FLOOR ? ZSTD_LEVEL : 1);
            if (Zstd.isError(len)) {
                throw new IllegalStateException("zstd: " + Zstd.getErrorName(len));
            }
            return (int) len;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void write(FileChannel file, ByteBuffer b) {
        try {
            while (b.hasRemaining()) {
                file.write(b);
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
