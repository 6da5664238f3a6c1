package io.dumpstream.job;

import org.apache.flink.runtime.state.KeyGroupRangeAssignment;

/**
 * The assembler's key: a dump id ({@code <run_id>/<rank>/<launch_id>}), equal by id, whose hash
 * places every dump of one rank in one key group, so one subtask assembles, decodes and writes all
 * of a rank's dumps. The decoder and the snapshot sink then chain to the assembler without a
 * shuffle of the payloads (a partition, {@code run/rank/stage}, still has one writer), which saves
 * a serialisation, two copies and two multi-MiB allocations per payload.
 *
 * <p>Ranks of one run are spread over the key groups by the bit-reversed rank (a van der Corput
 * sequence), so any 2^k consecutive ranks split evenly over any power-of-two parallelism: a plain
 * hash put 3 of 4 ranks on one of 2 subtasks. Among the hashes that land in the rank's key group,
 * each launch takes its own (searched from a mix of the id's hash), so the dumps of one rank do not share a
 * bucket in the heap state backend's maps. An id that does not parse, or a max parallelism that is
 * not a power of two, falls back to the id's own hash: the placement is then random, never wrong.
 * The hash is a function of the id and the max parallelism alone, the same in every JVM.
 */
public class DumpKey {
    /** Longest search for a hash in the rank's key group (about max parallelism tries expected). */
    private static final int MAX_TRIES = 1 << 20;

    /** The dump id. */
    public String id = "";
    /** The job's max parallelism (the number of key groups), which the placement is computed for. */
    public int keyGroups = 128;

    private transient int hash;
    private transient boolean hashed;

    public DumpKey() {
    }

    public static DumpKey of(String id, int keyGroups) {
        DumpKey k = new DumpKey();
        k.id = id;
        k.keyGroups = keyGroups;
        return k;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DumpKey && id.equals(((DumpKey) o).id);
    }

    @Override
    public int hashCode() {
        if (!hashed) {
            hash = hash(id, keyGroups);
            hashed = true;
        }
        return hash;
    }

    @Override
    public String toString() {
        return id;
    }

    /** The key group this dump's rank is placed in, or -1 when the id gives no rank. */
    static int rankKeyGroup(String id, int keyGroups) {
        int last = id.lastIndexOf('/');
        int prev = last > 0 ? id.lastIndexOf('/', last - 1) : -1;
        if (prev < 0 || keyGroups < 1 || Integer.bitCount(keyGroups) != 1) {
            return -1;
        }
        int rank;
        try {
            rank = Integer.parseInt(id, prev + 1, last, 10);
        } catch (NumberFormatException e) {
            return -1;
        }
        if (rank < 0) {
            return -1;
        }
        int bits = Integer.numberOfTrailingZeros(keyGroups);
        int reversed = bits == 0 ? 0 : Integer.reverse(rank) >>> (32 - bits);
        return Math.floorMod(id.substring(0, prev).hashCode() + reversed, keyGroups);
    }

    static int hash(String id, int keyGroups) {
        int target = rankKeyGroup(id, keyGroups);
        if (target < 0) {
            return id.hashCode();
        }
        // start from a mixed seed: ids of consecutive launches have nearby String hashes, which would
        // all meet at the same first hash in the key group
        int h = id.hashCode() * 0x9E3779B9;
        for (int i = 0; i < MAX_TRIES; i++, h++) {
            if (KeyGroupRangeAssignment.computeKeyGroupForKeyHash(h, keyGroups) == target) {
                return h;
            }
        }
        return id.hashCode();
    }
}
