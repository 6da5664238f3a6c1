package io.dumpstream.assemble;

import io.dumpstream.format.DumpFormatException;
import io.dumpstream.format.ReasonCode;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.schema.RecordPlan;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** One hand-built negative case per reason code of CONTRACT section 4: exact code, message naming the value. */
class ReasonCodeTest {
    /** truncation_and_empty: 5 records; record 2 (float32 [256,257]) spans bytes 263232..526400. */
    static final String BASE = "truncation_and_empty";

    static DumpManifest base(byte[] buf) throws Exception {
        return Dumps.rechunk(Dumps.manifest(BASE), buf, 65536);
    }

    static void putU32(byte[] b, int off, long v) {
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putInt(off, (int) v);
    }

    static void assertOnly(Collect c, int index, ReasonCode reason, String mustContain) {
        assertEquals(Map.of(index, reason), c.rejected, "rejected records");
        assertTrue(c.details.get(index).contains(mustContain), c.details.get(index) + " names " + mustContain);
        assertEquals(Outcome.PARTIAL, c.outcome);
    }

    static void assertDump(Collect c, int records, ReasonCode reason, String mustContain) {
        assertEquals(records, c.rejected.size());
        c.rejected.values().forEach(r -> assertEquals(reason, r));
        c.details.values().forEach(d -> assertTrue(d.contains(mustContain), d + " names " + mustContain));
        assertTrue(c.accepted.isEmpty());
    }

    @Test
    void validDumpIsCompleteAndPayloadsAreTheSlotBytes() throws Exception {
        byte[] buf = Dumps.buffer(BASE);
        DumpManifest m = base(buf);
        Collect c = Dumps.run(m, buf);
        assertEquals(Outcome.COMPLETE, c.outcome);
        assertEquals(5, c.accepted.size());
        for (int i = 0; i < 5; i++) {
            RecordPlan r = m.getRecords().get(i);
            byte[] want = java.util.Arrays.copyOfRange(buf, (int) (long) r.getPayloadOffset(),
                    (int) (r.getPayloadOffset() + r.getPayloadBytes()));
            assertArrayEquals(want, c.accepted.get(i), "record " + i);
        }
    }

    @Test
    void chunkCrcMismatchRejectsOnlyTheRecordsOverlappingIt() throws Exception {
        byte[] buf = Dumps.buffer(BASE);
        DumpManifest m = base(buf);
        buf[400_000] ^= 0x10; // inside record 2's slot, chunk 6
        Collect c = Dumps.run(m, buf);
        assertOnly(c, 2, ReasonCode.CHUNK_CRC_MISMATCH, "chunk 6");
    }

    @Test
    void chunkCrcMismatchInTheHeaderRejectsTheDump() throws Exception {
        byte[] buf = Dumps.buffer(BASE);
        DumpManifest m = base(buf);
        buf[100] ^= 1;
        Collect c = Dumps.run(m, buf);
        assertDump(c, 5, ReasonCode.CHUNK_CRC_MISMATCH, "chunk 0");
        assertEquals(Outcome.REJECTED, c.outcome);
        assertEquals(ReasonCode.CHUNK_CRC_MISMATCH, c.reason);
    }

    @Test
    void shortChunkIsBufferSizeMismatch() throws Exception {
        byte[] buf = Dumps.buffer(BASE);
        DumpManifest m = base(buf);
        int last = m.getChunkCrc32c().size() - 1;
        long start = (long) last * m.getChunkBytes();
        int shortLen = (int) (buf.length - start - 64);
        // the manifest carries the CRC of the bytes as read, so only the length can catch it
        List<Long> crcs = new java.util.ArrayList<>(m.getChunkCrc32c());
        crcs.set(last, Checks.crc32c(ByteBuffer.wrap(buf, (int) start, shortLen)));
        m.setChunkCrc32c(crcs);
        Collect c = new Collect();
        DumpAssembly a = new DumpAssembly(m, new AssemblyState());
        while (!a.finished()) {
            int i = a.nextChunk();
            long s = (long) i * m.getChunkBytes();
            int len = i == last ? shortLen : (int) Math.min(m.getChunkBytes(), buf.length - s);
            a.consume(ByteBuffer.wrap(buf, (int) s, len), c);
        }
        // the last chunk (524288..526528) holds the end of record 2 and records 3 and 4
        assertEquals(Map.of(2, ReasonCode.BUFFER_SIZE_MISMATCH, 3, ReasonCode.BUFFER_SIZE_MISMATCH,
                4, ReasonCode.BUFFER_SIZE_MISMATCH), c.rejected);
        assertTrue(c.details.get(3).contains(shortLen + " bytes"), c.details.get(3));
    }

    @Test
    void missingChunkAtTimeoutIsIncomplete() throws Exception {
        byte[] buf = Dumps.buffer(BASE);
        DumpManifest m = base(buf);
        Collect c = Dumps.run(m, buf, 5);
        assertEquals(Map.of(2, ReasonCode.CHUNKS_MISSING), c.rejected);
        assertTrue(c.details.get(2).contains("chunk 5"));
        assertEquals(Outcome.INCOMPLETE, c.outcome);
        assertEquals(ReasonCode.CHUNKS_MISSING, c.reason);
    }

