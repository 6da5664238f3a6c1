package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterEach;

import java.nio.file.Files;
import java.util.List;

/**
 * {@link FailoverTest}'s failures with the snapshot parts compacted after every checkpoint: the
 * compactor's requests and results cross the same failures (a restart from a checkpoint taken while a
 * compaction was pending, a savepoint, the broker down, a TaskManager lost) and still the exact multiset
 * of records lands, nothing lost and nothing doubled; and what landed is compacted files only.
 */
class CompactedFailoverTest extends FailoverTest {
    @Override
    int compactCheckpoints() {
        return 1;
    }

    @AfterEach
    void everyVisibleSnapshotFileIsACompactedOne() throws Exception {
        List<String> visible;
        try (var walk = Files.walk(dir)) {
            visible = walk.filter(f -> f.toString().contains("/snapshots/"))
                    .map(f -> f.getFileName().toString())
                    .filter(n -> n.endsWith(".parquet") && !n.startsWith("."))
                    .toList();
        }
        assertTrue(!visible.isEmpty(), "no snapshot file under " + dir);
        for (String n : visible) {
            assertTrue(n.startsWith("compacted-part-"), "not compacted: " + n);
        }
    }

    /**
     * Not run with compaction (CI time): a broker outage fails the job over as the injected failure does, which
     * this class covers; FailoverTest runs it without compaction.
     */
    @Override
    void theBrokerDownForTwentySecondsMidStreamTheJobRecoversByItself() {
    }
}
