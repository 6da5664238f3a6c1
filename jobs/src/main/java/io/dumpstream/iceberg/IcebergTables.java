package io.dumpstream.iceberg;

import io.dumpstream.schema.DumpOutcome;
import io.dumpstream.schema.RejectedRecord;
import io.dumpstream.schema.TensorSnapshot;
import io.dumpstream.table.HivePartition;

import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.avro.AvroSchemaUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.mapping.MappingUtil;
import org.apache.iceberg.mapping.NameMapping;
import org.apache.iceberg.mapping.NameMappingParser;
import org.apache.iceberg.types.Types;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The three tables of CONTRACT §6 as Iceberg tables (format v2) over the files the ingest job writes in
 * the Hive layout: the same Parquet files, referenced where they lie, no copy. Each table's schema is
 * its Avro schema's columns plus the partition columns {@code run} (string), {@code rank} (int) and,
 * for snapshots, {@code stage} (string), identity-partitioned; the partition columns are in the
 * paths only, as in the Hive layout, and Iceberg readers take their values from the table's
 * metadata. The files carry no Iceberg field ids: the tables map columns by name
 * ({@code schema.name-mapping.default}).
 */
public final class IcebergTables {
    public static final List<String> TABLES = List.of(HivePartition.SNAPSHOTS, HivePartition.DUMPS,
            HivePartition.REJECTS);

    private IcebergTables() {
    }

    /** A JDBC catalog on the settings, credentials from {@code env}. */
    public static Catalog open(IcebergSettings s, Map<String, String> env) {
        JdbcCatalog catalog = new JdbcCatalog();
        catalog.setConf(new org.apache.hadoop.conf.Configuration());
        catalog.initialize(IcebergSettings.CATALOG_NAME, s.catalogProperties(env));
        return catalog;
    }

    /** Closes the catalog's connection pool. */
    public static void close(Catalog catalog) {
        if (catalog instanceof AutoCloseable c) {
            try {
                c.close();
            } catch (Exception e) {
                // closing a connection pool: nothing to do about it
            }
        }
    }

    public static TableIdentifier id(IcebergSettings s, String table) {
        return TableIdentifier.of(Namespace.of(s.namespace), table);
    }

    /** The Avro schema of a table's rows. */
    static org.apache.avro.Schema avro(String table) {
        switch (table) {
            case HivePartition.SNAPSHOTS: return TensorSnapshot.getClassSchema();
            case HivePartition.DUMPS: return DumpOutcome.getClassSchema();
            case HivePartition.REJECTS: return RejectedRecord.getClassSchema();
            default: throw new IllegalArgumentException("no table '" + table + "'");
        }
    }

    /** Partition columns of a table, in path order. */
    static List<String> partitionColumns(String table) {
        return table.equals(HivePartition.SNAPSHOTS)
                ? List.of(HivePartition.RUN, HivePartition.RANK, HivePartition.STAGE)
                : List.of(HivePartition.RUN, HivePartition.RANK);
    }

    /** The table's schema: the file's columns, then the partition columns (ids are assigned by the catalog). */
    static Schema schema(String table) {
        Schema files = AvroSchemaUtil.toIceberg(avro(table));
        List<Types.NestedField> columns = new ArrayList<>(files.columns());
        int id = files.highestFieldId();
        for (String p : partitionColumns(table)) {
            columns.add(Types.NestedField.optional(++id, p,
                    p.equals(HivePartition.RANK) ? Types.IntegerType.get() : Types.StringType.get()));
        }
        return new Schema(columns);
    }

    static PartitionSpec spec(String table, Schema schema) {
        PartitionSpec.Builder b = PartitionSpec.builderFor(schema);
        partitionColumns(table).forEach(b::identity);
        return b.build();
    }

