package io.dumpstream.job;

import io.dumpstream.assemble.DumpAssembly;
import io.dumpstream.iceberg.IcebergSettings;
import io.dumpstream.options.Args;
import io.dumpstream.options.UsageException;
import io.dumpstream.publish.PublisherConfig;

import java.io.Serializable;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

/**
 * The ingestion job's options, parsed once from the command line; the same arguments work for the
 * local {@code ingest} command and for {@code flink run} / the REST API on a cluster.
 */
public final class IngestConfig implements Serializable {
    private static final long serialVersionUID = 1L;

    public static final Set<String> OPTIONS = Set.of("bootstrap", "topic", "group", "out", "checkpoints",
            "checkpoint-interval", "parallelism", "assembly-timeout", "dedup-retention", "dlq-topic",
            "max-record-bytes", "reject-payload-cap", "row-group-bytes", "state-backend", "restart-attempts",
            "no-resume", "max-parallelism", "sink-buffer-bytes", "zstd-level", "compact-bytes", "compact-checkpoints",
            Args.KAFKA_CONFIG,
            "iceberg-catalog", "iceberg-warehouse", "iceberg-namespace");
    public static final Set<String> FLAGS = Set.of("no-resume");

    public static final String USAGE = String.join("\n",
            "  --bootstrap HOST:PORT        Kafka bootstrap servers (required)",
            "  --topic T                    topic of manifests and chunks (default " + PublisherConfig.DEFAULT_TOPIC + ")",
            "  --group G                    consumer group (default dumpstream-ingest); starts from its committed",
            "                               offsets, else from the earliest",
            "  --out URI                    output root: a local path or file://, s3a://, hdfs:// (required)",
            "  --checkpoints URI            checkpoint directory (required); checkpoints are retained",
            "  --checkpoint-interval D      e.g. 10s, 1m (default 10s); files are committed on each checkpoint",
            "  --parallelism N              (default: the cluster's default; local: the number of cores)",
            "  --assembly-timeout D         a dump still incomplete after this is INCOMPLETE (default 10m)",
            "  --dedup-retention D          finished dump ids are remembered this long (default 24h)",
            "  --dlq-topic T                dead-letter topic (default <topic>.dlq)",
            "  --max-record-bytes N         largest accepted payload (default " + DumpAssembly.DEFAULT_MAX_RECORD_BYTES
                    + ", at most an eighth of the TaskManager heap)",
            "  --reject-payload-cap N       payload bytes kept with a reject (default " + DumpAssembly.DEFAULT_REJECT_PAYLOAD_CAP + ")",
            "  --row-group-bytes N          Parquet row group size (default 4 MiB): bounds the buffer of one open file",
            "  --zstd-level N               ZSTD level of the Parquet pages, 1..19 (default 1: tensor payloads compress",
            "                               to the same size as at 3 for about a fifth less CPU; raise it for",
            "                               compressible data such as masks or integer ids)",
            "  --sink-buffer-bytes N        memory of the open files of one sink subtask (default 128 MiB; 0: an eighth",
            "                               of the TaskManager heap, at least 32 MiB; about 0.25 MiB per open file): past it,",
            "                               files roll (close and flush) before the checkpoint",
            "  --compact-checkpoints N      merge each snapshot partition's parts into one file at least every N",
            "                               checkpoints (default 0: no compaction); parts wait hidden until merged,",
            "                               so snapshot rows land up to N+1 checkpoints after their dumps row (README)",
            "  --compact-bytes N            ... and as soon as a partition's waiting parts reach N bytes",
            "                               (default 128 MiB; needs --compact-checkpoints)",
            "  --state-backend hashmap|rocksdb  (default hashmap)",
            "  --restart-attempts N         restarts before the job fails (default: unbounded, exponential delay)",
            "  --no-resume                  local ingest only: do not resume from the latest retained checkpoint",
            "  --kafka-config FILE          Kafka client properties for the source, the DLQ producer and the",
            "                               DLQ reader (security.protocol, sasl.*, ssl.*, ...), key=value a line;",
            "                               ${env:NAME} in a value is the environment variable NAME",
            "  --kafka.<prop>=<value>       any Kafka client property, over the file's; values of keys naming a",
            "                               password, jaas, secret, token or key are never printed",
            // Iceberg tables (README, "Iceberg tables")
            "  --iceberg-catalog URL        also commit each checkpoint's files into Iceberg tables snapshots, dumps and",
            "                               rejects (same files, no copy) in this JDBC catalog: jdbc:postgresql://H:P/DB;",
            "                               user and password from $" + IcebergSettings.USER_ENV + " and $"
                    + IcebergSettings.PASSWORD_ENV + " (default: off)",
            "  --iceberg-warehouse URI      where the tables' metadata goes (default <out>/" + IcebergSettings.DEFAULT_WAREHOUSE_DIR + ")",
            "  --iceberg-namespace NS       namespace of the three tables (default " + IcebergSettings.DEFAULT_NAMESPACE + ")");

