package io.dumpstream.job;

import io.dumpstream.table.ParquetWriters;

import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;
import org.apache.flink.api.common.serialization.BulkWriter;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.PositionOutputStream;

import java.io.IOException;

/**
 * Bulk Parquet writer for a {@code FileSink}: our ZSTD, bounded-row-group settings (Flink's own
 * Avro Parquet factory always writes uncompressed with 128 MB row groups). The part file's
 * stream belongs to the sink, so the Parquet writer only flushes it when it closes. Each writer
 * reports what it holds in memory to the sink's {@link SinkBudget}.
 */
public final class ParquetBulkWriterFactory<T extends SpecificRecord> implements BulkWriter.Factory<Routed<T>> {
    private static final long serialVersionUID = 1L;

    private final Class<T> type;
    private final String codec;
    private final long rowGroupBytes;
    private final int pageBytes;
    private final int rowsBetweenSizeChecks;
    private final boolean dictionary;
    private final SinkBudget budget;

    ParquetBulkWriterFactory(Class<T> type, ParquetWriters.Settings settings, SinkBudget budget) {
        this.budget = budget;
        this.dictionary = settings.dictionary();
        this.type = type;
        this.codec = settings.codec().name();
        this.rowGroupBytes = settings.rowGroupBytes();
        this.pageBytes = settings.pageBytes();
        this.rowsBetweenSizeChecks = settings.maxRowsBetweenSizeChecks();
    }

    @Override
    public BulkWriter<Routed<T>> create(FSDataOutputStream out) throws IOException {
        SpecificData model = ParquetWriters.modelOf(type);
        ParquetWriters.Settings settings = ParquetWriters.Settings.defaults()
                .withCodec(CompressionCodecName.valueOf(codec))
                .withRowGroupBytes(rowGroupBytes)
                .withPageBytes(pageBytes)
                .withMaxRowsBetweenSizeChecks(rowsBetweenSizeChecks)
                .withDictionary(dictionary);
        ParquetWriter<T> writer = ParquetWriters.create(new SinkStream(out), model.getSchema(type), model, settings);
        return new BulkWriter<>() {
            private String bucket;

            @Override
            public void addElement(Routed<T> element) throws IOException {
                writer.write(element.row);
                bucket = element.bucket;
                // written + buffered, less what has reached the file: the unflushed row group
                budget.update(bucket, writer.getDataSize() - out.getPos());
            }

            @Override
            public void flush() {
                // Parquet writes whole row groups; the footer comes with finish()
            }

            @Override
            public void finish() throws IOException {
                writer.close();
                if (bucket != null) {
                    budget.closed(bucket);
                }
            }
        };
    }

    /** The sink's stream with its position, closed by the sink, never by Parquet. */
    private static final class SinkStream extends PositionOutputStream {
        private final FSDataOutputStream out;

        SinkStream(FSDataOutputStream out) {
            this.out = out;
        }

        @Override
        public long getPos() throws IOException {
            return out.getPos();
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
        }

        @Override
        public void flush() throws IOException {
            out.flush();
        }

        @Override
        public void close() throws IOException {
            out.flush();
        }
    }
}
