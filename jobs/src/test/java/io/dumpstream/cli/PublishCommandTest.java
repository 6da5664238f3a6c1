package io.dumpstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.dumpstream.local.LocalKafka;
import io.dumpstream.testing.DumpAssembler;
import io.dumpstream.testing.DumpAssembler.Dump;
import io.dumpstream.testing.SharedKafka;
import io.dumpstream.testing.TopicReader;
import io.dumpstream.testing.Vectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PublishCommandTest {

    @Test
    void publishDirSendsEveryPairByNameAndWarnsOfTheOneWhoseBufferIsShort(@TempDir Path dir) throws Exception {
        LocalKafka kafka = SharedKafka.get();
        for (String n : Vectors.names()) {
            Files.copy(Vectors.manifest(n), dir.resolve(n + ".manifest.json"));
            Files.copy(Vectors.buffer(n), dir.resolve(n + ".bin"));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = Main.run(new String[] {"publish", "--bootstrap", kafka.bootstrapServers(), "--topic", "cli-dir",
                "--dir", dir.toString(), "--manifest-format", "avro", "--chunk-bytes", "65536",
                "--kafka.compression.type=zstd"}, new PrintStream(out, true), new PrintStream(err, true));
        String errText = err.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, errText);
        List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
        assertEquals(15, lines.size());
        assertTrue(lines.get(0).startsWith("demo-run/0/1 " + dir.resolve("all_dtypes.bin") + " 5 chunks "), lines.get(0));
        assertTrue(errText.contains("published 15/15 dumps, "), errText);
        assertTrue(errText.contains(" MiB/s"), errText);
        assertTrue(errText.contains("dumpstream publish: warning: dump demo-run/5/103 (" + dir.resolve(Vectors.TRUNCATED
                + ".manifest.json") + ") published with a defect, the job will record it: BUFFER_SIZE_MISMATCH: buffer file "
                + dir.resolve(Vectors.TRUNCATED + ".bin") + " has 262592 bytes but manifest buffer_bytes is 262720"), errText);
        assertEquals(1, errText.lines().filter(l -> l.contains("warning")).count(), errText);

        Map<String, List<Dump>> dumps = DumpAssembler.assemble(TopicReader.readAll(kafka.bootstrapServers(),
                "cli-dir"));
        assertEquals(15, dumps.size());
        for (List<Dump> copies : dumps.values()) {
            assertEquals(1, copies.size());
            assertEquals((byte) 0xC3, copies.get(0).manifestValue()[0]);
            assertEquals(65536, copies.get(0).manifest().getChunkBytes());
        }
    }

    @Test
    void aFiftyMebibyteManifestIsRefusedFromItsSizeNamingTheFile(@TempDir Path dir) throws Exception {
        Path manifest = dir.resolve("huge.manifest.json");
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(manifest,
                java.nio.file.StandardOpenOption.CREATE_NEW, java.nio.file.StandardOpenOption.WRITE)) {
            ch.write(java.nio.ByteBuffer.wrap("{".getBytes(StandardCharsets.US_ASCII)), 50L << 20); // sparse
        }
        Files.copy(Vectors.buffer("all_dtypes"), dir.resolve("huge.bin"));
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = Main.run(new String[] {"publish", "--bootstrap", SharedKafka.get().bootstrapServers(),
                "--topic", "cli-huge", "--manifest", manifest.toString(), "--buffer", dir.resolve("huge.bin").toString()},
                new PrintStream(new ByteArrayOutputStream(), true), new PrintStream(err, true));
        String errText = err.toString(StandardCharsets.UTF_8);
        assertEquals(1, status, errText);
        assertTrue(errText.contains(manifest + ": MANIFEST_INVALID: manifest file " + manifest + " is 52428801 bytes,"
                + " more than the limit of 16777216"), errText);
    }

    @Test
    void badArgumentsExitWithUsageStatusNamingTheOption() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream e = new PrintStream(err, true);
        PrintStream o = new PrintStream(new ByteArrayOutputStream(), true);
        assertEquals(2, Main.run(new String[] {"publish", "--manifest", "m", "--buffer", "b"}, o, e));
        assertTrue(err.toString().contains("missing required option --bootstrap"), err.toString());
        err.reset();
        assertEquals(2, Main.run(new String[] {"publish", "--bootstrap", "h:1", "--manifest", "m", "--buffer", "b",
                "--chunk-bytes", "10"}, o, e));
        assertTrue(err.toString().contains("chunk bytes must be in [4096, 16777216], got 10"), err.toString());
        err.reset();
        assertEquals(2, Main.run(new String[] {"agent", "--spool", "/nonexistent-spool", "--bootstrap", "h:1"}, o, e));
        assertTrue(err.toString().contains("--spool /nonexistent-spool is not a directory"), err.toString());
        assertTrue(Main.commands().stream().map(Command::name).toList().containsAll(Set.of("kafka", "publish",
                "agent")));
    }
}
