package io.dumpstream.job;

import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.typeutils.PojoTypeInfo;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/** Placement of dumps by rank: every dump of a rank in one key group, ranks spread evenly. */
class DumpKeyTest {
    private static final int KEY_GROUPS = 128;

    @Test
    void equalByIdWithTheSameHash() {
        DumpKey a = DumpKey.of("run/3/17", KEY_GROUPS);
        DumpKey b = DumpKey.of("run/3/17", KEY_GROUPS);
        assertEquals(a, b);
        assertEquals(a.hashCode(), b.hashCode());
        assertNotEquals(a, DumpKey.of("run/3/18", KEY_GROUPS));
        assertEquals("run/3/17", a.toString());
    }

    @Test
    void everyLaunchOfARankInOneKeyGroupWithItsOwnHash() {
        for (String run : new String[] {"bench", "demo", "gpu=a100/try 1", "ρ/..", ""}) {
            for (int rank : new int[] {0, 1, 7, 4095, Integer.MAX_VALUE}) {
                int group = -1;
                Set<Integer> hashes = new HashSet<>();
                for (long launch = 0; launch < 1000; launch++) {
                    DumpKey k = DumpKey.of(run + "/" + rank + "/" + launch, KEY_GROUPS);
                    int g = KeyGroupRangeAssignment.assignToKeyGroup(k, KEY_GROUPS);
                    assertEquals(DumpKey.rankKeyGroup(k.id, KEY_GROUPS), g, k.id);
                    if (group < 0) {
                        group = g;
                    }
                    assertEquals(group, g, k.id);
                    hashes.add(k.hashCode());
                }
                // distinct launches keep distinct hashes (the heap backend's buckets), bar a few collisions
                assertEquals(1000, hashes.size(), 5, run + "/" + rank);
            }
        }
    }

    @Test
    void consecutiveRanksSplitEvenlyOverPowerOfTwoParallelisms() {
        for (String run : new String[] {"bench", "demo", "synthetic", "gpu=a100/try 1", "run-2026-12-04"}) {
            for (int ranks : new int[] {2, 4, 8, 16}) {
                for (int p = 1; p <= ranks; p *= 2) {
                    int[] perSubtask = new int[p];
                    for (int rank = 0; rank < ranks; rank++) {
                        perSubtask[KeyGroupRangeAssignment.assignKeyToParallelOperator(
                                DumpKey.of(run + "/" + rank + "/42", KEY_GROUPS), KEY_GROUPS, p)]++;
                    }
                    for (int n : perSubtask) {
                        assertEquals(ranks / p, n, run + ": " + ranks + " ranks over " + p + " subtasks: "
                                + java.util.Arrays.toString(perSubtask));
                    }
                }
            }
        }
    }

    @Test
    void idsWithoutARankFallBackToTheirOwnHash() {
        for (String id : new String[] {"", "no-slash", "a/b", "run/x/1", "run/-1/1", "/1", "run/99999999999/1"}) {
            assertEquals(id.hashCode(), DumpKey.of(id, KEY_GROUPS).hashCode(), id);
        }
        assertEquals("run/3/17".hashCode(), DumpKey.of("run/3/17", 100).hashCode(), "not a power of two");
    }

    @Test
    void theHashSurvivesFlinksSerializer() throws Exception {
        TypeInformation<DumpKey> info = TypeInformation.of(DumpKey.class);
        assertInstanceOf(PojoTypeInfo.class, info, "a POJO, not a generic (Kryo) type");
        TypeSerializer<DumpKey> s = info.createSerializer(new SerializerConfigImpl());
        DumpKey k = DumpKey.of("bench/2/99", 256);
        DataOutputSerializer out = new DataOutputSerializer(64);
        s.serialize(k, out);
        DumpKey back = s.deserialize(new DataInputDeserializer(out.getCopyOfBuffer()));
        assertEquals(k, back);
        assertEquals(256, back.keyGroups);
        assertEquals(k.hashCode(), back.hashCode());
    }
}
