package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.decode.OfflineDecoder;
import io.dumpstream.local.LocalKafka;
import io.dumpstream.table.DuckDb;
import io.dumpstream.table.TableWriter;
import io.dumpstream.testing.SharedKafka;
import io.dumpstream.testing.TopicReader;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * An upgrade by stop-with-savepoint: a savepoint of the whole ingest job, taken by a previous version
 * with dumps mid-assembly, chunks waiting out of order and finished dumps inside the de-duplication
 * retention, restores in today's job, which finishes those dumps exactly once.
 *
 * <p>The golden fixture, {@code src/test/resources/upgrade/v1/} (written by the job of commit 7e11ad4), holds:
 * <ul>
 * <li>{@code savepoint/}: the savepoint (canonical format, hashmap state backend, parallelism 2, max
 *     parallelism 128) of the job reading topic {@value #TOPIC} as group {@value #GROUP}, written with
 *     snapshot compression so that the 262208-byte heads of the dumps in flight (mostly zeros) take 64 KB
 *     instead of 600 KB; the job restores it whatever its own setting;</li>
 * <li>{@code messages.bin}: every message, byte for byte ({@link UpgradeFixture}: six dumps, what the old
 *     job read before its savepoint and what comes after);</li>
 * <li>{@code tables/}: the Parquet files the old job had committed by then (the dumps finished before the
 *     savepoint, and the records of the dumps in flight that were already decided).</li>
 * </ul>
 *
 * <p>Portability (another machine, another clone path, any later date):
 * <ul>
 * <li>Kafka: the source's state is topic {@value #TOPIC}, partition 0, and the offset to go on from. The
 *     test creates the fixed topic (new on the run's broker) and publishes the fixture's messages to it in
 *     the same order; each must land at the same offset as before, or the test stops.</li>
 * <li>Files: Flink's FileSink keeps, per active bucket, its absolute path and any in-progress file (bulk
 *     formats roll on every checkpoint, so a savepoint has none), and the committer keeps the files the
 *     savepoint's own pre-commit closed, to commit them on restore: absolute paths that would not exist
 *     elsewhere. The generator takes the savepoint only once the job is quiescent: every published
 *     message was read before a completed checkpoint (the group's committed offset is at the end), whose
 *     files are committed, so the savepoint's pre-commit finds no new rows, every bucket inactive (dropped
 *     from the writer's state) and nothing to commit. It checks that no file of the savepoint names the
 *     output folder. The savepoint's own state is inline in {@code _metadata} or in files referenced
 *     relative to it ({@link #describe} refuses anything else), so it restores from any folder: the test
 *     restores a copy in its temporary folder.</li>
 * <li>Time: the retention of the finished dumps is ten years from the fixture's making; the assembly
 *     timeout of the dumps in flight was a minute and has passed long before the test runs: the restored
 *     job gives each a full timeout ({@value #RESTORED_TIMEOUT_SECONDS} s here) from its start.</li>
 * </ul>
 *
 * <p>What shows that each kind of state was restored rather than rebuilt: D's chunk P came only before
 * the savepoint (held in state before its manifest) and C's chunk P+3 too (held out of order), and both
 * dumps land whole; C's and E's first chunks were consumed before it (their heads and slots in the
 * assembly state), and E's dead letters are read back from Kafka at the offsets its restored attempt
 * recorded; A's re-send writes nothing (its retention marker); the fixture's tables hold A and B once and
 * the restored source starts after them (its offset).
 *
 * <p>Regenerate only when the state layout changes on purpose, and say why in the commit (a savepoint of
 * the job before that change must then restore through a state migration): from the repository root,
 * {@code mvn -B -q -pl jobs -am test -Dtest=UpgradeFromSavepointTest#writeFixture
 * -Dsurefire.failIfNoSpecifiedTests=false -Dupgrade.fixture.write=true}.
 */
class UpgradeFromSavepointTest {
    static final String TOPIC = "upgrade-l1";
    static final String GROUP = "upgrade-ingest";
    static final Path FIXTURE = Path.of("src/test/resources/upgrade/v1");
    /**
     * The assembly timeout of the restored job: C and D must finish within it of the restore (their
     * messages are all in the topic before the job starts), E waits it out.
     */
    static final int RESTORED_TIMEOUT_SECONDS = 20;
    /** Dump E: its chunk P+1 never comes, and the records that overlap it are rejected CHUNKS_MISSING. */
    static final String E = "upgrade/0/3";

    @TempDir
    Path dir;

    static IngestConfig config(String bootstrap, Path dir, Duration assemblyTimeout, Duration retention) {
        IngestConfig c = new IngestConfig();
        c.bootstrap = bootstrap;
        c.topic = TOPIC;
        c.group = GROUP;
        c.dlqTopic = TOPIC + ".dlq";
        c.out = dir.resolve("out").toString();
        c.checkpoints = dir.resolve("ck").toString();
        c.checkpointInterval = Duration.ofSeconds(1);
        c.parallelism = 2;
        c.assemblyTimeout = assemblyTimeout;
        c.dedupRetention = retention;
        c.restartAttempts = 0;
        c.resume = false;
        return c.validate();
    }

    @Test
    void theSavepointOfThePreviousJobRestoresAndFinishesItsDumpsExactlyOnce() throws Exception {
        List<UpgradeFixture.Msg> msgs = UpgradeFixture.read(FIXTURE.resolve("messages.bin"));
        // the savepoint and tables of the old job, moved to a folder of this run
        Path savepoint = copy(FIXTURE.resolve("savepoint"), dir.resolve("elsewhere/savepoint-of-v1"));
        copy(FIXTURE.resolve("tables"), dir.resolve("out"));
        Map<String, List<String>> before = Tables.read(dir.resolve("out"));
        assertEquals(2, before.get("dumps").size(), "the old job had finished A and B: " + before.get("dumps"));

        // the run's shared broker, on which the fixed topic is new: its offsets start at 0, as on the old broker
        LocalKafka kafka = SharedKafka.get();
        kafka.createTopic(TOPIC, 1);
        kafka.createTopic(TOPIC + ".dlq", 1);
        long phase1 = UpgradeFixture.publish(kafka.bootstrapServers(), TOPIC, msgs, 1, 0);
        UpgradeFixture.publish(kafka.bootstrapServers(), TOPIC, msgs, 2, phase1);

        IngestConfig c = config(kafka.bootstrapServers(), dir, Duration.ofSeconds(RESTORED_TIMEOUT_SECONDS),
                Duration.ofHours(1));
        // what it holds, by today's uids; every state inline in _metadata or in a file beside it
        List<String> held = describe(savepoint, uids(c));
        held.forEach(l -> System.out.println("upgrade: the savepoint holds " + l));
        assertTrue(held.stream().anyMatch(l -> l.startsWith("assembler: keyed ")), "assembler state: " + held);
        CheckpointWatch.reset();
        Configuration restore = CheckpointWatch.enable(new Configuration());
        restore.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint.toUri().toString());
        long t0 = System.nanoTime();
        try (LocalIngest job = LocalIngest.start(c, restore)) {
            // C, D and F complete at once; E waits out its timeout after the restore
            FailoverTest.await(() -> count("dumps") >= 6 && count("rejects") >= 1, job.client(),
                    Duration.ofSeconds(90), "six dumps rows");
            // two more completed checkpoints: anything doubled would have landed by then
            long seen = CheckpointWatch.completed();
            FailoverTest.await(() -> CheckpointWatch.completed() >= seen + 2, job.client(), Duration.ofSeconds(60),
                    "two more checkpoints after checkpoint " + seen);
            System.out.printf("upgrade: restored and finished in %.1f s%n", (System.nanoTime() - t0) / 1e9);
        }
        assertTables(msgs);
        assertDeadLetters(kafka, msgs, phase1);
    }

    /** The tables: the offline decode of every dump, each once; E as far as its chunks go. */
    private void assertTables(List<UpgradeFixture.Msg> msgs) throws Exception {
        Path offline = dir.resolve("offline");
        Path files = Files.createDirectories(dir.resolve("offline-input"));
        try (TableWriter w = new TableWriter(offline, TableWriter.Options.defaults())) {
            OfflineDecoder d = new OfflineDecoder(w, Clock.systemUTC());
            int i = 0;
            for (Map.Entry<String, byte[][]> e : UpgradeFixture.dumpsOf(msgs).entrySet()) {
                Path man = files.resolve(i + ".manifest.json");
                Path buf = files.resolve(i++ + ".bin");
                Files.write(man, e.getValue()[0]);
                Files.write(buf, e.getValue()[1]);
                d.decode(man, buf);
            }
            w.commit();
        }
        Path out = dir.resolve("out");
        io.dumpstream.testing.TableLayout.assertLayout(out);
        List<Integer> missing = missingRecords(msgs);
        assertEquals(List.of(2, 3), missing, "E's records whose payload overlaps chunk P+1");
        String in = missing.toString().replace('[', '(').replace(']', ')');
        // snapshots: every record of A, B, C, D and F once, and E's records outside its missing chunk
        String notMissing = " WHERE NOT (dump_id = '" + E + "' AND record_index IN " + in + ")";
        List<String> want = Tables.rows(offline, "snapshots", Tables.SNAPSHOTS + notMissing);
        List<String> got = Tables.rows(out, "snapshots", Tables.SNAPSHOTS);
        assertEquals(want.size(), got.size(), "snapshot rows");
        assertEquals(want, got, "the snapshots table equals the offline decode (E without its missing records)");
        assertEquals(4 + 3 + 6 + 5 + (6 - missing.size()) + 3, got.size());
        // dumps: one row per dump; E INCOMPLETE for its missing chunk
        List<String> wantDumps = Tables.rows(offline, "dumps", Tables.DUMPS + " WHERE dump_id <> '" + E + "'");
        assertEquals(wantDumps, Tables.rows(out, "dumps", Tables.DUMPS + " WHERE dump_id <> '" + E + "'"));
        assertEquals(List.of("upgrade/0/1 COMPLETE", "upgrade/0/2 COMPLETE", "upgrade/0/3 INCOMPLETE CHUNKS_MISSING "
                + (6 - missing.size()) + "/" + missing.size(), "upgrade/1/1 COMPLETE", "upgrade/1/2 COMPLETE",
                "upgrade/1/3 COMPLETE"), column(out, "dumps",
                "dump_id || ' ' || outcome || coalesce(' ' || reason || ' ' || accepted || '/' || rejected, '')"
                        + " AS v", "v"));
        // rejects: E's records that overlap its missing chunk, and nothing else
        List<String> wantRejects = new ArrayList<>();
        missing.forEach(i -> wantRejects.add(E + "#" + i + " CHUNKS_MISSING"));
        assertEquals(wantRejects, column(out, "rejects", "dump_id || '#' || record_index || ' ' || reason AS v", "v"));
    }

    /** The records of E whose payload overlaps its chunk P+1, which never comes. */
    static List<Integer> missingRecords(List<UpgradeFixture.Msg> msgs) throws Exception {
        byte[] manifest = msgs.stream().filter(m -> m.key().equals(E) && m.manifest()).findFirst().orElseThrow()
                .value();
        var records = io.dumpstream.manifest.ManifestParser.parseJson(manifest).getRecords();
        long lo = (long) (UpgradeFixture.P + 1) * UpgradeFixture.CHUNK_BYTES;
        long hi = lo + UpgradeFixture.CHUNK_BYTES;
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < records.size(); i++) {
            long off = records.get(i).getPayloadOffset();
            long end = off + records.get(i).getPayloadBytes();
            if (off < hi && end > lo) {
                out.add(i);
            }
        }
        return out;
    }

    /**
     * The dead-letter topic: B's chunk past its list, and E's every message once it is INCOMPLETE, each
     * with its original value: those E consumed before the savepoint are read back from the new broker
     * at the offsets the restored state holds, so they match only if the offsets do.
     */
    private static void assertDeadLetters(LocalKafka kafka, List<UpgradeFixture.Msg> msgs, long phase1) {
        Properties committed = new Properties();
        committed.put("isolation.level", "read_committed");
        List<String> got = new ArrayList<>();
        Map<Long, UpgradeFixture.Msg> byOffset = new TreeMap<>();
        long o = 0;
        for (int phase : new int[] {1, 2}) {
            for (UpgradeFixture.Msg m : msgs) {
                if (m.phase() == phase) {
                    byOffset.put(o++, m);
                }
            }
        }
        for (ConsumerRecord<byte[], byte[]> r : TopicReader.readAll(kafka.bootstrapServers(), TOPIC + ".dlq",
                committed)) {
            String source = header(r, DlqSerializer.SOURCE);
            long offset = Long.parseLong(source.substring(source.lastIndexOf('@') + 1));
            UpgradeFixture.Msg original = byOffset.get(offset);
            assertNotNull(original, "dead letter from " + source);
            assertTrue(java.util.Arrays.equals(original.value(), r.value()), "the dead letter of " + original
                    + " from " + source + " carries its original value");
            got.add(original + " @" + offset + ": " + header(r, DlqSerializer.REASON));
        }
        got.sort(null);
        String incomplete = ": dump " + E + " INCOMPLETE after PT" + RESTORED_TIMEOUT_SECONDS + "S: CHUNKS_MISSING";
        long past = -1;
        long chunksOfB = msgs.stream().filter(m -> m.phase() == 1 && m.key().equals("upgrade/1/1") && !m.manifest())
                .count();
        List<String> want = new ArrayList<>();
        for (Map.Entry<Long, UpgradeFixture.Msg> e : byOffset.entrySet()) {
            UpgradeFixture.Msg m = e.getValue();
            if (m.key().equals(E)) {
                want.add(m + " @" + e.getKey() + incomplete);
            } else if (m.key().equals("upgrade/1/1") && m.index() == chunksOfB) {
                past = e.getKey();
                want.add(m + " @" + past + ": CHUNK_INDEX_OUT_OF_RANGE: chunk " + chunksOfB + " of dump upgrade/1/1 but"
                        + " its manifest lists " + chunksOfB + " chunks, on " + TOPIC + "-0@" + past);
            }
        }
        want.sort(null);
        assertTrue(past >= phase1, "B's stray chunk comes after the upgrade");
        assertEquals(want, got, "dead letters");
    }

    // ------------------------------------------------------------------ the generator

    /**
     * Writes the fixture (see the class comment for the command): today's job on a MiniCluster against a
     * broker of its own reads phase 1, and once every message of it was read before a completed
     * checkpoint, stops with a savepoint.
     */
    @Test
    @EnabledIfSystemProperty(named = "upgrade.fixture.write", matches = "true")
    void writeFixture() throws Exception {
        List<UpgradeFixture.Msg> msgs = UpgradeFixture.plan();
        String savepoint;
        try (LocalKafka kafka = LocalKafka.startEphemeral()) {
            kafka.createTopic(TOPIC, 1);
            kafka.createTopic(TOPIC + ".dlq", 1);
            IngestConfig c = config(kafka.bootstrapServers(), dir, Duration.ofMinutes(1), Duration.ofDays(3650));
            // the mid-assembly heads (262208 bytes each, mostly zeros) compress; a job restores the savepoint
            // whatever its own setting
            Configuration compressed = new Configuration();
            compressed.set(org.apache.flink.configuration.ExecutionOptions.SNAPSHOT_COMPRESSION, true);
            try (LocalIngest job = LocalIngest.start(c, compressed)) {
                long phase1 = UpgradeFixture.publish(kafka.bootstrapServers(), TOPIC, msgs, 1, 0);
                // quiescent: every message read before a completed checkpoint, whose files are committed
                FailoverTest.await(() -> committedOffset(kafka) == phase1 && countIn(dir, "dumps") == 2,
                        job.client(), Duration.ofSeconds(60), "phase 1 read and committed");
                System.out.println("upgrade fixture: phase 1 read and committed");
                Thread.sleep(2500);
                savepoint = job.stop(Duration.ofSeconds(60));
                System.out.println("upgrade fixture: stopped with " + savepoint);
            }
            assertNotNull(savepoint, "stop-with-savepoint completed");
        }
        Path sp = Path.of(java.net.URI.create(savepoint.startsWith("file:") ? savepoint : "file://" + savepoint));
        assertEquals(2, countIn(dir, "dumps"), "only A and B finished before the savepoint");
        deleteTree(FIXTURE);
        UpgradeFixture.write(msgs, FIXTURE.resolve("messages.bin"));
        copy(sp, FIXTURE.resolve("savepoint"));
        Path tables = FIXTURE.resolve("tables");
        try (Stream<Path> s = Files.walk(dir.resolve("out"))) {
            for (Path f : s.filter(Files::isRegularFile).toList()) {
                if (!f.getFileName().toString().startsWith(".")) {
                    Path to = tables.resolve(dir.resolve("out").relativize(f).toString());
                    Files.createDirectories(to.getParent());
                    Files.copy(f, to);
                }
            }
        }
        describe(FIXTURE.resolve("savepoint"), uids(config("127.0.0.1:9", dir, Duration.ofMinutes(1),
                Duration.ofDays(1)))).forEach(l -> System.out.println("upgrade fixture: " + l));
        // the sinks' state names no file of the output (no bucket, no in-progress or pending file), and
        // every state file is referenced relative to the savepoint (describe checks)
        byte[] outRoot = dir.resolve("out").toAbsolutePath().toString().getBytes(StandardCharsets.UTF_8);
        try (Stream<Path> s = Files.walk(FIXTURE.resolve("savepoint"))) {
            for (Path f : s.filter(Files::isRegularFile).toList()) {
                byte[] b = Files.readAllBytes(f);
                int at = indexOf(b, outRoot);
                assertFalse(at >= 0, () -> f + " names " + dir.resolve("out") + ": ..." + new String(b,
                        Math.max(0, at - 300), Math.min(b.length, at + 300) - Math.max(0, at - 300),
                        StandardCharsets.ISO_8859_1).replaceAll("[^\\x20-\\x7e]", ".") + "...");
            }
        }
        System.out.println("upgrade fixture written to " + FIXTURE.toAbsolutePath() + " from " + savepoint);
    }

    /**
     * What the savepoint under {@code dir} holds, one line per operator with state: its uid (of the
     * job's operators, matched by the hash Flink derives from it), the bytes of its state, and of
     * which kinds (keyed, operator, coordinator).
     */
    static List<String> describe(Path dir, List<String> uids) throws Exception {
        Map<org.apache.flink.runtime.jobgraph.OperatorID, String> names = new java.util.HashMap<>();
        for (String uid : uids) {
            names.put(new org.apache.flink.runtime.jobgraph.OperatorID(
                    org.apache.flink.shaded.guava33.com.google.common.hash.Hashing.murmur3_128(0)
                            .hashString(uid, StandardCharsets.UTF_8).asBytes()), uid);
        }
        org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata md;
        try (java.io.DataInputStream in = new java.io.DataInputStream(Files.newInputStream(dir.resolve("_metadata")))) {
            md = org.apache.flink.runtime.checkpoint.Checkpoints.loadCheckpointMetadata(in,
                    UpgradeFromSavepointTest.class.getClassLoader(), dir.toUri().toString());
        }
        List<String> out = new ArrayList<>();
        for (org.apache.flink.runtime.checkpoint.OperatorState op : md.getOperatorStates()) {
            long keyed = 0;
            long operator = 0;
            java.util.Set<String> kinds = new java.util.TreeSet<>();
            for (org.apache.flink.runtime.checkpoint.OperatorSubtaskState st : op.getStates()) {
                keyed += st.getManagedKeyedState().getStateSize() + st.getRawKeyedState().getStateSize();
                operator += st.getManagedOperatorState().getStateSize() + st.getRawOperatorState().getStateSize();
                for (var h : st.getManagedKeyedState()) {
                    kinds.add(kind(((org.apache.flink.runtime.state.KeyGroupsStateHandle) h).getDelegateStateHandle()));
                }
                for (var h : st.getRawKeyedState()) {
                    kinds.add(kind(((org.apache.flink.runtime.state.KeyGroupsStateHandle) h).getDelegateStateHandle()));
                }
                for (var h : st.getManagedOperatorState()) {
                    kinds.add(kind(h.getDelegateStateHandle()));
                }
                for (var h : st.getRawOperatorState()) {
                    kinds.add(kind(h.getDelegateStateHandle()));
                }
                assertTrue(st.getInputChannelState().isEmpty() && st.getResultSubpartitionState().isEmpty(),
                        "no in-flight data in a savepoint");
            }
            long coordinator = op.getCoordinatorState() == null ? 0 : op.getCoordinatorState().getStateSize();
            if (op.getCoordinatorState() != null) {
                kinds.add(kind(op.getCoordinatorState()));
            }
            if (keyed + operator + coordinator == 0) {
                continue;
            }
            out.add(names.getOrDefault(op.getOperatorID(), op.getOperatorID().toString()) + ": keyed " + keyed
                    + " B, operator " + operator + " B, coordinator " + coordinator + " B " + kinds);
        }
        out.sort(null);
        return out;
    }

    /**
     * Inline (in {@code _metadata}) or a file relative to it; a file at an absolute path would not move
     * with the savepoint.
     */
    private static String kind(org.apache.flink.runtime.state.StreamStateHandle h) {
        if (h instanceof org.apache.flink.runtime.state.filesystem.RelativeFileStateHandle) {
            return "relative files";
        }
        if (h instanceof org.apache.flink.runtime.state.memory.ByteStreamStateHandle) {
            return "inline";
        }
        throw new AssertionError("state at an absolute location, which would not move with the savepoint: " + h);
    }

    /** The uids of the job's operators (the sinks' writers and committers get theirs from the sink's). */
    static List<String> uids(IngestConfig c) {
        org.apache.flink.streaming.api.environment.StreamExecutionEnvironment env =
                org.apache.flink.streaming.api.environment.StreamExecutionEnvironment.createLocalEnvironment(
                        c.parallelism, IngestJob.configuration(c));
        IngestJob.build(env, c);
        List<String> uids = new ArrayList<>();
        for (var n : env.getStreamGraph().getStreamNodes()) {
            uids.add(n.getTransformationUID());
        }
        return uids;
    }

    // ------------------------------------------------------------------ helpers

    private long count(String table) {
        return countIn(dir, table);
    }

    private static long countIn(Path dir, String table) {
        Path out = dir.resolve("out");
        if (!Files.isDirectory(out.resolve(table))) {
            return 0;
        }
        try {
            return ((Number) DuckDb.query("SELECT count(*) AS n FROM read_parquet("
                    + DuckDb.glob(out, table + "/**/[!.]*.parquet") + ")").get(0).get("n")).longValue();
        } catch (java.sql.SQLException e) {
            return 0;
        }
    }

    private static List<String> column(Path out, String table, String select, String name) throws Exception {
        List<String> v = new ArrayList<>();
        for (Map<String, Object> r : DuckDb.query("SELECT " + select + " FROM read_parquet("
                + DuckDb.glob(out, table + "/**/[!.]*.parquet") + ", hive_partitioning=true, hive_types={'run':"
                + " VARCHAR, 'rank': VARCHAR})")) {
            v.add(String.valueOf(r.get(name)));
        }
        v.sort(null);
        return v;
    }

    private static long committedOffset(LocalKafka kafka) {
        try (Admin admin = kafka.admin()) {
            OffsetAndMetadata o = admin.listConsumerGroupOffsets(GROUP).partitionsToOffsetAndMetadata()
                    .get(30, TimeUnit.SECONDS).get(new TopicPartition(TOPIC, 0));
            return o == null ? -1 : o.offset();
        } catch (Exception e) {
            return -1;
        }
    }

    private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    private static Path copy(Path from, Path to) throws Exception {
        try (Stream<Path> s = Files.walk(from)) {
            for (Path f : s.toList()) {
                Path t = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(t);
                } else {
                    Files.createDirectories(t.getParent());
                    Files.copy(f, t);
                }
            }
        }
        return to;
    }

    private static void deleteTree(Path p) throws Exception {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> s = Files.walk(p)) {
            for (Path f : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(f);
            }
        }
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
