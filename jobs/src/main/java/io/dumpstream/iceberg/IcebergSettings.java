package io.dumpstream.iceberg;

import io.dumpstream.options.UsageException;

import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;

/**
 * Where the Iceberg tables live: a JDBC catalog (PostgreSQL), the warehouse its metadata goes to, the
 * namespace of the three tables. The catalog's user and password come from the environment of the
 * process that opens the catalog ({@value #USER_ENV}, {@value #PASSWORD_ENV}), never from the command
 * line, and are never printed; nothing secret is held here, so this object may be shipped and logged.
 * Without them the PostgreSQL driver's own ways apply: {@code ?user=NAME} in the URL and a pgpass file
 * ({@code $PGPASSFILE}, {@code ~/.pgpass} or the system property {@code org.postgresql.pgpassfile}).
 */
public final class IcebergSettings implements Serializable {
    private static final long serialVersionUID = 1L;

    public static final String USER_ENV = "DUMPSTREAM_ICEBERG_USER";
    public static final String PASSWORD_ENV = "DUMPSTREAM_ICEBERG_PASSWORD";
    /** The catalog's name in Spark and Trino configurations of the README. */
    public static final String CATALOG_NAME = "dumpstream";
    public static final String DEFAULT_NAMESPACE = "dumpstream";
    /** Where the metadata goes when no warehouse is given: under the output root, hidden from Hive-layout readers. */
    public static final String DEFAULT_WAREHOUSE_DIR = "_iceberg";

    /** {@code jdbc:postgresql://HOST:PORT/DB}, without credentials. */
    public final String catalogUri;
    /** Root of the tables' metadata (file:/..., a local path, later s3://...). */
    public final String warehouse;
    public final String namespace;

    public IcebergSettings(String catalogUri, String warehouse, String namespace) {
        this.catalogUri = catalogUri;
        this.warehouse = warehouse;
        this.namespace = namespace;
    }

    /**
     * Checks the settings; one line names the option and its value (the URI without its query, which
     * could hold a password).
     */
    public IcebergSettings validate() {
        if (catalogUri == null || !catalogUri.startsWith("jdbc:postgresql://")) {
            throw new UsageException("--iceberg-catalog must be a PostgreSQL JDBC URL such as"
                    + " jdbc:postgresql://127.0.0.1:5432/dumpstream, got '" + masked(catalogUri) + "'");
        }
        if (catalogUri.toLowerCase(java.util.Locale.ROOT).contains("password")) {
            throw new UsageException("--iceberg-catalog must not carry a password (give it in $" + PASSWORD_ENV
                    + " or a pgpass file), got '" + masked(catalogUri) + "'");
        }
        if (namespace == null || !namespace.matches("[A-Za-z_][A-Za-z0-9_]{0,62}")) {
            throw new UsageException("--iceberg-namespace must be a plain SQL identifier (letters, digits, _), got '"
                    + namespace + "'");
        }
        if (warehouse == null || warehouse.isBlank()) {
            throw new UsageException("--iceberg-warehouse must name a directory or URI, got '" + warehouse + "'");
        }
        return this;
    }

    /** The URI up to its first '?' (a JDBC URL's parameters may hold a password). */
    public static String masked(String uri) {
        if (uri == null) {
            return null;
        }
        int q = uri.indexOf('?');
        return q < 0 ? uri : uri.substring(0, q) + "?...";
    }

    /** The catalog's properties, credentials from {@code env}. */
    Map<String, String> catalogProperties(Map<String, String> env) {
        Map<String, String> p = new HashMap<>();
        p.put("uri", catalogUri);
        p.put("warehouse", warehouse);
        p.put("io-impl", FlinkFileIO.class.getName());
        // the catalog's tables with view support (Trino and Spark read either form)
        p.put("jdbc.schema-version", "V1");
        String user = env.get(USER_ENV);
        String password = env.get(PASSWORD_ENV);
        if (user != null) {
            p.put("jdbc.user", user);
        }
        if (password != null) {
            p.put("jdbc.password", password);
        }
        return p;
    }

    @Override
    public String toString() {
        return "catalog " + masked(catalogUri) + ", warehouse " + warehouse + ", namespace " + namespace;
    }
}
