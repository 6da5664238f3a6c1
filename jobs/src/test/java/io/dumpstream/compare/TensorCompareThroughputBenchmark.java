package io.dumpstream.compare;

import io.dumpstream.cli.Main;
import io.dumpstream.format.DumpBuilder;
import io.dumpstream.manifest.ManifestParser;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
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
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code compare --by tensor} throughput beside the pair compare over the same bytes, medians of timed
 * rounds in one run, GB/s of payload compared (both sides, as CompareThroughputBenchmark counts). Per
 * rank, {@code bench.tensors} float32 tensors of {@code bench.tensorMiB}: the reference R as a safetensors
 * file through import-reference (one row per tensor), the candidate C as {@code bench.tiles} tile views
 * per tensor (C = R + noise of 1e-7, so every element goes through the metric loop), and a run P of R's
 * tiles keyed like C's so that the pair compare P vs C compares exactly the same bytes tile by tile.
 * Defaults: 4 ranks x 8 tensors x 16 MiB, 4 tiles: 512 MiB of views and 512 MiB of reference, 1 GiB compared.
 *
 * <pre>mvn -B -q -o -pl jobs -am test -Dtest=TensorCompareThroughputBenchmark -Dsurefire.failIfNoSpecifiedTests=false -DexcludedTags=none</pre>
 */
@Tag("benchmark")
class TensorCompareThroughputBenchmark {
    static final int RANKS = Integer.getInteger("bench.ranks", 4);
    static final int TENSORS = Integer.getInteger("bench.tensors", 8);
    static final int TENSOR_BYTES = Integer.getInteger("bench.tensorMiB", 16) << 20;
    static final int TILES = Integer.getInteger("bench.tiles", 4);
    static final int ROUNDS = Integer.getInteger("bench.rounds", 5);

    @TempDir
    Path tmp;

