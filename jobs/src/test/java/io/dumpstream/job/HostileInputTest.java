package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.dumpstream.decode.OfflineDecoder;
import io.dumpstream.format.DumpBuilder;
import io.dumpstream.format.L1Layout;
import io.dumpstream.local.LocalKafka;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.schema.RecordPlan;
import io.dumpstream.table.DuckDb;
import io.dumpstream.table.TableWriter;
import io.dumpstream.testing.SharedKafka;

import org.apache.flink.api.common.JobStatus;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

/**
 * Generated hostile input through the broker and the job, with no restarts allowed: bit flips in
 * the header and the record table, payload bytes altered in transport (bad CRC), truncation at
 * random points, dropped, duplicated and shuffled chunks, a chunk index past the end, and
 * manifests that are not JSON, larger than the limit, claim 2^40 buffer bytes or 10^6 records,
 * or carry shapes whose product overflows a long. Every dump's outcome, every rejected record's
 * reason and every accepted record's bytes are checked against an oracle: the offline decoder of
 * the same bytes where the mutation is a file, and a model of chunk arrival (written here,
 * independently of the assembler) where it is about transport. Every message of a rejected or
 * incomplete dump is on the dead-letter topic.
 */
class HostileInputTest {
    private static final LocalKafka kafka = SharedKafka.get();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String RUN = "hostile-mut";
    private static final int CHUNK = 64 * 1024;

    @TempDir
    Path dir;

    enum Kind {
        NONE, HEADER_FLIP, TABLE_FLIP, TRANSPORT_FLIP, TRUNCATE, DROP_CHUNK, DUPLICATE_SHUFFLE, INDEX_PAST_END,
        NOT_JSON, OVER_LIMIT_JSON, HUGE_BUFFER_BYTES, MILLION_RECORDS, SHAPE_OVERFLOW, NEGATIVE_SIZE
    }

    /** One generated input: what goes to Kafka, and how to know what must land. */
    static final class Case {
        final Kind kind;
        final String key;
        final List<RawSend.Msg> messages = new ArrayList<>();
        byte[] manifest;
        byte[] buffer;
        /** Chunk status for the transport model: null when the offline decode is the oracle. */
        char[] chunks;
        DumpManifest plan;
        String note = "";

        Case(Kind kind, String key) {
            this.kind = kind;
            this.key = key;
        }
    }

    @Test
    void everyHostileInputEndsAsRowsWithTheRightReasonAndTheJobNeverRestarts() throws Exception {
        String topic = "ingest-mutations";
        kafka.createTopic(topic, 2);
        kafka.createTopic(topic + ".dlq", 1);
        Random rnd = new Random(20261203);
        List<Case> cases = new ArrayList<>();
        long launch = 0;
        for (int round = 0; round < 4; round++) {
            for (Kind k : Kind.values()) {
                cases.add(generate(k, launch++, rnd));
            }
        }

        Expected want = expect(cases, dir);

        try (RawSend send = new RawSend(kafka.bootstrapServers(), topic)) {
            for (Case c : cases) {
                send.sendAll(c.messages);
            }
        }
        IngestConfig config = JobRun.config(kafka.bootstrapServers(), topic, dir); // no restarts: input must not fail it
        try (JobRun run = JobRun.start(config)) {
            run.awaitDumps(cases.size(), Duration.ofSeconds(150));
            Thread.sleep(2500); // two more checkpoints: anything else that would land, lands
            assertEquals(JobStatus.RUNNING, run.client.getJobStatus().get(), "the job keeps running");

            Expected got = new Expected();
            got.addTables(run.out, Map.of());
            Map<String, Kind> kindOf = new HashMap<>();
            cases.forEach(c -> kindOf.put(c.key, c.kind));
            for (String table : List.of("dumps", "rejects", "snapshots")) {
                List<String> diff = diff(want.rows.get(table), got.rows.get(table), kindOf);
                assertTrue(diff.isEmpty(), table + ": " + diff.size() + " differences, first " + diff.subList(0,
                        Math.min(10, diff.size())));
            }
            Map<String, Integer> byKind = new TreeMap<>();
            for (String r : want.rows.get("dumps")) {
                String[] f = r.split("\\|");
                byKind.merge(kindOf.get(f[0]) + " -> " + f[1] + "/" + f[2], 1, Integer::sum);
            }
            int messages = cases.stream().mapToInt(c -> c.messages.size()).sum();
            System.out.printf("hostile input: %d messages in %d dumps, every one accounted for; %s%n", messages,
                    cases.size(), byKind);
            Set<String> outcomes = new HashSet<>();
            want.rows.get("dumps").forEach(r -> outcomes.add(r.split("\\|")[1]));
            assertEquals(Set.of("REJECTED", "INCOMPLETE", "PARTIAL", "COMPLETE"), outcomes,
                    "the mutations reach every outcome");

            assertDeadLettered(topic + ".dlq", cases, want);
        }
    }

