package io.dumpstream.job;

import io.dumpstream.assemble.Outcome;

import java.time.Duration;

/**
 * The de-duplication retention: once a dump is decided, its key keeps only a {@link DoneMarker}
 * (manifest fingerprint, outcome, whether a re-send may decide more, the records already written)
 * until a processing-time timer the retention after the decision clears it. Meanwhile a re-send of
 * the same manifest is a duplicate unless the dump may be retried, a late chunk is a duplicate or a
 * dead letter, and a retry writes only the records not written before. A retention of zero keeps
 * nothing.
 */
final class DedupRetention {
    private final boolean keeps;
    private final long retentionMillis;

    DedupRetention(Duration retention) {
        this.keeps = !retention.isZero();
        this.retentionMillis = retention.toMillis();
    }

    /** What a chunk of a dump with no attempt in flight is, by the dump's marker (null: none kept). */
    enum LateChunk {
        /** Beyond the chunk list of the decided dump's manifest: a dead letter. */
        OUT_OF_RANGE,
        /** Of a dump decided REJECTED for good: a dead letter. */
        AFTER_REJECTION,
        /** Of a dump decided for good otherwise: changes nothing. */
        DUPLICATE,
        /** Of a dump never decided, or one a re-send may still change: starts an attempt. */
        NEW_ATTEMPT
    }

    static LateChunk lateChunk(DoneMarker done, int index) {
        if (done != null && done.chunkCount >= 0 && index >= done.chunkCount) {
            return LateChunk.OUT_OF_RANGE;
        }
        if (done != null && !done.retryable) {
            return Outcome.REJECTED.name().equals(done.outcome) ? LateChunk.AFTER_REJECTION : LateChunk.DUPLICATE;
        }
        return LateChunk.NEW_ATTEMPT;
    }

    /** Whether a manifest with this fingerprint re-sends a dump decided for good (the same bytes give the same rows). */
    static boolean isResend(DoneMarker done, long fingerprint) {
        return done != null && done.fingerprint == fingerprint && !done.retryable;
    }

    /** A copy of the records the marker's dump already wrote, for a new attempt; null when there are none. */
    static long[] written(DoneMarker done) {
        return done != null && done.acceptedBits != null ? done.acceptedBits.clone() : null;
    }

    /** The marker of a decided attempt: retryable after a transport failure; REJECTED when no outcome was set. */
    static DoneMarker decided(Attempt attempt) {
        DoneMarker done = new DoneMarker();
        done.fingerprint = attempt.fingerprint;
        done.outcome = attempt.outcome == null ? Outcome.REJECTED.name() : attempt.outcome;
        done.retryable = attempt.transportFailure;
        done.acceptedBits = attempt.acceptedBits;
        done.chunkCount = attempt.chunkCount;
        return done;
    }

    /**
     * The marker of an attempt whose manifest was unusable: REJECTED for good for these manifest bytes,
     * with no chunk count, so its chunks still reach the dead-letter output.
     */
    static DoneMarker unusable(Attempt attempt) {
        DoneMarker done = new DoneMarker();
        done.fingerprint = attempt.fingerprint;
        done.outcome = Outcome.REJECTED.name();
        done.retryable = false;
        done.acceptedBits = attempt.acceptedBits;
        return done;
    }

    /** The processing time at which a marker of a decision at {@code now} expires; -1 when none is kept. */
    long expiry(long now) {
        return keeps ? now + retentionMillis : -1;
    }

    /** Whether the timer firing at {@code timestamp} ends the marker's retention (no attempt in flight). */
    static boolean expires(DoneMarker done, long timestamp, Attempt attempt) {
        return done != null && done.retentionTimer == timestamp && attempt == null;
    }
}
