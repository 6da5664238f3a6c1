package io.dumpstream.job;

import io.dumpstream.format.DumpBuilder;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.schema.DumpManifest;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * The messages of the upgrade fixture ({@link UpgradeFromSavepointTest}): six small dumps of run
 * {@code upgrade}, split into what the old job read before its savepoint (phase 1) and what comes after
 * (phase 2), kept byte for byte in {@code messages.bin} so that a fresh broker gets the same messages at
 * the same offsets as the broker the savepoint was taken against.
 *
 * <pre>
 * dump            records  phase 1 (before the savepoint)             phase 2 (after the upgrade)
 * upgrade/0/1  A     4     all: COMPLETE                             all again (a re-send: duplicates)
 * upgrade/1/1  B     3     all: COMPLETE                             chunk 0 and the last again; a chunk past its list
 * upgrade/0/2  C     6     manifest, chunks 0..P+1, P+3 (held)       chunk 0 again, P+2, P+4..
 * upgrade/1/2  D     5     chunks P and P+1 (no manifest yet)        manifest, chunks 0..P-1, P+2.., P+1 again
 * upgrade/0/3  E     6     manifest, chunks 0..P, P+2 (held)         chunks P+3..; P+1 never: INCOMPLETE
 * upgrade/1/3  F     3     -                                         all
 * </pre>
 * Chunks are 16 KiB; every buffer starts with its fixed 262208-byte head (header and record table), so
 * chunk P = 16 is the first to hold payloads. The file is gzipped (the heads are mostly zeros).
 */
final class UpgradeFixture {
    static final String RUN = "upgrade";
    static final int CHUNK_BYTES = 16384;
    /** The first chunk holding payloads: the fixed head of a buffer (header and record table) fills the ones before. */
    static final int P = io.dumpstream.format.L1Layout.PAYLOAD_BASE / CHUNK_BYTES;
    private static final int MAGIC = 0x55504731; // "UPG1"
    /** Publish times of the messages: fixed, from this instant on by one millisecond each. */
    private static final long PUBLISH_TS = 1_800_000_000_000L;

    private UpgradeFixture() {
    }

    /**
     * One message: the manifest (index -1) or chunk {@code index} of dump {@code key}, sent in phase 1 or 2
     * (phase 0: never sent, kept for the offline decode).
     */
    record Msg(int phase, String key, int index, long chunkOffset, long publishTs, byte[] value) {
        boolean manifest() {
            return index < 0;
        }

        @Override
        public String toString() {
            return "phase " + phase + " " + key + (manifest() ? " manifest" : " chunk " + index);
        }
    }

    /**
     * Dump {@code launch} of {@code rank}: float32 records of 4 KiB and more (a repeating pattern, so
     * that the fixture compresses) in two stages.
     */
    static DumpBuilder.Dump dump(int rank, long launch, int records) throws IOException {
        DumpBuilder b = new DumpBuilder(RUN, rank, launch).worldSize(2).step(launch * 10).chunkBytes(CHUNK_BYTES);
        for (int i = 0; i < records; i++) {
            int n = 1024 + 768 * i;
            java.nio.ByteBuffer p = java.nio.ByteBuffer.allocate(4 * n).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            for (int j = 0; j < n; j++) {
                p.putFloat(((j * 7 + i + rank * 3 + (int) launch) % 32) * 0.5f - 4f);
            }
            b.add(new DumpBuilder.RecordSpec().taskId(i).stage("s" + (i % 2)).tensorName("w" + i).dtype("float32")
                    .actualShape(n).payload(p.array()));
        }
        return b.build();
    }

    /** The dumps by letter, as in the class comment. */
    static Map<String, DumpBuilder.Dump> dumps() throws IOException {
        Map<String, DumpBuilder.Dump> d = new LinkedHashMap<>();
        d.put("A", dump(0, 1, 4));
        d.put("B", dump(1, 1, 3));
        d.put("C", dump(0, 2, 6));
        d.put("D", dump(1, 2, 5));
        d.put("E", dump(0, 3, 6));
        d.put("F", dump(1, 3, 3));
        return d;
    }

