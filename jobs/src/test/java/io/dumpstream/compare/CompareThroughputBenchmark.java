package io.dumpstream.compare;

import io.dumpstream.cli.Main;
import io.dumpstream.format.DumpBuilder;
import io.dumpstream.manifest.ManifestParser;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Compare throughput in GB/s of compared payload (both sides), beside the same job reading the same
 * Parquet files through the same source and reader (every payload decompressed, nothing compared or
 * emitted: the I/O floor) and a {@code System.arraycopy} of the same
 * bytes, medians of timed rounds in one run. float32 payloads, candidate = baseline + small noise, so
 * every element goes through the metric loop (no bitwise short-circuit).
 *
 * <pre>mvn -B -q -o -pl jobs -am verify -Dtest=CompareThroughputBenchmark -Dsurefire.failIfNoSpecifiedTests=false -DexcludedTags=none</pre>
 */
@Tag("benchmark")
class CompareThroughputBenchmark {
    /** Records per run, spread over {@link #RANKS} ranks; 32 x 16 MiB = 512 MiB per run, 1 GiB compared. */
    static final int RECORDS = Integer.getInteger("bench.records", 32);
    static final int RANKS = Integer.getInteger("bench.ranks", 4);
    static final int RECORD_BYTES = Integer.getInteger("bench.recordMiB", 16) << 20;
    static final int ROUNDS = Integer.getInteger("bench.rounds", 5);
    /** A directory to keep the decoded root in and reuse on the next run (profiling); default: a fresh temporary one. */
    static final String ROOT = System.getProperty("bench.root");

    @TempDir
    Path tmp;

    @Test
    void compareVersusReadFloor() throws Exception {
        Path root = ROOT == null ? tmp.resolve("root") : Path.of(ROOT);
        boolean reuse = ROOT != null && Files.isDirectory(root.resolve("snapshots"));
        Path spool = Files.createDirectories(tmp.resolve("spool"));
        Random rnd = new Random(7);
        int n = RECORD_BYTES / 4;
        for (int rank = 0; rank < (reuse ? 0 : RANKS); rank++) {
            DumpBuilder a = new DumpBuilder("A", rank, 1).chunkBytes(8 << 20);
            DumpBuilder b = new DumpBuilder("B", rank, 1).chunkBytes(8 << 20);
            for (int r = 0; r < RECORDS / RANKS; r++) {
                ByteBuffer x = ByteBuffer.allocate(RECORD_BYTES).order(ByteOrder.LITTLE_ENDIAN);
                ByteBuffer y = ByteBuffer.allocate(RECORD_BYTES).order(ByteOrder.LITTLE_ENDIAN);
                for (int i = 0; i < n; i++) {
                    float v = (float) rnd.nextGaussian();
                    x.putFloat(v);
                    y.putFloat(v + (float) (1e-7 * rnd.nextGaussian()));
                }
                a.add(new DumpBuilder.RecordSpec().taskId(r).stage("s" + r).tensorName("t").dtype("float32").actualShape(n)
                        .payload(x.array()));
                b.add(new DumpBuilder.RecordSpec().taskId(r).stage("s" + r).tensorName("t").dtype("float32").actualShape(n)
                        .payload(y.array()));
            }
            for (var e : List.of(java.util.Map.entry("a" + rank, a.build()), java.util.Map.entry("b" + rank, b.build()))) {
                Files.write(spool.resolve(e.getKey() + ".bin"), e.getValue().buffer());
                Files.write(spool.resolve(e.getKey() + ".manifest.json"), ManifestParser.toJson(e.getValue().manifest()));
            }
        }
        assertEquals(0, reuse ? 0 : Main.run(new String[]{"decode", "--dir", spool.toString(), "--out", root.toString()},
                new PrintStream(new ByteArrayOutputStream()), System.err));
        long payload = 2L * (RECORDS / RANKS) * RANKS * RECORD_BYTES; // baseline + candidate bytes compared
        int parallelism = Runtime.getRuntime().availableProcessors();

        // the metric loop alone, one thread, on one record pair of the same kind
        Operand ob = new Operand();
        Operand oc = new Operand();
        ob.dtype = oc.dtype = "float32";
        ob.data = new byte[RECORD_BYTES];
        oc.data = new byte[RECORD_BYTES];
        ByteBuffer xb = ByteBuffer.wrap(ob.data).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer yb = ByteBuffer.wrap(oc.data).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < n; i++) {
            float v = (float) rnd.nextGaussian();
            xb.putFloat(v);
            yb.putFloat(v + (float) (1e-7 * rnd.nextGaussian()));
        }
        ob.numel = oc.numel = n;
        oc.payloadCrc32c = 1;
        TensorComparator tc0 = new TensorComparator();
        List<Double> loop = new ArrayList<>();
        for (int round = 0; round <= 2 * ROUNDS; round++) {
            long t = System.nanoTime();
            tc0.compare(io.dumpstream.format.Dtype.FLOAT32, ob, oc, n, Tolerances.defaultFor(io.dumpstream.format.Dtype.FLOAT32));
            if (round > ROUNDS / 2) {
                loop.add(2.0 * RECORD_BYTES / ((System.nanoTime() - t) / 1e9) / 1e9);
            }
        }
        System.out.printf("metric loop alone (one thread, float32, %d MiB pair): %.3f GB/s%n", RECORD_BYTES >> 20, median(loop));

