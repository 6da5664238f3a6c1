package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.iceberg.IcebergFileSink;
import io.dumpstream.iceberg.IcebergSettings;
import io.dumpstream.options.UsageException;
import io.dumpstream.testing.Postgres;

import org.junit.jupiter.api.Test;


/**
 * The Iceberg options of {@code ingest}: off by default, defaults, one-line refusals naming the option
 * and value; a catalog that cannot be used stops the job before it starts, naming it, never the password.
 */
class IngestConfigIcebergTest {
    private static final String[] BASE = {"--bootstrap", "k:9093", "--out", "/tmp/l1", "--checkpoints", "/tmp/ck"};

    private static IngestConfig parse(String... extra) {
        return IngestArgs.parse(BASE, extra);
    }

    @Test
    void offByDefaultAndDefaultsWhenOn() {
        assertNull(parse().iceberg);
        IcebergSettings s = parse("--iceberg-catalog", "jdbc:postgresql://127.0.0.1:5432/lake").iceberg;
        assertEquals("jdbc:postgresql://127.0.0.1:5432/lake", s.catalogUri);
        assertEquals("file:/tmp/l1/_iceberg", s.warehouse);
        assertEquals("dumpstream", s.namespace);
        s = parse("--iceberg-catalog", "jdbc:postgresql://h/lake", "--iceberg-warehouse", "file:///w/",
                "--iceberg-namespace", "prod_l1").iceberg;
        assertEquals("file:/w", s.warehouse);
        assertEquals("prod_l1", s.namespace);
    }

    @Test
    void badSettingsAreRefusedWithTheOptionAndValue() {
        assertEquals("--iceberg-namespace needs --iceberg-catalog jdbc:postgresql://HOST:PORT/DB",
                assertThrows(UsageException.class, () -> parse("--iceberg-namespace", "x")).getMessage());
        assertEquals("--iceberg-catalog must be a PostgreSQL JDBC URL such as jdbc:postgresql://127.0.0.1:5432/dumpstream,"
                        + " got 'jdbc:mysql://h/db'",
                assertThrows(UsageException.class, () -> parse("--iceberg-catalog", "jdbc:mysql://h/db")).getMessage());
        UsageException e = assertThrows(UsageException.class,
                () -> parse("--iceberg-catalog", "jdbc:postgresql://h/db?user=u&password=hunter2"));
        assertEquals("--iceberg-catalog must not carry a password (give it in $DUMPSTREAM_ICEBERG_PASSWORD or a pgpass"
                + " file), got 'jdbc:postgresql://h/db?...'", e.getMessage());
        assertEquals("--iceberg-namespace must be a plain SQL identifier (letters, digits, _), got 'a.b'",
                assertThrows(UsageException.class, () -> parse("--iceberg-catalog", "jdbc:postgresql://h/db",
                        "--iceberg-namespace", "a.b")).getMessage());
    }

    /** A user the pgpass file has no password for stops the start with the driver's own words. */
    @Test
    void aCatalogThatRefusesTheLoginStopsTheStartNamingIt(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        Postgres pg = Postgres.get();
        String url = pg.bareUrl() + "?user=nobody_here";
        IcebergSettings s = new IcebergSettings(url, "file:" + dir, "x").validate();
        UsageException e = assertThrows(UsageException.class, () -> IcebergFileSink.prepare(s, dir.toString()));
        System.out.println(e.getMessage());
        assertTrue(e.getMessage().startsWith("--iceberg-catalog " + pg.bareUrl() + "?...: cannot open the catalog"),
                e.getMessage());
        assertTrue(e.getMessage().endsWith("The server requested SCRAM-based authentication, but no password was"
                + " provided."), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), "one line");
    }
}
