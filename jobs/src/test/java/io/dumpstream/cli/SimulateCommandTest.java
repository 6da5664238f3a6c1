package io.dumpstream.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.dumpstream.format.DumpBuilder;
import io.dumpstream.local.LocalKafka;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.simulate.SyntheticRanks;
import io.dumpstream.testing.DumpAssembler;
import io.dumpstream.testing.DumpAssembler.Dump;
import io.dumpstream.testing.SharedKafka;
import io.dumpstream.testing.TopicReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SimulateCommandTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static SyntheticRanks expected(long seed, int ranks, int records, long payloadBytes, String dtypes) {
        SyntheticRanks.Config c = new SyntheticRanks.Config();
        c.runId = "sim-" + seed;
        c.worldSize = ranks;
        c.records = records;
        c.payloadBytes = payloadBytes;
        c.dtypes = List.of(dtypes.split(","));
        return new SyntheticRanks(seed, c);
    }

    private static int run(ByteArrayOutputStream out, ByteArrayOutputStream err, String... argv) {
        return Main.run(argv, new PrintStream(out, true), new PrintStream(err, true));
    }

    @Test
    void outWritesSpoolPairsIdenticalToTheGeneratorAndASentLine(@TempDir Path dir) throws Exception {
        Path spool = dir.resolve("spool");
        Path sent = dir.resolve("sent.jsonl");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = run(out, err, "simulate", "--out", spool.toString(), "--ranks", "2", "--launches", "3",
                "--records", "5", "--payload-bytes", "1000", "--dtypes", "float16,int8", "--seed", "7",
                "--sent", sent.toString());
        assertEquals(0, status, err.toString(StandardCharsets.UTF_8));
        List<String> files;
        try (Stream<Path> s = Files.list(spool)) {
            files = s.map(p -> p.getFileName().toString()).sorted().toList();
        }
        List<String> want = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            for (int l = 0; l < 3; l++) {
                want.add("sim-7.r" + r + ".l" + l + ".bin");
                want.add("sim-7.r" + r + ".l" + l + ".manifest.json");
            }
        }
        want.sort(null);
        assertEquals(want, files, "pairs only, no temporary files left");

        SyntheticRanks sim = expected(7, 2, 5, 1000, "float16,int8");
        for (int r = 0; r < 2; r++) {
            for (int l = 0; l < 3; l++) {
                DumpBuilder.Dump d = sim.dump(r, l).build();
                String name = "sim-7.r" + r + ".l" + l;
                assertArrayEquals(d.buffer(), Files.readAllBytes(spool.resolve(name + ".bin")), name);
                DumpManifest m = ManifestParser.parseJson(Files.readAllBytes(spool.resolve(name + ".manifest.json")));
                assertEquals(d.manifest(), m, name);
                assertEquals(2, m.getWorldSize());
                assertEquals(5, m.getRecords().size());
            }
        }

        List<String> lines = Files.readAllLines(sent);
        assertEquals(6, lines.size());
        Map<String, JsonNode> byId = new HashMap<>();
        for (String line : lines) {
            JsonNode n = JSON.readTree(line);
            assertEquals(6, n.size(), line);
            byId.put(n.get("dump_id").asText(), n);
        }
        JsonNode n = byId.get("sim-7/1/2");
        assertEquals("sim-7", n.get("run_id").asText());
        assertEquals(1, n.get("rank").asInt());
        assertEquals(2, n.get("launch_id").asLong());
        assertEquals(5, n.get("records").asInt());
        assertEquals(Files.size(spool.resolve("sim-7.r1.l2.bin")), n.get("buffer_bytes").asLong());
        String errText = err.toString(StandardCharsets.UTF_8);
        assertTrue(errText.contains("simulate: 6/6 dumps, "), errText);
        assertTrue(out.toString(StandardCharsets.UTF_8).startsWith("simulated 6 dumps (2 ranks x 3 launches), "));
    }

    @Test
    void bootstrapPublishesEveryRanksDumpsWhichReassembleToTheGeneratorsBytes(@TempDir Path dir) throws Exception {
        LocalKafka kafka = SharedKafka.get();
        kafka.createTopic("sim-topic", 3);
        Path sent = dir.resolve("sent.jsonl");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = run(out, err, "simulate", "--bootstrap", kafka.bootstrapServers(), "--topic", "sim-topic",
                "--ranks", "3", "--launches", "4", "--records", "6", "--payload-bytes", "30000",
                "--dtypes", "bfloat16,float32,int32", "--seed", "11", "--run-id", "sim-11", "--rate", "200",
                "--chunk-bytes", "65536", "--sent", sent.toString());
        assertEquals(0, status, err.toString(StandardCharsets.UTF_8));

        Map<String, List<Dump>> dumps = DumpAssembler.assemble(TopicReader.readAll(kafka.bootstrapServers(), "sim-topic"));
        assertEquals(12, dumps.size());
        SyntheticRanks sim = expected(11, 3, 6, 30000, "bfloat16,float32,int32");
        for (int r = 0; r < 3; r++) {
            for (int l = 0; l < 4; l++) {
                List<Dump> copies = dumps.get("sim-11/" + r + "/" + l);
                assertEquals(1, copies.size(), "sim-11/" + r + "/" + l);
                DumpBuilder.Dump d = sim.dump(r, l).build();
                assertArrayEquals(d.buffer(), copies.get(0).buffer());
                DumpManifest got = copies.get(0).manifest();
                assertEquals(65536, got.getChunkBytes());
                assertEquals(DumpBuilder.chunkCrc32c(ByteBuffer.wrap(d.buffer()), 65536), got.getChunkCrc32c());
                assertEquals(d.manifest().getRecords(), got.getRecords());
            }
        }
        List<String> lines = Files.readAllLines(sent);
        assertEquals(12, lines.size());
        assertEquals(12, lines.stream().map(l -> {
            try {
                return JSON.readTree(l).get("dump_id").asText();
            } catch (Exception e) {
                throw new AssertionError(l, e);
            }
        }).distinct().count());
    }

    @Test
    void badArgumentsExitWithUsageStatus() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertEquals(2, run(out, err, "simulate", "--ranks", "1", "--launches", "1"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("give exactly one of --bootstrap and --out"));
        err.reset();
        assertEquals(2, run(out, err, "simulate", "--out", "x", "--ranks", "1", "--launches", "1", "--dtypes", "complex64"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("unknown dtype 'complex64'"));
        err.reset();
        assertEquals(2, run(out, err, "simulate", "--out", "x", "--launches", "1"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--ranks must be given"));
    }
}
