package io.dumpstream.job;

import io.dumpstream.options.UsageException;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** ingest's options as declared once: the parsed defaults are the object's, each value lands in its field. */
class IngestConfigOptionsTest {
    private static final String[] BASE = {"--bootstrap", "k:9092", "--out", "/o", "--checkpoints", "/c"};

    private static IngestConfig parse(String... extra) {
        return IngestArgs.parse(BASE, extra);
    }

    @Test
    void theDefaultsParsedAreTheDefaultsDeclared() {
        IngestConfig parsed = parse();
        IngestConfig declared = new IngestConfig();
        assertEquals(declared.topic, parsed.topic);
        assertEquals(declared.group, parsed.group);
        assertEquals(declared.checkpointInterval, parsed.checkpointInterval);
        assertEquals(declared.assemblyTimeout, parsed.assemblyTimeout);
        assertEquals(Duration.ofHours(24), parsed.dedupRetention);
        assertEquals(declared.maxParallelism, parsed.maxParallelism);
        assertEquals(declared.sinkBufferBytes, parsed.sinkBufferBytes);
        assertEquals(declared.rowGroupBytes, parsed.rowGroupBytes);
        assertEquals(declared.zstdLevel, parsed.zstdLevel);
        assertEquals(declared.topic + ".dlq", parsed.dlqTopic);
        assertTrue(parsed.resume);
        assertTrue(parsed.flinkConf.isEmpty() && parsed.kafka.isEmpty());
    }

    @Test
    void everyValueLandsInItsField() {
        IngestConfig c = parse("--max-parallelism", "256", "--no-resume", "--dedup-retention", "36h", "--state-backend",
                "RocksDB", "-D", "taskmanager.memory.task.off-heap.size=512m", "-Dparallelism.default=2", "--parallelism", "3");
        assertEquals(256, c.maxParallelism);
        assertFalse(c.resume);
        assertEquals(Duration.ofHours(36), c.dedupRetention);
        assertEquals("rocksdb", c.stateBackend);
        assertEquals(Map.of("taskmanager.memory.task.off-heap.size", "512m", "parallelism.default", "2"), c.flinkConf);
        assertEquals(3, c.parallelism);
    }

    @Test
    void maxParallelismIsChecked() {
        assertEquals("--max-parallelism must be in [1, 32768], got 0",
                assertThrows(UsageException.class, () -> parse("--max-parallelism", "0")).getMessage());
        assertEquals("--parallelism 8 exceeds --max-parallelism 4",
                assertThrows(UsageException.class, () -> parse("--max-parallelism", "4", "--parallelism", "8")).getMessage());
    }

    @Test
    void theDeadLetterProducerKeepsAcksAllAndIdempotence() {
        assertEquals("Kafka client property acks must be all (the dead-letter producer writes with acks=all and"
                + " idempotence), got '1'", assertThrows(UsageException.class, () -> parse("--kafka.acks=1")).getMessage());
        assertEquals("Kafka client property enable.idempotence must be true (the dead-letter producer writes with"
                + " acks=all and idempotence), got 'false'",
                assertThrows(UsageException.class, () -> parse("--kafka.enable.idempotence=false")).getMessage());
        assertEquals("-1", parse("--kafka.acks=-1").kafka.getProperty("acks"));
    }
}
