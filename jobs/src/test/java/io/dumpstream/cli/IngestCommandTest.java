package io.dumpstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.format.DumpBuilder;
import io.dumpstream.local.LocalKafka;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.publish.DumpPublisher;
import io.dumpstream.publish.PublisherConfig;
import io.dumpstream.simulate.SyntheticRanks;
import io.dumpstream.table.DuckDb;
import io.dumpstream.testing.SharedKafka;
import io.dumpstream.testing.TableLayout;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The local {@code ingest} command as a separate process: killed with SIGKILL mid-stream and started
 * again with the same arguments it resumes from its newest retained checkpoint; SIGTERM stops it with
 * a savepoint that the next start resumes from. Exactly once across both: the exact multiset of
 * records sent lands, nothing lost and nothing doubled.
 */
class IngestCommandTest {
    private static final LocalKafka kafka = SharedKafka.get();
    private static final int RANKS = 2;

    @TempDir
    Path dir;

    private final List<String> sent = Collections.synchronizedList(new ArrayList<>());
    private final List<String> sentDumps = Collections.synchronizedList(new ArrayList<>());

    @Test
    void sigkillMidStreamResumesFromTheCheckpointAndSigtermStopsWithASavepoint() throws Exception {
        String topic = "ingest-cli";
        kafka.createTopic(topic, 2);
        kafka.createTopic(topic + ".dlq", 1);
        SyntheticRanks.Config cfg = new SyntheticRanks.Config();
        cfg.runId = "cli-run";
        cfg.worldSize = RANKS;
        cfg.records = 8;
        cfg.payloadBytes = 8 * 1024;
        cfg.chunkBytes = 32 * 1024;
        SyntheticRanks sim = new SyntheticRanks(11, cfg.validate());
        Path out = dir.resolve("out");
        List<String> args = List.of("ingest", "--bootstrap", kafka.bootstrapServers(), "--topic", topic,
                "--group", "cli-it", "--out", out.toString(), "--checkpoints", dir.resolve("ck").toString(),
                "--checkpoint-interval", "1s", "--parallelism", "2");

        // 1. the first process runs while ranks publish at a steady rate; SIGKILL once some dumps landed
        Proc p1 = Proc.start(args, dir.resolve("p1"));
        Thread publisher = publishInBackground(sim, topic, 0, 30, 6.0);
        awaitLanded(out, 8, p1);
        p1.process.destroyForcibly();
        assertTrue(p1.process.waitFor(30, TimeUnit.SECONDS));
        long atKill = landedDumps(out);
        System.out.printf("SIGKILL with %d of 60 dumps landed, publishing still under way: %s%n", atKill,
                publisher.isAlive());

        // 2. the same arguments again: it resumes from the newest retained checkpoint by itself
        Proc p2 = Proc.start(args, dir.resolve("p2"));
        assertTrue(p2.stdout().contains("resumed from") && p2.stdout().contains("/chk-"), p2.stdout());
        publisher.join(120_000);
        assertEquals(RANKS * 30, sentDumps.size());
        awaitLanded(out, RANKS * 30, p2);

        // 3. SIGTERM: a savepoint, exit status 0
        p2.process.destroy();
        assertTrue(p2.process.waitFor(150, TimeUnit.SECONDS), "SIGTERM ends the process");
        assertEquals(0, p2.process.exitValue(), p2.stdout() + p2.stderr());
        assertTrue(p2.stdout().contains("stopped with savepoint"), p2.stdout());

        // 4. more dumps while nothing runs; the next start resumes from that savepoint
        Thread more = publishInBackground(sim, topic, 30, 5, 0);
        more.join(60_000);
        Proc p3 = Proc.start(args, dir.resolve("p3"));
        assertTrue(p3.stdout().contains("resumed from") && p3.stdout().contains("/savepoint-"), p3.stdout());
        awaitLanded(out, RANKS * 35, p3);
        Thread.sleep(2500); // two more checkpoints: anything doubled would have landed by now
        p3.process.destroy();
        assertTrue(p3.process.waitFor(150, TimeUnit.SECONDS));
        assertEquals(0, p3.process.exitValue(), p3.stderr());

        // exactly once: the multiset of records and of dumps
        List<String> landed = new ArrayList<>();
        for (Map<String, Object> r : DuckDb.query("SELECT run || '/' || rank || '/' || launch_id || '#' || record_index"
                + " AS k FROM read_parquet(" + DuckDb.glob(out, "snapshots/**/*.parquet")
                + ", hive_partitioning=true, hive_types={'run': VARCHAR, 'rank': INTEGER, 'stage': VARCHAR})")) {
            landed.add((String) r.get("k"));
        }
        List<String> want = new ArrayList<>(sent);
        want.sort(null);
        landed.sort(null);
        Map<String, Integer> counts = new HashMap<>();
        landed.forEach(k -> counts.merge(k, 1, Integer::sum));
        long duplicates = counts.values().stream().filter(n -> n > 1).mapToLong(n -> n - 1).sum();
        long lost = want.stream().filter(k -> !counts.containsKey(k)).count();
        System.out.printf("ingest SIGKILL/SIGTERM: sent %d records, landed %d, duplicates %d, lost %d%n", want.size(),
                landed.size(), duplicates, lost);
        assertEquals(want, landed, "the exact multiset of (run, rank, launch, record_index)");
        List<String> dumps = new ArrayList<>();
        for (Map<String, Object> r : DuckDb.query("SELECT dump_id || ' ' || outcome AS d FROM read_parquet("
                + DuckDb.glob(out, "dumps/**/*.parquet") + ")")) {
            dumps.add((String) r.get("d"));
        }
        dumps.sort(null);
        List<String> wantDumps = new ArrayList<>();
        sentDumps.forEach(d -> wantDumps.add(d + " COMPLETE"));
        wantDumps.sort(null);
        assertEquals(wantDumps, dumps);
        TableLayout.assertLayout(out);
    }