    /** What must land for {@code cases}: the offline decode of file-like mutations, the chunk model of the rest. */
    static Expected expect(List<Case> cases, Path dir) throws Exception {
        // the oracle for the file-like mutations: the offline decoder of the very same bytes
        Path offline = dir.resolve("offline");
        Path files = Files.createDirectories(dir.resolve("files"));
        Map<String, String> fileToKey = new HashMap<>();
        try (TableWriter w = new TableWriter(offline, TableWriter.Options.defaults())) {
            OfflineDecoder d = new OfflineDecoder(w, Clock.systemUTC());
            for (Case c : cases) {
                if (c.chunks == null) {
                    String name = "case" + c.key.replace('/', '_');
                    Path m = files.resolve(name + ".manifest.json");
                    Path b = files.resolve(name + ".bin");
                    Files.write(m, c.manifest);
                    Files.write(b, c.buffer);
                    fileToKey.put(m.getFileName().toString(), c.key);
                    d.decode(m, b);
                }
            }
            w.commit();
        }
        Expected want = new Expected();
        want.addTables(offline, fileToKey);
        for (Case c : cases) {
            if (c.chunks != null) {
                want.addModel(c);
            }
        }

        return want;
    }

    /** Every message of a REJECTED or INCOMPLETE dump, and every out-of-range chunk, is on the DLQ. */
    private static void assertDeadLettered(String dlqTopic, List<Case> cases, Expected want) {
        Map<String, String> outcome = new HashMap<>();
        for (String r : want.rows.get("dumps")) {
            String[] f = r.split("\\|");
            outcome.put(f[0], f[1]);
        }
        Map<String, Set<String>> wanted = new TreeMap<>();
        for (Case c : cases) {
            String o = outcome.get(c.key);
            for (RawSend.Msg m : c.messages) {
                boolean pastEnd = c.plan != null && m.index() >= Manifests.chunkCount(c.plan.getBufferBytes(),
                        c.plan.getChunkBytes());
                if ("REJECTED".equals(o) || "INCOMPLETE".equals(o) || pastEnd) {
                    wanted.computeIfAbsent(c.key, k -> new java.util.TreeSet<>()).add(id(m.index()));
                }
            }
        }
        int total = wanted.values().stream().mapToInt(Set::size).sum();
        Map<String, Set<String>> landed = new TreeMap<>();
        for (ConsumerRecord<byte[], byte[]> r : IngestStreamTest.readCommitted(dlqTopic, total)) {
            String key = new String(r.key(), StandardCharsets.UTF_8);
            String idx = IngestStreamTest.header(r, io.dumpstream.publish.L1Headers.CHUNK_INDEX);
            landed.computeIfAbsent(key, k -> new java.util.TreeSet<>()).add(id(idx == null ? -1 : Integer.parseInt(idx)));
            assertTrue(IngestStreamTest.header(r, DlqSerializer.REASON) != null, "a reason header on " + key);
        }
        assertEquals(wanted, landed);
    }