    /**
     * Creates the namespace and the three tables if missing (each with {@code dataRoot/<table>} as its
     * data path) and brings an existing table's columns and name mapping up to the rows' schema (new
     * columns are added; none is ever dropped or renamed). Safe when several processes do it at once.
     */
    public static void ensure(Catalog catalog, IcebergSettings s, String dataRoot) {
        if (catalog instanceof SupportsNamespaces ns && !ns.namespaceExists(Namespace.of(s.namespace))) {
            try {
                ns.createNamespace(Namespace.of(s.namespace));
            } catch (AlreadyExistsException raced) {
                // another process created it
            }
        }
        for (String name : TABLES) {
            TableIdentifier id = id(s, name);
            Table t;
            if (!catalog.tableExists(id)) {
                Schema schema = schema(name);
                Map<String, String> props = new HashMap<>();
                props.put(TableProperties.FORMAT_VERSION, "2");
                props.put(TableProperties.DEFAULT_FILE_FORMAT, "parquet");
                props.put(TableProperties.PARQUET_COMPRESSION, "zstd");
                props.put(TableProperties.WRITE_DATA_LOCATION, dataRoot + "/" + name);
                // a commit per checkpoint: keep the metadata files of the last 100 commits, not all of them
                props.put(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, "true");
                props.put(TableProperties.METADATA_PREVIOUS_VERSIONS_MAX, "100");
                try {
                    catalog.buildTable(id, schema).withPartitionSpec(spec(name, schema)).withProperties(props)
                            .create();
                } catch (AlreadyExistsException raced) {
                    // another process created it
                }
            }
            t = catalog.loadTable(id);
            Schema wanted = schema(name);
            boolean missing = wanted.columns().stream().anyMatch(c -> t.schema().findField(c.name()) == null);
            if (missing) {
                t.updateSchema().unionByNameWith(wanted).commit();
                t.refresh();
            }
            String mapping = NameMappingParser.toJson(MappingUtil.create(t.schema()));
            if (!mapping.equals(t.properties().get(TableProperties.DEFAULT_NAME_MAPPING))) {
                t.updateProperties().set(TableProperties.DEFAULT_NAME_MAPPING, mapping).commit();
            }
        }
    }

    /** The table's name mapping (set by {@link #ensure}). */
    static NameMapping mapping(Table t) {
        String json = t.properties().get(TableProperties.DEFAULT_NAME_MAPPING);
        return json == null ? MappingUtil.create(t.schema()) : NameMappingParser.fromJson(json);
    }

    /**
     * The table's partition values of a bucket ({@code snapshots/run=a%2Fb/rank=0/stage=s}): each value
     * as Hive-aware readers see it (unescaped; null for {@value HivePartition#DEFAULT_PARTITION}).
     */
    static StructLike partition(String table, String bucket) {
        String[] parts = bucket.split("/");
        List<String> keys = partitionColumns(table);
        if (parts.length != keys.size() + 1 || !parts[0].equals(table)) {
            throw new IllegalArgumentException("bucket '" + bucket + "' is not a partition of table " + table);
        }
        Object[] values = new Object[keys.size()];
        for (int i = 0; i < keys.size(); i++) {
            String segment = parts[i + 1];
            String prefix = keys.get(i) + "=";
            if (!segment.startsWith(prefix)) {
                throw new IllegalArgumentException("bucket '" + bucket + "': segment " + (i + 1) + " is '" + segment
                        + "', expected " + prefix + "...");
            }
            String escaped = segment.substring(prefix.length());
            String value = HivePartition.DEFAULT_PARTITION.equals(escaped) ? null : HivePartition.unescape(escaped);
            if (value != null && keys.get(i).equals(HivePartition.RANK)) {
                try {
                    values[i] = Integer.valueOf(value);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("bucket '" + bucket + "': rank '" + value
                            + "' is not an int", e);
                }
            } else {
                values[i] = value;
            }
        }
        return new Values(values);
    }

    /**
     * The location of a root given as a local path or URI, as Iceberg records file locations: the
     * scheme, then the path exactly as on disk (no percent-encoding: a Hive-escaped partition keeps its
     * '%XX', which a URI form would escape once more).
     */
    public static String location(String root) {
        String r = root;
        if (!r.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
            r = "file:" + java.nio.file.Path.of(r).toAbsolutePath().normalize();
        } else if (r.startsWith("file://") && !r.startsWith("file:///")) {
            throw new IllegalArgumentException("a file URI with a host is not a local path: " + root);
        } else if (r.startsWith("file:")) {
            // file:///a/b and file:/a/b are the same local path; decode a URI form once
            r = "file:" + java.nio.file.Path.of(java.net.URI.create(r)).toAbsolutePath().normalize();
        }
        while (r.endsWith("/") && !r.endsWith(":/")) {
            r = r.substring(0, r.length() - 1);
        }
        return r;
    }

    /** Partition values as a {@link StructLike} (the builder of a data file copies them). */
    private record Values(Object[] values) implements StructLike {
        @Override
        public int size() {
            return values.length;
        }

        @Override
        public <T> T get(int pos, Class<T> javaClass) {
            return javaClass.cast(values[pos]);
        }

        @Override
        public <T> void set(int pos, T value) {
            values[pos] = value;
        }
    }
}
