package io.dumpstream.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

import io.dumpstream.format.DumpFormatException;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.publish.L1Headers;
import io.dumpstream.schema.DumpManifest;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Rebuilds dumps from raw topic records and checks the producer side of CONTRACT section 3 exactly:
 * per key, a manifest then chunks 0..n-1 in order, all in one partition, every header right.
 */
public final class DumpAssembler {

    /** One published copy of a dump, reassembled. */
    public record Dump(String dumpId, int partition, byte[] manifestValue, DumpManifest manifest, byte[] buffer,
                       long publishTs) {
    }

    private DumpAssembler() {
    }

    /** Dumps by id, in first-seen order; a dump published twice has two entries. */
    public static Map<String, List<Dump>> assemble(List<ConsumerRecord<byte[], byte[]>> records)
            throws DumpFormatException {
        Map<String, List<Dump>> out = new LinkedHashMap<>();
        Map<String, Open> open = new LinkedHashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : records) {
            String key = new String(r.key(), StandardCharsets.UTF_8);
            String kind = L1Headers.text(r.headers(), L1Headers.KIND);
            long ts = Long.parseLong(L1Headers.text(r.headers(), L1Headers.PUBLISH_TS));
            Open o = open.get(key);
            if (L1Headers.KIND_MANIFEST.equals(kind)) {
                assertTrue(o == null, key + ": manifest at offset " + r.offset() + " before the previous copy's chunks");
                DumpManifest m = ManifestParser.parse(r.value());
                assertEquals(key, Manifests.dumpId(m), "key is the manifest's dump id");
                assertEquals(1, countHeaders(r, L1Headers.KIND));
                o = new Open(r.partition(), r.value(), m, ts);
                if (Manifests.chunkCount(m.getBufferBytes(), m.getChunkBytes()) == 0) {
                    throw new AssertionError(key + ": manifest without chunks");
                }
                open.put(key, o);
                continue;
            }
            assertEquals(L1Headers.KIND_CHUNK, kind, key + " offset " + r.offset() + ": l1.kind");
            assertNotNull(o, key + ": chunk at offset " + r.offset() + " before its manifest");
            assertEquals(o.partition, r.partition(), key + ": every message in one partition");
            assertEquals(o.publishTs, ts, key + ": one l1.publish.ts for the whole dump");
            int index = Integer.parseInt(L1Headers.text(r.headers(), L1Headers.CHUNK_INDEX));
            long offset = Long.parseLong(L1Headers.text(r.headers(), L1Headers.CHUNK_OFFSET));
            long crcHeader = Long.parseLong(L1Headers.text(r.headers(), L1Headers.CHUNK_CRC32C));
            assertEquals(o.next, index, key + ": chunks in order");
            assertEquals(Manifests.chunkStart(o.manifest, index), offset, key + " chunk " + index + ": offset");
            // A buffer file that differs from buffer_bytes is published as it is: once a chunk is
            // short (the file ended in it) every later one is empty; only the last may be longer.
            int expected = Manifests.chunkLength(o.manifest, index);
            boolean last = index == o.manifest.getChunkCrc32c().size() - 1;
            if (o.ended) {
                assertEquals(0, r.value().length, key + " chunk " + index + ": past the end of a short file");
            } else if (r.value().length < expected) {
                o.ended = true;
            } else if (!last) {
                assertEquals(expected, r.value().length, key + " chunk " + index + ": length");
            }
            CRC32C crc = new CRC32C();
            crc.update(r.value());
            assertEquals(crc.getValue(), crcHeader, key + " chunk " + index + ": header CRC-32C");
            assertEquals(o.manifest.getChunkCrc32c().get(index), crcHeader, key + " chunk " + index
                    + ": manifest CRC-32C");
            o.bytes.writeBytes(r.value());
            o.next++;
            if (o.next == o.manifest.getChunkCrc32c().size()) {
                out.computeIfAbsent(key, k -> new ArrayList<>()).add(new Dump(key, o.partition, o.manifestValue,
                        o.manifest, o.bytes.toByteArray(), o.publishTs));
                open.remove(key);
            }
        }
        assertTrue(open.isEmpty(), "dumps with chunks missing: " + open.keySet());
        return out;
    }

    private static int countHeaders(ConsumerRecord<byte[], byte[]> r, String name) {
        int n = 0;
        for (var h : r.headers().headers(name)) {
            n++;
        }
        return n;
    }

    private static final class Open {
        final int partition;
        final byte[] manifestValue;
        final DumpManifest manifest;
        final long publishTs;
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int next;
        boolean ended;

        Open(int partition, byte[] manifestValue, DumpManifest manifest, long publishTs) {
            this.partition = partition;
            this.manifestValue = manifestValue;
            this.manifest = manifest;
            this.publishTs = publishTs;
        }
    }
}
