package io.dumpstream.assemble;

import io.dumpstream.format.DumpFormatException;
import io.dumpstream.format.L1Buffer;
import io.dumpstream.format.L1Layout;
import io.dumpstream.format.ReasonCode;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.schema.RecordPlan;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The assembly of one dump from its chunks, consumed in index order: each chunk is verified on its
 * own (CRC-32C and length), bytes [0, 262208) are kept and the header checked once they are all
 * present, then every record is decided as soon as the chunks covering its slot have been seen,
 * so a long dump streams record by record. Dump-level failures reject every record with the same
 * reason; a bad chunk rejects only the records whose slots overlap it.
 *
 * <p>Logic only: all state lives in the {@link AssemblyState} given, so a driver may keep it where
 * it survives restarts. Drivers that receive chunks out of order hold them until their turn.
 */
public final class DumpAssembly {
    /** Default largest payload accepted for one record. */
    public static final long DEFAULT_MAX_RECORD_BYTES = 512L * 1024 * 1024;
    /** Default cap of the payload bytes kept with a rejected record. */
    public static final int DEFAULT_REJECT_PAYLOAD_CAP = 64 * 1024;

    private final DumpManifest m;
    private final AssemblyState s;
    private final long maxRecordBytes;
    private final int rejectPayloadCap;
    private final int chunkCount;

    public DumpAssembly(DumpManifest manifest, AssemblyState state) {
        this(manifest, state, DEFAULT_MAX_RECORD_BYTES, DEFAULT_REJECT_PAYLOAD_CAP);
    }

    public DumpAssembly(DumpManifest manifest, AssemblyState state, long maxRecordBytes, int rejectPayloadCap) {
        this.m = manifest;
        this.s = state;
        this.maxRecordBytes = maxRecordBytes;
        this.rejectPayloadCap = rejectPayloadCap;
        this.chunkCount = (int) Manifests.chunkCount(manifest.getBufferBytes(), manifest.getChunkBytes());
    }

    public int chunkCount() {
        return chunkCount;
    }

    /** Index of the chunk {@link #consume} takes next. */
    public int nextChunk() {
        return s.nextChunk;
    }

    public boolean finished() {
        return s.finished;
    }

    /** Consumes the next chunk; {@code bytes} null means it is missing (the assembly timed out). */
    public void consume(ByteBuffer bytes, AssemblyOutput out) {
        consume(bytes, null, out);
    }

    /**
     * Consumes the next chunk with a transport failure the driver already knows of (for example
     * a buffer file shorter or longer than buffer_bytes), which wins over the chunk's own checks.
     */
    public void consume(ByteBuffer bytes, Failure known, AssemblyOutput out) {
        if (s.finished) {
            return;
        }
        int index = s.nextChunk++;
        long start = Manifests.chunkStart(m, index);
        long end = start + Manifests.chunkLength(m, index);
        Failure bad = known;
        if (bad == null && bytes == null) {
            bad = new Failure(ReasonCode.CHUNKS_MISSING, "chunk " + index + " (bytes " + start + ".." + end
                    + ") had not arrived when the assembly timed out");
        }
        if (bad == null) {
            bad = Checks.chunk(m, index, bytes);
        }
        if (bad != null) {
            if (bad.reason() == ReasonCode.CHUNKS_MISSING) {
                s.sawMissing = true;
            }
            addBad(start, end, bad);
        }
        if (start < L1Layout.PAYLOAD_BASE && s.headerState == 0) {
            if (bad != null) {
                rejectDump(bad, out);
                return;
            }
            copyHead(bytes, start, end);
            if (end >= L1Layout.PAYLOAD_BASE) {
                checkHeader(out);
                if (s.finished) {
                    return;
                }
            }
        }
        if (s.headerState == 1) {
            advance(bad == null ? bytes : null, start, end, out);
        }
        if (s.nextChunk >= chunkCount) {
            finish(out);
        }
    }

    private void copyHead(ByteBuffer bytes, long start, long end) {
        if (s.head == null) {
            s.head = new byte[L1Layout.PAYLOAD_BASE];
        }
        int n = (int) (Math.min(end, L1Layout.PAYLOAD_BASE) - start);
        bytes.duplicate().get(s.head, (int) start, n);
    }

    private void checkHeader(AssemblyOutput out) {
        L1Buffer h;
        try {
            h = L1Buffer.wrap(s.head);
        } catch (DumpFormatException e) {
            throw new IllegalStateException("head is always 262208 bytes", e);
        }
        Failure f = Checks.header(m, h);
        if (f != null) {
            rejectDump(f, out);
        } else {
            s.headerState = 1;
        }
    }