    private static String id(int index) {
        return index < 0 ? "manifest" : "chunk " + index;
    }

    /** Differences between two sorted multisets of rows, as "missing"/"extra" lines. */
    private static List<String> diff(List<String> want, List<String> got, Map<String, Kind> kindOf) {
        Map<String, Integer> count = new TreeMap<>();
        want.forEach(r -> count.merge(r, 1, Integer::sum));
        got.forEach(r -> count.merge(r, -1, Integer::sum));
        List<String> out = new ArrayList<>();
        count.forEach((row, n) -> {
            if (n != 0) {
                String key = row.split("\\|")[0];
                out.add((n > 0 ? "missing " : "extra ") + kindOf.get(key) + " " + abbreviate(row));
            }
        });
        return out;
    }

    private static String abbreviate(String s) {
        return s.length() > 160 ? s.substring(0, 160) + "..." : s;
    }

    /** The three tables reduced to what accounts for every input: outcomes, reasons, accepted bytes. */
    static final class Expected {
        final Map<String, List<String>> rows = new TreeMap<>(Map.of("dumps", new ArrayList<>(),
                "rejects", new ArrayList<>(), "snapshots", new ArrayList<>()));

        /**
         * The rows of the three tables under {@code root}; {@code rename} maps the dump ids of
         * offline-decoded files to the keys they were sent under (empty for what the job landed).
         */
        void addTables(Path root, Map<String, String> rename) throws Exception {
            for (Map<String, Object> r : DuckDb.query("SELECT dump_id, outcome, coalesce(reason, '-') AS reason,"
                    + " records, accepted, rejected FROM read_parquet(" + DuckDb.glob(root, "dumps/**/*.parquet") + ")")) {
                add("dumps", rename.getOrDefault((String) r.get("dump_id"), (String) r.get("dump_id")), r.get("outcome"),
                        r.get("reason"), r.get("records"), r.get("accepted"), r.get("rejected"));
            }
            for (Map<String, Object> r : DuckDb.query("SELECT dump_id, coalesce(record_index, -1) AS i, reason FROM"
                    + " read_parquet(" + DuckDb.glob(root, "rejects/**/*.parquet") + ")")) {
                add("rejects", rename.getOrDefault((String) r.get("dump_id"), (String) r.get("dump_id")), r.get("i"),
                        r.get("reason"));
            }
            if (Files.isDirectory(root.resolve("snapshots"))) {
                for (Map<String, Object> r : DuckDb.query("SELECT dump_id, record_index, md5(data) AS h FROM"
                        + " read_parquet(" + DuckDb.glob(root, "snapshots/**/*.parquet") + ")")) {
                    add("snapshots", r.get("dump_id"), r.get("record_index"), r.get("h"));
                }
            }
        }

