package io.dumpstream.job;

import io.dumpstream.assemble.DumpAssembly;
import io.dumpstream.iceberg.IcebergSettings;
import io.dumpstream.options.Cli;
import io.dumpstream.options.KafkaOptions;
import io.dumpstream.options.UsageException;
import io.dumpstream.publish.PublisherConfig;

import java.io.Serializable;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The ingestion job's options, parsed once from the command line; the same arguments work for the
 * local {@code ingest} command and for {@code flink run} / the REST API on a cluster.
 */
public final class IngestConfig implements Serializable {
    private static final long serialVersionUID = 1L;

    @Option(names = "--bootstrap", paramLabel = "HOST:PORT", required = true, description = "Kafka bootstrap servers")
    public String bootstrap;
    @Option(names = "--topic", paramLabel = "T", description = "topic of manifests and chunks (default ${DEFAULT-VALUE})")
    public String topic = PublisherConfig.DEFAULT_TOPIC;
    @Option(names = "--group", paramLabel = "G", description = {"consumer group (default ${DEFAULT-VALUE}); starts from its"
        + " committed offsets, else from the earliest"})
    public String group = "dumpstream-ingest";
    @Option(names = "--out", paramLabel = "URI", required = true,
            description = "output root: a local path or file://, s3a://, hdfs://")
    public String out;
    @Option(names = "--checkpoints", paramLabel = "URI", required = true,
            description = "checkpoint directory; checkpoints are retained")
    public String checkpoints;
    @Option(names = "--checkpoint-interval", paramLabel = "D", description = "e.g. 10s, 1m (default ${DEFAULT-VALUE});"
            + " files are committed on each checkpoint")
    public Duration checkpointInterval = Duration.ofSeconds(10);
    @Option(names = "--parallelism", paramLabel = "N", description = "default: the cluster's default; local: the number"
            + " of cores")
    public int parallelism = -1;
    @Option(names = "--max-parallelism", paramLabel = "N", description = {"key groups of the keyed state (default"
        + " ${DEFAULT-VALUE}): the highest parallelism a restart from this job's checkpoints can scale to"})
    public int maxParallelism = 128;
    @Option(names = "--assembly-timeout", paramLabel = "D", description = "a dump still incomplete after this is"
            + " INCOMPLETE (default ${DEFAULT-VALUE})")
    public Duration assemblyTimeout = Duration.ofMinutes(10);
    @Option(names = "--dedup-retention", paramLabel = "D", description = "finished dump ids are remembered this long"
            + " (default ${DEFAULT-VALUE})")
    public Duration dedupRetention = Duration.ofHours(24);
    @Option(names = "--dlq-topic", paramLabel = "T", description = "dead-letter topic (default <topic>.dlq)")
    public String dlqTopic;
    @Option(names = "--max-record-bytes", paramLabel = "N", description = "largest accepted payload (default"
            + " ${DEFAULT-VALUE}, at most an eighth of the TaskManager heap)")
    public long maxRecordBytes = DumpAssembly.DEFAULT_MAX_RECORD_BYTES;
    @Option(names = "--reject-payload-cap", paramLabel = "N", description = "payload bytes kept with a reject (default"
            + " ${DEFAULT-VALUE})")
    public int rejectPayloadCap = DumpAssembly.DEFAULT_REJECT_PAYLOAD_CAP;
    @Option(names = "--row-group-bytes", paramLabel = "N", description = "Parquet row group size (default"
            + " ${DEFAULT-VALUE}): bounds the buffer of one open file")
    public long rowGroupBytes = 4L << 20;
    @Option(names = "--zstd-level", paramLabel = "N", description = {"ZSTD level of the Parquet pages, 1..19 (default"
        + " ${DEFAULT-VALUE}: tensor payloads compress to the same size as at 3 for about a fifth less CPU; raise it for"
        + " compressible data such as masks or integer ids)"})
    public int zstdLevel = io.dumpstream.table.ParquetWriters.Settings.DEFAULT_ZSTD_LEVEL;
    /** 0: an eighth of the TaskManager heap (at least 32 MiB), decided where the sink runs. */
    @Option(names = "--sink-buffer-bytes", paramLabel = "N", description = {"memory of the open files of one sink"
        + " subtask (default ${DEFAULT-VALUE}; 0: an eighth of the TaskManager heap, at least 32 MiB; about 0.25 MiB per"
        + " open file): past it, files roll (close and flush) before the checkpoint"})
    public long sinkBufferBytes = 128L << 20;
    public static final long DEFAULT_COMPACT_BYTES = 128L << 20;
    /**
     * Compaction of the snapshot parts: a partition's parts are merged at least every this many
     * checkpoints (0: no compaction, the default: merged parts wait uncommitted, so rows land later).
     * The checkpoint trigger is required so that a small partition never waits on the byte threshold.
     */
    @Option(names = "--compact-checkpoints", paramLabel = "N", description = {"merge each snapshot partition's parts into"
        + " one file at least every N checkpoints (default ${DEFAULT-VALUE}: no compaction); parts wait hidden until"
        + " merged, so snapshot rows land up to N+1 checkpoints after their dumps row (README)"})
    public int compactCheckpoints = 0;
    /** ... and as soon as a partition's waiting parts reach this many bytes. */
    @Option(names = "--compact-bytes", paramLabel = "N", description = "... and as soon as a partition's waiting parts"
            + " reach N bytes (default ${DEFAULT-VALUE}; needs --compact-checkpoints)")
    public long compactBytes = DEFAULT_COMPACT_BYTES;
    @Option(names = "--state-backend", paramLabel = "hashmap|rocksdb", description = "default ${DEFAULT-VALUE}")
    public String stateBackend = "hashmap";
    @Option(names = "--restart-attempts", paramLabel = "N", description = "restarts before the job fails (default:"
            + " unbounded, exponential delay)")
    public int restartAttempts = -1;
    public boolean resume = true;
    public Properties kafka = new Properties();
    /** {@code -D key=value}: Flink configuration settings of the job. */
    @Option(names = "-D", paramLabel = Cli.FLINK_CONF_LABEL, description = Cli.FLINK_CONF_HELP)
    public Map<String, String> flinkConf = new LinkedHashMap<>();
    @Mixin
    private transient KafkaOptions kafkaOptions = new KafkaOptions();

