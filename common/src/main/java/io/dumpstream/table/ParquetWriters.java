package io.dumpstream.table;

import java.io.IOException;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.avro.AvroParquetWriter;
import org.apache.parquet.avro.AvroWriteSupport;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.compression.CompressionCodecFactory;
import org.apache.parquet.hadoop.CodecFactory;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.OutputFile;
import org.apache.parquet.io.PositionOutputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds the Parquet writers of every output table, from the offline {@link TableWriter} and,
 * through {@link #create(PositionOutputStream, Schema, GenericData, Settings)}, from a Flink bulk
 * writer.
 *
 * <p>Memory stays bounded with multi-MiB binary values: parquet-java checks the buffered size of a
 * row group only every {@code minRowCountForPageSizeCheck..maxRowCountForPageSizeCheck} rows
 * (defaults 100..10000, see {@code InternalParquetRecordWriter.checkBlockSizeReached} and
 * {@code ColumnWriteStoreBase.sizeCheck}), so with 4 MiB rows a 64 MiB row group could grow to
 * 400 MiB before the first check. We set the minimum to 1 and the maximum to
 * {@link Settings#maxRowsBetweenSizeChecks()} so a row-group and page flush check runs at least
 * every few rows. Binary columns also get no dictionary (a 4 MiB value would only fill the
 * dictionary and fall back) and no min/max statistics (which would hold copies of the values).
 */
public final class ParquetWriters {

    private static final Logger LOG = LoggerFactory.getLogger(ParquetWriters.class);

    /** Default row group size: 64 MiB. */
    public static final long DEFAULT_ROW_GROUP_BYTES = 64L << 20;
    /** Default page size: 1 MiB (parquet-java's default). */
    public static final int DEFAULT_PAGE_BYTES = 1 << 20;
    /** Default for {@link Settings#maxRowsBetweenSizeChecks()}. */
    public static final int DEFAULT_MAX_ROWS_BETWEEN_SIZE_CHECKS = 4;

    private static volatile CompressionCodecName defaultCodec;

    private ParquetWriters() {}

    /**
     * Writer settings; serializable so a Flink writer factory can carry them.
     *
     * @param codec compression, ZSTD or SNAPPY (never UNCOMPRESSED, CONTRACT §6)
     * @param rowGroupBytes target row group size
     * @param pageBytes target page size
     * @param maxRowsBetweenSizeChecks most rows written between two buffered-size checks
     * @param dictionary dictionary encoding of non-binary columns; off, an open writer holds about
     *                   0.2 MiB instead of 0.8 MiB (the dictionaries' hash tables), which matters
     *                   for a sink with hundreds of open partitions
     * @param zstdLevel ZSTD level when the codec is ZSTD, 1..19 (default 1: tensor payloads, the bulk of
     *                  every table, compress to the same size at 1 as at parquet-java's default 3, for
     *                  about a fifth less CPU; BENCHMARKS.md "ZSTD level")
     */
    public record Settings(CompressionCodecName codec, long rowGroupBytes, int pageBytes, int maxRowsBetweenSizeChecks,
                           boolean dictionary, int zstdLevel)
            implements Serializable {

        /** The default ZSTD level (see {@code zstdLevel}). */
        public static final int DEFAULT_ZSTD_LEVEL = 1;

        public Settings {
            Objects.requireNonNull(codec, "codec");
            if (codec == CompressionCodecName.UNCOMPRESSED) {
                throw new IllegalArgumentException("codec must compress (CONTRACT section 6): " + codec);
            }
            if (rowGroupBytes < 1 << 16) {
                throw new IllegalArgumentException("rowGroupBytes must be >= 65536: " + rowGroupBytes);
            }
            if (pageBytes < 1024 || pageBytes > rowGroupBytes) {
                throw new IllegalArgumentException("pageBytes must be in [1024, rowGroupBytes]: " + pageBytes);
            }
            if (maxRowsBetweenSizeChecks < 1) {
                throw new IllegalArgumentException("maxRowsBetweenSizeChecks must be >= 1: " + maxRowsBetweenSizeChecks);
            }
            if (zstdLevel < 1 || zstdLevel > 19) {
                throw new IllegalArgumentException("zstdLevel must be in [1, 19]: " + zstdLevel);
            }
        }

        /** ZSTD (or Snappy when ZSTD cannot load), 64 MiB row groups, 1 MiB pages, a check every 4 rows at most. */
        public static Settings defaults() {
            return new Settings(defaultCodec(), DEFAULT_ROW_GROUP_BYTES, DEFAULT_PAGE_BYTES, DEFAULT_MAX_ROWS_BETWEEN_SIZE_CHECKS,
                    true, DEFAULT_ZSTD_LEVEL);
        }

        public Settings withCodec(CompressionCodecName value) {
            return new Settings(value, rowGroupBytes, pageBytes, maxRowsBetweenSizeChecks, dictionary, zstdLevel);
        }

        public Settings withRowGroupBytes(long value) {
            return new Settings(codec, value, Math.min(pageBytes, (int) Math.min(value, Integer.MAX_VALUE)), maxRowsBetweenSizeChecks,
                    dictionary, zstdLevel);
        }

        public Settings withPageBytes(int value) {
            return new Settings(codec, rowGroupBytes, value, maxRowsBetweenSizeChecks, dictionary, zstdLevel);
        }

        public Settings withMaxRowsBetweenSizeChecks(int value) {
            return new Settings(codec, rowGroupBytes, pageBytes, value, dictionary, zstdLevel);
        }

        public Settings withDictionary(boolean value) {
            return new Settings(codec, rowGroupBytes, pageBytes, maxRowsBetweenSizeChecks, value, zstdLevel);
        }

        public Settings withZstdLevel(int value) {
            return new Settings(codec, rowGroupBytes, pageBytes, maxRowsBetweenSizeChecks, dictionary, value);
        }
    }

    /**
     * ZSTD when its native library loads and compresses here, else Snappy (logged once). Checked by
     * compressing a few bytes through parquet's own codec factory, i.e. the path the writer takes.
     */
    public static CompressionCodecName defaultCodec() {
        CompressionCodecName codec = defaultCodec;
        if (codec == null) {
            codec = codecWorks(CompressionCodecName.ZSTD) ? CompressionCodecName.ZSTD : CompressionCodecName.SNAPPY;
            if (codec != CompressionCodecName.ZSTD) {
                LOG.warn("ZSTD does not load on this machine; writing Parquet with {}", codec);
            }
            defaultCodec = codec;
        }
        return codec;
    }

    /** Whether parquet-java can compress with {@code codec} in this JVM. */
    public static boolean codecWorks(CompressionCodecName codec) {
        CodecFactory factory = new CodecFactory(new Configuration(false), 64 * 1024);
        try {
            byte[] sample = "dumpstream codec probe dumpstream codec probe".getBytes(StandardCharsets.US_ASCII);
            return factory.getCompressor(codec).compress(BytesInput.from(sample)).size() > 0;
        } catch (IOException | RuntimeException | LinkageError e) {
            LOG.debug("codec {} does not work here", codec, e);
            return false;
        } finally {
            factory.release();
        }
    }

    /** The Avro data model of a generated class, with its logical-type conversions (e.g. Instant). */
    public static SpecificData modelOf(Class<? extends SpecificRecord> type) {
        return SpecificData.getForClass(type);
    }

    /** Writer for a generated Avro class into a new local file (which must not exist yet). */
    public static <T extends SpecificRecord> ParquetWriter<T> create(Path file, Class<T> type, Settings settings)
            throws IOException {
        SpecificData model = modelOf(type);
        return create(new ChannelOutputFile(file), model.getSchema(type), model, settings);
    }

    /**
     * Writer over a position-tracking stream, for a Flink {@code BulkWriter}: the writer writes
     * from the stream's current position and closes the stream when it is closed, so pass a
     * stream whose {@code close()} only flushes when the caller owns the underlying stream.
     */
    public static <T> ParquetWriter<T> create(
            PositionOutputStream out, Schema schema, GenericData model, Settings settings) throws IOException {
        return create(new StreamOutputFile(out), schema, model, settings);
    }

    /** Writer for any {@link OutputFile} (created, never overwritten). */
    public static <T> ParquetWriter<T> create(OutputFile file, Schema schema, GenericData model, Settings settings)
            throws IOException {
        return create(file, schema, model, settings, null);
    }

    /**
     * Writer over a position-tracking stream (see {@link #create(PositionOutputStream, Schema, GenericData, Settings)})
     * compressing with {@code codecs}, a factory shared by many writers of one thread (null: the
     * writer makes its own).
     */
    public static <T> ParquetWriter<T> create(PositionOutputStream out, Schema schema, GenericData model,
                                              Settings settings, CompressionCodecFactory codecs) throws IOException {
        return create(new StreamOutputFile(out), schema, model, settings, codecs);
    }

    private static <T> ParquetWriter<T> create(OutputFile file, Schema schema, GenericData model, Settings settings,
                                               CompressionCodecFactory codecs) throws IOException {
        Objects.requireNonNull(schema, "schema");
        Objects.requireNonNull(model, "model");
        AvroParquetWriter.Builder<T> builder = AvroParquetWriter.<T>builder(file)
                // without defaults: a default Hadoop Configuration parses core-default.xml for every
                // file, which dominated the cost of the many small files a checkpoint rolls
                .withConf(new Configuration(false))
                .withSchema(schema)
                .withDataModel(model)
                .withCompressionCodec(settings.codec())
                .withRowGroupSize(settings.rowGroupBytes())
                .withPageSize(settings.pageBytes())
                .withDictionaryPageSize(settings.pageBytes())
                .withMinRowCountForPageSizeCheck(1)
                .withMaxRowCountForPageSizeCheck(settings.maxRowsBetweenSizeChecks())
                .withDictionaryEncoding(settings.dictionary())
                .withSizeStatisticsEnabled(SIZE_STATISTICS)
                // the three-level LIST layout is what Spark, Trino and DuckDB expect for shape
                .config(AvroWriteSupport.WRITE_OLD_LIST_STRUCTURE, "false")
                .config(ZSTD_LEVEL_PROPERTY, Integer.toString(settings.zstdLevel()));
        for (String column : binaryColumns(schema)) {
            builder = builder.withDictionaryEncoding(column, false).withStatisticsEnabled(column, false);
        }
        if (codecs != null) {
            builder = builder.withCodecFactory(codecs);
        }
        return builder.build();
    }

    /**
     * Parquet size statistics (parquet-java 1.15+ writes them by default: per column chunk and per
     * page, unencoded byte sizes and repetition/definition level histograms, in the footer and the
     * column index): off. The tables are flat, no reader here plans with them, and for the many
     * small parts of a checkpoint they were a builder per page per column and more footer to write.
     * Min/max statistics, column and offset indexes stay.
     */
    static final boolean SIZE_STATISTICS = false;

    /** parquet-java's ZSTD level property (its codec factory's configuration). */
    public static final String ZSTD_LEVEL_PROPERTY = "parquet.compression.codec.zstd.level";

    /** Top-level fields of type bytes (or a nullable bytes union). */
    static List<String> binaryColumns(Schema schema) {
        List<String> columns = new ArrayList<>();
        for (Schema.Field field : schema.getFields()) {
            Schema type = field.schema();
            boolean binary = type.getType() == Schema.Type.BYTES
                    || type.getType() == Schema.Type.UNION
                            && type.getTypes().stream().anyMatch(t -> t.getType() == Schema.Type.BYTES);
            if (binary) {
                columns.add(field.name());
            }
        }
        return columns;
    }
}