    /** The whole stream, phase 1 then phase 2, in the order it is published (chunk P is the first of payloads). */
    static List<Msg> plan() throws IOException {
        Map<String, DumpBuilder.Dump> d = dumps();
        Map<String, List<Msg>> m = new LinkedHashMap<>();
        d.forEach((k, v) -> m.put(k, split(v)));
        int c = m.get("C").size() - 1;
        int dd = m.get("D").size() - 1;
        int e = m.get("E").size() - 1;
        if (c < P + 5 || dd < P + 4 || e < P + 4) {
            throw new IllegalStateException("the plan needs C >= P+5, D and E >= P+4 chunks (P=" + P + "); got " + c
                    + ", " + dd + ", " + e);
        }
        List<Msg> out = new ArrayList<>();
        // phase 1: A and B whole; C: manifest, its head and first two payload chunks, then P+3 (P+2 is
        // late); D: payload chunks P and P+1 before any manifest; E: manifest, head and chunk P, then
        // P+2 (P+1 never comes)
        add(out, 1, m.get("A"));
        add(out, 1, m.get("B"));
        add(out, 1, m.get("C").subList(0, P + 3));
        add(out, 1, pick(m.get("C"), P + 3));
        add(out, 1, pick(m.get("D"), P, P + 1));
        add(out, 1, m.get("E").subList(0, P + 2));
        add(out, 1, pick(m.get("E"), P + 2));
        // phase 2: A again; B's chunk 0 and last again and a chunk past its list; C's chunk 0 again and the
        // rest; D's manifest, head, the rest, and P+1 again; E's chunks from P+3; F whole
        add(out, 2, m.get("A"));
        List<Msg> b = m.get("B");
        add(out, 2, pick(b, 0, b.size() - 2));
        Msg first = b.get(1);
        int past = b.size() - 1;
        add(out, 2, List.of(new Msg(0, first.key(), past, (long) past * CHUNK_BYTES, 0, first.value())));
        add(out, 2, pick(m.get("C"), 0, P + 2));
        add(out, 2, from(m.get("C"), P + 4));
        add(out, 2, m.get("D").subList(0, P + 1));
        add(out, 2, from(m.get("D"), P + 2));
        add(out, 2, pick(m.get("D"), P + 1));
        add(out, 2, from(m.get("E"), P + 3));
        add(out, 2, m.get("F"));
        // kept in the file for the offline decode, never published
        add(out, 0, pick(m.get("E"), P + 1));
        return out;
    }

    /** The manifest then every chunk of {@code d}, in order (phase and publish time set later). */
    static List<Msg> split(DumpBuilder.Dump d) {
        DumpManifest man = d.manifest();
        String key = Manifests.dumpId(man);
        List<Msg> out = new ArrayList<>();
        out.add(new Msg(0, key, -1, -1, 0, ManifestParser.toJson(man)));
        byte[] buf = d.buffer();
        for (int i = 0; (long) i * CHUNK_BYTES < buf.length; i++) {
            int from = i * CHUNK_BYTES;
            byte[] chunk = Arrays.copyOfRange(buf, from, Math.min(buf.length, from + CHUNK_BYTES));
            out.add(new Msg(0, key, i, from, 0, chunk));
        }
        return out;
    }

    private static List<Msg> pick(List<Msg> dump, int... indices) {
        List<Msg> out = new ArrayList<>();
        for (int i : indices) {
            out.add(dump.get(i + 1));
        }
        return out;
    }

    private static List<Msg> from(List<Msg> dump, int firstChunk) {
        return dump.subList(firstChunk + 1, dump.size());
    }

    private static void add(List<Msg> out, int phase, List<Msg> msgs) {
        for (Msg x : msgs) {
            out.add(new Msg(phase, x.key(), x.index(), x.chunkOffset(), PUBLISH_TS + out.size(), x.value()));
        }
    }

