package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.publish.L1Headers;

import org.apache.flink.metrics.SimpleCounter;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

/** Which messages are dead letters, the exact reasons, the copies and references sent, and the count. */
class DeadLettersTest {

    private static L1Message message(String key, String... headers) {
        L1Message m = new L1Message();
        if (key != null) {
            m.key = key;
            m.keyBytes = key.getBytes(StandardCharsets.UTF_8);
        }
        m.headerKeys = new String[headers.length / 2];
        m.headerValues = new byte[headers.length / 2][];
        for (int i = 0; i < headers.length / 2; i++) {
            m.headerKeys[i] = headers[2 * i];
            m.headerValues[i] = headers[2 * i + 1] == null ? null
                    : headers[2 * i + 1].getBytes(StandardCharsets.US_ASCII);
        }
        m.value = new byte[]{1, 2, 3};
        m.topic = "l1dump.v1";
        m.partition = 3;
        m.offset = 1234;
        m.timestamp = 1_700_000_000_000L;
        return m;
    }

    private static L1Message chunk(String key, String index) {
        return message(key, L1Headers.KIND, L1Headers.KIND_CHUNK, L1Headers.CHUNK_INDEX, index);
    }

    @Test
    void messagesThatAreNotAKeyedManifestOrChunkAreBadWithTheirReason() {
        assertNull(DeadLetters.badMessage(message("r/0/1", L1Headers.KIND, L1Headers.KIND_MANIFEST)));
        assertNull(DeadLetters.badMessage(chunk("r/0/1", "7")));
        assertNull(DeadLetters.badMessage(chunk("r/0/1", " 7 ")));
        assertEquals("BAD_MESSAGE: no key (the dump id) on l1dump.v1-3@1234",
                DeadLetters.badMessage(message(null, L1Headers.KIND, L1Headers.KIND_MANIFEST)));
        assertEquals("BAD_MESSAGE: header l1.chunk.index 'minus one' is not a chunk index, on l1dump.v1-3@1234",
                DeadLetters.badMessage(chunk("r/0/1", "minus one")));
        assertEquals("BAD_MESSAGE: header l1.chunk.index '-1' is not a chunk index, on l1dump.v1-3@1234",
                DeadLetters.badMessage(chunk("r/0/1", "-1")));
        assertEquals("BAD_MESSAGE: header l1.chunk.index 'null' is not a chunk index, on l1dump.v1-3@1234",
                DeadLetters.badMessage(message("r/0/1", L1Headers.KIND, L1Headers.KIND_CHUNK)));
        assertEquals("BAD_MESSAGE: header l1.kind 'bogus' is neither manifest nor chunk, on l1dump.v1-3@1234",
                DeadLetters.badMessage(message("r/0/1", L1Headers.KIND, "bogus")));
        assertEquals("BAD_MESSAGE: header l1.kind 'null' is neither manifest nor chunk, on l1dump.v1-3@1234",
                DeadLetters.badMessage(message("r/0/1")));
    }

    @Test
    void theChunkIndexHeaderIsTheLastOneAndNegativeWhenItIsNoIndex() {
        assertEquals(7, DeadLetters.chunkIndex(chunk("k", "7")));
        assertEquals(12, DeadLetters.chunkIndex(chunk("k", " 12\t")));
        assertEquals(2, DeadLetters.chunkIndex(message("k", L1Headers.CHUNK_INDEX, "1", L1Headers.CHUNK_INDEX, "2")));
        assertEquals(-1, DeadLetters.chunkIndex(chunk("k", "x")));
        assertEquals(-1, DeadLetters.chunkIndex(chunk("k", "4294967296")));
        assertEquals(-1, DeadLetters.chunkIndex(chunk("k", null)));
        assertEquals(-1, DeadLetters.chunkIndex(message("k")));
    }

    @Test
    void aLetterIsTheMessageAsItCameWithItsReasonAndIsCounted() {
        SimpleCounter sent = new SimpleCounter();
        DeadLetters d = new DeadLetters(sent);
        L1Message m = chunk("r/0/1", "3");
        L1Message letter = d.letter(m, "why");
        assertEquals("why", letter.dlqReason);
        assertEquals("r/0/1", letter.key);
        assertArrayEquals(m.keyBytes, letter.keyBytes);
        assertArrayEquals(new byte[]{1, 2, 3}, letter.value);
        assertArrayEquals(m.headerKeys, letter.headerKeys);
        assertArrayEquals(m.headerValues, letter.headerValues);
        assertEquals("l1dump.v1-3@1234", letter.where());
        assertEquals(1_700_000_000_000L, letter.timestamp);
        assertFalse(letter.refetch);
        assertNull(m.dlqReason, "the original is unchanged");
        assertEquals(1, sent.getCount());
        assertNull(d.letter(null, "no message"));
        assertEquals(1, sent.getCount(), "no message, no count");
    }

    @Test
    void consumedChunksLeaveAsReferencesInConsumptionOrder() {
        SimpleCounter sent = new SimpleCounter();
        DeadLetters d = new DeadLetters(sent);
        Attempt a = new Attempt();
        for (long offset : new long[]{40, 41, 39, 50, 51, 52, 53, 54, 55}) {
            L1Message c = chunk("r/0/1", "0");
            c.offset = offset;
            c.partition = 5;
            c.topic = "l1";
            a.addConsumed(c);
        }
        List<L1Message> refs = d.refetches("r/0/1", a, "dump r/0/1 INCOMPLETE after PT1M: CHUNKS_MISSING");
        assertEquals(List.of("l1-5@40", "l1-5@41", "l1-5@39", "l1-5@50", "l1-5@51", "l1-5@52", "l1-5@53", "l1-5@54",
                "l1-5@55"), refs.stream().map(L1Message::where).toList());
        for (L1Message r : refs) {
            assertEquals("r/0/1", r.key);
            assertTrue(r.refetch);
            assertNull(r.value);
            assertNull(r.keyBytes);
            assertEquals("dump r/0/1 INCOMPLETE after PT1M: CHUNKS_MISSING", r.dlqReason);
        }
        assertEquals(9, sent.getCount());
        assertEquals(List.of(), d.refetches("r/0/2", new Attempt(), "none consumed"));
        assertEquals(9, sent.getCount());
    }

    @Test
    void theReasonsNameTheDumpTheChunkAndWhereItCameFrom() {
        L1Message c = chunk("r/0/1", "9");
        assertEquals("CHUNK_INDEX_OUT_OF_RANGE: chunk 9 of dump r/0/1 but its manifest lists 4 chunks, on l1dump.v1-3@1234",
                DeadLetters.outOfRange(c, 9, 4));
        assertEquals("BAD_MESSAGE: chunk 9 of dump r/0/1 on l1dump.v1-3@1234: more than 1048576 bytes of chunks came"
                + " before its manifest", DeadLetters.tooEarly(c, 9, 1 << 20));
        assertEquals("late chunk 9 of dump r/0/1, already REJECTED", DeadLetters.afterRejection("r/0/1", 9, "REJECTED"));
        assertEquals("chunk 9 of dump r/0/1, which was rejected at its head", DeadLetters.afterHeadRejection("r/0/1", 9));
    }
}