        /** What the job must land for a dump whose chunks arrive as {@code c.chunks} says. */
        void addModel(Case c) throws Exception {
            DumpManifest m = c.plan;
            List<RecordPlan> recs = m.getRecords();
            int n = recs.size();
            int firstBadHead = -1;
            for (int i = 0; i < c.chunks.length; i++) {
                if (c.chunks[i] != 'o' && (long) i * CHUNK < L1Layout.PAYLOAD_BASE) {
                    firstBadHead = i;
                    break;
                }
            }
            boolean anyMissing = new String(c.chunks).indexOf('m') >= 0;
            int accepted = 0;
            if (firstBadHead >= 0) {
                String reason = reason(c.chunks[firstBadHead]);
                for (int r = 0; r < n; r++) {
                    add("rejects", c.key, r, reason);
                }
                boolean missing = c.chunks[firstBadHead] == 'm';
                add("dumps", c.key, missing ? "INCOMPLETE" : "REJECTED", reason, n, 0, n);
                return;
            }
            for (int r = 0; r < n; r++) {
                long from = recs.get(r).getPayloadOffset();
                long to = from + recs.get(r).getPayloadBytes();
                String reason = null;
                for (int i = 0; i < c.chunks.length && reason == null; i++) {
                    long cs = (long) i * CHUNK;
                    long ce = Math.min(cs + CHUNK, m.getBufferBytes());
                    if (c.chunks[i] != 'o' && cs < to && ce > from) {
                        reason = reason(c.chunks[i]);
                    }
                }
                if (reason == null) {
                    accepted++;
                    add("snapshots", c.key, r, md5(Arrays.copyOfRange(c.buffer, (int) from, (int) to)));
                } else {
                    add("rejects", c.key, r, reason);
                }
            }
            String outcome = anyMissing ? "INCOMPLETE" : accepted < n ? "PARTIAL" : "COMPLETE";
            add("dumps", c.key, outcome, anyMissing ? "CHUNKS_MISSING" : "-", n, accepted, n - accepted);
        }

        private static String reason(char status) {
            return switch (status) {
                case 'm' -> "CHUNKS_MISSING";
                // a short chunk: its CRC-32C is checked first (section 4's order) and differs from the
                // manifest's, which was taken over the whole chunk
                case 's' -> "CHUNK_CRC_MISMATCH";
                case 'c' -> "CHUNK_CRC_MISMATCH";
                default -> throw new IllegalArgumentException("status " + status);
            };
        }

        void add(String table, Object... fields) {
            StringBuilder b = new StringBuilder();
            for (Object f : fields) {
                b.append(b.length() == 0 ? "" : "|").append(f instanceof Number x ? Long.toString(x.longValue()) : f);
            }
            rows.get(table).add(b.toString());
        }
    }