    @Test
    void badMagic() throws Exception {
        byte[] buf = Dumps.buffer(BASE);
        putU32(buf, 0, 0xDEADBEEFL);
        Collect c = Dumps.run(base(buf), buf);
        assertDump(c, 5, ReasonCode.BAD_MAGIC, "0xdeadbeef");
        assertEquals(Outcome.REJECTED, c.outcome);
    }

    @Test
    void badVersion() throws Exception {
        byte[] buf = Dumps.buffer(BASE);
        putU32(buf, 4, 7);
        assertDump(Dumps.run(base(buf), buf), 5, ReasonCode.BAD_VERSION, "version 7");
    }

    @Test
    void headerMismatchOnEachField() throws Exception {
        String[] fields = {"enabled", "record_count", "record_size", "records_offset", "payload_offset", "total_bytes"};
        long[] values = {0, 9, 32, 128, 262272, 999_936};
        for (int f = 0; f < fields.length; f++) {
            byte[] buf = Dumps.buffer(BASE);
            putU32(buf, 8 + 4 * f, values[f]);
            assertDump(Dumps.run(base(buf), buf), 5, ReasonCode.HEADER_MISMATCH, fields[f] + " " + values[f]);
        }
    }

    @Test
    void unknownDtype() throws Exception {
        byte[] buf = Dumps.buffer(BASE);
        DumpManifest m = base(buf);
        m.getRecords().get(4).setDtype("torch.float7_weird");
        assertOnly(Dumps.run(m, buf), 4, ReasonCode.UNKNOWN_DTYPE, "float7_weird");
    }

    @Test
    void torchPrefixedDtypeIsAccepted() throws Exception {
        byte[] buf = Dumps.buffer(BASE);
        DumpManifest m = base(buf);
        m.getRecords().get(4).setDtype("torch.float16");
        assertEquals(Outcome.COMPLETE, Dumps.run(m, buf).outcome);
    }

    @Test
    void sizeMismatchEachRule() throws Exception {
        byte[] buf = Dumps.buffer(BASE);
        DumpManifest m = base(buf);
        m.getRecords().get(4).setFullBytes(56L); // [3,3,3] float16 is 54 bytes
        assertOnly(Dumps.run(m, buf), 4, ReasonCode.SIZE_MISMATCH, "full_bytes 56");

        m = base(buf);
        m.getRecords().get(3).setPayloadBytes(8L); // int8 [7]: 8 > full_bytes 7 (the table also says 5)
        assertOnly(Dumps.run(m, buf), 3, ReasonCode.SIZE_MISMATCH, "payload_bytes 8 exceeds full_bytes 7");

        m = base(buf);
        m.getRecords().get(0).setPayloadBytes(999L); // bfloat16: odd byte count
        assertOnly(Dumps.run(m, buf), 0, ReasonCode.SIZE_MISMATCH, "payload_bytes 999 is not a multiple");

        m = base(buf);
        m.getRecords().get(3).setTruncated(false);
        assertOnly(Dumps.run(m, buf), 3, ReasonCode.SIZE_MISMATCH, "truncated false");

        m = base(buf);
        m.getRecords().get(4).setActualShape(List.of(1L << 40, 1L << 40, 3L));
        assertOnly(Dumps.run(m, buf), 4, ReasonCode.SIZE_MISMATCH, "overflows");
    }

    @Test
    void payloadOutOfBoundsEachRule() throws Exception {
        byte[] buf = Dumps.buffer(BASE);
        putU32(buf, 24, 128); // the header's smallest payload_offset agrees, so only the record is wrong
        DumpManifest m = base(buf);
        m.getRecords().get(0).setPayloadOffset(128L);
        assertOnly(Dumps.run(m, buf), 0, ReasonCode.PAYLOAD_OUT_OF_BOUNDS, "payload_offset 128");
        buf = Dumps.buffer(BASE);

        m = base(buf);
        m.getRecords().get(4).setPayloadOffset(526466L);
        assertOnly(Dumps.run(m, buf), 4, ReasonCode.PAYLOAD_OUT_OF_BOUNDS, "payload_offset 526466");

        m = base(buf);
        m.getRecords().get(4).setPayloadOffset(526528L); // 54 bytes past total_bytes 526528
        assertOnly(Dumps.run(m, buf), 4, ReasonCode.PAYLOAD_OUT_OF_BOUNDS, "total_bytes 526528");
    }

    @Test
    void payloadOverlap() throws Exception {
        byte[] buf = Dumps.buffer(BASE);
        DumpManifest m = base(buf);
        m.getRecords().get(4).setPayloadOffset(526336L); // inside record 2's slot (ends 526400)
        assertOnly(Dumps.run(m, buf), 4, ReasonCode.PAYLOAD_OVERLAP, "payload_offset 526336");
    }

