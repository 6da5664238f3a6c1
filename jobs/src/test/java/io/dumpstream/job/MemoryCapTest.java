package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.format.DumpBuilder;
import io.dumpstream.format.L1Layout;
import io.dumpstream.local.LocalKafka;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.testing.IngestProc;
import io.dumpstream.testing.SharedKafka;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * The ingest process with its heap capped at 256 MiB: the hostile inputs of {@link HostileInputTest},
 * records that claim 200 MiB and 3 GiB (with a consistent header, so only the size limit stands
 * between the claim and an allocation), and a real 32 MiB dump of 4 MiB records. Everything lands
 * as it must, and the process neither runs out of memory nor restarts the job.
 */
class MemoryCapTest {
    private static final LocalKafka kafka = SharedKafka.get();
    /** The publisher's default chunk size, as ranks send them. */
    private static final int CHUNK = io.dumpstream.publish.PublisherConfig.DEFAULT_CHUNK_BYTES;

    @TempDir
    Path dir;

    @Test
    void noClaimInTheInputMakesTheJobAllocateBeyondItsBounds() throws Exception {
        String topic = "ingest-memcap";
        kafka.createTopic(topic, 2);
        kafka.createTopic(topic + ".dlq", 1);
        Random rnd = new Random(7);
        List<HostileInputTest.Case> cases = new ArrayList<>();
        long launch = 0;
        for (HostileInputTest.Kind k : HostileInputTest.Kind.values()) {
            cases.add(HostileInputTest.generate(k, launch++, rnd));
        }
        HostileInputTest.Expected want = HostileInputTest.expect(cases, dir);

        try (RawSend send = new RawSend(kafka.bootstrapServers(), topic)) {
            for (HostileInputTest.Case c : cases) {
                send.sendAll(c.messages);
            }
            // claims, header and manifest agreeing: a record of 200 MiB with every chunk sent (it is
            // refused for its size, its slot never allocated), and one of 3 GiB with only the first
            // chunk (a missing chunk under a slot wins over its size: transport reasons come first)
            String key = claim(send, launch++, 200L << 20, true);
            want.add("dumps", key, "PARTIAL", "-", 2, 1, 1);
            want.add("snapshots", key, 0, HostileInputTest.md5(new byte[L1Layout.PAYLOAD_BASE]));
            want.add("rejects", key, 1, "SIZE_MISMATCH");
            key = claim(send, launch++, 3L << 30, false);
            want.add("dumps", key, "INCOMPLETE", "CHUNKS_MISSING", 2, 1, 1);
            want.add("snapshots", key, 0, HostileInputTest.md5(new byte[L1Layout.PAYLOAD_BASE]));
            want.add("rejects", key, 1, "CHUNKS_MISSING");
            // a real 32 MiB dump of 4 MiB records, in the publisher's chunks
            DumpBuilder b = new DumpBuilder("memcap-big", 0, launch++).chunkBytes(CHUNK);
            List<byte[]> payloads = new ArrayList<>();
            for (int r = 0; r < 8; r++) {
                byte[] p = new byte[4 << 20];
                rnd.nextBytes(p);
                payloads.add(p);
                b.add(new DumpBuilder.RecordSpec().taskId(r).taskIndex(r).stage("big").tensorName("w" + r)
                        .dtype("bfloat16").actualShape(2 << 20).payload(p));
            }
            DumpBuilder.Dump big = b.build();
            String bigKey = Manifests.dumpId(big.manifest());
            send.sendAll(RawSend.messages(bigKey, ManifestParser.toJson(big.manifest()), big.buffer(),
                    big.manifest().getChunkBytes()));
            want.add("dumps", bigKey, "COMPLETE", "-", 8, 8, 0);
            for (int r = 0; r < 8; r++) {
                want.add("snapshots", bigKey, r, HostileInputTest.md5(payloads.get(r)));
            }
        }

        Path out = dir.resolve("out");
        List<String> args = List.of("ingest", "--bootstrap", kafka.bootstrapServers(), "--topic", topic,
                "--group", "memcap", "--out", out.toString(), "--checkpoints", dir.resolve("ck").toString(),
                "--checkpoint-interval", "2s", "--parallelism", "2", "--assembly-timeout", "25s",
                "--restart-attempts", "0");
        IngestProc p = IngestProc.start(List.of("-Xmx256m", "-XX:+ExitOnOutOfMemoryError",
                "-XX:+HeapDumpOnOutOfMemoryError", "-XX:HeapDumpPath=" + Path.of("target").toAbsolutePath()), args, dir.resolve("p"));
        try {
            long total = want.rows.get("dumps").size();
            p.awaitLanded(out, total, Duration.ofSeconds(180));
            Thread.sleep(4000); // two more checkpoints
            assertTrue(p.process().isAlive(), "ingest is still running: " + p.stderr());
            HostileInputTest.Expected got = new HostileInputTest.Expected();
            got.addTables(out, java.util.Map.of());
            for (String table : List.of("dumps", "rejects", "snapshots")) {
                List<String> w = new ArrayList<>(want.rows.get(table));
                List<String> g = new ArrayList<>(got.rows.get(table));
                w.sort(null);
                g.sort(null);
                assertEquals(w, g, table);
            }
            String all = p.stdout() + java.nio.file.Files.readString(p.stderrFile());
            assertFalse(all.contains("OutOfMemoryError"), "no OutOfMemoryError");
            assertFalse(all.contains("to FAILED"), "no task failed");
            System.out.printf("memory cap: -Xmx256m ingest landed %d dumps (claims of 200 MiB and 3 GiB rejected, a 32 MiB"
                    + " dump of 4 MiB records complete), no task failure%n", total);
        } finally {
            p.process().destroy();
            if (!p.process().waitFor(120, TimeUnit.SECONDS)) {
                p.process().destroyForcibly();
            }
        }
    }

