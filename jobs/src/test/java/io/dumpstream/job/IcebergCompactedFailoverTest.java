package io.dumpstream.job;

/**
 * {@link IcebergFailoverTest}'s failures with the snapshot parts compacted after every checkpoint: parts
 * appended when their checkpoint completes, each merge one rewrite, across an operator that throws, a
 * stop-with-savepoint and a TaskManager lost; afterwards each file added by exactly one snapshot, each part
 * removed by at most one rewrite, Iceberg's rows exactly DuckDB's of the Hive layout.
 */
class IcebergCompactedFailoverTest extends IcebergFailoverTest {
    @Override
    int compactCheckpoints() {
        return 1;
    }

    /** The first merged files land later (parts, merges and their Iceberg commits): publish 2x slower. */
    @Override
    double rate(double rate) {
        return rate / 2;
    }

    @Override
    String topic(String name) {
        return "failover-iceberg-compacted-" + name;
    }

    /**
     * Not run with compaction (CI time): a restart from a checkpoint with parts and merges pending is what the
     * TaskManager loss does here too; IcebergFailoverTest runs the injected failure without compaction.
     */
    @Override
    void anOperatorThatThrowsOnceRestartsFromTheCheckpointExactlyOnce() {
    }
}
