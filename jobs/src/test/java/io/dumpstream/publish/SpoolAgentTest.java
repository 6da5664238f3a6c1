package io.dumpstream.publish;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.dumpstream.local.LocalKafka;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.testing.DumpAssembler;
import io.dumpstream.testing.DumpAssembler.Dump;
import io.dumpstream.testing.SharedKafka;
import io.dumpstream.testing.TopicReader;
import io.dumpstream.testing.Vectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SpoolAgentTest {

    @Test
    void pairsArePublishedExactlyOnceAcrossAnAgentRestartAndIncompleteOnesAreLeftAlone(@TempDir Path spool)
            throws Exception {
        LocalKafka kafka = SharedKafka.get();
        String topic = "agent-restart";
        kafka.createTopic(topic, 3);
        drop(spool, "a", "all_dtypes");
        drop(spool, "b", "multi_chunk");
        drop(spool, "c", "hostile_names");
        Files.copy(Vectors.buffer("many_records"), spool.resolve("half.bin")); // manifest not yet written
        Files.copy(Vectors.manifest("broadcast_workers"), spool.resolve(".d.manifest.json"));
        Files.copy(Vectors.manifest("broadcast_workers"), spool.resolve("e.manifest.json.tmp"));

        try (SpoolAgent agent = new SpoolAgent(spool, config(kafka, topic), 100)) {
            SpoolAgent.Pass pass = agent.runOnce();
            assertEquals(new SpoolAgent.Pass(3, 0, pass.bytes(), null), pass);
            assertEquals(new SpoolAgent.Pass(0, 0, 0, null), agent.runOnce(), "nothing left to publish");
        }
        assertEquals(Set.of("a.bin", "a.manifest.json", "b.bin", "b.manifest.json", "c.bin", "c.manifest.json"),
                names(spool.resolve("done")));
        assertEquals(Set.of("half.bin", ".d.manifest.json", "e.manifest.json.tmp", "done", "failed"), names(spool));

        // A previous agent died between its two moves: the buffer is in done/, the manifest is not.
        Files.copy(Vectors.buffer("truncation_and_empty"), spool.resolve("done/f.bin"));
        Files.copy(Vectors.manifest("truncation_and_empty"), spool.resolve("f.manifest.json"));
        drop(spool, "g", "broadcast_workers");
        try (SpoolAgent restarted = new SpoolAgent(spool, config(kafka, topic), 100)) {
            SpoolAgent.Pass pass = restarted.runOnce();
            assertEquals(1, pass.published());
            assertEquals(0, pass.failed());
        }
        assertTrue(names(spool.resolve("done")).containsAll(Set.of("f.bin", "f.manifest.json", "g.bin",
                "g.manifest.json")));
        assertEquals(Set.of("half.bin", ".d.manifest.json", "e.manifest.json.tmp", "done", "failed"), names(spool));
        assertArrayEquals(Files.readAllBytes(Vectors.buffer("many_records")), Files.readAllBytes(spool.resolve(
                "half.bin")));

        Map<String, List<Dump>> dumps = DumpAssembler.assemble(TopicReader.readAll(kafka.bootstrapServers(), topic));
        assertEquals(Set.of(id("all_dtypes"), id("multi_chunk"), id("hostile_names"), id("broadcast_workers")),
                dumps.keySet());
        for (var e : dumps.entrySet()) {
            assertEquals(1, e.getValue().size(), e.getKey() + " published exactly once");
        }
        assertArrayEquals(Files.readAllBytes(Vectors.buffer("multi_chunk")), dumps.get(id("multi_chunk")).get(0)
                .buffer());
    }

    @Test
    void brokerDownWhenTheAgentStartsThenUpGetsThePairPublished(@TempDir Path spool, @TempDir Path data)
            throws Exception {
        String topic = "agent-broker-down";
        try (LocalKafka kafka = LocalKafka.builder().dataDir(data).defaultPartitions(3).build()) {
            drop(spool, "x", "multi_chunk");
            PublisherConfig config = PublisherConfig.builder(kafka.bootstrapServers()).topic(topic)
                    .clientProperty("max.block.ms", "1000").clientProperty("request.timeout.ms", "1000")
                    .clientProperty("delivery.timeout.ms", "2000").clientProperty("linger.ms", "0")
                    .clientProperty("reconnect.backoff.max.ms", "200").build();
            SpoolAgent agent = new SpoolAgent(spool, config, 100);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread t = new Thread(() -> {
                try {
                    agent.run();
                } catch (Throwable e) {
                    failure.set(e);
                }
            }, "agent");
            t.start();
            Thread.sleep(3000);
            assertTrue(Files.exists(spool.resolve("x.manifest.json")), "pair waits while the broker is down");
            assertTrue(Files.exists(spool.resolve("x.bin")));
            assertEquals(Set.of(), names(spool.resolve("failed")));

            kafka.start();
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (!Files.exists(spool.resolve("done/x.manifest.json")) && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            agent.stop();
            t.join(30_000);
            assertFalse(t.isAlive());
            assertNull(failure.get());
            agent.close();
            assertEquals(Set.of("x.bin", "x.manifest.json"), names(spool.resolve("done")));

            Map<String, List<Dump>> dumps = DumpAssembler.assemble(TopicReader.readAll(kafka.bootstrapServers(),
                    topic));
            assertEquals(Set.of(id("multi_chunk")), dumps.keySet());
            assertEquals(1, dumps.get(id("multi_chunk")).size());
            assertArrayEquals(Files.readAllBytes(Vectors.buffer("multi_chunk")), dumps.get(id("multi_chunk")).get(0)
                    .buffer());
        }
    }

    @Test
    void unpublishablePairsMoveToFailedWithTheFieldAndValueAShortBufferIsPublishedAndDone(@TempDir Path spool) throws Exception {
        LocalKafka kafka = SharedKafka.get();
        String topic = "agent-failed";
        kafka.createTopic(topic, 1);
        Files.copy(Vectors.buffer(Vectors.TRUNCATED), spool.resolve("short.bin"));
        Files.copy(Vectors.manifest(Vectors.TRUNCATED), spool.resolve("short.manifest.json"));
        Files.copy(Vectors.buffer("multi_chunk"), spool.resolve("garbage.bin"));
        Files.writeString(spool.resolve("garbage.manifest.json"), "{\"manifest_version\": 1,");
        Files.copy(Vectors.buffer("multi_chunk"), spool.resolve("negrank.bin"));
        Files.writeString(spool.resolve("negrank.manifest.json"), Files.readString(Vectors.manifest("multi_chunk"))
                .replace("\"rank\": 6", "\"rank\": -1"));
        Files.writeString(spool.resolve("nobin.manifest.json"), Files.readString(Vectors.manifest("multi_chunk")));

        try (SpoolAgent agent = new SpoolAgent(spool, config(kafka, topic), 100)) {
            SpoolAgent.Pass pass = agent.runOnce();
            assertEquals(1, pass.published());
            assertEquals(3, pass.failed());
        }
        Path failed = spool.resolve("failed");
        assertEquals(Set.of("short.bin", "short.manifest.json"), names(spool.resolve("done")));
        assertEquals(Set.of("garbage.bin",
                "garbage.manifest.json", "garbage.error.txt", "negrank.bin", "negrank.manifest.json",
                "negrank.error.txt", "nobin.manifest.json", "nobin.error.txt"), names(failed));
        assertEquals(Set.of("done", "failed"), names(spool));
        assertTrue(Files.readString(failed.resolve("garbage.error.txt")).startsWith("cannot be published at all, the "
                + "manifest gives no dump id to key it by: MANIFEST_INVALID: manifest: not "
                + "valid JSON"), Files.readString(failed.resolve("garbage.error.txt")));
        assertEquals("cannot be published at all, the manifest gives no dump id to key it by: MANIFEST_INVALID: "
                + "manifest field rank: -1 must be >= 0\n",
                Files.readString(failed.resolve("negrank.error.txt")));
        assertEquals("buffer file nobin.bin is missing: ranks write NAME.bin before NAME.manifest.json\n",
                Files.readString(failed.resolve("nobin.error.txt")));
        Map<String, List<Dump>> dumps = DumpAssembler.assemble(TopicReader.readAll(kafka.bootstrapServers(), topic));
        assertEquals(Set.of("demo-run/5/103"), dumps.keySet());
        assertArrayEquals(Files.readAllBytes(spool.resolve("done/short.bin")), dumps.get("demo-run/5/103").get(0)
                .buffer());
    }

    private static PublisherConfig config(LocalKafka kafka, String topic) {
        return PublisherConfig.builder(kafka.bootstrapServers()).topic(topic).build();
    }

    /** Drops a vector the way a rank does: buffer first, manifest last, each written then renamed. */
    private static void drop(Path spool, String name, String vector) throws IOException {
        Files.copy(Vectors.buffer(vector), spool.resolve("." + name + ".bin.tmp"));
        Files.move(spool.resolve("." + name + ".bin.tmp"), spool.resolve(name + ".bin"));
        Files.copy(Vectors.manifest(vector), spool.resolve(name + ".manifest.json.tmp"));
        Files.move(spool.resolve(name + ".manifest.json.tmp"), spool.resolve(name + ".manifest.json"));
    }

    private static String id(String vector) throws Exception {
        return Manifests.dumpId(ManifestParser.parseJson(Files.readAllBytes(Vectors.manifest(vector))));
    }

    private static Set<String> names(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
        }
    }
}