    /**
     * Sends a dump of a small record 0 and a record 1 that claims {@code claim} bytes of zeros,
     * manifest and header agreeing: every chunk, streamed as it is generated, or only the first.
     */
    private static String claim(RawSend send, long launch, long claim, boolean everyChunk) throws Exception {
        DumpBuilder b = new DumpBuilder("memcap-claim", 0, launch).chunkBytes(CHUNK);
        b.add(new DumpBuilder.RecordSpec().taskId(1).stage("claim").tensorName("small").dtype("uint8")
                .actualShape(L1Layout.PAYLOAD_BASE).payload(new byte[L1Layout.PAYLOAD_BASE]));
        b.add(new DumpBuilder.RecordSpec().taskId(2).stage("claim").tensorName("huge").dtype("uint8")
                .actualShape(claim).payload((bytes, sink) -> {
                    ByteBuffer zeros = ByteBuffer.allocate(1 << 20);
                    for (long left = bytes; left > 0; left -= zeros.capacity()) {
                        ByteBuffer z = zeros.duplicate();
                        z.limit((int) Math.min(left, z.capacity()));
                        sink.put(z);
                    }
                }));
        // the manifest (with the CRCs) only exists once the buffer was generated: generate it twice,
        // first for the manifest, then to send the chunks after it
        DumpManifest m = b.writeTo(chunks(null, null, 0));
        String key = Manifests.dumpId(m);
        send.sendAll(List.of(new RawSend.Msg(key, -1, ManifestParser.toJson(m), -1)));
        WritableByteChannel ch = chunks(key, send, everyChunk ? Integer.MAX_VALUE : 1);
        b.writeTo(ch);
        ch.close();
        send.sendAll(List.of());
        return key;
    }

    /**
     * A channel that cuts what is written into 1 MiB chunks and sends the first {@code maxChunks} of
     * them, dropping the rest (and everything when there is no sender).
     */
    private static WritableByteChannel chunks(String key, RawSend send, int maxChunks) {
        return new WritableByteChannel() {
            final ByteBuffer chunk = ByteBuffer.allocate(CHUNK);
            int index;

            @Override
            public int write(ByteBuffer src) {
                int n = src.remaining();
                while (src.hasRemaining() && send != null && index < maxChunks) {
                    ByteBuffer part = src.duplicate();
                    part.limit(part.position() + Math.min(part.remaining(), chunk.remaining()));
                    src.position(part.limit());
                    chunk.put(part);
                    if (!chunk.hasRemaining()) {
                        flush();
                    }
                }
                src.position(src.limit());
                return n;
            }

            private void flush() {
                byte[] v = java.util.Arrays.copyOf(chunk.array(), chunk.position());
                send.send(new RawSend.Msg(key, index, v, (long) index * CHUNK));
                index++;
                chunk.clear();
            }

            @Override
            public boolean isOpen() {
                return true;
            }

            @Override
            public void close() {
                if (send != null && index < maxChunks && chunk.position() > 0) {
                    flush();
                }
            }
        };
    }
}