    private void advance(ByteBuffer verified, long start, long end, AssemblyOutput out) {
        L1Buffer h = head();
        int n = m.getRecords().size();
        while (s.nextRecord < n) {
            int i = s.nextRecord;
            RecordPlan r = m.getRecords().get(i);
            if (!s.recordStarted && !startRecord(i, h, out)) {
                continue;
            }
            long off = r.getPayloadOffset();
            long slotEnd = off + r.getPayloadBytes();
            long from = Math.max(off + s.slotFilled, start);
            long to = Math.min(off + s.slot.length, end);
            if (to > from) {
                if (verified != null) {
                    ByteBuffer src = verified.duplicate();
                    src.position(src.position() + (int) (from - start));
                    src.get(s.slot, (int) (from - off), (int) (to - from));
                }
                s.slotFilled = (int) (to - off);
            }
            if (slotEnd > end) {
                return; // the rest of this slot comes with later chunks
            }
            finishRecord(i, h, out);
        }
    }

    /** Runs the record checks; returns false when the record was decided at once (no readable slot). */
    private boolean startRecord(int i, L1Buffer h, AssemblyOutput out) {
        Checks.RecordVerdict v = Checks.record(m, i, h, s.prevEnd, maxRecordBytes);
        if (!v.slotUsable()) {
            Failure f = v.failure();
            s.rejected++;
            s.nextRecord++;
            out.rejected(i, f.reason(), f.detail(), h.entryBytes(i), null, false);
            return false;
        }
        long pb = m.getRecords().get(i).getPayloadBytes();
        s.recordStarted = true;
        s.recordReason = v.failure() == null ? -1 : v.failure().reason().ordinal();
        s.recordDetail = v.failure() == null ? null : v.failure().detail();
        s.recordNextPrevEnd = v.nextPrevEnd();
        s.slot = new byte[(int) (v.failure() == null ? pb : Math.min(pb, rejectPayloadCap))];
        s.slotFilled = 0;
        return true;
    }

    private void finishRecord(int i, L1Buffer h, AssemblyOutput out) {
        RecordPlan r = m.getRecords().get(i);
        Failure f = badOverlap(r.getPayloadOffset(), r.getPayloadOffset() + r.getPayloadBytes());
        if (f == null && s.recordReason >= 0) {
            f = new Failure(ReasonCode.values()[s.recordReason], s.recordDetail);
        }
        byte[] payload = s.slot;
        s.slot = null;
        s.slotFilled = 0;
        s.recordStarted = false;
        s.recordReason = -1;
        s.recordDetail = null;
        s.prevEnd = s.recordNextPrevEnd;
        s.nextRecord++;
        if (f == null) {
            s.accepted++;
            out.accepted(i, payload);
        } else {
            s.rejected++;
            boolean capped = payload.length < r.getPayloadBytes();
            out.rejected(i, f.reason(), f.detail(), h.entryBytes(i), payload, capped);
        }
    }

    private L1Buffer head() {
        try {
            return L1Buffer.wrap(s.head);
        } catch (DumpFormatException e) {
            throw new IllegalStateException("head is always 262208 bytes", e);
        }
    }

    private void addBad(long start, long end, Failure f) {
        int k = s.badChunks.length;
        s.badChunks = Arrays.copyOf(s.badChunks, k + 3);
        s.badChunks[k] = start;
        s.badChunks[k + 1] = end;
        s.badChunks[k + 2] = f.reason().ordinal();
        s.badChunkDetails = Arrays.copyOf(s.badChunkDetails, k / 3 + 1);
        s.badChunkDetails[k / 3] = f.detail();
    }

    private Failure badOverlap(long from, long to) {
        for (int k = 0; k < s.badChunks.length; k += 3) {
            if (s.badChunks[k] < to && s.badChunks[k + 1] > from) {
                return new Failure(ReasonCode.values()[(int) s.badChunks[k + 2]], s.badChunkDetails[k / 3]);
            }
        }
        return null;
    }

    private void rejectDump(Failure f, AssemblyOutput out) {
        s.headerState = 2;
        s.dumpReason = f.reason().ordinal();
        int n = m.getRecords().size();
        for (int i = s.nextRecord; i < n; i++) {
            s.rejected++;
            out.rejected(i, f.reason(), f.detail(), null, null, false);
        }
        s.nextRecord = n;
        finish(out);
    }

    private void finish(AssemblyOutput out) {
        if (s.finished) {
            return;
        }
        s.finished = true;
        s.head = null;
        s.slot = null;
        Outcome outcome;
        ReasonCode reason;
        if (s.sawMissing) {
            outcome = Outcome.INCOMPLETE;
            reason = ReasonCode.CHUNKS_MISSING;
        } else if (s.dumpReason >= 0) {
            outcome = Outcome.REJECTED;
            reason = ReasonCode.values()[s.dumpReason];
        } else {
            outcome = s.rejected > 0 ? Outcome.PARTIAL : Outcome.COMPLETE;
            reason = null;
        }
        out.finished(outcome, reason, s.accepted, s.rejected);
    }
}
