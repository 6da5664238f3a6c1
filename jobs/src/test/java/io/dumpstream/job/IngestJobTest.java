package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.decode.OfflineDecoder;
import io.dumpstream.local.LocalKafka;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.publish.DumpPublisher;
import io.dumpstream.publish.PublishResult;
import io.dumpstream.publish.PublisherConfig;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.table.TableWriter;
import io.dumpstream.testing.SharedKafka;
import io.dumpstream.testing.Vectors;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;

/** The job on a MiniCluster against the real local broker; what lands is read back with DuckDB. */
class IngestJobTest {
    private static final LocalKafka kafka = SharedKafka.get();
    private static Path offline;
    private static Map<String, List<String>> expected;

    @TempDir
    Path dir;

    /** The offline decoder's tables of every public vector: what the job must land too. */
    @BeforeAll
    static void decodeOffline(@TempDir Path tmp) throws Exception {
        offline = tmp.resolve("offline");
        try (TableWriter w = new TableWriter(offline, TableWriter.Options.defaults())) {
            OfflineDecoder d = new OfflineDecoder(w, Clock.systemUTC());
            for (String name : Vectors.names()) {
                d.decode(Vectors.manifest(name), Vectors.buffer(name));
            }
            w.commit();
        }
        expected = Tables.read(offline);
    }

    static List<List<RawSend.Msg>> vectorMessages() throws Exception {
        List<List<RawSend.Msg>> all = new ArrayList<>();
        for (String name : Vectors.names()) {
            byte[] manifest = Files.readAllBytes(Vectors.manifest(name));
            DumpManifest m = ManifestParser.parseJson(manifest);
            all.add(RawSend.messages(Manifests.dumpId(m), manifest, Files.readAllBytes(Vectors.buffer(name)),
                    m.getChunkBytes()));
        }
        return all;
    }

    @Test
    void everyVectorLandsExactlyAsTheOfflineDecodeWroteIt() throws Exception {
        String topic = "ingest-vectors";
        kafka.createTopic(topic, 3);
        kafka.createTopic(topic + ".dlq", 1);
        try (RawSend send = new RawSend(kafka.bootstrapServers(), topic)) {
            for (List<RawSend.Msg> dump : vectorMessages()) {
                send.sendAll(dump);
            }
        }
        try (JobRun run = JobRun.start(JobRun.config(kafka.bootstrapServers(), topic, dir))) {
            run.awaitDumps(expected.get("dumps").size(), Duration.ofSeconds(120));
            Thread.sleep(2500); // two more checkpoints: anything else that would land, lands
            assertTables(run.out);
        }
    }

    /** The rank side's publisher, not a raw sender: the truncated vector is published too, with a warning. */
    @Test
    void everyVectorPublishedByDumpPublisherLandsAsTheOfflineDecodeWroteIt() throws Exception {
        String topic = "ingest-published";
        kafka.createTopic(topic, 3);
        kafka.createTopic(topic + ".dlq", 1);
        List<String> withDefects = new ArrayList<>();
        int published = 0;
        for (String name : Vectors.names()) {
            DumpManifest m = ManifestParser.parseFile(Vectors.manifest(name));
            try (DumpPublisher p = new DumpPublisher(PublisherConfig.builder(kafka.bootstrapServers()).topic(topic)
                    .chunkBytes(m.getChunkBytes()).build())) {
                PublishResult r = p.publish(m, Vectors.buffer(name));
                published++;
                if (!r.defects().isEmpty()) {
                    withDefects.add(name);
                }
            }
        }
        assertEquals(15, published);
        assertEquals(List.of(Vectors.TRUNCATED), withDefects);
        try (JobRun run = JobRun.start(JobRun.config(kafka.bootstrapServers(), topic, dir))) {
            run.awaitDumps(expected.get("dumps").size(), Duration.ofSeconds(120));
            Thread.sleep(2500);
            assertTables(run.out);
        }
    }

