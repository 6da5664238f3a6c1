package io.dumpstream.job;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.stream.Stream;

/**
 * The file system's share of the ingest cost (issue 15's stage breakdown): the floor writes its whole
 * output to one file, while the job must write one part file per stage partition per checkpoint and
 * commit it the way Flink's local file system does (written through {@code Channels.newOutputStream}
 * of a {@code FileChannel}, parquet-java's page copies in 8 KiB writes, {@code force(true)} when the
 * part closes for commit, then a rename). The same bytes, three ways, in turn, round after round:
 * <ul>
 *   <li>{@code one-file}: one file, 4 MiB writes, no fsync (the floor's way);</li>
 *   <li>{@code parts}: a file per part of the given size, 8 KiB writes, renamed, no fsync;</li>
 *   <li>{@code parts+fsync}: the same with {@code force(true)} before the close (what the job does).</li>
 * </ul>
 * Figures: this process's CPU time (user and kernel) per MiB written, medians of the timed rounds
 * after one warm-up round, and the ratio to {@code one-file}. Files are deleted between modes.
 *
 * <pre>
 * mvn -B -o -q -pl jobs -am test-compile dependency:build-classpath -Dmdep.outputFile=target/cp.txt -Dmdep.includeScope=test
 * CP=jobs/target/test-classes:jobs/target/classes:common/target/classes:schemas/target/classes:$(cat jobs/target/cp.txt)
 * java -cp $CP io.dumpstream.job.PartFileCostBench 5 245760 256    # 1 MiB dumps: ~240 KiB parts
 * java -cp $CP io.dumpstream.job.PartFileCostBench 5 8388608 256   # 64 MiB dumps: ~8 MiB parts
 * # args: timed rounds, part bytes, MiB per mode per round [, directory: default a temporary one under target/]
 * </pre>
 */
public final class PartFileCostBench {
    private static final double MIB = 1024.0 * 1024.0;
    private static final String[] MODES = {"one-file", "parts", "parts+fsync"};

    private PartFileCostBench() {
    }

    public static void main(String[] args) throws IOException {
        int rounds = Integer.parseInt(args[0]);
        int partBytes = Integer.parseInt(args[1]);
        long totalBytes = Long.parseLong(args[2]) << 20;
        Path dir = args.length > 3 ? Path.of(args[3]) : Files.createTempDirectory(
                Files.createDirectories(Path.of("target")), "part-file-cost");
        byte[] data = new byte[4 << 20];
        new Random(42).nextBytes(data); // compressed pages are close to random bytes
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        System.out.printf(Locale.ROOT, "part file cost: %d B parts, %d MiB per mode per round, %d timed rounds, in %s;"
                + " %d cores%n", partBytes, totalBytes >> 20, rounds, dir.toAbsolutePath(),
                Runtime.getRuntime().availableProcessors());
        List<double[]> timed = new ArrayList<>();
        for (int round = -1; round < rounds; round++) {
            double[] cpu = new double[MODES.length];
            for (int m = 0; m < MODES.length; m++) {
                long c0 = os.getProcessCpuTime();
                if (m == 0) {
                    oneFile(dir.resolve("all.bin"), data, totalBytes);
                } else {
                    parts(dir, data, totalBytes, partBytes, m == 2);
                }
                cpu[m] = (os.getProcessCpuTime() - c0) / 1e6 / (totalBytes / MIB);
                clear(dir);
            }
            System.out.printf(Locale.ROOT, "  %s %d: one-file %.2f ms/MiB, parts %.2f, parts+fsync %.2f%n",
                    round < 0 ? "warm-up" : "round", Math.max(round, 0), cpu[0], cpu[1], cpu[2]);
            if (round >= 0) {
                timed.add(cpu);
            }
        }
        double[] med = IngestFloorBenchmark.medians(timed);
        System.out.printf(Locale.ROOT, "part-file-cost part_bytes=%d one_file_ms_per_mib=%.2f parts_ms_per_mib=%.2f"
                + " parts_fsync_ms_per_mib=%.2f ratio_parts=%.2f ratio_parts_fsync=%.2f (medians of %d rounds)%n",
                partBytes, med[0], med[1], med[2], med[1] / med[0], med[2] / med[0], rounds);
        Files.deleteIfExists(dir);
    }

    private static void oneFile(Path file, byte[] data, long total) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW)) {
            for (long done = 0; done < total; ) {
                int n = (int) Math.min(data.length, total - done);
                ByteBuffer b = ByteBuffer.wrap(data, 0, n);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                done += n;
            }
        }
    }

    private static void parts(Path dir, byte[] data, long total, int partBytes, boolean fsync) throws IOException {
        int offset = 0;
        for (long done = 0, i = 0; done < total; i++) {
            Path tmp = dir.resolve(".part-" + i + ".inprogress");
            int size = (int) Math.min(partBytes, total - done);
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW)) {
                OutputStream out = Channels.newOutputStream(ch);
                for (int left = size; left > 0; ) {
                    int n = Math.min(8192, left);
                    if (offset + n > data.length) {
                        offset = 0;
                    }
                    out.write(data, offset, n);
                    offset += n;
                    left -= n;
                }
                if (fsync) {
                    ch.force(true);
                }
            }
            Files.move(tmp, dir.resolve("part-" + i + ".parquet"), StandardCopyOption.ATOMIC_MOVE);
            done += size;
        }
    }

    private static void clear(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
