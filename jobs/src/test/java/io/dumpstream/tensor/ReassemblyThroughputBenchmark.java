package io.dumpstream.tensor;

import io.dumpstream.decode.TensorStats;
import io.dumpstream.format.Dtype;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntConsumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Reassembly core throughput in GB/s of views, on {@link #THREADS} threads (one per core): per round
 * 1 GiB of float32 views, each tensor 8 tiles of 4 MiB dumped by two broadcast workers with equal bytes
 * in separate arrays (so every byte of the second worker is compared byte for byte and half the bytes go
 * through the section-5 statistics). Beside it, in the same run: {@link TensorStats#compute} over the
 * unique bytes alone (the statistics floor) and a {@code System.arraycopy} of all the view bytes.
 * In memory: no Parquet read (the compare benchmark measures that part). Medians of timed rounds.
 *
 * <pre>mvn -B -q -o -pl jobs -am test -Dtest=ReassemblyThroughputBenchmark -Dsurefire.failIfNoSpecifiedTests=false -DexcludedTags=none</pre>
 */
@Tag("benchmark")
class ReassemblyThroughputBenchmark {
    static final int THREADS = Integer.getInteger("bench.threads", 2);
    static final int ROUNDS = Integer.getInteger("bench.rounds", 7);
    static final int TILE = 4 << 20;
    static final int TILES = 8;
    static final int WORKERS = 2;
    /** Tensors per thread per round: 1 GiB / (threads x tiles x tile x workers). */
    static final int TENSORS = (int) ((1L << 30) / ((long) THREADS * TILES * TILE * WORKERS));

    @Test
    void reassemblyVersusFloors() throws Exception {
        byte[][][] data = new byte[THREADS][WORKERS][];
        Random rnd = new Random(7);
        for (int t = 0; t < THREADS; t++) {
            ByteBuffer b = ByteBuffer.allocate(TILE * TILES).order(ByteOrder.LITTLE_ENDIAN);
            while (b.hasRemaining()) {
                b.putFloat((float) rnd.nextGaussian());
            }
            for (int w = 0; w < WORKERS; w++) {
                data[t][w] = b.array().clone();
            }
        }
        long viewBytes = (long) THREADS * TENSORS * TILES * TILE * WORKERS;
        assertEquals(1L << 30, viewBytes);
        long[] sink = new long[THREADS];
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        IntConsumer reassemble = t -> {
            for (int k = 0; k < TENSORS; k++) {
                Reassembler r = new Reassembler(new TensorKey("A", t, 1, "after", k));
                for (int i = 0; i < TILES; i++) {
                    for (int w = 0; w < WORKERS; w++) {
                        r.add(new View(i * WORKERS + w, i, new View.Placement("AIV", w, null, "", (long) w), "x",
                                Dtype.FLOAT32, (long) i * TILE, TILE, data[t][w], i * TILE, TILE));
                    }
                }
                TensorRow row = r.finish();
                assertTrue(row.overlapsAgree());
                assertEquals(1.0, row.coverage());
                sink[t] += row.stats().numel();
            }
        };
        IntConsumer stats = t -> {
            for (int k = 0; k < TENSORS; k++) {
                sink[t] += TensorStats.compute(Dtype.FLOAT32, data[t][0], 0, TILE * TILES).numel();
            }
        };
        byte[][] dst = new byte[THREADS][TILE * TILES];
        IntConsumer copy = t -> {
            for (int k = 0; k < TENSORS; k++) {
                for (int w = 0; w < WORKERS; w++) {
                    System.arraycopy(data[t][w], 0, dst[t], 0, TILE * TILES);
                }
                sink[t] += dst[t][k];
            }
        };
        List<Double> re = new ArrayList<>();
        List<Double> st = new ArrayList<>();
        List<Double> cp = new ArrayList<>();
        for (int round = 0; round <= ROUNDS; round++) {           // round 0 warms up
            double a = time(pool, reassemble);
            double b = time(pool, stats);
            double c = time(pool, copy);
            if (round > 0) {
                re.add(viewBytes / a / 1e9);
                st.add(viewBytes / 2 / b / 1e9);
                cp.add(viewBytes / c / 1e9);
            }
        }
        pool.shutdown();
        double mr = median(re);
        double ms = median(st);
        double mc = median(cp);
        System.out.printf("reassembly %d threads, 1 GiB of views (%d tensors x %d tiles x %d MiB x %d workers):%n",
                THREADS, THREADS * TENSORS, TILES, TILE >> 20, WORKERS);
        System.out.printf("  reassembly        %.2f GB/s of views (rounds %s)%n", mr, re);
        System.out.printf("  stats floor       %.2f GB/s of unique bytes (%.2f GB/s of views equivalent)%n", ms, 2 * ms);
        System.out.printf("  arraycopy floor   %.2f GB/s of views%n", mc);
        System.out.printf("  ratios: reassembly / stats-floor(view equiv) %.2f, reassembly / arraycopy %.2f%n",
                mr / (2 * ms), mr / mc);
        System.out.println("  (sink " + Arrays.stream(sink).sum() + ")");
    }

    private static double time(ExecutorService pool, IntConsumer work) throws Exception {
        long t0 = System.nanoTime();
        List<Future<?>> fs = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int tt = t;
            fs.add(pool.submit(() -> work.accept(tt)));
        }
        for (Future<?> f : fs) {
            f.get();
        }
        return (System.nanoTime() - t0) / 1e9;
    }

    private static double median(List<Double> xs) {
        double[] a = xs.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return a[a.length / 2];
    }
}
