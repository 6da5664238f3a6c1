package io.dumpstream.job;

import io.dumpstream.schema.TensorSnapshot;
import io.dumpstream.table.ParquetWriters;
import io.dumpstream.table.PartWriter;

import org.apache.avro.specific.SpecificData;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.parquet.hadoop.ParquetWriter;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * Part writing alone, the parquet-avro writer of before against the lean {@link PartWriter}: the
 * same snapshot rows (bf16 payloads of N(0,1) values, the job's sink settings: ZSTD, 64 KiB pages,
 * no dictionaries), each part through the sink's buffered stream into a stream that counts and
 * discards, one thread. The two run in turn, round after round (every other round the second
 * first), so they share the machine's load.
 * Per round: parts per second and CPU ms per MiB of payload (this thread's CPU time), bytes
 * allocated per part; medians of the timed rounds after warm-up rounds.
 *
 * <pre>
 * mvn -B -o -q -pl jobs -am test-compile dependency:build-classpath -Dmdep.outputFile=target/cp.txt -Dmdep.includeScope=test
 * CP=jobs/target/test-classes:jobs/target/classes:common/target/classes:schemas/target/classes:$(cat jobs/target/cp.txt)
 * java -XX:+UseParallelGC -cp $CP io.dumpstream.job.PartWriterBench 7 49152 4 2000   # 1 MiB dumps: 48 KiB records
 * java -XX:+UseParallelGC -cp $CP io.dumpstream.job.PartWriterBench 7 4194304 4 40   # 64 MiB dumps: 4 MiB records
 * # args: timed rounds, payload bytes per row, rows per part, parts per round [, old | lean: that writer only, e.g. under JFR]
 * java -XX:+UseParallelGC -cp $CP io.dumpstream.job.PartWriterBench 15 49152 4 3000 ab dumpstream.pagePool=true,false
 * # ab property=a,b: two lean writers, their factories built with the system property at a and at b, in turn
 * </pre>
 */
public final class PartWriterBench {
    private static final double MIB = 1024.0 * 1024.0;
    private static final int WARMUP = 3;

    private PartWriterBench() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 7;
        int payload = args.length > 1 ? Integer.parseInt(args[1]) : 48 << 10;
        int rowsPerPart = args.length > 2 ? Integer.parseInt(args[2]) : 4;
        int parts = args.length > 3 ? Integer.parseInt(args[3]) : 2000;
        ParquetWriters.Settings settings = ParquetWriters.Settings.defaults().withPageBytes(64 << 10).withDictionary(false)
                .withZstdLevel(Integer.getInteger("bench.zstdLevel", ParquetWriters.Settings.DEFAULT_ZSTD_LEVEL));
        List<TensorSnapshot> rows = rows(Math.min(64, rowsPerPart * 8), payload);
        String only = args.length > 4 ? args[4] : "both";
        Writer[] writers = only.equals("lean") ? new Writer[] {new Lean(settings)}
                : only.equals("old") ? new Writer[] {new Old(settings)}
                : only.equals("ab") ? ab(settings, args[5]) : new Writer[] {new Old(settings), new Lean(settings)};
        double[][] partsPerSecond = new double[2][rounds];
        double[][] msPerMiB = new double[2][rounds];
        double[][] allocPerPart = new double[2][rounds];
        double[][] bytesPerPart = new double[2][rounds];
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long self = Thread.currentThread().getId();
        System.out.printf(Locale.ROOT, "part writing: %d B payload per row, %d rows per part, %d parts per round; zstd level %d; %d cores,"
                + " load average %.2f%n", payload, rowsPerPart, parts, settings.zstdLevel(), Runtime.getRuntime().availableProcessors(),
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        for (int round = -WARMUP; round < rounds; round++) {
            for (int turn = 0; turn < writers.length; turn++) {
                // every other round in the other order: neither writer always runs first (after the other's garbage)
                int w = round % 2 == 0 ? turn : writers.length - 1 - turn;
                Discard sink = new Discard();
                long cpu0 = threads.getCurrentThreadCpuTime();
                long alloc0 = threads.getThreadAllocatedBytes(self);
                long t0 = System.nanoTime();
                long payloadBytes = 0;
                int next = 0;
                for (int p = 0; p < parts; p++) {
                    Part part = writers[w].open(new ParquetBulkWriterFactory.SinkStream(sink));
                    for (int r = 0; r < rowsPerPart; r++) {
                        TensorSnapshot row = rows.get(next++ % rows.size());
                        part.write(row);
                        payloadBytes += row.getData().remaining();
                    }
                    part.close();
                }
                long wall = System.nanoTime() - t0;
                long cpu = threads.getCurrentThreadCpuTime() - cpu0;
                long alloc = threads.getThreadAllocatedBytes(self) - alloc0;
                if (round >= 0) {
                    partsPerSecond[w][round] = parts / (wall / 1e9);
                    msPerMiB[w][round] = cpu / 1e6 / (payloadBytes / MIB);
                    allocPerPart[w][round] = alloc / (double) parts;
                    bytesPerPart[w][round] = sink.pos / (double) parts;
                }
            }
        }
        for (int w = 0; w < writers.length; w++) {
            System.out.printf(Locale.ROOT, "  %-40s %9.1f parts/s  %7.2f ms CPU per MiB  %6.0f us CPU per part"
                            + "  %8.0f B allocated per part  %8.0f B per file  (CPU per MiB over the rounds %.2f-%.2f)%n",
                    writers[w].name(), median(partsPerSecond[w]),
                    median(msPerMiB[w]), median(msPerMiB[w]) * payload * rowsPerPart / MIB * 1000,
                    median(allocPerPart[w]), median(bytesPerPart[w]), Arrays.stream(msPerMiB[w]).min().orElse(0),
                    Arrays.stream(msPerMiB[w]).max().orElse(0));
        }
        if (writers.length < 2) {
            return;
        }
        // each round's two runs are neighbours in time: their ratio cancels most of the machine's drift
        double[] paired = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            paired[r] = msPerMiB[1][r] / msPerMiB[0][r];
        }
        System.out.printf(Locale.ROOT, "  %s / %s round by round: CPU per MiB x%.2f (median), rounds %s%n", writers[1].name(),
                writers[0].name(), median(paired), Arrays.toString(Arrays.stream(paired)
                        .mapToObj(x -> String.format(Locale.ROOT, "%.2f", x)).toArray()));
        System.out.printf(Locale.ROOT, "  %s / %s: parts/s x%.2f, CPU per MiB x%.2f (medians of %d rounds after %d"
                        + " warm-up; load average now %.2f)%n", writers[1].name(), writers[0].name(),
                median(partsPerSecond[1]) / median(partsPerSecond[0]),
                median(msPerMiB[1]) / median(msPerMiB[0]), rounds, WARMUP,
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }

    /** Two lean writers whose factories are built with system property {@code spec}'s name at its first and second value. */
    private static Writer[] ab(ParquetWriters.Settings settings, String spec) {
        int eq = spec.indexOf('=');
        String property = spec.substring(0, eq);
        String[] values = spec.substring(eq + 1).split(",");
        if (eq < 1 || values.length != 2) {
            throw new IllegalArgumentException("ab wants property=a,b, not " + spec);
        }
        String before = System.getProperty(property);
        Writer[] writers = new Writer[2];
        for (int i = 0; i < 2; i++) {
            System.setProperty(property, values[i]);
            writers[i] = new Lean(settings, property + "=" + values[i]);
        }
        if (before == null) {
            System.clearProperty(property);
        } else {
            System.setProperty(property, before);
        }
        return writers;
    }

    /** Snapshot rows as the decoder builds them, bf16 payloads of N(0, 1) values. */
    static List<TensorSnapshot> rows(int n, int payload) {
        Random random = new Random(15);
        List<TensorSnapshot> rows = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] data = new byte[payload];
            for (int k = 0; k + 1 < payload; k += 2) {
                int bits = Float.floatToRawIntBits((float) random.nextGaussian()) >>> 16;
                data[k] = (byte) bits;
                data[k + 1] = (byte) (bits >>> 8);
            }
            long numel = payload / 2;
            rows.add(TensorSnapshot.newBuilder()
                    .setDumpId("bench/" + (i % 4) + "/" + (1000 + i)).setRunId("bench").setStageName("stage-" + (i % 7))
                    .setLaunchId(1000 + i).setStep(i % 3 == 0 ? null : (long) i).setRecordIndex(i).setTaskId(7 * i)
                    .setTaskIndex(i % 5).setOwnerId(i % 2 == 0 ? null : (long) i).setOwnerLabel("expert")
                    .setCoreType("AIC").setCoreId(i % 24).setWorkerId(null).setIo(i % 2 == 0 ? "input" : "output")
                    .setPortIndex(i % 3).setPhase("after").setParameterPosition(i % 4).setTensorName("x" + i)
                    .setNote("").setDtype("bfloat16").setShape(List.of(numel / 64, 64L)).setStoredShape(List.of(numel / 64, 64L))
                    .setTruncated(false).setFullBytes(payload).setPayloadBytes(payload).setSourceOffsetBytes(0)
                    .setData(ByteBuffer.wrap(data)).setNumel(numel).setNanCount(0).setInfCount(0).setZeroCount(3)
                    .setMin(-4.5).setMax(4.25).setMean(0.001).setL2Norm(Math.sqrt(numel)).setPayloadCrc32c(0x1234L + i)
                    .setIngestedAt(Instant.ofEpochMilli(1_765_000_000_000L + i)).build());
        }
        return rows;
    }

    private static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    interface Part {
        void write(TensorSnapshot row) throws IOException;

        void close() throws IOException;
    }

    interface Writer {
        String name();

        Part open(ParquetBulkWriterFactory.SinkStream out) throws IOException;
    }

    /** The writer of before: a parquet-avro writer per part, codecs shared per subtask (commit d1c1702). */
    static final class Old implements Writer {
        private final ParquetWriters.Settings settings;
        private final SharedCodecs codecs;
        private final SpecificData model = ParquetWriters.modelOf(TensorSnapshot.class);

        Old(ParquetWriters.Settings settings) {
            this.settings = settings;
            this.codecs = new SharedCodecs(settings.pageBytes(), settings.zstdLevel());
        }

        @Override
        public String name() {
            return "parquet-avro per part";
        }

        @Override
        public Part open(ParquetBulkWriterFactory.SinkStream out) throws IOException {
            ParquetWriter<TensorSnapshot> w = ParquetWriters.create(out, model.getSchema(TensorSnapshot.class), model,
                    settings, codecs);
            return new Part() {
                @Override
                public void write(TensorSnapshot row) throws IOException {
                    w.write(row);
                }

                @Override
                public void close() throws IOException {
                    w.close();
                    out.flush();
                }
            };
        }
    }

    /** The lean part writer, one factory per subtask (as {@link ParquetBulkWriterFactory}). */
    static final class Lean implements Writer {
        private final PartWriter.Factory factory;
        private final String name;

        Lean(ParquetWriters.Settings settings) {
            this(settings, "lean PartWriter");
        }

        Lean(ParquetWriters.Settings settings, String name) {
            this.factory = new PartWriter.Factory(TensorSnapshot.getClassSchema(), settings);
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public Part open(ParquetBulkWriterFactory.SinkStream out) throws IOException {
            PartWriter<TensorSnapshot> w = factory.open(out);
            return new Part() {
                @Override
                public void write(TensorSnapshot row) throws IOException {
                    w.write(row);
                }

                @Override
                public void close() throws IOException {
                    w.close();
                    out.flush();
                }
            };
        }
    }

    /** A Flink part-file stream that counts and drops its bytes. */
    static final class Discard extends FSDataOutputStream {
        long pos;

        @Override
        public long getPos() {
            return pos;
        }

        @Override
        public void write(int b) {
            pos++;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            pos += len;
        }

        @Override
        public void flush() {
        }

        @Override
        public void sync() {
        }

        @Override
        public void close() {
        }
    }
}
