package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.dumpstream.options.UsageException;

import org.apache.flink.connector.file.sink.compactor.FileCompactStrategy;
import org.junit.jupiter.api.Test;


/** {@code --compact-checkpoints} / {@code --compact-bytes}: off by default, on only with a checkpoint bound. */
class IngestConfigCompactionTest {
    private static final String[] BASE = {"--bootstrap", "k:9093", "--out", "s3a://b/l1", "--checkpoints", "s3a://b/ck"};

    private static IngestConfig parse(String... extra) {
        return IngestArgs.parse(BASE, extra);
    }

    @Test
    void offByDefault() {
        IngestConfig c = parse();
        assertEquals(0, c.compactCheckpoints);
        assertEquals(128L << 20, c.compactBytes);
        assertNull(IngestJob.compaction(c));
    }

    @Test
    void checkpointsTurnItOnWithTheDefaultByteThreshold() {
        FileCompactStrategy s = IngestJob.compaction(parse("--compact-checkpoints", "6"));
        assertEquals(6, s.getNumCheckpointsBeforeCompaction());
        assertEquals(128L << 20, s.getSizeThreshold());
        assertEquals(1, s.getNumCompactThreads());
    }

    @Test
    void bothThresholds() {
        IngestConfig c = parse("--compact-checkpoints", "3", "--compact-bytes", "67108864");
        FileCompactStrategy s = IngestJob.compaction(c);
        assertEquals(3, s.getNumCheckpointsBeforeCompaction());
        assertEquals(64L << 20, s.getSizeThreshold());
    }

    @Test
    void aByteThresholdAloneIsRefusedNamingTheCheckpointBound() {
        UsageException e = assertThrows(UsageException.class, () -> parse("--compact-bytes", "67108864"));
        assertEquals("--compact-bytes 67108864 needs --compact-checkpoints N (N >= 1): compaction is on only with a"
                + " checkpoint bound, so that rows of a small partition never wait for the byte threshold", e.getMessage());
    }

    @Test
    void badValuesNameTheOptionAndTheValue() {
        assertEquals("--compact-checkpoints must be >= 0, got -1",
                assertThrows(UsageException.class, () -> parse("--compact-checkpoints", "-1")).getMessage());
        assertEquals("--compact-bytes must be at least 1048576, got 1000",
                assertThrows(UsageException.class, () -> parse("--compact-checkpoints", "2", "--compact-bytes", "1000"))
                        .getMessage());
        assertThrows(UsageException.class, () -> parse("--compact-checkpoints", "many"));
    }
}
