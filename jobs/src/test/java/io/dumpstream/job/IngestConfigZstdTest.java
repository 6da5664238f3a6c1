package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.dumpstream.options.UsageException;
import io.dumpstream.table.ParquetWriters;

import org.junit.jupiter.api.Test;


/** {@code --zstd-level}: 1 by default, 1..19, refused by name and value outside. */
class IngestConfigZstdTest {
    private static final String[] BASE = {"--bootstrap", "k:9093", "--out", "/tmp/l1", "--checkpoints", "/tmp/ck"};

    private static IngestConfig parse(String... extra) {
        return IngestArgs.parse(BASE, extra);
    }

    @Test
    void defaultIsOneAndAnyLevelUpTo19IsTaken() {
        assertEquals(1, parse().zstdLevel);
        assertEquals(ParquetWriters.Settings.DEFAULT_ZSTD_LEVEL, parse().zstdLevel);
        assertEquals(3, parse("--zstd-level", "3").zstdLevel);
        assertEquals(19, parse("--zstd-level", "19").zstdLevel);
    }

    @Test
    void outOfRangeIsRefusedWithTheOptionAndValue() {
        UsageException e = assertThrows(UsageException.class, () -> parse("--zstd-level", "0"));
        assertEquals("--zstd-level must be in [1, 19], got 0", e.getMessage());
        e = assertThrows(UsageException.class, () -> parse("--zstd-level", "22"));
        assertEquals("--zstd-level must be in [1, 19], got 22", e.getMessage());
    }
}