    @Test
    void recordMismatchEachTableField() throws Exception {
        String[] fields = {"task_id", "phase", "parameter_position", "source_offset_bytes", "payload_offset",
                "payload_bytes", "task_index", "worker_id"};
        int[] words = {0, 1, 2, 3, 5, 6, 8, 9};
        for (int f = 0; f < fields.length; f++) {
            byte[] buf = Dumps.buffer(BASE);
            int entry = 64 + 64 * 4;
            putU32(buf, entry + 4 * words[f], 77);
            Collect c = Dumps.run(base(buf), buf);
            assertOnly(c, 4, ReasonCode.RECORD_MISMATCH, fields[f] + " 77");
        }
    }

    @Test
    void recordNotCaptured() throws Exception {
        byte[] buf = Dumps.buffer(BASE);
        putU32(buf, 64 + 64 + 28, 0);
        assertOnly(Dumps.run(base(buf), buf), 1, ReasonCode.RECORD_NOT_CAPTURED, "status 0");
    }

    static DumpFormatException manifestError(String json) {
        return assertThrows(DumpFormatException.class,
                () -> ManifestParser.parseJson(json.getBytes(StandardCharsets.UTF_8)));
    }

    static String validJson() throws Exception {
        return new String(java.nio.file.Files.readAllBytes(Dumps.vector(BASE + ".manifest.json")), StandardCharsets.UTF_8);
    }

    @Test
    void manifestInvalidNamesTheField() throws Exception {
        String ok = validJson();
        Map<String, String> cases = new java.util.LinkedHashMap<>();
        cases.put("not json at all", "not valid JSON");
        cases.put("[1,2]", "expected a JSON object");
        cases.put(ok.replace("\"rank\": 1", "\"rank\": -1"), "rank: -1");
        cases.put(ok.replace("\"rank\": 1", "\"rank\": \"1\""), "rank: expected a 32-bit integer, got string");
        cases.put(ok.replace("\"buffer_bytes\": 526528", "\"buffer_bytes\": 1099511627776"), "buffer_bytes: 1099511627776");
        cases.put(ok.replace("\"launch_id\": 2,", ""), "launch_id: missing");
        cases.put(ok.replace("\"payload_bytes\": 1000", "\"payload_bytes\": -1000"), "records[0].payload_bytes: -1000");
        cases.put(ok.replace("\"full_bytes\": 54", "\"full_bytes\": 54.5"), "records[4].full_bytes: expected a 64-bit integer, got number 54.5");
        cases.put(ok.replaceFirst("\"actual_shape\": \\[\\s*64,\\s*129\\s*\\]", "\"actual_shape\": [9223372036854775807, 3]"),
                "records[0].actual_shape: the product");
        cases.put(ok.replace("\"rank\": 1", "\"rank\": 1, \"rank\": 2"), "Duplicate field 'rank'");
        cases.put(ok + "x", "not valid JSON");
        cases.put(ok + "{}", "unexpected content");
        cases.put(ok.replace("\"chunk_bytes\": 1048576", "\"chunk_bytes\": 0"), "chunk_bytes: 0");
        cases.put(ok.replace("\"io\": \"input\"", "\"io\": \"sideways\""), "records[0].io: \"sideways\"");
        for (Map.Entry<String, String> e : cases.entrySet()) {
            DumpFormatException x = manifestError(e.getKey());
            assertEquals(ReasonCode.MANIFEST_INVALID, x.reason());
            assertTrue(x.getMessage().contains(e.getValue()), x.getMessage() + " should contain " + e.getValue());
        }
    }

    @Test
    void manifestWithAMillionRecordsIsRefusedEarly() {
        StringBuilder sb = new StringBuilder("{\"records\": [");
        for (int i = 0; i < 1_000_000; i++) {
            sb.append(i == 0 ? "" : ",").append("{}");
        }
        sb.append("]}");
        DumpFormatException x = manifestError(sb.toString());
        assertTrue(x.getMessage().contains("records: more than 4096 entries")
                || x.getMessage().contains("records[0]"), x.getMessage());
    }

    @Test
    void oversizedManifestIsRefusedBeforeParsing() {
        byte[] big = new byte[ManifestParser.MAX_MANIFEST_BYTES + 1];
        DumpFormatException x = assertThrows(DumpFormatException.class, () -> ManifestParser.parseJson(big));
        assertTrue(x.getMessage().contains(String.valueOf(big.length)), x.getMessage());
    }

    @Test
    void avroRoundTripAndHostileAvro() throws Exception {
        DumpManifest m = Dumps.manifest(BASE);
        byte[] avro = ManifestParser.toAvro(m);
        assertEquals(m, ManifestParser.parse(avro));
        assertEquals(m, ManifestParser.parse(ManifestParser.toJson(m)));
        byte[] cut = java.util.Arrays.copyOf(avro, avro.length / 2);
        assertEquals(ReasonCode.MANIFEST_INVALID, assertThrows(DumpFormatException.class, () -> ManifestParser.parse(cut)).reason());
        byte[] badPrint = avro.clone();
        badPrint[3] ^= 1;
        assertTrue(assertThrows(DumpFormatException.class, () -> ManifestParser.parse(badPrint)).getMessage().contains("fingerprint"));
    }
}
