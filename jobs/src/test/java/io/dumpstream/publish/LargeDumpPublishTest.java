package io.dumpstream.publish;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;

import io.dumpstream.local.LocalKafka;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.testing.Manifests256;
import io.dumpstream.testing.SharedKafka;
import io.dumpstream.testing.TopicReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A dump far larger than the publisher's heap streams through in a few chunks of memory. */
class LargeDumpPublishTest {
    private static final long SIZE = 256L * 1024 * 1024;

    @Test
    void a256MiBDumpPublishesFromAChildJvmWith128MiBOfHeap(@TempDir Path dir) throws Exception {
        LocalKafka kafka = SharedKafka.get();
        String topic = "large";
        kafka.createTopic(topic, 3);
        Path bin = dir.resolve("big.bin");
        try (RandomAccessFile f = new RandomAccessFile(bin.toFile(), "rw")) {
            f.setLength(SIZE); // sparse; a few marked spots make misplaced chunks visible
            for (long at : new long[] {0, 1_032_191, 1_032_192, SIZE / 2 + 7, SIZE - 8}) {
                f.seek(at);
                f.writeLong(at ^ 0x5A5A5A5A5A5A5A5AL);
            }
        }
        DumpManifest m = Manifests256.oneRecord("big-run", 0, 1, SIZE);
        Path manifest = dir.resolve("big.manifest.json");
        Files.write(manifest, ManifestParser.toJson(m));

        Path stdout = dir.resolve("out.txt");
        Path stderr = dir.resolve("err.txt");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m", "-cp", System.getProperty("java.class.path"), "io.dumpstream.cli.Main", "publish",
                "--bootstrap", kafka.bootstrapServers(), "--topic", topic, "--manifest", manifest.toString(),
                "--buffer", bin.toString())
                .redirectOutput(stdout.toFile()).redirectError(stderr.toFile()).start();
        assertTrue(p.waitFor(5, TimeUnit.MINUTES), "child publisher finished");
        String err = Files.readString(stderr);
        assertEquals(0, p.exitValue(), err);
        assertTrue(err.contains("published 1/1 dumps, 256.0 MiB"), err);

        CRC32C whole = new CRC32C();
        List<Long> manifestCrcs = new ArrayList<>();
        AtomicInteger nextChunk = new AtomicInteger();
        AtomicLong bytes = new AtomicLong();
        AtomicInteger manifests = new AtomicInteger();
        AtomicLong manifestBytes = new AtomicLong();
        TopicReader.forEach(kafka.bootstrapServers(), topic, r -> {
            assertEquals("big-run/0/1", new String(r.key(), StandardCharsets.UTF_8));
            if (L1Headers.KIND_MANIFEST.equals(L1Headers.text(r.headers(), L1Headers.KIND))) {
                assertEquals(0, nextChunk.get(), "manifest first");
                manifests.incrementAndGet();
                manifestBytes.set(r.value().length);
                try {
                    manifestCrcs.addAll(ManifestParser.parse(r.value()).getChunkCrc32c());
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
                return;
            }
            int i = nextChunk.getAndIncrement();
            assertEquals(Integer.toString(i), L1Headers.text(r.headers(), L1Headers.CHUNK_INDEX));
            CRC32C c = new CRC32C();
            c.update(r.value());
            assertEquals(manifestCrcs.get(i), c.getValue(), "chunk " + i);
            whole.update(r.value());
            bytes.addAndGet(r.value().length);
        });
        assertEquals(1, manifests.get());
        assertEquals(261, nextChunk.get());
        assertEquals(261, manifestCrcs.size());
        assertEquals(SIZE, bytes.get());
        assertEquals(crcOfFile(bin), whole.getValue());
        assertEquals("big-run/0/1 " + bin + " 261 chunks " + (SIZE + manifestBytes.get()) + " bytes\n",
                Files.readString(stdout, StandardCharsets.UTF_8));
    }

    private static long crcOfFile(Path bin) throws Exception {
        CRC32C c = new CRC32C();
        byte[] buf = new byte[1 << 20];
        try (var in = Files.newInputStream(bin)) {
            for (int n; (n = in.read(buf)) > 0; ) {
                c.update(buf, 0, n);
            }
        }
        return c.getValue();
    }
}