    static void write(List<Msg> msgs, Path file) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(new java.util.zip.GZIPOutputStream(bytes))) {
            out.writeInt(MAGIC);
            out.writeInt(msgs.size());
            for (Msg m : msgs) {
                out.writeByte(m.phase());
                out.writeUTF(m.key());
                out.writeInt(m.index());
                out.writeLong(m.chunkOffset());
                out.writeLong(m.publishTs());
                out.writeInt(m.value().length);
                out.write(m.value());
            }
        }
        Files.createDirectories(file.getParent());
        Files.write(file, bytes.toByteArray());
    }

    static List<Msg> read(Path file) throws IOException {
        try (DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(
                new java.util.zip.GZIPInputStream(Files.newInputStream(file))))) {
            if (in.readInt() != MAGIC) {
                throw new IOException(file + ": not an upgrade fixture message file");
            }
            int n = in.readInt();
            List<Msg> out = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int phase = in.readByte();
                String key = in.readUTF();
                int index = in.readInt();
                long offset = in.readLong();
                long ts = in.readLong();
                int len = in.readInt();
                if (len < 0 || len > CHUNK_BYTES + (1 << 16)) {
                    throw new IOException(file + ": message " + i + " claims " + len + " bytes");
                }
                byte[] v = new byte[len];
                in.readFully(v);
                out.add(new Msg(phase, key, index, offset, ts, v));
            }
            return out;
        }
    }

    /**
     * Publishes {@code msgs} of {@code phase} to partition 0 of {@code topic}, one at a time, and checks that
     * they land at offsets {@code first}, {@code first + 1}, ...: the offsets the savepoint's Kafka source
     * state refers to. Returns the next offset.
     */
    static long publish(String bootstrap, String topic, List<Msg> msgs, int phase, long first) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        long next = first;
        try (KafkaProducer<byte[], byte[]> producer =
                     new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (Msg m : msgs) {
                if (m.phase() != phase) {
                    continue;
                }
                var headers = RawSend.headers(new RawSend.Msg(m.key(), m.index(), m.value(), m.chunkOffset()),
                        m.publishTs());
                RecordMetadata md = producer.send(new ProducerRecord<>(topic, 0, null,
                        m.key().getBytes(StandardCharsets.UTF_8), m.value(), headers)).get();
                if (md.offset() != next) {
                    throw new IllegalStateException(m + " landed at offset " + md.offset() + ", expected " + next
                            + ": the topic must be fresh");
                }
                next++;
            }
        }
        return next;
    }

    /**
     * Per dump id: its manifest bytes and its whole buffer, rebuilt from the messages (the first copy of
     * each chunk, phase 0 included).
     */
    static Map<String, byte[][]> dumpsOf(List<Msg> msgs) throws Exception {
        Map<String, byte[]> manifests = new LinkedHashMap<>();
        Map<String, Map<Integer, byte[]>> chunks = new LinkedHashMap<>();
        for (Msg m : msgs) {
            if (m.manifest()) {
                manifests.putIfAbsent(m.key(), m.value());
            } else {
                chunks.computeIfAbsent(m.key(), k -> new java.util.TreeMap<>()).putIfAbsent(m.index(), m.value());
            }
        }
        Map<String, byte[][]> out = new LinkedHashMap<>();
        for (Map.Entry<String, byte[]> e : manifests.entrySet()) {
            DumpManifest dm = ManifestParser.parseJson(e.getValue());
            int n = (int) Manifests.chunkCount(dm.getBufferBytes(), dm.getChunkBytes());
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            Map<Integer, byte[]> mine = chunks.getOrDefault(e.getKey(), Map.of());
            for (int i = 0; i < n; i++) {
                byte[] c = mine.get(i);
                if (c == null) {
                    throw new IllegalStateException("chunk " + i + " of " + e.getKey() + " is not in the fixture");
                }
                buf.write(c, 0, c.length);
            }
            out.put(e.getKey(), new byte[][] {e.getValue(), buf.toByteArray()});
        }
        return out;
    }
}
