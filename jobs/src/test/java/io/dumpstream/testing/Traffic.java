package io.dumpstream.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dumpstream.format.DumpBuilder;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.publish.DumpPublisher;
import io.dumpstream.publish.PublisherConfig;
import io.dumpstream.simulate.SyntheticRanks;
import io.dumpstream.table.DuckDb;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Synthetic ranks publishing in the background for failure tests, remembering exactly what was
 * acknowledged, and the exactly-once check of what landed: the multiset of records
 * (run/rank/launch#record_index) and of dumps, with sent / landed / duplicates / lost printed.
 */
public final class Traffic {
    private final String bootstrap;
    private final String topic;
    private final SyntheticRanks sim;
    private final int ranks;
    private final int chunkBytes;
    private final List<String> records = Collections.synchronizedList(new ArrayList<>());
    private final List<String> dumps = Collections.synchronizedList(new ArrayList<>());
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    public Traffic(String bootstrap, String topic, String runId, int ranks, int records, long payloadBytes,
                   int chunkBytes, long seed) {
        this.bootstrap = bootstrap;
        this.topic = topic;
        this.ranks = ranks;
        this.chunkBytes = chunkBytes;
        SyntheticRanks.Config cfg = new SyntheticRanks.Config();
        cfg.runId = runId;
        cfg.worldSize = ranks;
        cfg.records = records;
        cfg.payloadBytes = payloadBytes;
        cfg.chunkBytes = chunkBytes;
        this.sim = new SyntheticRanks(seed, cfg.validate());
    }

    /** Publishes launches [first, first + launches) of every rank from a background thread, at {@code rate} dumps/s (0: no limit). */
    public Thread publish(int first, int launches, double rate) {
        Thread t = new Thread(() -> {
            try (DumpPublisher p = new DumpPublisher(PublisherConfig.builder(bootstrap).topic(topic)
                    .chunkBytes(chunkBytes).build())) {
                long t0 = System.nanoTime();
                int n = 0;
                for (int launch = first; launch < first + launches; launch++) {
                    for (int rank = 0; rank < ranks; rank++) {
                        if (rate > 0) {
                            long wait = t0 + (long) (n++ * 1e9 / rate) - System.nanoTime();
                            if (wait > 0) {
                                Thread.sleep(wait / 1_000_000);
                            }
                        }
                        DumpBuilder.Dump d = sim.dump(rank, launch).build();
                        p.publish(d.manifest(), ByteBuffer.wrap(d.buffer()));
                        String id = Manifests.dumpId(d.manifest());
                        for (int i = 0; i < d.manifest().getRecords().size(); i++) {
                            records.add(id + "#" + i);
                        }
                        dumps.add(id);
                    }
                }
            } catch (Throwable e) {
                failure.compareAndSet(null, e);
            }
        }, "traffic-" + topic + "-" + first);
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Waits for a publishing thread and fails with its error, if any. */
    public void join(Thread t, long timeoutMs) throws InterruptedException {
        t.join(timeoutMs);
        if (t.isAlive()) {
            throw new AssertionError("publishing still running after " + timeoutMs + " ms");
        }
        if (failure.get() != null) {
            throw new AssertionError("publishing failed", failure.get());
        }
    }

    public int recordsSent() {
        return records.size();
    }

    public int dumpsSent() {
        return dumps.size();
    }

    /** Dumps rows in committed files under OUT; 0 while there are none. */
    public static long landedDumps(Path out) throws Exception {
        if (!Files.isDirectory(out.resolve("dumps"))) {
            return 0;
        }
        try {
            return ((Number) DuckDb.query("SELECT count(*) AS n FROM read_parquet("
                    + DuckDb.glob(out, "dumps/**/[!.]*.parquet") + ")").get(0).get("n")).longValue();
        } catch (java.sql.SQLException e) {
            return 0;
        }
    }

    /**
     * Waits (up to two minutes) until the snapshots table under {@code out} has {@code n} rows, then
     * three seconds more for anything doubled: a dump's outcome row and its snapshot rows may commit
     * with different checkpoints.
     */
    public static void awaitRecords(Path out, long n) throws InterruptedException {
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(120).toNanos();
        while (landedRecords(out) < n && System.nanoTime() < deadline) {
            Thread.sleep(500);
        }
        Thread.sleep(3000);
    }

    /** As {@link #awaitRecords(Path, long)}, reading the tables of {@code landing} (an S3 mirror kept up to date). */
    public static void awaitRecords(Landing landing, long n) throws InterruptedException {
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(120).toNanos();
        while (landedRecords(landing.tables()) < n && System.nanoTime() < deadline) {
            Thread.sleep(500);
        }
        Thread.sleep(3000);
        landing.tables();
    }

    /** As {@link #assertExactlyOnce(String, Path)} on the tables of {@code landing}, read back from a local mirror. */
    public void assertExactlyOnce(String label, Landing landing) throws Exception {
        awaitRecords(landing, records.size());
        assertExactlyOnce(label + " (" + landing + ")", landing.tables());
    }

    /** Rows in the snapshots table under {@code out} (0 before any file). */
    public static long landedRecords(Path out) {
        try {
            return ((Number) DuckDb.query("SELECT count(*) AS n FROM read_parquet("
                    + DuckDb.glob(out, "snapshots/**/[!.]*.parquet") + ")").get(0).get("n")).longValue();
        } catch (java.sql.SQLException e) {
            return 0;
        }
    }

    /** Asserts that every record and dump sent landed exactly once (all dumps COMPLETE) and prints the tally. */
    public void assertExactlyOnce(String label, Path out) throws Exception {
        awaitRecords(out, records.size());
        List<String> landed = new ArrayList<>();
        for (Map<String, Object> r : DuckDb.query("SELECT run || '/' || rank || '/' || launch_id || '#' || record_index"
                + " AS k FROM read_parquet(" + DuckDb.glob(out, "snapshots/**/[!.]*.parquet")
                + ", hive_partitioning=true, hive_types={'run': VARCHAR, 'rank': INTEGER, 'stage': VARCHAR})")) {
            landed.add((String) r.get("k"));
        }
        List<String> want = new ArrayList<>(records);
        want.sort(null);
        landed.sort(null);
        Map<String, Integer> counts = new HashMap<>();
        landed.forEach(k -> counts.merge(k, 1, Integer::sum));
        long duplicates = counts.values().stream().filter(n -> n > 1).mapToLong(n -> n - 1).sum();
        long lost = want.stream().filter(k -> !counts.containsKey(k)).count();
        System.out.printf("%s: sent %d records in %d dumps, landed %d, duplicates %d, lost %d%n", label, want.size(),
                dumps.size(), landed.size(), duplicates, lost);
        if (!want.equals(landed)) {
            List<String> lostKeys = want.stream().filter(k -> !counts.containsKey(k)).limit(20).toList();
            List<String> doubled = counts.entrySet().stream().filter(e -> e.getValue() > 1).map(Map.Entry::getKey)
                    .sorted().limit(20).toList();
            List<String> unexpected = counts.keySet().stream().filter(k -> !records.contains(k)).sorted().limit(20)
                    .toList();
            List<String> notComplete = new ArrayList<>();
            for (Map<String, Object> r : DuckDb.query("SELECT dump_id || ' ' || outcome AS d FROM read_parquet("
                    + DuckDb.glob(out, "dumps/**/[!.]*.parquet") + ") WHERE outcome <> 'COMPLETE'")) {
                notComplete.add((String) r.get("d"));
            }
            throw new AssertionError(String.format("%s: the exact multiset of (run, rank, launch, record_index):"
                    + " sent %d, landed %d; lost %d (first: %s); duplicated %d (first: %s); not sent (first: %s);"
                    + " dumps not COMPLETE: %s", label, want.size(), landed.size(), lost, lostKeys, duplicates,
                    doubled, unexpected, notComplete));
        }
        List<String> landedDumps = new ArrayList<>();
        for (Map<String, Object> r : DuckDb.query("SELECT dump_id || ' ' || outcome AS d FROM read_parquet("
                + DuckDb.glob(out, "dumps/**/[!.]*.parquet") + ")")) {
            landedDumps.add((String) r.get("d"));
        }
        landedDumps.sort(null);
        List<String> wantDumps = new ArrayList<>();
        dumps.forEach(d -> wantDumps.add(d + " COMPLETE"));
        wantDumps.sort(null);
        assertEquals(wantDumps, landedDumps, label + ": one COMPLETE dumps row per dump sent");
        TableLayout.assertLayout(out);
    }
}
