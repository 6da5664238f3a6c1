package io.dumpstream.publish;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.dumpstream.format.DumpFormatException;
import io.dumpstream.format.ReasonCode;
import io.dumpstream.local.LocalKafka;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.testing.DumpAssembler;
import io.dumpstream.testing.DumpAssembler.Dump;
import io.dumpstream.testing.SharedKafka;
import io.dumpstream.testing.TopicReader;
import io.dumpstream.testing.Vectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DumpPublisherTest {
    private final LocalKafka kafka = SharedKafka.get();

    @ParameterizedTest(name = "{0} manifest, {1}-byte chunks")
    @CsvSource({"JSON, 1032192", "AVRO, 65536", "JSON, 4096"})
    void everyVectorArrivesByteIdenticalManifestFirstChunksInOrderInOnePartition(ManifestFormat format, int chunkBytes)
            throws Exception {
        String topic = "vectors-" + format + "-" + chunkBytes;
        kafka.createTopic(topic, 3);
        List<String> names = Vectors.names().stream().filter(n -> !n.equals(Vectors.TRUNCATED)).toList();
        assertEquals(14, names.size());
        Map<String, DumpManifest> given = new HashMap<>();
        Map<String, byte[]> buffers = new HashMap<>();
        Map<String, PublishResult> results = new HashMap<>();
        long before = System.currentTimeMillis();
        try (DumpPublisher p = new DumpPublisher(PublisherConfig.builder(kafka.bootstrapServers()).topic(topic)
                .chunkBytes(chunkBytes).manifestFormat(format).build())) {
            for (String name : names) {
                DumpManifest m = ManifestParser.parseJson(Files.readAllBytes(Vectors.manifest(name)));
                String id = Manifests.dumpId(m);
                given.put(id, m);
                buffers.put(id, Files.readAllBytes(Vectors.buffer(name)));
                PublishResult r = p.publish(m, Vectors.buffer(name));
                results.put(id, r);
                long chunks = Manifests.chunkCount(m.getBufferBytes(), chunkBytes);
                assertEquals(chunks, r.chunks(), name);
                assertEquals(chunks + 1, r.messages(), name);
                assertEquals(id, r.dumpId());
            }
        }
        long after = System.currentTimeMillis();
        assertEquals(names.size(), given.size(), "vector dump ids are distinct");

        List<ConsumerRecord<byte[], byte[]>> records = TopicReader.readAll(kafka.bootstrapServers(), topic);
        Map<String, List<Dump>> dumps = DumpAssembler.assemble(records);
        assertEquals(given.keySet(), dumps.keySet());
        Set<Integer> partitions = records.stream().map(ConsumerRecord::partition).collect(Collectors.toSet());
        assertTrue(partitions.size() > 1, "14 keys spread over the 3 partitions: " + partitions);
        for (var e : dumps.entrySet()) {
            String id = e.getKey();
            assertEquals(1, e.getValue().size(), id + " published once");
            Dump d = e.getValue().get(0);
            assertArrayEquals(buffers.get(id), d.buffer(), id + ": reassembled buffer");
            assertEquals(format == ManifestFormat.AVRO, d.manifestValue()[0] == (byte) 0xC3, id + ": manifest form");
            DumpManifest expected = DumpPublisher.withChunks(given.get(id), chunkBytes,
                    results.get(id).manifest().getChunkCrc32c());
            assertEquals(expected, d.manifest(), id + ": manifest as sent");
            assertEquals(results.get(id).manifest(), d.manifest());
            assertEquals(results.get(id).bytes(), d.manifestValue().length + (long) d.buffer().length);
            assertTrue(d.publishTs() >= before && d.publishTs() <= after, id + ": publish ts " + d.publishTs());
            if (chunkBytes == 1048576 - 16384) {
                // the vectors were chunked at 1 MiB; below one chunk the CRC is the same
                if (given.get(id).getBufferBytes() <= chunkBytes) {
                    assertEquals(given.get(id).getChunkCrc32c(), d.manifest().getChunkCrc32c(), id);
                }
            }
        }
        long chunkMessages = records.stream().filter(r -> "chunk".equals(
                L1Headers.text(r.headers(), L1Headers.KIND))).count();
        assertEquals(results.values().stream().mapToLong(PublishResult::chunks).sum(), chunkMessages);
        assertEquals(results.values().stream().mapToLong(PublishResult::messages).sum(), records.size());
    }

    @Test
    void byteBufferInputIsPublishedFromItsPositionAndLeftUnchanged() throws Exception {
        String topic = "bytebuffer";
        kafka.createTopic(topic, 3);
        byte[] file = Files.readAllBytes(Vectors.buffer("multi_chunk"));
        DumpManifest m = ManifestParser.parseJson(Files.readAllBytes(Vectors.manifest("multi_chunk")));
        ByteBuffer direct = ByteBuffer.allocateDirect(file.length + 100);
        direct.position(100);
        direct.put(file);
        direct.position(100);
        PublishResult r;
        try (DumpPublisher p = new DumpPublisher(PublisherConfig.builder(kafka.bootstrapServers()).topic(topic)
                .chunkBytes(300_000).build())) {
            r = p.publish(m, direct);
        }
        assertEquals(100, direct.position());
        assertEquals(file.length + 100, direct.limit());
        assertEquals(7, r.chunks());
        Map<String, List<Dump>> dumps = DumpAssembler.assemble(TopicReader.readAll(kafka.bootstrapServers(), topic));
        assertEquals(Set.of("demo-run/6/7"), dumps.keySet());
        assertArrayEquals(file, dumps.get("demo-run/6/7").get(0).buffer());
    }

    @Test
    void bufferShorterOrLongerThanBufferBytesIsPublishedAsItIsWithTheDefectNamed() throws Exception {
        String topic = "truncated";
        kafka.createTopic(topic, 1);
        DumpManifest m = ManifestParser.parseJson(Files.readAllBytes(Vectors.manifest(Vectors.TRUNCATED)));
        byte[] shortFile = Files.readAllBytes(Vectors.buffer(Vectors.TRUNCATED));
        byte[] longer = new byte[262721];
        System.arraycopy(shortFile, 0, longer, 0, shortFile.length);
        longer[262720] = 42;
        try (DumpPublisher p = new DumpPublisher(PublisherConfig.builder(kafka.bootstrapServers()).topic(topic).build())) {
            PublishResult r = p.publish(m, Vectors.buffer(Vectors.TRUNCATED));
            assertEquals(1, r.chunks());
            assertEquals(1, r.defects().size());
            assertTrue(r.defects().get(0).startsWith("BUFFER_SIZE_MISMATCH: buffer file "), r.defects().get(0));
            assertTrue(r.defects().get(0).contains("has 262592 bytes but manifest buffer_bytes is 262720"),
                    r.defects().get(0));
            Map<String, List<Dump>> dumps = DumpAssembler.assemble(TopicReader.readAll(kafka.bootstrapServers(), topic));
            assertArrayEquals(shortFile, dumps.get(Manifests.dumpId(m)).get(0).buffer());

            r = p.publish(m, ByteBuffer.wrap(longer));
            assertTrue(r.defects().get(0).contains("has 262721 bytes but manifest buffer_bytes is 262720"),
                    r.defects().get(0));
            dumps = DumpAssembler.assemble(TopicReader.readAll(kafka.bootstrapServers(), topic));
            assertEquals(2, dumps.get(Manifests.dumpId(m)).size());
            assertArrayEquals(longer, dumps.get(Manifests.dumpId(m)).get(1).buffer(), "the excess byte rides on the"
                    + " last chunk, so the job finds that chunk's length wrong as decode does");
        }
    }

    @Test
    void aChunkThatCannotBeReadIsLeftOutAndNamedTheRestIsPublished() throws Exception {
        String topic = "unreadable";
        kafka.createTopic(topic, 1);
        DumpManifest m = ManifestParser.parseJson(Files.readAllBytes(Vectors.manifest("multi_chunk")));
        byte[] file = Files.readAllBytes(Vectors.buffer("multi_chunk"));
        DumpPublisher.ReadFault fault = (path, offset, length) -> {
            if (offset == 2L * 65536) {
                throw new java.io.IOException("Input/output error");
            }
        };
        int total = (file.length + 65535) / 65536;
        try (DumpPublisher p = new DumpPublisher(PublisherConfig.builder(kafka.bootstrapServers()).topic(topic)
                .chunkBytes(65536).build(), fault)) {
            PublishResult r = p.publish(m, Vectors.buffer("multi_chunk"));
            assertEquals(total - 1, r.chunks());
            assertEquals(List.of("CHUNKS_MISSING: chunk 2 (bytes 131072..196608) of buffer file "
                    + Vectors.buffer("multi_chunk") + " could not be read (Input/output error); not published"),
                    r.defects());
            assertEquals(0L, r.manifest().getChunkCrc32c().get(2));
        }
        List<ConsumerRecord<byte[], byte[]>> recs = TopicReader.readAll(kafka.bootstrapServers(), topic);
        assertEquals(total, recs.size(), "the manifest and every chunk but one");
        List<Integer> indices = new java.util.ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> c : recs.subList(1, recs.size())) {
            int i = Integer.parseInt(new String(c.headers().lastHeader("l1.chunk.index").value(),
                    java.nio.charset.StandardCharsets.US_ASCII));
            indices.add(i);
            assertArrayEquals(java.util.Arrays.copyOfRange(file, i * 65536, Math.min(file.length, (i + 1) * 65536)),
                    c.value());
        }
        List<Integer> want = new java.util.ArrayList<>();
        for (int i = 0; i < total; i++) {
            if (i != 2) {
                want.add(i);
            }
        }
        assertEquals(want, indices);
    }

    @Test
    void brokerRejectingAChunkFailsNamingTheDumpAndTheChunk() throws Exception {
        String topic = "small-messages";
        try (Admin admin = kafka.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of("max.message.bytes",
                    "200000")))).all().get(30, TimeUnit.SECONDS);
        }
        kafka.createTopic(topic, 1);
        DumpManifest m = ManifestParser.parseJson(Files.readAllBytes(Vectors.manifest("multi_chunk")));
        // Incompressible bytes so the 1 MiB chunk stays over the topic's 200 kB limit after LZ4.
        byte[] noise = new byte[(int) m.getBufferBytes()];
        new java.util.Random(3).nextBytes(noise);
        try (DumpPublisher p = new DumpPublisher(PublisherConfig.builder(kafka.bootstrapServers()).topic(topic).build())) {
            PublishException e = assertThrows(PublishException.class, () -> p.publish(m, ByteBuffer.wrap(noise)));
            assertEquals("demo-run/6/7", e.dumpId());
            assertEquals(0, e.chunkIndex());
            assertTrue(e.getMessage().startsWith("dump demo-run/6/7: chunk 0: "), e.getMessage());
        }
    }

    @Test
    void contractProducerSettingsCannotBeOverriddenAndBadValuesAreNamed() {
        var e = assertThrows(IllegalArgumentException.class, () -> PublisherConfig.builder("x:1")
                .clientProperty("acks", "1").build());
        assertEquals("client property acks must be all (the contract requires it), got '1'", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> PublisherConfig.builder("x:1")
                .clientProperty("enable.idempotence", "false").build());
        assertTrue(e.getMessage().startsWith("client property enable.idempotence must be true"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> PublisherConfig.builder("x:1").chunkBytes(100).build());
        assertEquals("chunk bytes must be in [4096, 16777216], got 100", e.getMessage());
        var ok = PublisherConfig.builder("h:9").clientProperty("security.protocol", "SSL")
                .clientProperty("compression.type", "zstd").build().producerProperties();
        assertEquals("SSL", ok.get("security.protocol"));
        assertEquals("zstd", ok.get("compression.type"));
        assertEquals("true", ok.get("enable.idempotence"));
        assertEquals("all", ok.get("acks"));
        assertEquals(Integer.toString(17 * 1024 * 1024), ok.get("max.request.size"));
    }
}
