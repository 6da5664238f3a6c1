package io.dumpstream.tensors;

import io.dumpstream.compare.Partition;
import io.dumpstream.compare.PayloadPages;
import io.dumpstream.decode.OfflineDecoder;
import io.dumpstream.format.DumpBuilder;
import io.dumpstream.format.DumpBuilder.RecordSpec;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.table.HivePartition;
import io.dumpstream.table.TableWriter;

import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tensors job over 1 GiB of views landed as Parquet (the offline decoder's snapshots table): 2 ranks
 * x 2 launches x 4 tensors x 8 float32 tiles of 4 MiB, each tile dumped by two broadcast workers with equal
 * bytes (the shape of {@code ReassemblyThroughputBenchmark}, so half the view bytes are compared and half go
 * through the statistics). Per round, in the same run:
 * <ul>
 *   <li>read floor: every payload of both run/rank groups read from its Parquet page and copied, in row order,
 *       2 threads ({@link PayloadPages}, what the job must do anyway);</li>
 *   <li>{@link GroupReassembler} on 2 threads, no Flink: reading, ordering, reassembly, statistics;</li>
 *   <li>the whole {@code tensors} job on a local MiniCluster (parallelism 2), its start and the table's write included.</li>
 * </ul>
 * Beside them, the job over a run of one small view (its start cost). Medians of the timed rounds; GB/s of view bytes.
 *
 * <pre>mvn -B -q -o -pl jobs -am test -Dtest=TensorsThroughputBenchmark -Dsurefire.failIfNoSpecifiedTests=false -DexcludedTags=none</pre>
 */
@Tag("benchmark")
class TensorsThroughputBenchmark {
    static final int ROUNDS = Integer.getInteger("bench.rounds", 3);
    static final int TILE = 4 << 20;
    static final int TILES = 8;
    static final int WORKERS = 2;
    static final int TENSORS = 4;
    static final int RANKS = 2;
    static final int LAUNCHES = 2;
    static final String RUN = "bench";

    @TempDir
    java.nio.file.Path tmp;

    @Test
    void tensorsVersusTheReadFloor() throws Exception {
        java.nio.file.Path root = tmp.resolve("root");
        byte[][] tiles = new byte[TILES * TENSORS][];
        Random rnd = new Random(3);
        for (int i = 0; i < tiles.length; i++) {
            ByteBuffer b = ByteBuffer.allocate(TILE).order(ByteOrder.LITTLE_ENDIAN);
            while (b.hasRemaining()) {
                b.putFloat((float) rnd.nextGaussian());
            }
            tiles[i] = b.array();
        }
        long viewBytes = 0;
        try (TableWriter w = new TableWriter(root, TableWriter.Options.defaults())) {
            OfflineDecoder d = new OfflineDecoder(w, Clock.systemUTC());
            for (int rank = 0; rank < RANKS; rank++) {
                for (int launch = 1; launch <= LAUNCHES; launch++) {
                    DumpBuilder b = new DumpBuilder(RUN, rank, launch);
                    for (int k = 0; k < TENSORS; k++) {
                        for (int i = 0; i < TILES; i++) {
                            byte[] tile = tiles[k * TILES + i];
                            for (int wk = 0; wk < WORKERS; wk++) {
                                b.add(new RecordSpec().taskId(k * 100 + i).taskIndex(i).stage("s").io("output").index(k)
                                        .parameterPosition(k).tensorName("t" + k).dtype("float32").sourceOffsetBytes((long) i * TILE)
                                        .actualShape(TILE / 4).workerId(wk).coreId(wk)
                                        .payload((bytes, out) -> out.put(tile, 0, (int) bytes)));
                                viewBytes += TILE;
                            }
                        }
                    }
                    java.nio.file.Path bin = tmp.resolve("dump.bin");
                    DumpManifest m;
                    try (FileChannel ch = FileChannel.open(bin, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                            StandardOpenOption.TRUNCATE_EXISTING)) {
                        m = b.writeTo(ch);
                    }
                    java.nio.file.Path mf = tmp.resolve("dump.manifest.json");
                    Files.write(mf, ManifestParser.toJson(m));
                    d.decode(mf, bin);
                    Files.delete(bin);
                }
            }
            // a run of one small view: the job's start cost, measured beside it
            DumpBuilder tiny = new DumpBuilder("tiny", 0, 1);
            tiny.add(new RecordSpec().taskId(1).stage("s").io("output").tensorName("t").dtype("float32").actualShape(4)
                    .payload(new byte[16]));
            DumpBuilder.Dump td = tiny.build();
            Files.write(tmp.resolve("tiny.bin"), td.buffer());
            Files.write(tmp.resolve("tiny.manifest.json"), ManifestParser.toJson(td.manifest()));
            d.decode(tmp.resolve("tiny.manifest.json"), tmp.resolve("tiny.bin"));
            w.commit();
        }
        assertEquals(1L << 30, viewBytes);
        Path runDir = new Path(root.resolve(HivePartition.SNAPSHOTS).toUri().toString() + "/" + HivePartition.segment(
                HivePartition.RUN, RUN));
        List<Partition> groups = TensorGroups.list(List.of(runDir));
        assertEquals(RANKS, groups.size());
        ExecutorService pool = Executors.newFixedThreadPool(RANKS);
        List<Double> floor = new ArrayList<>();
        List<Double> core = new ArrayList<>();
        List<Double> job = new ArrayList<>();
        List<Double> start = new ArrayList<>();
        List<Double> jobLessStart = new ArrayList<>();
        PrintStream quiet = new PrintStream(OutputStream.nullOutputStream());
        for (int round = 0; round <= ROUNDS; round++) { // round 0 warms up
            double f = time(pool, groups, g -> {
                long n = 0;
                try (PayloadPages pages = new PayloadPages(g, GroupReassembler.PAGE_READERS, Integer.MAX_VALUE - 64)) {
                    for (int file = 0; file < g.paths.length; file++) {
                        for (long row = 0; row < pages.rows(file); row++) {
                            n += pages.copy(file, row).length;
                        }
                    }
                }
                return n;
            });
            double c = time(pool, groups, g -> {
                GroupReassembler r = new GroupReassembler();
                long[] tensors = {0};
                r.reassemble(g, TensorGroups.rank(g), row -> {
                    assertTrue(row.overlapsAgree());
                    assertEquals(1.0, row.coverage());
                    tensors[0]++;
                }, () -> { });
                assertEquals(LAUNCHES * TENSORS, tensors[0]);
                return r.payloadBytes;
            });
            TensorsConfig cfg = new TensorsConfig(root.toString(), tmp.resolve("out" + round).toString(), List.of(RUN), RANKS);
            StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(RANKS, TensorsJob.configuration(cfg));
            long t0 = System.nanoTime();
            TensorsJob.Result res = TensorsJob.runAndReport(env, cfg, TensorsJob.source(cfg), quiet);
            double j = (System.nanoTime() - t0) / 1e9;
            assertEquals(viewBytes, res.payloadBytes());
            assertEquals((long) RANKS * LAUNCHES * TENSORS, res.tensors());
            TensorsConfig tinyCfg = new TensorsConfig(root.toString(), tmp.resolve("tiny" + round).toString(), List.of("tiny"),
                    RANKS);
            StreamExecutionEnvironment tinyEnv = StreamExecutionEnvironment.createLocalEnvironment(RANKS,
                    TensorsJob.configuration(tinyCfg));
            long s0 = System.nanoTime();
            assertEquals(1, TensorsJob.runAndReport(tinyEnv, tinyCfg, TensorsJob.source(tinyCfg), quiet).tensors());
            double st = (System.nanoTime() - s0) / 1e9;
            if (round > 0) {
                start.add(st);
                jobLessStart.add(viewBytes / (j - st) / 1e9);
                floor.add(viewBytes / f / 1e9);
                core.add(viewBytes / c / 1e9);
                job.add(viewBytes / j / 1e9);
            }
        }
        pool.shutdown();
        double mf = median(floor);
        double mc = median(core);
        double mj = median(job);
        System.out.printf("tensors over 1 GiB of landed views (%d ranks x %d launches x %d tensors x %d tiles x %d MiB x %d workers),"
                + " 2 threads:%n", RANKS, LAUNCHES, TENSORS, TILES, TILE >> 20, WORKERS);
        System.out.printf("  read floor (pages decoded + copied)  %.2f GB/s (rounds %s)%n", mf, floor);
        System.out.printf("  GroupReassembler (no Flink)          %.2f GB/s (rounds %s)%n", mc, core);
        System.out.printf("  tensors job, MiniCluster, with start %.2f GB/s (rounds %s)%n", mj, job);
        double ms = median(start);
        double mjs = median(jobLessStart);
        System.out.printf("  job start cost (a one-view run)      %.2f s (rounds %s)%n", ms, start);
        System.out.printf("  tensors job less its start           %.2f GB/s (rounds %s)%n", mjs, jobLessStart);
        System.out.printf("  ratios: reassembler / floor %.2f, job / floor %.2f, job less start / floor %.2f%n", mc / mf, mj / mf,
                mjs / mf);
    }

    interface GroupWork {
        long run(Partition g) throws Exception;
    }

    private static double time(ExecutorService pool, List<Partition> groups, GroupWork work) throws Exception {
        long t0 = System.nanoTime();
        List<Future<Long>> fs = new ArrayList<>();
        for (Partition g : groups) {
            fs.add(pool.submit(() -> work.run(g)));
        }
        long bytes = 0;
        for (Future<Long> f : fs) {
            bytes += f.get();
        }
        assertEquals(1L << 30, bytes);
        return (System.nanoTime() - t0) / 1e9;
    }

    private static double median(List<Double> xs) {
        double[] a = xs.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return a[a.length / 2];
    }
}
