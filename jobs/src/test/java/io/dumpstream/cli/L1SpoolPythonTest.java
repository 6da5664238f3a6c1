package io.dumpstream.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.dumpstream.format.DumpBuilder;
import io.dumpstream.local.LocalKafka;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.publish.PublisherConfig;
import io.dumpstream.publish.SpoolAgent;
import io.dumpstream.testing.DumpAssembler;
import io.dumpstream.testing.SharedKafka;
import io.dumpstream.testing.TopicReader;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.testing.Vectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** deploy/rank/l1_spool.py, driven by python3 on the public vectors. */
class L1SpoolPythonTest {
    /** The module, relative to the jobs module directory surefire runs in. */
    static final Path MODULE = Path.of(System.getProperty("user.dir")).resolveSibling("deploy")
            .resolve("rank").resolve("l1_spool.py");

    @BeforeAll
    static void python3IsThere() throws Exception {
        boolean ok;
        try {
            ok = new ProcessBuilder("python3", "--version").redirectErrorStream(true).start().waitFor() == 0;
        } catch (IOException e) {
            ok = false;
        }
        Assumptions.assumeTrue(ok, "python3 is not on PATH");
        assertTrue(Files.isRegularFile(MODULE), MODULE + " is missing");
    }

    record Run(int status, String out, String err) {
    }

