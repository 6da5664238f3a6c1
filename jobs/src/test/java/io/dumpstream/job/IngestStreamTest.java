package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.format.DumpBuilder;
import io.dumpstream.local.LocalKafka;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.publish.DumpPublisher;
import io.dumpstream.publish.L1Headers;
import io.dumpstream.publish.PublisherConfig;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.schema.RecordPlan;
import io.dumpstream.simulate.SyntheticRanks;
import io.dumpstream.table.DuckDb;
import io.dumpstream.testing.SharedKafka;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/** Synthetic ranks, missing chunks and hostile messages through the real broker and the job. */
class IngestStreamTest {
    private static final LocalKafka kafka = SharedKafka.get();

    @TempDir
    Path dir;

    @Test
    void syntheticRanksLandExactlyTheRecordsSentNothingMore() throws Exception {
        String topic = "ingest-synthetic";
        kafka.createTopic(topic, 4);
        kafka.createTopic(topic + ".dlq", 1);
        SyntheticRanks.Config cfg = new SyntheticRanks.Config();
        cfg.runId = "synthetic-it";
        cfg.records = 12;
        cfg.payloadBytes = 16 * 1024;
        cfg.chunkBytes = 64 * 1024;
        SyntheticRanks ranks = new SyntheticRanks(7, cfg.validate());
        int nRanks = 4;
        int launches = 40;
        List<String> sent = new ArrayList<>();
        try (DumpPublisher p = new DumpPublisher(PublisherConfig.builder(kafka.bootstrapServers()).topic(topic)
                .chunkBytes(64 * 1024).build())) {
            for (int launch = 0; launch < launches; launch++) {
                for (int rank = 0; rank < nRanks; rank++) {
                    DumpBuilder.Dump d = ranks.dump(rank, launch).build();
                    assertTrue(Manifests.chunkCount(d.manifest().getBufferBytes(), 64 * 1024) > 4, "multi-chunk");
                    p.publish(d.manifest(), ByteBuffer.wrap(d.buffer()));
                    for (int i = 0; i < d.manifest().getRecords().size(); i++) {
                        sent.add(Manifests.dumpId(d.manifest()) + "#" + i);
                    }
                }
            }
        }
        sent.sort(null);
        int dumps = nRanks * launches;
        try (JobRun run = JobRun.start(JobRun.config(kafka.bootstrapServers(), topic, dir))) {
            run.awaitDumps(dumps, Duration.ofSeconds(180));
            io.dumpstream.testing.Traffic.awaitRecords(run.out, sent.size());
            List<String> landed = new ArrayList<>();
            for (Map<String, Object> r : DuckDb.query("SELECT run || '/' || rank || '/' || launch_id || '#' || record_index"
                    + " AS k FROM read_parquet(" + DuckDb.glob(run.out, "snapshots/**/*.parquet")
                    + ", hive_partitioning=true, hive_types={'run': VARCHAR, 'rank': INTEGER, 'stage': VARCHAR})")) {
                landed.add((String) r.get("k"));
            }
            landed.sort(null);
            System.out.printf("synthetic ranks: sent %d records in %d dumps, landed %d%n", sent.size(), dumps,
                    landed.size());
            assertEquals(sent, landed, "the exact multiset of (run, rank, launch, record_index)");
            assertEquals(dumps, Tables.count(run.out, "dumps", "outcome = 'COMPLETE'"));
            assertEquals(dumps, Tables.count(run.out, "dumps", null));
        }
    }

