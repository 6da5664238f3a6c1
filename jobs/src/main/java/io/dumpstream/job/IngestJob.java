package io.dumpstream.job;

import io.dumpstream.iceberg.IcebergFileSink;
import io.dumpstream.options.KafkaClientProperties;
import io.dumpstream.manifest.AvroTrust;
import io.dumpstream.schema.DumpOutcome;
import io.dumpstream.schema.RejectedRecord;
import io.dumpstream.schema.TensorSnapshot;
import io.dumpstream.table.HivePartition;
import io.dumpstream.table.ParquetWriters;

import org.apache.avro.specific.SpecificRecord;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeHint;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.file.sink.FileSink;
import org.apache.flink.connector.file.sink.compactor.FileCompactStrategy;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.filesystem.OutputFileConfig;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Properties;

/**
 * The ingestion job: Kafka (manifests and chunks) to the three Parquet tables, exactly once.
 *
 * <pre>
 * KafkaSource -> keyBy(dump id, placed by rank) -> DumpAssembler --accepted records--> SnapshotDecoder -> FileSink snapshots
 *                                      |--rejects-----------------------------------------------------------> FileSink rejects
 *                                      |--outcomes----------------------------------------------------------> FileSink dumps
 *                                      '--dead letters--> DlqResolver -> KafkaSink (transactional) <topic>.dlq
 * </pre>
 *
 * <p>Run on a cluster with {@code flink run dumpstream-cluster.jar ARGS} (this class is the main
 * class) or locally with {@code java -jar dumpstream.jar ingest ARGS}; the arguments are the same.
 */
public final class IngestJob {
    public static final String NAME = "dumpstream-ingest";
    private static final Logger LOG = LoggerFactory.getLogger(IngestJob.class);

    private IngestJob() {
    }

    public static void main(String[] args) throws Exception {
        IngestConfig c = IngestConfig.parse(args);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(configuration(c));
        // on the cluster's file systems, with its settings: a wrong endpoint, bucket or credentials refuse the
        // job with one line instead of a job that fails over and over
        Configuration settings = Configuration.fromMap(env.getConfiguration().toMap());
        io.dumpstream.storage.StorageCheck.writable("--out", c.out, settings);
        io.dumpstream.storage.StorageCheck.writable("--checkpoints", c.checkpoints, settings);
        build(env, c);
        env.execute(NAME);
    }