    public String bootstrap;
    public String topic = PublisherConfig.DEFAULT_TOPIC;
    public String group = "dumpstream-ingest";
    public String out;
    public String checkpoints;
    public Duration checkpointInterval = Duration.ofSeconds(10);
    public int parallelism = -1;
    public int maxParallelism = 128;
    public Duration assemblyTimeout = Duration.ofMinutes(10);
    public Duration dedupRetention = Duration.ofHours(24);
    public String dlqTopic;
    public long maxRecordBytes = DumpAssembly.DEFAULT_MAX_RECORD_BYTES;
    public int rejectPayloadCap = DumpAssembly.DEFAULT_REJECT_PAYLOAD_CAP;
    public long rowGroupBytes = 4L << 20;
    public int zstdLevel = io.dumpstream.table.ParquetWriters.Settings.DEFAULT_ZSTD_LEVEL;
    /** 0: an eighth of the TaskManager heap (at least 32 MiB), decided where the sink runs. */
    public long sinkBufferBytes = 128L << 20;
    public static final long DEFAULT_COMPACT_BYTES = 128L << 20;
    /**
     * Compaction of the snapshot parts: a partition's parts are merged at least every this many
     * checkpoints (0: no compaction, the default: merged parts wait uncommitted, so rows land later).
     * The checkpoint trigger is required so that a small partition never waits on the byte threshold.
     */
    public int compactCheckpoints = 0;
    /** ... and as soon as a partition's waiting parts reach this many bytes. */
    public long compactBytes = DEFAULT_COMPACT_BYTES;
    public String stateBackend = "hashmap";
    public int restartAttempts = -1;
    public boolean resume = true;
    public Properties kafka = new Properties();
    /** The Iceberg tables to commit into, or null: off (the default). */
    public IcebergSettings iceberg;

    public IngestConfig() {
    }

    public static IngestConfig parse(String[] argv) {
        return parse(argv, System.getenv());
    }

    /** Parses {@code argv}, expanding {@code ${env:NAME}} in Kafka client properties from {@code env}. */
    public static IngestConfig parse(String[] argv, Map<String, String> env) {
        Args a = Args.parse(argv, FLAGS);
        a.allowOnly(OPTIONS);
        IngestConfig c = new IngestConfig();
        c.bootstrap = a.require("bootstrap");
        c.topic = a.get("topic", c.topic);
        c.group = a.get("group", c.group);
        c.out = a.require("out");
        c.checkpoints = a.require("checkpoints");
        c.checkpointInterval = duration(a, "checkpoint-interval", c.checkpointInterval);
        c.parallelism = a.getInt("parallelism", c.parallelism);
        c.maxParallelism = a.getInt("max-parallelism", c.maxParallelism);
        c.assemblyTimeout = duration(a, "assembly-timeout", c.assemblyTimeout);
        c.dedupRetention = duration(a, "dedup-retention", c.dedupRetention);
        c.dlqTopic = a.get("dlq-topic", c.topic + ".dlq");
        c.maxRecordBytes = a.getLong("max-record-bytes", c.maxRecordBytes);
        c.rejectPayloadCap = a.getInt("reject-payload-cap", c.rejectPayloadCap);
        c.rowGroupBytes = a.getLong("row-group-bytes", c.rowGroupBytes);
        c.sinkBufferBytes = a.getLong("sink-buffer-bytes", c.sinkBufferBytes);
        c.zstdLevel = a.getInt("zstd-level", c.zstdLevel);
        c.compactBytes = a.getLong("compact-bytes", c.compactBytes);
        c.compactCheckpoints = a.getInt("compact-checkpoints", c.compactCheckpoints);
        if (a.get("compact-bytes", null) != null && c.compactCheckpoints == 0) {
            throw new UsageException("--compact-bytes " + c.compactBytes + " needs --compact-checkpoints N (N >= 1):"
                    + " compaction is on only with a checkpoint bound, so that rows of a small partition never wait"
                    + " for the byte threshold");
        }
        c.stateBackend = a.get("state-backend", c.stateBackend).toLowerCase(Locale.ROOT);
        c.restartAttempts = a.getInt("restart-attempts", c.restartAttempts);
        c.resume = !a.flag("no-resume");
        c.kafka = a.kafkaProperties(env);
        c.iceberg = iceberg(a, c.out);
        return c.validate();
    }