    /**
     * With compaction after every 2 checkpoints (Flink's compactor, ParquetAppendCompactor): the same
     * exact tables; every visible snapshot file is a compacted one (no part left uncompacted), at most
     * one per dump that reached the partition (dumps sent 300 ms apart fall into different rounds).
     */
    @Test
    void compactedPartsLandTheSameTables() throws Exception {
        String topic = "ingest-compact";
        kafka.createTopic(topic, 3);
        kafka.createTopic(topic + ".dlq", 1);
        List<List<RawSend.Msg>> dumps = vectorMessages();
        IngestConfig c = JobRun.config(kafka.bootstrapServers(), topic, dir);
        c.compactCheckpoints = 2;
        try (JobRun run = JobRun.start(c)) {
            try (RawSend send = new RawSend(kafka.bootstrapServers(), topic)) {
                for (List<RawSend.Msg> dump : dumps) {
                    send.sendAll(dump); // one dump at a time: parts of several checkpoints
                    Thread.sleep(300);
                }
            }
            run.awaitDumps(expected.get("dumps").size(), Duration.ofSeconds(120));
            // each table's last merge publishes on a later checkpoint than its dumps row: wait for every
            // table to reach its count (a loaded machine delays merges by seconds), then two more
            // checkpoints for anything that would land beyond it
            for (String table : List.of("rejects", "snapshots")) {
                run.awaitRows(table, expected.get(table).size(), Duration.ofSeconds(120));
            }
            Thread.sleep(2500);
            assertTables(run.out);
            // every part merged: no visible file is an uncompacted part, and a partition holds at most one
            // file per compaction round that saw it (a dump reaching it in a later round adds one)
            var files = new java.util.TreeMap<Path, List<String>>();
            try (var walk = Files.walk(run.out.resolve("snapshots"))) {
                walk.filter(f -> f.getFileName().toString().endsWith(".parquet")
                        && !f.getFileName().toString().startsWith("."))
                        .forEach(f -> files.computeIfAbsent(f.getParent(), k -> new ArrayList<>())
                                .add(f.getFileName().toString()));
            }
            assertEquals(Tables.count(run.out, "snapshots", null) > 0, !files.isEmpty());
            var perPartition = new java.util.TreeMap<Path, Integer>();
            files.forEach((partition, names) -> {
                for (String n : names) {
                    assertTrue(n.startsWith("compacted-part-"), "not compacted: " + partition.resolve(n));
                }
                perPartition.put(partition, names.size());
            });
            for (var e : files.entrySet()) {
                long dumpIds = Tables.distinctIn(e.getKey(), "dump_id");
                assertTrue(e.getValue().size() <= dumpIds, e.getKey() + ": " + e.getValue().size() + " files for "
                        + dumpIds + " dumps");
            }
            System.out.println("compacted snapshot files per partition: " + perPartition);
        }
    }

    @Test
    void shuffledDuplicatedResentAndInterleavedDumpsLandTheSameTables() throws Exception {
        String topic = "ingest-shuffled";
        kafka.createTopic(topic, 1); // one partition: every dump interleaved with every other
        kafka.createTopic(topic + ".dlq", 1);
        Random rnd = new Random(42);
        List<RawSend.Msg> stream = new ArrayList<>();
        List<List<RawSend.Msg>> dumps = vectorMessages();
        for (List<RawSend.Msg> dump : dumps) {
            List<RawSend.Msg> mine = new ArrayList<>(dump);
            mine.addAll(dump.subList(0, Math.min(dump.size(), 1 + rnd.nextInt(dump.size())))); // duplicates
            Collections.shuffle(mine, rnd); // any order, the manifest included
            stream.addAll(mine);
        }
        // interleave the dumps' messages with each other, keeping nothing in order
        Collections.shuffle(stream, rnd);
        try (RawSend send = new RawSend(kafka.bootstrapServers(), topic)) {
            send.sendAll(stream);
        }
        try (JobRun run = JobRun.start(JobRun.config(kafka.bootstrapServers(), topic, dir))) {
            run.awaitDumps(expected.get("dumps").size(), Duration.ofSeconds(120));
            // the whole set again, in order, after the first one landed: a re-send writes nothing. (The
            // truncated buffer failed in transport, so its re-send is a retry, tested on its own.)
            try (RawSend send = new RawSend(kafka.bootstrapServers(), topic)) {
                List<String> names = Vectors.names();
                for (int i = 0; i < dumps.size(); i++) {
                    if (!names.get(i).equals(Vectors.TRUNCATED)) {
                        send.sendAll(dumps.get(i));
                    }
                }
            }
            Thread.sleep(4000);
            assertTables(run.out);
        }
    }

    /**
     * The job's tables equal the offline decode's, except that the offline decoder names the buffer
     * file in the detail of a short file, where the job can only name the chunk.
     */
    private static void assertTables(Path out) throws Exception {
        Map<String, List<String>> got = Tables.read(out);
        String fileDetail = "detail=" + Vectors.buffer(Vectors.TRUNCATED) + ": file has 262592 bytes, the manifest's"
                + " buffer_bytes is 262720; chunk 0 has 262592 of its 262720 bytes,";
        String chunkDetail = "detail=chunk 0: 262592 bytes, expected 262720 (buffer_bytes 262720, chunk_bytes 1048576),";
        List<String> rejects = new ArrayList<>();
        for (String r : expected.get("rejects")) {
            rejects.add(r.replace(fileDetail, chunkDetail));
        }
        rejects.sort(null);
        expected.put("rejects", rejects);
        for (String table : List.of("dumps", "rejects", "snapshots")) {
            assertEquals(expected.get(table).size(), got.get(table).size(), table + " row count: " + got.get(table));
            for (int i = 0; i < expected.get(table).size(); i++) {
                assertEquals(expected.get(table).get(i), got.get(table).get(i), table + " row " + i);
            }
        }
        assertTrue(expected.get("snapshots").size() > 10, "the vectors have accepted records");
    }
}