    private Thread publishInBackground(SyntheticRanks sim, String topic, int firstLaunch, int launches, double rate) {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try (DumpPublisher p = new DumpPublisher(PublisherConfig.builder(kafka.bootstrapServers()).topic(topic)
                    .chunkBytes(32 * 1024).build())) {
                long t0 = System.nanoTime();
                int n = 0;
                for (int launch = firstLaunch; launch < firstLaunch + launches; launch++) {
                    for (int rank = 0; rank < RANKS; rank++) {
                        if (rate > 0) {
                            long wait = t0 + (long) (n++ * 1e9 / rate) - System.nanoTime();
                            if (wait > 0) {
                                Thread.sleep(wait / 1_000_000);
                            }
                        }
                        DumpBuilder.Dump d = sim.dump(rank, launch).build();
                        p.publish(d.manifest(), ByteBuffer.wrap(d.buffer()));
                        for (int i = 0; i < d.manifest().getRecords().size(); i++) {
                            sent.add(Manifests.dumpId(d.manifest()) + "#" + i);
                        }
                        sentDumps.add(Manifests.dumpId(d.manifest()));
                    }
                }
            } catch (Throwable e) {
                failure.set(e);
                throw new IllegalStateException(e);
            }
        }, "publisher-" + firstLaunch);
        t.start();
        return t;
    }

    private static long landedDumps(Path out) throws Exception {
        if (!Files.isDirectory(out.resolve("dumps"))) {
            return 0;
        }
        try {
            return ((Number) DuckDb.query("SELECT count(*) AS n FROM read_parquet("
                    + DuckDb.glob(out, "dumps/**/*.parquet") + ")").get(0).get("n")).longValue();
        } catch (java.sql.SQLException e) {
            return 0; // no committed file yet
        }
    }

    private static void awaitLanded(Path out, long n, Proc p) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
        while (System.nanoTime() < deadline) {
            if (landedDumps(out) >= n) {
                return;
            }
            if (!p.process.isAlive()) {
                throw new AssertionError("ingest exited with " + p.process.exitValue() + ": " + p.stderr());
            }
            Thread.sleep(300);
        }
        throw new AssertionError("only " + landedDumps(out) + " of " + n + " dumps landed; " + p.stderr());
    }

    /** {@code java -cp <test class path> io.dumpstream.cli.Main ARGS} with its output in files. */
    record Proc(Process process, Path stdoutFile, Path stderrFile) {
        static Proc start(List<String> args, Path base) throws Exception {
            List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx768m", "-cp", System.getProperty("java.class.path"), Main.class.getName()));
            cmd.addAll(args);
            Path so = Path.of(base + ".out");
            Path se = Path.of(base + ".err");
            Process p = new ProcessBuilder(cmd).redirectOutput(so.toFile()).redirectError(se.toFile()).start();
            Proc proc = new Proc(p, so, se);
            long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            while (!proc.stdout().contains("ingest: job ")) {
                if (!p.isAlive() || System.nanoTime() > deadline) {
                    p.destroyForcibly();
                    throw new AssertionError("ingest did not start: " + proc.stdout() + proc.stderr());
                }
                Thread.sleep(100);
            }
            return proc;
        }

        String stdout() throws IOException {
            return Files.readString(stdoutFile, StandardCharsets.UTF_8);
        }

        String stderr() throws IOException {
            String s = Files.readString(stderrFile, StandardCharsets.UTF_8);
            return s.length() > 4000 ? s.substring(s.length() - 4000) : s;
        }
    }
}