        List<Double> compare = new ArrayList<>();
        List<Double> compareNet = new ArrayList<>();
        List<Double> compareInner = new ArrayList<>();
        List<Double> floor = new ArrayList<>();
        List<Double> floorNet = new ArrayList<>();
        List<Double> floorInner = new ArrayList<>();
        List<Double> copy = new ArrayList<>();
        List<Double> compareCpu = new ArrayList<>();
        List<Double> floorCpu = new ArrayList<>();
        List<Double> compareOpCpu = new ArrayList<>();
        List<Double> floorOpCpu = new ArrayList<>();
        double loadBefore = os().getSystemLoadAverage();
        // -Dbench.jfr=FILE: a JFR profile of the timed rounds (jfr print --events jdk.ExecutionSample FILE)
        jdk.jfr.Recording jfr = System.getProperty("bench.jfr") == null ? null
                : new jdk.jfr.Recording(jdk.jfr.Configuration.getConfiguration("profile"));
        if (jfr != null) {
            jfr.setDestination(Path.of(System.getProperty("bench.jfr")));
            jfr.start();
        }
        byte[] src = new byte[RECORD_BYTES];
        byte[] dst = new byte[RECORD_BYTES];
        for (int round = 0; round <= ROUNDS; round++) { // round 0 warms up
            CompareConfig c = new CompareConfig(root.toString(), "A", "B", tmp.resolve("out" + round).toString(), new PairKey(false, false),
                    Tolerances.defaults(), parallelism);
            long c0 = os().getProcessCpuTime();
            long t0 = System.nanoTime();
            StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(parallelism, CompareJob.configuration(c));
            CompareJob.build(env, c, CompareJob.source(c));
            JobExecutionResult rc = env.execute("compare");
            double tc = (System.nanoTime() - t0) / 1e9;
            double cc = (os().getProcessCpuTime() - c0) / 1e9;
            double tcNet = rc.getNetRuntime() / 1e3;
            double tcIn = inner(rc, ComparePartitions.LAST_RESULT_MILLIS);

            long c1 = os().getProcessCpuTime();
            long t1 = System.nanoTime();
            StreamExecutionEnvironment env2 = StreamExecutionEnvironment.createLocalEnvironment(parallelism, CompareJob.configuration(c));
            CompareJob.partitions(env2, CompareJob.source(c))
                    .flatMap(new ComparePartitions("A", "B", c.keys(), c.tolerances(), true),
                            TypeInformation.of(io.dumpstream.schema.FirstDivergence.class))
                    .uid("floor-read").name("read partitions, no compare")
                    .sinkTo(new DiscardingSink<>()).uid("floor-discard").name("discard");
            JobExecutionResult rf = env2.execute("read floor");
            double tf = (System.nanoTime() - t1) / 1e9;
            double cf = (os().getProcessCpuTime() - c1) / 1e9;
            double tfNet = rf.getNetRuntime() / 1e3;
            double tfIn = inner(rf, ComparePartitions.LAST_READ_MILLIS);

            long t2 = System.nanoTime();
            for (long done = 0; done < payload; done += RECORD_BYTES) {
                System.arraycopy(src, 0, dst, 0, RECORD_BYTES);
            }
            double ta = (System.nanoTime() - t2) / 1e9;
            if (round > 0) {
                compare.add(payload / tc / 1e9);
                compareNet.add(payload / tcNet / 1e9);
                compareInner.add(payload / tcIn / 1e9);
                floor.add(payload / tf / 1e9);
                floorNet.add(payload / tfNet / 1e9);
                floorInner.add(payload / tfIn / 1e9);
                copy.add(payload / ta / 1e9);
                compareCpu.add(payload / cc / 1e9);
                floorCpu.add(payload / cf / 1e9);
                compareOpCpu.add(payload / cpuSeconds(rc) / 1e9);
                floorOpCpu.add(payload / cpuSeconds(rf) / 1e9);
            }
            System.out.printf("round %d: compare %.2f s (job %.2f s, first read to last result %.2f s; CPU %.2f s, in partitions %.2f s),"
                    + " read floor %.2f s (job %.2f s, first to last read %.2f s; CPU %.2f s, in partitions %.2f s), arraycopy %.3f s%n",
                    round, tc, tcNet, tcIn, cc, cpuSeconds(rc), tf, tfNet, tfIn, cf, cpuSeconds(rf), ta);
        }
        if (jfr != null) {
            jfr.stop();
            jfr.close();
        }
        double mc = median(compare);
        double mf = median(floor);
        double ma = median(copy);
        System.out.printf("compare benchmark: %d x %d MiB float32 per run over %d ranks (%.2f GiB compared), parallelism %d,"
                + " %d rounds%n", (RECORDS / RANKS) * RANKS, RECORD_BYTES >> 20, RANKS, payload / (double) (1L << 30), parallelism,
                ROUNDS);
        System.out.printf("wall incl. MiniCluster start: compare GB/s %.3f | read-floor GB/s %.3f | compare/floor %.2f%n", mc, mf, mc / mf);
        double mcn = median(compareNet);
        double mfn = median(floorNet);
        System.out.printf("job net runtime (no MiniCluster start): compare GB/s %.3f | read-floor GB/s %.3f | compare/floor %.2f%n",
                mcn, mfn, mcn / mfn);
        double mci = median(compareInner);
        double mfi = median(floorInner);
        System.out.printf("first read to last result/read: compare GB/s %.3f | read-floor GB/s %.3f | compare/floor %.2f%n",
                mci, mfi, mci / mfi);
        double mcc = median(compareCpu);
        double mfc = median(floorCpu);
        System.out.printf("per CPU-second of the whole JVM (MiniCluster start included; the machine is shared): compare GB %.3f |"
                + " read-floor GB %.3f | compare/floor %.2f%n", mcc, mfc, mcc / mfc);
        double mco = median(compareOpCpu);
        double mfo = median(floorOpCpu);
        System.out.printf("per CPU-second in partitions (read + compare, the work that scales with cores): compare GB %.3f |"
                + " read-floor GB %.3f | compare/floor %.2f | on %d otherwise idle cores: compare %.2f GB/s, read floor %.2f GB/s%n",
                mco, mfo, mco / mfo, parallelism, parallelism * mco, parallelism * mfo);
        System.out.printf("load average (1 min) before %.2f, after %.2f, on %d cores%n", loadBefore, os().getSystemLoadAverage(),
                Runtime.getRuntime().availableProcessors());
        System.out.printf("compare GB/s %.3f | read-floor GB/s %.3f | arraycopy GB/s %.2f | compare/floor %.2f | compare/arraycopy %.4f%n",
                mc, mf, ma, mc / mf, mc / ma);
    }

    static com.sun.management.OperatingSystemMXBean os() {
        return (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    }

    /** CPU seconds the subtasks spent in partitions. */
    static double cpuSeconds(JobExecutionResult r) {
        Long nanos = r.getAccumulatorResult(ComparePartitions.CPU_NANOS);
        return nanos / 1e9;
    }

    /** Seconds from the first partition read to the given end accumulator (epoch ms). */
    static double inner(JobExecutionResult r, String end) {
        Long first = r.getAccumulatorResult(ComparePartitions.FIRST_READ_MILLIS);
        Long last = r.getAccumulatorResult(end);
        return (last - first) / 1e3;
    }

    static double median(List<Double> v) {
        List<Double> s = new ArrayList<>(v);
        Collections.sort(s);
        return s.get(s.size() / 2);
    }
}