    static Run python(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("python3", "-X", "utf8"));
        cmd.addAll(List.of(args));
        Path outFile = Files.createTempFile("l1spool-out", ".txt");
        Path errFile = Files.createTempFile("l1spool-err", ".txt");
        try {
            Process p = new ProcessBuilder(cmd).redirectOutput(outFile.toFile()).redirectError(errFile.toFile()).start();
            assertTrue(p.waitFor(120, TimeUnit.SECONDS), "python3 timed out: " + cmd);
            return new Run(p.exitValue(), Files.readString(outFile), Files.readString(errFile));
        } finally {
            Files.deleteIfExists(outFile);
            Files.deleteIfExists(errFile);
        }
    }

    static String driver() throws URISyntaxException {
        return Path.of(L1SpoolPythonTest.class.getResource("/rank/l1_spool_driver.py").toURI()).toString();
    }

    static List<String> files(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void selftestPasses() throws Exception {
        Run r = python(MODULE.toString(), "--selftest");
        assertEquals(0, r.status(), r.err());
        assertTrue(r.out().startsWith("selftest ok (crc32c "), r.out());
    }

    @ParameterizedTest
    @ValueSource(strings = {"all_dtypes", "truncation_and_empty", "multi_chunk", "hostile_names"})
    void aVectorWrittenByTheRankHelperIsTheVectorAndDecodesComplete(String name, @TempDir Path dir) throws Exception {
        DumpManifest expected = ManifestParser.parseJson(Files.readAllBytes(Vectors.manifest(name)));
        byte[] bin = Files.readAllBytes(Vectors.buffer(name));
        Path spool = dir.resolve("spool");
        Run r = python(driver(), MODULE.toString(), Vectors.manifest(name).toString(), Vectors.buffer(name).toString(),
                spool.toString());
        assertEquals(0, r.status(), r.err());

        String pair = SimulateCommand.spoolName(expected);
        assertEquals(List.of(pair + ".bin", pair + ".manifest.json"), files(spool), "the pair only, no temp files");
        assertEquals(spool.resolve(pair + ".manifest.json").toString(), r.out().strip());
        DumpManifest written = ManifestParser.parseJson(Files.readAllBytes(spool.resolve(pair + ".manifest.json")));
        assertEquals(expected.getChunkCrc32c(), written.getChunkCrc32c(), name + ": chunk CRC-32C");
        assertEquals(expected, written, name + ": manifest");
        assertArrayEquals(bin, Files.readAllBytes(spool.resolve(pair + ".bin")), name + ": buffer");

        // acceptance: the lead's decode takes the pair as a complete dump
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = Main.run(new String[] {"decode", "--manifest", spool.resolve(pair + ".manifest.json").toString(),
                "--buffer", spool.resolve(pair + ".bin").toString(), "--out", dir.resolve("tables").toString()},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String outText = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, err.toString(StandardCharsets.UTF_8));
        int n = expected.getRecords().size();
        assertTrue(outText.contains(": COMPLETE, " + n + " accepted, 0 rejected of " + n + " records"), outText);
    }

    @Test
    void optionalsLeftOutAreNullAndOtherChunkSizesMatchJavasCrc32c(@TempDir Path dir) throws Exception {
        Path spool = dir.resolve("spool");
        Run r = python(driver(), MODULE.toString(), Vectors.manifest("multi_chunk").toString(),
                Vectors.buffer("multi_chunk").toString(), spool.toString(), "--chunk-bytes", "65536", "--no-optionals");
        assertEquals(0, r.status(), r.err());
        DumpManifest written = ManifestParser.parseJson(Files.readAllBytes(spool.resolve("demo-run.r6.l7.manifest.json")));
        assertNull(written.getStep());
        assertNull(written.getWorldSize());
        assertNull(written.getDevice());
        assertEquals(65536, written.getChunkBytes());
        byte[] bin = Files.readAllBytes(Vectors.buffer("multi_chunk"));
        List<Long> crcs = DumpBuilder.chunkCrc32c(ByteBuffer.wrap(bin), 65536);
        assertEquals(28, crcs.size());
        assertEquals(crcs, written.getChunkCrc32c());
    }

    @Test
    void theAgentPublishesWhatTheRankHelperWroteAndMovesItToDone(@TempDir Path dir) throws Exception {
        List<String> names = List.of("all_dtypes", "truncation_and_empty", "multi_chunk", "hostile_names");
        Path spool = dir.resolve("spool");
        for (String name : names) {
            Run r = python(driver(), MODULE.toString(), Vectors.manifest(name).toString(),
                    Vectors.buffer(name).toString(), spool.toString());
            assertEquals(0, r.status(), r.err());
        }
        LocalKafka kafka = SharedKafka.get();
        String topic = "python-spool";
        kafka.createTopic(topic, 2);
        try (SpoolAgent agent = new SpoolAgent(spool, PublisherConfig.builder(kafka.bootstrapServers()).topic(topic)
                .build(), 100)) {
            SpoolAgent.Pass pass = agent.runOnce();
            assertEquals(names.size(), pass.published(), String.valueOf(pass));
            assertEquals(0, pass.failed());
        }
        assertEquals(List.of("done", "failed"), files(spool), "every pair moved out of the spool");
        assertEquals(List.of(), files(spool.resolve("failed")), "none failed");
        assertEquals(2 * names.size(), files(spool.resolve("done")).size());
        Map<String, List<DumpAssembler.Dump>> landed = DumpAssembler.assemble(TopicReader.readAll(
                kafka.bootstrapServers(), topic));
        assertEquals(names.size(), landed.size());
        for (String name : names) {
            DumpManifest m = ManifestParser.parseJson(Files.readAllBytes(Vectors.manifest(name)));
            List<DumpAssembler.Dump> copies = landed.get(Manifests.dumpId(m));
            assertEquals(1, copies.size(), name + " published once");
            assertArrayEquals(Files.readAllBytes(Vectors.buffer(name)), copies.get(0).buffer(), name + ": buffer");
            // the publisher chunks at its own size and lists the CRCs of its chunks; the plan is the rank's
            assertEquals(m.getRecords(), copies.get(0).manifest().getRecords(), name + ": records");
            assertEquals(DumpBuilder.chunkCrc32c(ByteBuffer.wrap(copies.get(0).buffer()),
                    copies.get(0).manifest().getChunkBytes()), copies.get(0).manifest().getChunkCrc32c(), name + ": CRCs");
        }
    }
}
