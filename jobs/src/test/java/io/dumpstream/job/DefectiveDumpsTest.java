package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.decode.OfflineDecoder;
import io.dumpstream.format.DumpBuilder;
import io.dumpstream.local.LocalKafka;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.publish.DumpPublisher;
import io.dumpstream.publish.L1Headers;
import io.dumpstream.publish.PublishResult;
import io.dumpstream.publish.PublisherConfig;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.table.TableWriter;
import io.dumpstream.testing.SharedKafka;
import io.dumpstream.testing.TopicReader;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A rank's damaged dumps, published by the rank side's {@link DumpPublisher} from the files as they
 * are, through the broker and the job: a buffer file shorter and one longer than the manifest's
 * {@code buffer_bytes} land exactly as the offline {@code decode} of the same files (dumps row,
 * rejects with their reasons, accepted snapshots byte for byte); a chunk the publisher cannot read
 * is not sent and the dump lands INCOMPLETE with CHUNKS_MISSING for the records it held, the others
 * accepted. Every message of a rejected or incomplete dump is on the dead-letter topic, unchanged,
 * with a reason header naming the reason code.
 */
class DefectiveDumpsTest {
    private static final LocalKafka kafka = SharedKafka.get();
    private static final int CHUNK = 64 * 1024;
    private static final int UNREADABLE = 5; // a payload chunk: past the 262,208-byte head

    @TempDir
    Path dir;

    private static DumpBuilder.Dump dump(long launch) throws IOException {
        DumpBuilder b = new DumpBuilder("defects", 3, launch).chunkBytes(CHUNK);
        Random rnd = new Random(launch);
        for (int r = 0; r < 8; r++) {
            byte[] payload = new byte[40_000 + 1000 * r];
            rnd.nextBytes(payload);
            b.add(new DumpBuilder.RecordSpec().taskId(500 + r).taskIndex(r).stage("layer" + (r % 2) + ".attn")
                    .tensorName("t" + r).dtype("uint8").actualShape(payload.length).payload(payload));
        }
        return b.build();
    }

    private record Files2(Path manifest, Path buffer, DumpManifest plan, byte[] full) {
    }

    private Files2 write(long launch, int extra) throws IOException {
        DumpBuilder.Dump d = dump(launch);
        Path m = dir.resolve("files").resolve("launch" + launch + ".manifest.json");
        Path b = dir.resolve("files").resolve("launch" + launch + ".bin");
        Files.createDirectories(m.getParent());
        Files.write(m, ManifestParser.toJson(d.manifest()));
        byte[] file = Arrays.copyOf(d.buffer(), d.buffer().length + extra);
        for (int i = d.buffer().length; i < file.length; i++) {
            file[i] = (byte) (i * 31); // bytes after the manifest's buffer_bytes
        }
        Files.write(b, file);
        return new Files2(m, b, d.manifest(), d.buffer());
    }

