package io.dumpstream.assemble;

/**
 * The mutable state of one dump's assembly, kept apart from its logic so that a driver can hold it
 * where it must survive failures (Flink keyed state). A plain POJO of primitives and arrays: the
 * verified head (header + record table), the slot of the record being assembled, and counters.
 * Its size is the record table plus the largest payload slot in flight, never the whole buffer.
 */
public class AssemblyState {
    /** Next chunk index to consume, in order. */
    public int nextChunk;
    /** Bytes [0, min(consumed, 262208)) of the buffer, once present; null before the first chunk. */
    public byte[] head;
    /** 0 = header not yet decided, 1 = header verified, 2 = dump rejected. */
    public int headerState;
    /** Record being assembled. */
    public int nextRecord;
    /** End of the furthest usable slot of the finished records. */
    public long prevEnd;
    /** Bytes of the current record gathered so far (capped for a record already known to be rejected). */
    public byte[] slot;
    public int slotFilled;
    /** Whether the current record's checks ran (its slot is being gathered). */
    public boolean recordStarted;
    /** Ordinal of the current record's record-level failure, or -1. */
    public int recordReason = -1;
    public String recordDetail;
    /** End of the furthest usable slot once the current record is done. */
    public long recordNextPrevEnd;
    /** Whether a chunk was missing when the assembly was forced to finish. */
    public boolean sawMissing;
    /** Bad chunk ranges seen so far, as triples (start, end, reason ordinal) flattened; few in practice. */
    public long[] badChunks = new long[0];
    public String[] badChunkDetails = new String[0];
    public int accepted;
    public int rejected;
    /** Ordinal of the dump-level reason when rejected, else -1. */
    public int dumpReason = -1;
    public boolean finished;

    public AssemblyState() {
    }
}
