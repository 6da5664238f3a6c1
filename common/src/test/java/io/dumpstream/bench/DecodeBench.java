package io.dumpstream.bench;

import io.dumpstream.assemble.Checks;
import io.dumpstream.decode.TensorStats;
import io.dumpstream.format.Dtype;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;

/**
 * Throughput of per-record decode work (CRC-32C verification + dtype decoding + statistics) per
 * dtype on records of 64 KiB and 16 MiB, printed beside a System.arraycopy of the same bytes
 * measured in the same run. Medians of several timed rounds after warm-up; single thread.
 *
 * <pre>mvn -B -q -pl common -am test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.dumpstream.bench.DecodeBench</pre>
 */
public final class DecodeBench {
    static volatile long sink;

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 9;
        System.out.printf("%-14s %9s %12s %12s %8s%n", "dtype", "record", "decode GB/s", "copy GB/s", "ratio");
        for (int size : new int[]{64 * 1024, 16 * 1024 * 1024}) {
            byte[] data = payload(size);
            byte[] copy = new byte[size];
            long bytesPerRound = Math.max(size, 256L * 1024 * 1024);
            int reps = (int) (bytesPerRound / size);
            double copyGbs = median(rounds, () -> {
                for (int r = 0; r < reps; r++) {
                    System.arraycopy(data, 0, copy, 0, size);
                    sink += copy[r % size];
                }
            }, (long) reps * size);
            for (Dtype d : Dtype.values()) {
                double gbs = median(rounds, () -> {
                    for (int r = 0; r < reps; r++) {
                        sink += Checks.crc32c(ByteBuffer.wrap(data));
                        sink += TensorStats.compute(d, data, 0, size).numel();
                    }
                }, (long) reps * size);
                System.out.printf("%-14s %9s %12.2f %12.2f %8.2f%n", d.torchName(),
                        size >= 1 << 20 ? (size >> 20) + " MiB" : (size >> 10) + " KiB", gbs, copyGbs, gbs / copyGbs);
            }
        }
    }

    static byte[] payload(int size) {
        Random r = new Random(42);
        byte[] b = new byte[size];
        r.nextBytes(b);
        return b;
    }

    static double median(int rounds, Runnable body, long bytes) {
        body.run(); // warm-up
        body.run();
        double[] gbs = new double[rounds];
        for (int i = 0; i < rounds; i++) {
            long t0 = System.nanoTime();
            body.run();
            gbs[i] = bytes / ((System.nanoTime() - t0) / 1e9) / 1e9;
        }
        Arrays.sort(gbs);
        return gbs[rounds / 2];
    }
}