    @Test
    void shortLongAndUnreadableBuffersArePublishedAndLandAsDecodeSaysWithTheirMessagesDeadLettered()
            throws Exception {
        String topic = "ingest-defects";
        kafka.createTopic(topic, 2);
        kafka.createTopic(topic + ".dlq", 1);
        Files2 control = write(1, 0);
        Files2 shorter = write(2, -(CHUNK + 5000)); // a chunk past EOF and a short one
        Files2 longer = write(3, 5000);
        Files2 unreadable = write(4, 0);
        long unreadableAt = (long) UNREADABLE * CHUNK;
        DumpPublisher.ReadFault fault = (file, offset, length) -> {
            if (file.equals(unreadable.buffer()) && offset == unreadableAt) {
                throw new IOException("Input/output error");
            }
        };
        Map<String, List<String>> defects = new TreeMap<>();
        try (DumpPublisher p = new DumpPublisher(PublisherConfig.builder(kafka.bootstrapServers()).topic(topic)
                .chunkBytes(CHUNK).build(), fault)) {
            for (Files2 f : List.of(control, shorter, longer, unreadable)) {
                PublishResult r = p.publish(ManifestParser.parseFile(f.manifest()), f.buffer());
                defects.put(r.dumpId(), r.defects());
            }
        }
        assertEquals(List.of(), defects.get("defects/3/1"));
        assertEquals(1, defects.get("defects/3/2").size(), "short: " + defects);
        assertTrue(defects.get("defects/3/2").get(0).startsWith("BUFFER_SIZE_MISMATCH"), defects.toString());
        assertEquals(1, defects.get("defects/3/3").size(), "long: " + defects);
        assertTrue(defects.get("defects/3/3").get(0).startsWith("BUFFER_SIZE_MISMATCH"), defects.toString());
        assertEquals(List.of("CHUNKS_MISSING: chunk " + UNREADABLE + " (bytes " + unreadableAt + ".."
                + (unreadableAt + CHUNK) + ") of buffer file " + unreadable.buffer()
                + " could not be read (Input/output error); not published"), defects.get("defects/3/4"));

        // the oracle: the offline decode of the same files; for the unreadable chunk, the chunk model
        HostileInputTest.Expected want = new HostileInputTest.Expected();
        Path offline = dir.resolve("offline");
        try (TableWriter w = new TableWriter(offline, TableWriter.Options.defaults())) {
            OfflineDecoder d = new OfflineDecoder(w, Clock.systemUTC());
            for (Files2 f : List.of(control, shorter, longer)) {
                d.decode(f.manifest(), f.buffer());
            }
            w.commit();
        }
        want.addTables(offline, Map.of());
        HostileInputTest.Case missing = new HostileInputTest.Case(HostileInputTest.Kind.DROP_CHUNK, "defects/3/4");
        missing.plan = unreadable.plan();
        missing.buffer = unreadable.full();
        missing.chunks = new char[(int) Manifests.chunkCount(missing.plan.getBufferBytes(), CHUNK)];
        Arrays.fill(missing.chunks, 'o');
        missing.chunks[UNREADABLE] = 'm';
        want.addModel(missing);
        want.rows.values().forEach(l -> l.sort(null));

        IngestConfig c = JobRun.config(kafka.bootstrapServers(), topic, dir);
        try (JobRun run = JobRun.start(c)) {
            run.awaitDumps(4, Duration.ofSeconds(120));
            Thread.sleep(2500); // two more checkpoints: anything else that would land, lands
            HostileInputTest.Expected got = new HostileInputTest.Expected();
            got.addTables(run.out, Map.of());
            got.rows.values().forEach(l -> l.sort(null));
            assertEquals(want.rows.get("dumps"), got.rows.get("dumps"));
            assertEquals(want.rows.get("rejects"), got.rows.get("rejects"));
            assertEquals(want.rows.get("snapshots"), got.rows.get("snapshots"));
            Map<String, String> outcomes = new TreeMap<>();
            for (String r : got.rows.get("dumps")) {
                String[] f = r.split("\\|");
                outcomes.put(f[0], f[1] + "/" + f[2]);
            }
            System.out.println("defective dumps landed: " + outcomes);
            assertEquals("COMPLETE/-", outcomes.get("defects/3/1"));
            assertEquals("INCOMPLETE/CHUNKS_MISSING", outcomes.get("defects/3/4"));
            assertDeadLettered(topic, outcomes);
        }
    }

