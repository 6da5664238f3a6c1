package io.dumpstream.job;

/**
 * The assembler's bookkeeping for one attempt at a dump (kept in keyed state beside the
 * {@link io.dumpstream.assemble.AssemblyState}): timers, which chunks were seen, which records
 * were accepted, and where the consumed chunks sit in Kafka for the dead-letter copy.
 */
public class Attempt {
    public long timeoutTimer = -1;
    public long startedAt;
    public long publishTs;
    /** The dump was rejected at its head: later chunks go straight to the dead-letter topic. */
    public boolean draining;
    /** A transport reason (bad CRC, bad length, missing chunk) rejected something: a re-send may fix it. */
    public boolean transportFailure;
    /** Bitset of the chunk indices seen, once the manifest is known. */
    public long[] seenChunks;
    public int seenCount;
    /** Bytes of chunks held in state before the manifest came. */
    public long earlyBytes;
    /** Bitset of the records accepted in this attempt or an earlier one (those are not written again). */
    public long[] acceptedBits;
    /** Kafka offsets of the chunks consumed (decoded and dropped from state), in consumption order. */
    public long[] consumedOffsets = new long[0];
    public int consumedCount;
    public int consumedPartition = -1;
    public String consumedTopic;
    /** Manifest fingerprint (SHA-256, first 8 bytes). */
    public long fingerprint;
    /** Chunks in the manifest's list, -1 until a usable manifest came. */
    public int chunkCount = -1;
    /** The outcome once decided, and its dump-level reason. */
    public String outcome;
    public String reason;

    public Attempt() {
    }

    static boolean get(long[] bits, int i) {
        return bits != null && i >= 0 && (i >>> 6) < bits.length && (bits[i >>> 6] & (1L << i)) != 0;
    }

    static void set(long[] bits, int i) {
        bits[i >>> 6] |= 1L << i;
    }

    void addConsumed(L1Message m) {
        if (consumedCount == consumedOffsets.length) {
            consumedOffsets = java.util.Arrays.copyOf(consumedOffsets, Math.max(8, consumedCount * 2));
        }
        consumedOffsets[consumedCount++] = m.offset;
        consumedPartition = m.partition;
        consumedTopic = m.topic;
    }
}
