package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.job.DedupRetention.LateChunk;

import org.junit.jupiter.api.Test;

import java.time.Duration;

/** What a decided dump leaves behind, how a re-send or late chunk is judged by it, and when it goes. */
class DedupRetentionTest {

    private static DoneMarker marker(String outcome, boolean retryable, int chunkCount) {
        DoneMarker d = new DoneMarker();
        d.fingerprint = 42;
        d.outcome = outcome;
        d.retryable = retryable;
        d.chunkCount = chunkCount;
        return d;
    }

    @Test
    void aLateChunkIsJudgedByTheMarkerOfItsDump() {
        assertEquals(LateChunk.NEW_ATTEMPT, DedupRetention.lateChunk(null, 0));
        assertEquals(LateChunk.NEW_ATTEMPT, DedupRetention.lateChunk(null, 1 << 20));
        // beyond the decided manifest's list: a dead letter, retryable or not
        assertEquals(LateChunk.OUT_OF_RANGE, DedupRetention.lateChunk(marker("COMPLETE", false, 4), 4));
        assertEquals(LateChunk.OUT_OF_RANGE, DedupRetention.lateChunk(marker("INCOMPLETE", true, 4), 9));
        assertEquals(LateChunk.DUPLICATE, DedupRetention.lateChunk(marker("COMPLETE", false, 4), 3));
        assertEquals(LateChunk.DUPLICATE, DedupRetention.lateChunk(marker("PARTIAL", false, 4), 0));
        assertEquals(LateChunk.AFTER_REJECTION, DedupRetention.lateChunk(marker("REJECTED", false, 4), 3));
        // an unusable manifest keeps no chunk count: every chunk of it is a dead letter
        assertEquals(LateChunk.AFTER_REJECTION, DedupRetention.lateChunk(marker("REJECTED", false, -1), 1000));
        // a dump a re-send may still change takes the chunk into a new attempt
        assertEquals(LateChunk.NEW_ATTEMPT, DedupRetention.lateChunk(marker("INCOMPLETE", true, 4), 3));
        assertEquals(LateChunk.NEW_ATTEMPT, DedupRetention.lateChunk(marker("REJECTED", true, 4), 0));
    }

    @Test
    void onlyTheSameManifestOfADumpDecidedForGoodIsAResend() {
        assertTrue(DedupRetention.isResend(marker("COMPLETE", false, 4), 42));
        assertTrue(DedupRetention.isResend(marker("REJECTED", false, -1), 42));
        assertFalse(DedupRetention.isResend(marker("COMPLETE", false, 4), 43));
        assertFalse(DedupRetention.isResend(marker("INCOMPLETE", true, 4), 42));
        assertFalse(DedupRetention.isResend(null, 42));
    }

    @Test
    void aNewAttemptGetsACopyOfTheRecordsAlreadyWritten() {
        DoneMarker d = marker("INCOMPLETE", true, 4);
        assertNull(DedupRetention.written(d));
        assertNull(DedupRetention.written(null));
        d.acceptedBits = new long[]{0b1011L, 1L << 63};
        long[] w = DedupRetention.written(d);
        assertArrayEquals(new long[]{0b1011L, 1L << 63}, w);
        assertNotSame(d.acceptedBits, w);
        w[0] = 0;
        assertEquals(0b1011L, d.acceptedBits[0], "the marker's bits are not shared with the attempt");
    }

    @Test
    void theMarkerOfADecidedAttemptCarriesItsOutcomeAndWhetherARetryMayHelp() {
        Attempt a = new Attempt();
        a.fingerprint = -7;
        a.outcome = "PARTIAL";
        a.transportFailure = true;
        a.acceptedBits = new long[]{5};
        a.chunkCount = 12;
        DoneMarker d = DedupRetention.decided(a);
        assertEquals(-7, d.fingerprint);
        assertEquals("PARTIAL", d.outcome);
        assertTrue(d.retryable);
        assertTrue(a.acceptedBits == d.acceptedBits);
        assertEquals(12, d.chunkCount);
        assertEquals(-1, d.retentionTimer, "set when it is kept");

        Attempt none = new Attempt();
        DoneMarker r = DedupRetention.decided(none);
        assertEquals("REJECTED", r.outcome, "an attempt that ended without an outcome");
        assertFalse(r.retryable);
        assertEquals(-1, r.chunkCount);
    }

    @Test
    void theMarkerOfAnUnusableManifestIsFinalAndHasNoChunkCount() {
        Attempt a = new Attempt();
        a.fingerprint = 99;
        a.outcome = "COMPLETE";
        a.transportFailure = true;
        a.chunkCount = 5;
        a.acceptedBits = new long[]{3};
        DoneMarker d = DedupRetention.unusable(a);
        assertEquals(99, d.fingerprint);
        assertEquals("REJECTED", d.outcome);
        assertFalse(d.retryable);
        assertTrue(a.acceptedBits == d.acceptedBits);
        assertEquals(-1, d.chunkCount);
        assertEquals(-1, d.retentionTimer);
    }

    @Test
    void theRetentionTimerAndItsExpiry() {
        assertEquals(601_000, new DedupRetention(Duration.ofSeconds(600)).expiry(1_000));
        assertEquals(1_250, new DedupRetention(Duration.ofMillis(250)).expiry(1_000));
        assertEquals(-1, new DedupRetention(Duration.ZERO).expiry(1_000), "a zero retention keeps nothing");
        assertEquals(1_000, new DedupRetention(Duration.ofNanos(1)).expiry(1_000), "not zero: kept until now");

        DoneMarker d = marker("COMPLETE", false, 4);
        d.retentionTimer = 601_000;
        assertTrue(DedupRetention.expires(d, 601_000, null));
        assertFalse(DedupRetention.expires(d, 600_999, null));
        assertFalse(DedupRetention.expires(d, 601_000, new Attempt()), "a dump in a new attempt keeps its marker");
        assertFalse(DedupRetention.expires(null, 601_000, null));
    }
}