    /** Checkpointing, state backend, restarts and the rest of the job-level settings. */
    public static Configuration configuration(IngestConfig c) {
        Configuration conf = new Configuration();
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, c.checkpointInterval);
        conf.set(CheckpointingOptions.CHECKPOINTING_CONSISTENCY_MODE, CheckpointingMode.EXACTLY_ONCE);
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, uri(c.checkpoints));
        conf.set(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        conf.set(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS, 3);
        conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
        conf.set(StateBackendOptions.STATE_BACKEND, c.stateBackend);
        if (c.restartAttempts >= 0) {
            conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
            conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, c.restartAttempts);
            conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofSeconds(1));
        } else {
            conf.set(RestartStrategyOptions.RESTART_STRATEGY, "exponential-delay");
        }
        conf.set(PipelineOptions.OBJECT_REUSE, true);
        // upgrade safety: a savepoint must restore in the next version of the job. Kryo's bytes depend on
        // class registration and field layout, so a type that would fall back to it fails the job when it
        // is built (or when its state is first opened) instead; and an operator without a uid of its own
        // would get one generated from the graph's shape, which the next version's graph changes
        conf.set(PipelineOptions.GENERIC_TYPES, false);
        conf.set(PipelineOptions.AUTO_GENERATE_UIDS, false);
        conf.set(PipelineOptions.NAME, NAME);
        if (c.parallelism > 0) {
            conf.set(org.apache.flink.configuration.CoreOptions.DEFAULT_PARALLELISM, c.parallelism);
        }
        conf.set(PipelineOptions.MAX_PARALLELISM, c.maxParallelism);
        return conf;
    }

    /** A local path becomes a file: URI; URIs (file://, s3a://, hdfs://) pass unchanged. */
    static String uri(String location) {
        if (location.matches("^[a-zA-Z][a-zA-Z0-9+.-]*://.*")) {
            return location;
        }
        return java.nio.file.Path.of(location).toAbsolutePath().normalize().toUri().toString();
    }

    /** Adds the job's operators to {@code env}. */
    public static void build(StreamExecutionEnvironment env, IngestConfig c) {
        build(env, c, s -> s);
    }

    /**
     * Adds the job's operators to {@code env}, with {@code afterSource} applied to the stream of
     * messages before the assembler (failure tests insert an operator there; the job itself uses
     * the identity).
     */
    static void build(StreamExecutionEnvironment env, IngestConfig c,
                      java.util.function.UnaryOperator<DataStream<L1Message>> afterSource) {
        AvroTrust.ensure();
        // the client properties go to the Kafka source and sink builders only, never into the Flink
        // Configuration, which Flink logs and shows in its web UI
        LOG.info("job reads {} at {} with Kafka client properties {}", c.topic, c.bootstrap,
                KafkaClientProperties.masked(c.kafka));
        Properties consumer = new Properties();
        consumer.putAll(c.kafka);
        // the source reader queues up to three polls. Fetch sizes count compressed bytes, and a chunk
        // of zeros compresses a thousandfold, so a fetch of 8 MiB could decompress into gigabytes:
        // the bound that holds is the number of records a poll returns (at most the broker's message
        // size each), so a reader holds at most about 3 x 4 records
        consumer.putIfAbsent("max.partition.fetch.bytes", Integer.toString(4 << 20));
        consumer.putIfAbsent("fetch.max.bytes", Integer.toString(8 << 20));
        consumer.putIfAbsent("max.poll.records", "4");
        KafkaSource<L1Message> source = KafkaSource.<L1Message>builder()
                .setBootstrapServers(c.bootstrap)
                .setTopics(c.topic)
                .setGroupId(c.group)
                .setStartingOffsets(OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST))
                .setDeserializer(new L1MessageDeserializer())
                .setProperties(consumer)
                .setProperty("commit.offsets.on.checkpoint", "true")
                .setProperty("client.id.prefix", c.group)
                .build();

        DataStream<L1Message> messages = env
                .fromSource(source, WatermarkStrategy.noWatermarks(), "Kafka " + c.topic)
                .uid("kafka-source");
        messages = afterSource.apply(messages);

        // every dump of a rank goes to one subtask (DumpKey), so decoder and sinks chain to the assembler:
        // payloads are not shuffled again, and each partition (run/rank/stage) still has one writer
        int keyGroups = c.maxParallelism;
        SingleOutputStreamOperator<RecordWork> accepted = messages
                .keyBy(m -> DumpKey.of(m.key, keyGroups), TypeInformation.of(DumpKey.class))
                .process(new DumpAssembler(c.assembler()))
                .uid("assembler")
                .name("assemble and validate dumps");

        SingleOutputStreamOperator<Routed<TensorSnapshot>> snapshots = accepted
                .map(new SnapshotDecoder())
                .returns(new TypeHint<Routed<TensorSnapshot>>() { })
                .uid("decoder")
                .name("decode records and statistics");

        // a sink subtask may hold hundreds of open files (one per partition touched since the last
        // checkpoint): a part defers its rows (payloads off the heap) and builds no column writers until
        // it holds PartWriter.DEFER_BYTES; 64 KiB pages, no dictionaries and one codec factory per subtask
        // keep a part that has them near 0.1 MiB, the rows it buffers being bounded by the row group and
        // by the sink's budget (SinkBudget)
        ParquetWriters.Settings parquet = ParquetWriters.Settings.defaults().withRowGroupBytes(c.rowGroupBytes)
                .withPageBytes(64 << 10).withDictionary(false).withZstdLevel(c.zstdLevel);
        String out = uri(c.out);
        // with --iceberg-catalog, each sink's committed files are then committed into the table's Iceberg twin
        IcebergFileSink.prepare(c.iceberg, out);
        snapshots.sinkTo(IcebergFileSink.wrap(fileSink(out, TensorSnapshot.class, parquet, c.sinkBufferBytes,
                        compaction(c), "sink-snapshots"), c.iceberg, HivePartition.SNAPSHOTS, out))
                .uid("sink-snapshots").name("write snapshots");
        accepted.getSideOutput(DumpAssembler.REJECTS)
                .sinkTo(IcebergFileSink.wrap(fileSink(out, RejectedRecord.class, parquet, c.sinkBufferBytes),
                        c.iceberg, HivePartition.REJECTS, out))
                .uid("sink-rejects").name("write rejects");
        accepted.getSideOutput(DumpAssembler.OUTCOMES)
                .sinkTo(IcebergFileSink.wrap(fileSink(out, DumpOutcome.class, parquet, c.sinkBufferBytes),
                        c.iceberg, HivePartition.DUMPS, out))
                .uid("sink-dumps").name("write dumps");

        Properties producer = new Properties();
        producer.putAll(c.kafka);
        producer.putIfAbsent("transaction.timeout.ms", "600000");
        producer.putIfAbsent("max.request.size", Integer.toString(20 * 1024 * 1024));
        producer.putIfAbsent("compression.type", "lz4");
        // a dead letter is acknowledged only once min.insync.replicas brokers have it; a retry never duplicates it
        producer.put("acks", "all");
        producer.put("enable.idempotence", "true");
        KafkaSink<L1Message> dlq = KafkaSink.<L1Message>builder()
                .setBootstrapServers(c.bootstrap)
                .setRecordSerializer(new DlqSerializer(c.dlqTopic))
                .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
                .setTransactionalIdPrefix("dumpstream-dlq-" + c.group)
                .setKafkaProducerConfig(producer)
                .build();
        accepted.getSideOutput(DumpAssembler.DLQ)
                .flatMap(new DlqResolver(c.bootstrap, c.kafka))
                .uid("dlq-resolve").name("read back dead-letter originals")
                .sinkTo(dlq)
                .uid("sink-dlq").name("dead-letter topic " + c.dlqTopic);
    }

    /**
     * A sink rooted at the output root: the buckets are root-relative paths that start with the
     * table ({@code snapshots/run=.../rank=.../stage=...}, see {@link HivePartition}).
     */
    public static <T extends SpecificRecord> FileSink<Routed<T>> fileSink(String root, Class<T> type,
                                                                  ParquetWriters.Settings parquet, long bufferBytes) {
        SinkBudget budget = new SinkBudget(bufferBytes);
        return IngestJob.<T>builder(root, new ParquetBulkWriterFactory<>(type, parquet, budget), budget).build();
    }

    /**
     * When the snapshot parts of a partition are merged ({@link ParquetAppendCompactor}), or null: no
     * compaction.
     */
    static FileCompactStrategy compaction(IngestConfig c) {
        if (c.compactCheckpoints == 0) {
            return null;
        }
        return FileCompactStrategy.Builder.newBuilder()
                .setNumCompactThreads(1)
                .setSizeThreshold(c.compactBytes)
                .enableCompactionOnCheckpoint(c.compactCheckpoints)
                .build();
    }

    /**
     * As {@link #fileSink(String, Class, ParquetWriters.Settings, long)}, compacting by {@code compact}
     * unless null: then a {@link CompactingFileSink} (Flink's compaction, with committables that keep
     * '%' in partition paths) whose compaction operators' uids start with {@code uid}.
     */
    public static <T extends SpecificRecord> Sink<Routed<T>> fileSink(String root, Class<T> type,
                                                              ParquetWriters.Settings parquet, long bufferBytes,
                                                              FileCompactStrategy compact, String uid) {
        if (compact == null) {
            return fileSink(root, type, parquet, bufferBytes);
        }
        SinkBudget budget = new SinkBudget(bufferBytes);
        ParquetBulkWriterFactory<T> writers = new ParquetBulkWriterFactory<>(type, parquet, budget);
        ParquetAppendCompactor compactor = new ParquetAppendCompactor();
        FileSink<Routed<T>> sink = builder(root, writers, budget).enableCompact(compact, compactor).build();
        return new CompactingFileSink<>(sink, new Path(root), writers, compact, compactor, uid);
    }

    private static <T extends SpecificRecord> FileSink.DefaultBulkFormatBuilder<Routed<T>> builder(
            String root, ParquetBulkWriterFactory<T> writers, SinkBudget budget) {
        return FileSink
                .forBulkFormat(new Path(root), writers)
                .withBucketAssigner(new HiveBuckets<T>())
                .withRollingPolicy(new BudgetRollingPolicy<T>(budget))
                .withBucketCheckInterval(BudgetRollingPolicy.IDLE_MILLIS)
                .withOutputFileConfig(OutputFileConfig.builder().withPartPrefix("part").withPartSuffix(".parquet")
                        .build());
    }
}