    // Iceberg tables (README, "Iceberg tables"): read by parse into iceberg
    @Option(names = "--iceberg-catalog", paramLabel = "URL", description = {"also commit each checkpoint's files into"
            + " Iceberg tables snapshots, dumps and rejects of this JDBC catalog (jdbc:postgresql://HOST:PORT/DB; user and",
            "password from $" + IcebergSettings.USER_ENV + " and $" + IcebergSettings.PASSWORD_ENV + "; default: off)"})
    private transient String icebergCatalog;
    @Option(names = "--iceberg-warehouse", paramLabel = "URI", description = "where the tables' metadata goes (default"
            + " <out>/" + IcebergSettings.DEFAULT_WAREHOUSE_DIR + ")")
    private transient String icebergWarehouse;
    @Option(names = "--iceberg-namespace", paramLabel = "NS", description = "namespace of the three tables (default "
            + IcebergSettings.DEFAULT_NAMESPACE + ")")
    private transient String icebergNamespace;
    /** The Iceberg tables to commit into, or null: off (the default). */
    public IcebergSettings iceberg;

    public IngestConfig() {
    }

    @Option(names = "--no-resume", description = "local ingest only: do not resume from the latest retained checkpoint")
    private void noResume(boolean noResume) {
        resume = !noResume;
    }

    public static IngestConfig parse(String[] argv) {
        return parse(argv, System.getenv());
    }

    /**
     * Parses {@code argv} ({@code mixins}: option groups of the command line around the job, such as
     * {@code --verbose}), checking that the {@code ${env:NAME}} references of Kafka client properties name variables
     * of {@code env}.
     */
    public static IngestConfig parse(String[] argv, Map<String, String> env, Object... mixins) {
        IngestConfig c = new IngestConfig();
        boolean compactBytesGiven = Cli.parseResult(c, argv, mixins).hasMatchedOption("--compact-bytes");
        if (compactBytesGiven && c.compactCheckpoints == 0) {
            throw new UsageException("--compact-bytes " + c.compactBytes + " needs --compact-checkpoints N (N >= 1):"
                    + " compaction is on only with a checkpoint bound, so that rows of a small partition never wait"
                    + " for the byte threshold");
        }
        c.stateBackend = c.stateBackend.toLowerCase(Locale.ROOT);
        c.kafka = c.kafkaOptions.properties(env);
        c.iceberg = c.iceberg();
        return c.validate();
    }

    /** The Iceberg options, or null when --iceberg-catalog is not given (the others then refused). */
    private IcebergSettings iceberg() {
        if (icebergCatalog == null) {
            if (icebergWarehouse != null) {
                throw new UsageException("--iceberg-warehouse needs --iceberg-catalog jdbc:postgresql://HOST:PORT/DB");
            }
            if (icebergNamespace != null) {
                throw new UsageException("--iceberg-namespace needs --iceberg-catalog jdbc:postgresql://HOST:PORT/DB");
            }
            return null;
        }
        String warehouse = icebergWarehouse == null
                ? io.dumpstream.iceberg.IcebergTables.location(out) + "/" + IcebergSettings.DEFAULT_WAREHOUSE_DIR
                : io.dumpstream.iceberg.IcebergTables.location(icebergWarehouse);
        return new IcebergSettings(icebergCatalog, warehouse,
                icebergNamespace == null ? IcebergSettings.DEFAULT_NAMESPACE : icebergNamespace).validate();
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
        if (maxParallelism < 1 || maxParallelism > 32768) {
            throw new UsageException("--max-parallelism must be in [1, 32768], got " + maxParallelism);
        }
        if (parallelism > maxParallelism) {
            throw new UsageException("--parallelism " + parallelism + " exceeds --max-parallelism " + maxParallelism);
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
        // the dead-letter producer writes with acks=all and idempotence (transactions need both)
        requireKafka("acks", "all", "-1");
        requireKafka("enable.idempotence", "true");
        return this;
    }

    private void requireKafka(String name, String... allowed) {
        String v = kafka.getProperty(name);
        if (v != null && java.util.Arrays.stream(allowed).noneMatch(a -> a.equalsIgnoreCase(v.trim()))) {
            throw new UsageException("Kafka client property " + name + " must be " + allowed[0] + " (the dead-letter"
                    + " producer writes with acks=all and idempotence), got '" + v + "'");
        }
    }

    public AssemblerSettings assembler() {
        return new AssemblerSettings(assemblyTimeout, dedupRetention, maxRecordBytes, rejectPayloadCap);
    }

}