    @Test
    void aMissingChunkMakesTheDumpIncompleteAndItsMessagesGoToTheDeadLetterTopic() throws Exception {
        String topic = "ingest-missing";
        kafka.createTopic(topic, 2);
        kafka.createTopic(topic + ".dlq", 1);
        DumpBuilder b = new DumpBuilder("missing-run", 3, 77).chunkBytes(64 * 1024);
        for (int i = 0; i < 8; i++) {
            byte[] payload = new byte[64 * 1024];
            for (int k = 0; k < payload.length; k++) {
                payload[k] = (byte) (k * 31 + i);
            }
            b.add(new DumpBuilder.RecordSpec().taskId(i).stage("layer" + i + ".mlp").tensorName("t" + i)
                    .dtype("uint8").actualShape(payload.length).payload(payload));
        }
        DumpBuilder.Dump d = b.build();
        DumpManifest m = d.manifest();
        byte[] manifestJson = ManifestParser.toJson(m);
        List<RawSend.Msg> msgs = RawSend.messages(Manifests.dumpId(m), manifestJson, d.buffer(), m.getChunkBytes());
        int dropped = 8; // a chunk in the middle of the payloads
        RawSend.Msg gone = msgs.remove(dropped + 1);
        assertEquals(dropped, gone.index());
        try (RawSend send = new RawSend(kafka.bootstrapServers(), topic)) {
            send.sendAll(msgs);
        }
        long from = (long) dropped * m.getChunkBytes();
        long to = from + m.getChunkBytes();
        List<Integer> hit = new ArrayList<>();
        for (int i = 0; i < m.getRecords().size(); i++) {
            RecordPlan r = m.getRecords().get(i);
            if (r.getPayloadOffset() < to && r.getPayloadOffset() + r.getPayloadBytes() > from) {
                hit.add(i);
            }
        }
        assertEquals(List.of(3, 4), hit, "the dropped chunk overlaps the slots of records 3 and 4");
        try (JobRun run = JobRun.start(JobRun.config(kafka.bootstrapServers(), topic, dir))) {
            run.awaitDumps(1, Duration.ofSeconds(90));
            Thread.sleep(2500);
            List<Map<String, Object>> dumps = DuckDb.query("SELECT outcome, reason, accepted, rejected FROM read_parquet("
                    + DuckDb.glob(run.out, "dumps/**/*.parquet") + ")");
            assertEquals(List.of(Map.of("outcome", "INCOMPLETE", "reason", "CHUNKS_MISSING", "accepted", 6,
                    "rejected", 2)), dumps);
            List<Map<String, Object>> rejects = DuckDb.query("SELECT record_index, reason FROM read_parquet("
                    + DuckDb.glob(run.out, "rejects/**/*.parquet") + ") ORDER BY record_index");
            assertEquals(List.of(Map.of("record_index", 3, "reason", "CHUNKS_MISSING"),
                    Map.of("record_index", 4, "reason", "CHUNKS_MISSING")), rejects);
            List<Map<String, Object>> accepted = DuckDb.query("SELECT list(record_index ORDER BY record_index) AS i"
                    + " FROM read_parquet(" + DuckDb.glob(run.out, "snapshots/**/*.parquet") + ")");
            assertEquals(List.of(0, 1, 2, 5, 6, 7), accepted.get(0).get("i"));

            // every message that arrived is on the dead-letter topic, unchanged, with a reason
            List<ConsumerRecord<byte[], byte[]>> dlq = readCommitted(topic + ".dlq", msgs.size());
            assertEquals(msgs.size(), dlq.size());
            Map<String, byte[]> byKind = new TreeMap<>();
            for (ConsumerRecord<byte[], byte[]> r : dlq) {
                assertEquals(Manifests.dumpId(m), new String(r.key(), StandardCharsets.UTF_8));
                String reason = header(r, DlqSerializer.REASON);
                assertNotNull(reason);
                assertTrue(reason.contains("INCOMPLETE") && reason.contains("CHUNKS_MISSING"), reason);
                String kind = header(r, L1Headers.KIND);
                String index = header(r, L1Headers.CHUNK_INDEX);
                byKind.put(kind + (index == null ? "" : ":" + index), r.value());
            }
            assertArrayEquals(manifestJson, byKind.get("manifest"));
            for (RawSend.Msg msg : msgs) {
                if (msg.index() >= 0) {
                    assertArrayEquals(msg.value(), byKind.get("chunk:" + msg.index()), "chunk " + msg.index());
                }
            }
            assertEquals(msgs.size(), byKind.size());
        }
    }