    static String md5(byte[] b) throws Exception {
        return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("MD5").digest(b));
    }

    /** A valid dump of a few float32 and bfloat16 records over several 64 KiB chunks, then one mutation. */
    static Case generate(Kind kind, long launch, Random rnd) throws Exception {
        DumpBuilder b = new DumpBuilder(RUN, 0, launch).chunkBytes(CHUNK);
        int records = 3 + rnd.nextInt(5);
        for (int r = 0; r < records; r++) {
            boolean half = rnd.nextBoolean();
            int elements = 1024 + rnd.nextInt(12 * 1024);
            byte[] payload = new byte[elements * (half ? 2 : 4)];
            rnd.nextBytes(payload);
            b.add(new DumpBuilder.RecordSpec().taskId(100 + r).taskIndex(r).stage("layer" + (r % 3) + ".mlp")
                    .tensorName("t" + r).dtype(half ? "bfloat16" : "float32").actualShape(elements).workerId(r % 2)
                    .payload(payload));
        }
        DumpBuilder.Dump d = b.build();
        Case c = new Case(kind, Manifests.dumpId(d.manifest()));
        c.plan = d.manifest();
        c.buffer = d.buffer().clone();
        int chunkCount = (int) Manifests.chunkCount(c.buffer.length, CHUNK);
        ObjectNode json = (ObjectNode) JSON.readTree(ManifestParser.toJson(d.manifest()));
        switch (kind) {
            case NONE, DUPLICATE_SHUFFLE, INDEX_PAST_END -> {
                c.chunks = status(chunkCount, 'o');
            }
            case HEADER_FLIP -> {
                flip(c.buffer, rnd.nextInt(L1Layout.HEADER_BYTES), rnd); // the eight header fields
                json.set("chunk_crc32c", crcs(c.buffer));
            }
            case TABLE_FLIP -> {
                flip(c.buffer, L1Layout.RECORDS_OFFSET + rnd.nextInt(records * L1Layout.RECORD_SIZE), rnd);
                json.set("chunk_crc32c", crcs(c.buffer));
            }
            case TRANSPORT_FLIP -> {
                // altered on the way: the manifest keeps the CRCs of the bytes the rank wrote
                int at = L1Layout.PAYLOAD_BASE + rnd.nextInt(c.buffer.length - L1Layout.PAYLOAD_BASE);
                flip(c.buffer, at, rnd);
                c.chunks = status(chunkCount, 'o');
                c.chunks[at / CHUNK] = 'c';
            }
            case TRUNCATE -> {
                int cut = 1 + rnd.nextInt(c.buffer.length - 1);
                c.buffer = Arrays.copyOf(c.buffer, cut);
                c.chunks = status(chunkCount, 'm');
                for (int i = 0; i < cut / CHUNK; i++) {
                    c.chunks[i] = 'o';
                }
                if (cut % CHUNK != 0) {
                    c.chunks[cut / CHUNK] = 's';
                }
                c.note = "cut at " + cut;
            }
            case DROP_CHUNK -> {
                c.chunks = status(chunkCount, 'o');
                c.chunks[rnd.nextInt(chunkCount)] = 'm';
            }
            case NOT_JSON -> {
                byte[] junk = new byte[1 + rnd.nextInt(300)];
                rnd.nextBytes(junk);
                junk[0] = '[';
                c.manifest = junk;
            }
            case OVER_LIMIT_JSON -> json.put("note", "x".repeat(ManifestParser.MAX_MANIFEST_BYTES + 1024));
            case HUGE_BUFFER_BYTES -> json.put("buffer_bytes", 1L << 40);
            case MILLION_RECORDS -> {
                ArrayNode many = json.putArray("records");
                ObjectNode one = (ObjectNode) JSON.readTree(ManifestParser.toJson(d.manifest())).get("records").get(0);
                for (int i = 0; i < 1_000_000; i++) {
                    many.add(i < 5 ? one : JSON.createObjectNode());
                }
            }
            case SHAPE_OVERFLOW -> ((ObjectNode) json.get("records").get(0)).putArray("actual_shape")
                    .add(1L << 40).add(1L << 40).add(1L << 40);
            case NEGATIVE_SIZE -> ((ObjectNode) json.get("records").get(rnd.nextInt(records))).put("payload_bytes", -64);
            default -> throw new IllegalStateException(kind.name());
        }
        if (c.manifest == null) {
            c.manifest = JSON.writeValueAsBytes(json);
        }
        List<RawSend.Msg> all = RawSend.messages(c.key, c.manifest, c.buffer, CHUNK);
        if (kind == Kind.DROP_CHUNK) {
            int dropped = new String(c.chunks).indexOf('m');
            all.removeIf(m -> m.index() == dropped);
        }
        if (kind == Kind.DUPLICATE_SHUFFLE) {
            List<RawSend.Msg> copy = new ArrayList<>(all);
            for (int i = 0; i < 3; i++) {
                all.add(copy.get(rnd.nextInt(copy.size())));
            }
            Collections.shuffle(all, rnd);
        }
        if (kind == Kind.INDEX_PAST_END) {
            int past = chunkCount + rnd.nextInt(1000);
            all.add(1 + rnd.nextInt(all.size() - 1), new RawSend.Msg(c.key, past, new byte[]{1, 2, 3}, (long) past * CHUNK));
        }
        c.messages.addAll(all);
        assertFalse(c.messages.isEmpty());
        return c;
    }

    private static char[] status(int n, char s) {
        char[] a = new char[n];
        Arrays.fill(a, s);
        return a;
    }

    private static void flip(byte[] b, int at, Random rnd) {
        b[at] ^= (byte) (1 << rnd.nextInt(8));
    }

    private static ArrayNode crcs(byte[] buffer) {
        ArrayNode a = JSON.createArrayNode();
        for (long v : DumpBuilder.chunkCrc32c(java.nio.ByteBuffer.wrap(buffer), CHUNK)) {
            a.add(v);
        }
        return a;
    }
}
