package io.dumpstream.bench;

import io.dumpstream.assemble.Checks;
import io.dumpstream.decode.TensorStats;
import io.dumpstream.format.Dtype;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;

/**
 * Throughput of per-record decode work (CRC-32C verification + dtype decoding + statistics) per
 * dtype on records of 64 KiB and 16 MiB, single thread, printed beside a baseline measured in the
 * same run, round by round in turn with it: a System.arraycopy of the same bytes. Each figure is the
 * median of the timed rounds after warm-up rounds, both as wall-clock GB/s and as GB/s per second of
 * this thread's CPU time (the per-core figure: on a shared machine the wall clock also counts time
 * the thread spent descheduled). BENCHMARKS.md's "before" column came from a frozen copy of the
 * earlier statistics code run as a third body; it lives in git history (see BENCHMARKS.md).
 *
 * <pre>java -cp ... io.dumpstream.bench.DecodeBench [rounds] [random|normal] [dtype,...]</pre>
 * random: uniform random bytes (about 3% of random float16 patterns are NaN or infinite);
 * normal: N(0, 1) values in each float dtype (x 1000 for the integer types), like real tensors.
 */
public final class DecodeBench {
    static volatile long sink;
    static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 9;
        boolean normal = args.length > 1 && args[1].equals("normal");
        Dtype[] dtypes = args.length > 2 ? Arrays.stream(args[2].split(",")).map(Dtype::fromName).toArray(Dtype[]::new)
                : Dtype.values();
        System.out.printf("payload %s, %d rounds, medians; cpu = GB per second of thread CPU time%n",
                normal ? "normal" : "random", rounds);
        System.out.printf("%-14s %7s %10s %10s %10s %8s%n", "dtype", "record", "wall GB/s", "cpu GB/s",
                "copy cpu", "x copy");
        for (int size : new int[]{64 * 1024, 16 * 1024 * 1024}) {
            byte[] copy = new byte[size];
            long bytesPerRound = Math.max(size, 128L * 1024 * 1024);
            int reps = (int) (bytesPerRound / size);
            for (Dtype d : dtypes) {
                byte[] data = payload(d, size, normal);
                Runnable copyBody = () -> {
                    for (int r = 0; r < reps; r++) {
                        System.arraycopy(data, 0, copy, 0, size);
                        sink += copy[r % size];
                    }
                };
                Runnable after = () -> {
                    for (int r = 0; r < reps; r++) {
                        sink += Checks.crc32c(ByteBuffer.wrap(data));
                        sink += TensorStats.compute(d, data, 0, size).numel();
                    }
                };
                double[][] t = interleaved(rounds, (long) reps * size, copyBody, after);
                double wall = median(t[2]);
                double cpu = median(t[3]);
                double copyCpu = median(t[1]);
                System.out.printf(Locale.ROOT, "%-14s %7s %10.2f %10.2f %10.2f %8.3f%n", d.torchName(),
                        size >= 1 << 20 ? (size >> 20) + " MiB" : (size >> 10) + " KiB", wall, cpu,
                        copyCpu, cpu / copyCpu);
            }
        }
    }

    /**
     * Runs the bodies in turn, round after round (two warm-up rounds first), and returns per body
     * {wall GB/s per round, cpu GB/s per round}, flattened: [2 * body] wall, [2 * body + 1] cpu.
     */
    static double[][] interleaved(int rounds, long bytes, Runnable... bodies) {
        double[][] out = new double[2 * bodies.length][rounds];
        for (int r = -2; r < rounds; r++) {
            for (int i = 0; i < bodies.length; i++) {
                long c0 = THREADS.getCurrentThreadCpuTime();
                long t0 = System.nanoTime();
                bodies[i].run();
                long wall = System.nanoTime() - t0;
                long cpu = THREADS.getCurrentThreadCpuTime() - c0;
                if (r >= 0) {
                    out[2 * i][r] = bytes / (double) wall;
                    out[2 * i + 1][r] = bytes / (double) cpu;
                }
            }
        }
        return out;
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    static byte[] payload(Dtype d, int size, boolean normal) {
        Random r = new Random(42);
        byte[] b = new byte[size];
        if (!normal) {
            r.nextBytes(b);
            return b;
        }
        ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        int n = size / d.elementSize();
        for (int i = 0; i < n; i++) {
            double g = r.nextGaussian();
            switch (d) {
                case FLOAT64 -> bb.putDouble(g);
                case FLOAT32 -> bb.putFloat((float) g);
                case FLOAT16 -> bb.putShort((short) toHalf((float) g));
                case BFLOAT16 -> bb.putShort((short) (Float.floatToRawIntBits((float) g) >>> 16));
                case FLOAT8_E5M2 -> bb.put((byte) (toHalf((float) g) >>> 8));
                case FLOAT8_E4M3FN -> bb.put((byte) r.nextInt(256));
                case INT64 -> bb.putLong(Math.round(g * 1000));
                case INT32 -> bb.putInt((int) Math.round(g * 1000));
                case INT16 -> bb.putShort((short) Math.round(g * 1000));
                case INT8 -> bb.put((byte) Math.round(g * 30));
                case UINT8 -> bb.put((byte) Math.round(128 + g * 30));
                case BOOL -> bb.put((byte) (g > 0 ? 1 : 0));
            }
        }
        return b;
    }

    /** float to binary16 by truncation (enough for benchmark payloads), tiny values flushed to zero. */
    static int toHalf(float f) {
        int bits = Float.floatToRawIntBits(f);
        int sign = bits >>> 16 & 0x8000;
        int exp = (bits >>> 23 & 0xFF) - 127 + 15;
        if (exp <= 0) {
            return sign;
        }
        if (exp >= 31) {
            return sign | 0x7C00;
        }
        return sign | exp << 10 | (bits >>> 13 & 0x3FF);
    }
}