    public IngestConfig validate() {
        if (bootstrap == null || bootstrap.isBlank()) {
            throw new UsageException("--bootstrap must name HOST:PORT, got '" + bootstrap + "'");
        }
        if (checkpointInterval.toMillis() < 100) {
            throw new UsageException("--checkpoint-interval must be at least 100ms, got " + checkpointInterval);
        }
        if (parallelism == 0 || parallelism < -1) {
            throw new UsageException("--parallelism must be >= 1, got " + parallelism);
        }
        if (assemblyTimeout.toMillis() < 1) {
            throw new UsageException("--assembly-timeout must be positive, got " + assemblyTimeout);
        }
        if (maxRecordBytes < 1) {
            throw new UsageException("--max-record-bytes must be >= 1, got " + maxRecordBytes);
        }
        if (rejectPayloadCap < 0) {
            throw new UsageException("--reject-payload-cap must be >= 0, got " + rejectPayloadCap);
        }
        if (rowGroupBytes < (64 << 10)) {
            throw new UsageException("--row-group-bytes must be at least 65536, got " + rowGroupBytes);
        }
        if (zstdLevel < 1 || zstdLevel > 19) {
            throw new UsageException("--zstd-level must be in [1, 19], got " + zstdLevel);
        }
        if (sinkBufferBytes != 0 && sinkBufferBytes < (1 << 20)) {
            throw new UsageException("--sink-buffer-bytes must be at least 1048576, got " + sinkBufferBytes);
        }
        if (compactBytes < (1 << 20)) {
            throw new UsageException("--compact-bytes must be at least 1048576, got " + compactBytes);
        }
        if (compactCheckpoints < 0) {
            throw new UsageException("--compact-checkpoints must be >= 0, got " + compactCheckpoints);
        }
        if (!stateBackend.equals("hashmap") && !stateBackend.equals("rocksdb")) {
            throw new UsageException("--state-backend must be hashmap or rocksdb, got '" + stateBackend + "'");
        }
        if (dlqTopic == null) {
            dlqTopic = topic + ".dlq";
        }
        if (dlqTopic.equals(topic)) {
            throw new UsageException("--dlq-topic must differ from --topic, both are '" + topic + "'");
        }
        return this;
    }

    /** The Iceberg options, or null when --iceberg-catalog is not given (the others then refused). */
    static IcebergSettings iceberg(Args a, String out) {
        String catalog = a.get("iceberg-catalog", null);
        if (catalog == null) {
            for (String o : new String[] {"iceberg-warehouse", "iceberg-namespace"}) {
                if (a.has(o)) {
                    throw new UsageException("--" + o + " needs --iceberg-catalog jdbc:postgresql://HOST:PORT/DB");
                }
            }
            return null;
        }
        String warehouse = a.get("iceberg-warehouse", null);
        if (warehouse == null) {
            warehouse = io.dumpstream.iceberg.IcebergTables.location(out) + "/" + IcebergSettings.DEFAULT_WAREHOUSE_DIR;
        } else {
            warehouse = io.dumpstream.iceberg.IcebergTables.location(warehouse);
        }
        return new IcebergSettings(catalog, warehouse, a.get("iceberg-namespace", IcebergSettings.DEFAULT_NAMESPACE))
                .validate();
    }

    public AssemblerSettings assembler() {
        return new AssemblerSettings(assemblyTimeout, dedupRetention, maxRecordBytes, rejectPayloadCap);
    }

    /** Parses 10s, 500ms, 5m, 24h, 2d or an ISO-8601 duration (PT10S). */
    public static Duration duration(Args a, String name, Duration def) {
        String v = a.get(name, null);
        if (v == null) {
            return def;
        }
        String s = v.trim().toLowerCase(Locale.ROOT);
        try {
            if (s.startsWith("p")) {
                return Duration.parse(s.toUpperCase(Locale.ROOT));
            }
            if (s.endsWith("ms")) {
                return Duration.ofMillis(Long.parseLong(s.substring(0, s.length() - 2)));
            }
            long n = Long.parseLong(s.substring(0, s.length() - 1));
            switch (s.charAt(s.length() - 1)) {
                case 's': return Duration.ofSeconds(n);
                case 'm': return Duration.ofMinutes(n);
                case 'h': return Duration.ofHours(n);
                case 'd': return Duration.ofDays(n);
                default: break;
            }
        } catch (NumberFormatException | DateTimeParseException | StringIndexOutOfBoundsException e) {
            // reported below
        }
        throw new UsageException("option --" + name + " must be a duration such as 10s, 5m or 24h, got '" + v + "'");
    }
}