    @Test
    void hostileMessagesAreDeadLetteredOrRejectedAndTheJobKeepsGoing() throws Exception {
        String topic = "ingest-hostile";
        kafka.createTopic(topic, 2);
        kafka.createTopic(topic + ".dlq", 1);
        DumpBuilder gb = new DumpBuilder("hostile-run", 0, 1);
        gb.add(new DumpBuilder.RecordSpec().stage("s").tensorName("x").dtype("float32").actualShape(4)
                .payload(new byte[16]));
        DumpBuilder.Dump good = gb.build();
        byte[] goodJson = ManifestParser.toJson(good.manifest());
        String goodId = Manifests.dumpId(good.manifest());
        try (RawSend send = new RawSend(kafka.bootstrapServers(), topic)) {
            send.sendRaw(null, new byte[]{1, 2, 3}, L1Headers.KIND, L1Headers.KIND_CHUNK, L1Headers.CHUNK_INDEX, "0");
            send.sendRaw("hostile-run/0/2".getBytes(StandardCharsets.UTF_8), new byte[]{1}, L1Headers.KIND, "bogus");
            send.sendRaw("hostile-run/0/3".getBytes(StandardCharsets.UTF_8), new byte[]{1}, L1Headers.KIND,
                    L1Headers.KIND_CHUNK, L1Headers.CHUNK_INDEX, "minus one");
            send.sendRaw("hostile-run/0/4".getBytes(StandardCharsets.UTF_8),
                    "{not json".getBytes(StandardCharsets.UTF_8), L1Headers.KIND, L1Headers.KIND_MANIFEST);
            send.sendRaw("someone-else/9/9".getBytes(StandardCharsets.UTF_8), goodJson, L1Headers.KIND,
                    L1Headers.KIND_MANIFEST);
            List<RawSend.Msg> msgs = RawSend.messages(goodId, goodJson, good.buffer(), good.manifest().getChunkBytes());
            msgs.add(new RawSend.Msg(goodId, 5, new byte[]{9, 9}, 5L * good.manifest().getChunkBytes()));
            send.sendAll(msgs);
        }
        try (JobRun run = JobRun.start(JobRun.config(kafka.bootstrapServers(), topic, dir))) {
            run.awaitDumps(3, Duration.ofSeconds(90));
            Thread.sleep(2500);
            List<Map<String, Object>> dumps = DuckDb.query("SELECT dump_id, outcome, reason FROM read_parquet("
                    + DuckDb.glob(run.out, "dumps/**/*.parquet") + ") ORDER BY dump_id");
            List<Map<String, Object>> want = new ArrayList<>();
            want.add(row("dump_id", goodId, "outcome", "COMPLETE", "reason", null));
            want.add(row("dump_id", "hostile-run/0/4", "outcome", "REJECTED", "reason", "MANIFEST_INVALID"));
            want.add(row("dump_id", "someone-else/9/9", "outcome", "REJECTED", "reason", "MANIFEST_INVALID"));
            assertEquals(want, dumps);
            assertEquals(1, Tables.count(run.out, "snapshots", null));
            List<Map<String, Object>> rejects = DuckDb.query("SELECT dump_id, reason, record_index, manifest FROM "
                    + "read_parquet(" + DuckDb.glob(run.out, "rejects/**/*.parquet") + ") ORDER BY dump_id");
            assertEquals(2, rejects.size());
            assertEquals(row("dump_id", "hostile-run/0/4", "reason", "MANIFEST_INVALID", "record_index", null,
                    "manifest", "{not json"), rejects.get(0));
            assertEquals("someone-else/9/9", rejects.get(1).get("dump_id"));

            List<ConsumerRecord<byte[], byte[]>> dlq = readCommitted(topic + ".dlq", 6);
            Map<String, String> reasons = new HashMap<>();
            for (ConsumerRecord<byte[], byte[]> r : dlq) {
                String key = r.key() == null ? "<none>" : new String(r.key(), StandardCharsets.UTF_8);
                reasons.merge(key, header(r, DlqSerializer.REASON), (x, y) -> x + " | " + y);
            }
            assertEquals(6, dlq.size(), reasons.toString());
            assertTrue(reasons.get("<none>").startsWith("BAD_MESSAGE: no key"), reasons.get("<none>"));
            assertTrue(reasons.get("hostile-run/0/2").startsWith("BAD_MESSAGE: header l1.kind 'bogus'"));
            assertTrue(reasons.get("hostile-run/0/3").startsWith("BAD_MESSAGE: header l1.chunk.index 'minus one'"));
            assertTrue(reasons.get("hostile-run/0/4").startsWith("MANIFEST_INVALID"));
            assertTrue(reasons.get("someone-else/9/9").contains("differs from the message key"));
            assertTrue(reasons.get(goodId).startsWith("CHUNK_INDEX_OUT_OF_RANGE: chunk 5"), reasons.get(goodId));
        }
    }

    private static Map<String, Object> row(Object... kv) {
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    /** The committed records of a topic (read_committed), waiting up to a minute for {@code atLeast}. */
    static List<ConsumerRecord<byte[], byte[]>> readCommitted(String topic, int atLeast) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> tps = c.partitionsFor(topic).stream()
                    .map(i -> new TopicPartition(topic, i.partition())).toList();
            c.assign(tps);
            c.seekToBeginning(tps);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(500)).forEach(out::add);
                if (out.size() >= atLeast) {
                    // a little longer: anything beyond what was expected would show up too
                    c.poll(Duration.ofSeconds(2)).forEach(out::add);
                    break;
                }
            }
        }
        return out;
    }
}