    @Test
    void tensorCompareVersusPairCompare() throws Exception {
        Path root = tmp.resolve("root");
        Path spool = Files.createDirectories(tmp.resolve("spool"));
        Random rnd = new Random(17);
        int n = TENSOR_BYTES / 4;
        int tileBytes = TENSOR_BYTES / TILES;
        PrintStream quiet = new PrintStream(new ByteArrayOutputStream());
        for (int rank = 0; rank < RANKS; rank++) {
            DumpBuilder c = new DumpBuilder("C", rank, 1).chunkBytes(8 << 20);
            DumpBuilder p = new DumpBuilder("P", rank, 1).chunkBytes(8 << 20);
            Path st = tmp.resolve("ref-" + rank + ".safetensors");
            StringBuilder header = new StringBuilder("{");
            try (var ch = java.nio.channels.FileChannel.open(st, java.nio.file.StandardOpenOption.CREATE,
                    java.nio.file.StandardOpenOption.WRITE)) {
                for (int t = 0; t < TENSORS; t++) {
                    header.append(t == 0 ? "" : ",").append("\"t").append(t).append("\":{\"dtype\":\"F32\",\"shape\":[").append(n)
                            .append("],\"data_offsets\":[").append((long) t * TENSOR_BYTES).append(',')
                            .append((long) (t + 1) * TENSOR_BYTES).append("]}");
                }
                String h = header.append('}').toString();
                h += " ".repeat((8 - h.length() % 8) % 8);
                byte[] hb = h.getBytes(StandardCharsets.US_ASCII);
                ch.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, hb.length));
                ch.write(ByteBuffer.wrap(hb));
                for (int t = 0; t < TENSORS; t++) {
                    ByteBuffer x = ByteBuffer.allocate(TENSOR_BYTES).order(ByteOrder.LITTLE_ENDIAN);
                    ByteBuffer y = ByteBuffer.allocate(TENSOR_BYTES).order(ByteOrder.LITTLE_ENDIAN);
                    for (int i = 0; i < n; i++) {
                        float v = (float) rnd.nextGaussian();
                        x.putFloat(v);
                        y.putFloat(v + (float) (1e-7 * rnd.nextGaussian()));
                    }
                    ch.write(ByteBuffer.wrap(x.array()));
                    for (int k = 0; k < TILES; k++) {
                        long task = (long) t * TILES + k;
                        for (var side : List.of(java.util.Map.entry(c, y.array()), java.util.Map.entry(p, x.array()))) {
                            side.getKey().add(new DumpBuilder.RecordSpec().taskId(task).taskIndex(k).stage("s" + t).io("output")
                                    .parameterPosition(t).tensorName("t" + t).dtype("float32").sourceOffsetBytes((long) k * tileBytes)
                                    .actualShape(tileBytes / 4)
                                   .payload(java.util.Arrays.copyOfRange(side.getValue(), k * tileBytes,
                                            (k + 1) * tileBytes)));
                        }
                    }
                }
            }
            for (var e : List.of(java.util.Map.entry("c" + rank, c.build()), java.util.Map.entry("p" + rank, p.build()))) {
                Files.write(spool.resolve(e.getKey() + ".bin"), e.getValue().buffer());
                Files.write(spool.resolve(e.getKey() + ".manifest.json"), ManifestParser.toJson(e.getValue().manifest()));
            }
            assertEquals(0, Main.run(new String[]{"import-reference", "--safetensors", st.toString(), "--run", "R", "--rank",
                    Integer.toString(rank), "--launch", "1", "--out", root.toString()}, quiet, System.err));
            Files.delete(st);
        }
        assertEquals(0, Main.run(new String[]{"decode", "--dir", spool.toString(), "--out", root.toString()}, quiet, System.err));
        long payload = 2L * RANKS * TENSORS * TENSOR_BYTES;
        int parallelism = Runtime.getRuntime().availableProcessors();
        List<Double> tensor = new ArrayList<>();
        List<Double> tensorNet = new ArrayList<>();
        List<Double> tensorCpu = new ArrayList<>();
        List<Double> pair = new ArrayList<>();
        List<Double> pairNet = new ArrayList<>();
        List<Double> pairCpu = new ArrayList<>();
        double loadBefore = CompareThroughputBenchmark.os().getSystemLoadAverage();
        for (int round = 0; round <= ROUNDS; round++) { // round 0 warms up
            CompareConfig ct = new CompareConfig(root.toString(), "R", "C", tmp.resolve("t" + round).toString(),
                    new PairKey(false, false), Tolerances.defaults(), parallelism, true);
            long t0 = System.nanoTime();
            StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(parallelism, CompareJob.configuration(ct));
            CompareJob.build(env, ct, CompareJob.source(ct));
            JobExecutionResult rt = env.execute("compare --by tensor");
            double tt = (System.nanoTime() - t0) / 1e9;

            CompareConfig cp = new CompareConfig(root.toString(), "P", "C", tmp.resolve("p" + round).toString(),
                    new PairKey(false, false), Tolerances.defaults(), parallelism);
            long t1 = System.nanoTime();
            StreamExecutionEnvironment env2 = StreamExecutionEnvironment.createLocalEnvironment(parallelism, CompareJob.configuration(cp));
            CompareJob.build(env2, cp, CompareJob.source(cp));
            JobExecutionResult rp = env2.execute("compare");
            double tp = (System.nanoTime() - t1) / 1e9;
            if (round > 0) {
                tensor.add(payload / tt / 1e9);
                tensorNet.add(payload / (rt.getNetRuntime() / 1e3) / 1e9);
                tensorCpu.add(payload / CompareThroughputBenchmark.cpuSeconds(rt) / 1e9);
                pair.add(payload / tp / 1e9);
                pairNet.add(payload / (rp.getNetRuntime() / 1e3) / 1e9);
                pairCpu.add(payload / CompareThroughputBenchmark.cpuSeconds(rp) / 1e9);
            }
            System.out.printf("round %d: tensor compare %.2f s (job %.2f s, CPU in partitions %.2f s), pair compare %.2f s (job %.2f s,"
                    + " CPU in partitions %.2f s)%n", round, tt, rt.getNetRuntime() / 1e3, CompareThroughputBenchmark.cpuSeconds(rt),
                    tp, rp.getNetRuntime() / 1e3, CompareThroughputBenchmark.cpuSeconds(rp));
        }
        double mt = CompareThroughputBenchmark.median(tensor);
        double mp = CompareThroughputBenchmark.median(pair);
        double mtn = CompareThroughputBenchmark.median(tensorNet);
        double mpn = CompareThroughputBenchmark.median(pairNet);
        double mtc = CompareThroughputBenchmark.median(tensorCpu);
        double mpc = CompareThroughputBenchmark.median(pairCpu);
        System.out.printf("tensor compare benchmark: %d ranks x %d tensors x %d MiB float32 in %d tiles (%.2f GiB compared: views +"
                + " reference), parallelism %d, %d rounds%n", RANKS, TENSORS, TENSOR_BYTES >> 20, TILES, payload / (double) (1L << 30),
                parallelism, ROUNDS);
        System.out.printf("wall incl. MiniCluster start: tensor GB/s %.3f | pair GB/s %.3f | tensor/pair %.2f%n", mt, mp, mt / mp);
        System.out.printf("job net runtime: tensor GB/s %.3f | pair GB/s %.3f | tensor/pair %.2f%n", mtn, mpn, mtn / mpn);
        System.out.printf("per CPU-second in partitions: tensor GB %.3f | pair GB %.3f | tensor/pair %.2f | on %d idle cores: tensor %.2f GB/s,"
                + " pair %.2f GB/s%n", mtc, mpc, mtc / mpc, parallelism, parallelism * mtc, parallelism * mpc);
        System.out.printf("load average (1 min) before %.2f, after %.2f, on %d cores%n", loadBefore,
                CompareThroughputBenchmark.os().getSystemLoadAverage(), Runtime.getRuntime().availableProcessors());
    }
}