    /**
     * The dead-letter topic holds, for each REJECTED or INCOMPLETE dump, exactly the messages the
     * publisher put on the topic for it, byte for byte, each with a reason naming the dump's reason.
     */
    private static void assertDeadLettered(String topic, Map<String, String> outcomes) {
        Map<String, Map<String, byte[]>> sent = new TreeMap<>();
        Map<String, String> where = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : TopicReader.readAll(kafka.bootstrapServers(), topic)) {
            String key = new String(r.key(), StandardCharsets.UTF_8);
            sent.computeIfAbsent(key, k -> new HashMap<>()).put(id(r), r.value());
            where.put(key + " " + id(r), r.topic() + "-" + r.partition() + "@" + r.offset());
        }
        Map<String, Set<String>> wanted = new TreeMap<>();
        int total = 0;
        for (Map.Entry<String, String> o : outcomes.entrySet()) {
            if (o.getValue().startsWith("REJECTED") || o.getValue().startsWith("INCOMPLETE")) {
                wanted.put(o.getKey(), new TreeSet<>(sent.get(o.getKey()).keySet()));
                total += sent.get(o.getKey()).size();
            }
        }
        assertTrue(total > 0, "some dump is dead-lettered: " + outcomes);
        Map<String, Set<String>> landed = new TreeMap<>();
        for (ConsumerRecord<byte[], byte[]> r : IngestStreamTest.readCommitted(topic + ".dlq", total)) {
            String key = new String(r.key(), StandardCharsets.UTF_8);
            landed.computeIfAbsent(key, k -> new TreeSet<>()).add(id(r));
            assertArrayEquals(sent.get(key).get(id(r)), r.value(), "the original bytes of " + key + " " + id(r));
            String reason = IngestStreamTest.header(r, DlqSerializer.REASON);
            String code = outcomes.get(key).split("/")[1];
            assertTrue(reason != null && reason.contains(code), key + " " + id(r) + ": reason " + reason
                    + " names " + code);
            assertEquals(where.get(key + " " + id(r)), IngestStreamTest.header(r, DlqSerializer.SOURCE),
                    "source of " + key + " " + id(r));
        }
        assertEquals(wanted, landed, "dead-lettered messages per dump");
    }

    private static String id(ConsumerRecord<byte[], byte[]> r) {
        String idx = IngestStreamTest.header(r, L1Headers.CHUNK_INDEX);
        return idx == null ? "manifest" : "chunk " + idx;
    }

    /**
     * The node's agent, end to end: a spool directory with a healthy pair, a short and a long buffer,
     * and a pair whose manifest names no dump; the first three are published and moved to done/, the
     * last to failed/, and the job lands the three exactly as the offline decode of the same files.
     */
    @Test
    void theAgentPublishesDefectivePairsToDoneAndTheJobLandsThemAsDecodeSays() throws Exception {
        String topic = "ingest-agent-defects";
        kafka.createTopic(topic, 2);
        kafka.createTopic(topic + ".dlq", 1);
        Path spool = Files.createDirectories(dir.resolve("spool"));
        List<Files2> pairs = List.of(write(11, 0), write(12, -(CHUNK + 5000)), write(13, 5000));
        for (Files2 f : pairs) {
            String name = f.buffer().getFileName().toString().replace(".bin", "");
            Files.copy(f.buffer(), spool.resolve(name + ".bin"));
            Files.copy(f.manifest(), spool.resolve(name + ".manifest.json"));
        }
        Files.writeString(spool.resolve("nodump.manifest.json"), "{\"manifest_version\": 2}");
        Files.write(spool.resolve("nodump.bin"), new byte[16]);
        try (io.dumpstream.publish.SpoolAgent agent = new io.dumpstream.publish.SpoolAgent(spool,
                PublisherConfig.builder(kafka.bootstrapServers()).topic(topic).chunkBytes(CHUNK).build(), 100)) {
            io.dumpstream.publish.SpoolAgent.Pass pass = agent.runOnce();
            assertEquals(3, pass.published(), pass.toString());
            assertEquals(1, pass.failed(), pass.toString());
        }
        assertEquals(Set.of("launch11.bin", "launch11.manifest.json", "launch12.bin", "launch12.manifest.json",
                "launch13.bin", "launch13.manifest.json"), names(spool.resolve("done")));
        assertEquals(Set.of("nodump.bin", "nodump.manifest.json", "nodump.error.txt"), names(spool.resolve("failed")));
        String error = Files.readString(spool.resolve("failed/nodump.error.txt"));
        assertTrue(error.startsWith("cannot be published at all, the manifest gives no dump id to key it by:"), error);

        HostileInputTest.Expected want = new HostileInputTest.Expected();
        Path offline = dir.resolve("offline-agent");
        try (TableWriter w = new TableWriter(offline, TableWriter.Options.defaults())) {
            OfflineDecoder d = new OfflineDecoder(w, Clock.systemUTC());
            for (Files2 f : pairs) {
                d.decode(f.manifest(), f.buffer());
            }
            w.commit();
        }
        want.addTables(offline, Map.of());
        want.rows.values().forEach(l -> l.sort(null));
        try (JobRun run = JobRun.start(JobRun.config(kafka.bootstrapServers(), topic, dir.resolve("job")))) {
            run.awaitDumps(3, Duration.ofSeconds(120));
            Thread.sleep(2500);
            HostileInputTest.Expected got = new HostileInputTest.Expected();
            got.addTables(run.out, Map.of());
            got.rows.values().forEach(l -> l.sort(null));
            assertEquals(want.rows, got.rows);
        }
    }

    private static Set<String> names(Path d) throws IOException {
        try (var s = Files.list(d)) {
            return s.map(p -> p.getFileName().toString()).collect(java.util.stream.Collectors.toSet());
        }
    }
}
