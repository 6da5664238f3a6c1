package io.dumpstream.job;

import io.dumpstream.table.ParquetWriters;
import io.dumpstream.table.PartWriter;

import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;
import org.apache.flink.api.common.serialization.BulkWriter;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.PositionOutputStream;

import java.io.IOException;

/**
 * Bulk Parquet writer for a {@code FileSink}: our ZSTD, bounded-row-group settings (Flink's own
 * Avro Parquet factory always writes uncompressed with 128 MB row groups), through the lean
 * {@link PartWriter} (a part costs its columns and footer, not a parquet-avro writer's setup). The part file's
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
    private final int zstdLevel;
    private final boolean dictionary;
    private final SinkBudget budget;
    /**
     * This sink subtask's part-writer factory (Parquet schema, properties, compressor and footer
     * metadata built once, shared by all its part files); made in the thread that writes.
     */
    private transient PartWriter.Factory parts;
    private transient Thread partsThread;
    /** The schema has nested records, which only parquet-avro's writer writes (the flat tables never). */
    private transient boolean nested;
    private transient SharedCodecs codecs;

    ParquetBulkWriterFactory(Class<T> type, ParquetWriters.Settings settings, SinkBudget budget) {
        this.budget = budget;
        this.dictionary = settings.dictionary();
        this.type = type;
        this.codec = settings.codec().name();
        this.rowGroupBytes = settings.rowGroupBytes();
        this.pageBytes = settings.pageBytes();
        this.rowsBetweenSizeChecks = settings.maxRowsBetweenSizeChecks();
        this.zstdLevel = settings.zstdLevel();
    }

    @Override
    public BulkWriter<Routed<T>> create(FSDataOutputStream out) throws IOException {
        ParquetWriters.Settings settings = ParquetWriters.Settings.defaults()
                .withCodec(CompressionCodecName.valueOf(codec))
                .withRowGroupBytes(rowGroupBytes)
                .withPageBytes(pageBytes)
                .withMaxRowsBetweenSizeChecks(rowsBetweenSizeChecks)
                .withDictionary(dictionary)
                .withZstdLevel(zstdLevel);
        if (!nested && (parts == null || partsThread != Thread.currentThread())) {
            // one per writing thread: the compressor is not thread-safe (a subtask writes from one thread)
            try {
                parts = new PartWriter.Factory(SpecificData.getForClass(type).getSchema(type), settings);
                partsThread = Thread.currentThread();
            } catch (IllegalArgumentException e) {
                nested = true; // a schema the lean writer does not write (nested records: tensors' views)
            }
        }
        if (nested) {
            return avroWriter(out, settings);
        }
        SinkStream stream = new SinkStream(out);
        PartWriter<T> writer = parts.open(stream);
        return new BulkWriter<>() {
            private String bucket;

            @Override
            public void addElement(Routed<T> element) throws IOException {
                writer.write(element.row);
                bucket = element.bucket;
                // its deferred rows, or its column writers and unflushed row group
                budget.update(bucket, writer.memoryBytes());
            }

            @Override
            public void flush() {
                // Parquet writes whole row groups; the footer comes with finish()
            }

            @Override
            public void finish() throws IOException {
                writer.close(); // writes the footer and flushes the stream's buffer to the part file
                stream.flush();
                if (bucket != null) {
                    budget.closed(bucket);
                }
            }
        };
    }

    /** A parquet-avro writer per part: for schemas with nested records (the tensors table's views). */
    private BulkWriter<Routed<T>> avroWriter(FSDataOutputStream out, ParquetWriters.Settings settings) throws IOException {
        SpecificData model = ParquetWriters.modelOf(type);
        if (codecs == null) {
            codecs = new SharedCodecs(pageBytes, zstdLevel);
        }
        SinkStream stream = new SinkStream(out);
        org.apache.parquet.hadoop.ParquetWriter<T> writer = ParquetWriters.create(stream, model.getSchema(type), model,
                settings, codecs);
        return new BulkWriter<>() {
            private String bucket;

            @Override
            public void addElement(Routed<T> element) throws IOException {
                writer.write(element.row);
                bucket = element.bucket;
                // written + buffered, less what has reached the file: the unflushed row group; and the writer
                budget.update(bucket, writer.getDataSize() - stream.getPos() + PartWriter.WRITER_BYTES);
            }

            @Override
            public void flush() {
            }

            @Override
            public void finish() throws IOException {
                writer.close();
                stream.flush();
                if (bucket != null) {
                    budget.closed(bucket);
                }
            }
        };
    }

    /**
     * The sink's stream with its position, closed by the sink, never by Parquet. Buffered: Flink's
     * local part-file stream writes straight to a {@code FileChannel}, and Parquet writes page
     * headers, column indexes and the footer through Thrift a few bytes at a time, so unbuffered
     * every one of those was a {@code write(2)} (a quarter of the writer thread's time in the
     * 1 MiB-dump benchmark, where files are small and their metadata is a large share of the bytes).
     * Page bytes (writes of the buffer's size and more) are gathered into the thread's burst buffer
     * instead ({@link #write(byte[], int, int)}). Both are flushed before the
     * sink closes the part for commit ({@code finish} closes the Parquet writer, which flushes).
     */
    static final class SinkStream extends PositionOutputStream {
        // small: every open part (hundreds per subtask) holds one; metadata writes are tens of bytes each
        static final int BUFFER_BYTES = 8 << 10;
        /** The burst buffer of a thread: page bytes are gathered into writes of up to this size. */
        static final int BURST_BYTES = 1 << 20;
        private static final byte[] NO_BYTES = new byte[0];
        private static final ThreadLocal<Burst> BURSTS = ThreadLocal.withInitial(Burst::new);
        private final FSDataOutputStream out;
        /** Taken at the first write: a part that defers its rows (PartWriter) writes nothing until it closes. */
        private byte[] buf = NO_BYTES;
        private int count;
        /** The part file's position when this stream took it, and the bytes passed on since. */
        private final long start;
        private long passed;
        /** The burst buffer while it holds bytes of this stream (they come before {@code buf}'s), else null. */
        private Burst burst;
        /** A failed write of this stream's burst bytes, made when another stream took the buffer. */
        private IOException failed;

        SinkStream(FSDataOutputStream out) throws IOException {
            this.out = out;
            this.start = out.getPos();
        }

        /**
         * Counted, not asked: the local part file's {@code getPos} is a {@code lseek(2)}, and the
         * writer asks for it per row and per column chunk (4% of the writer thread's samples). Only
         * this stream writes to the part file, so the count is its position.
         */
        @Override
        public long getPos() {
            return start + passed + (burst == null ? 0 : burst.count) + count;
        }

        @Override
        public void write(int b) throws IOException {
            if (count == buf.length) {
                drain();
                if (buf.length == 0) {
                    buf = new byte[BUFFER_BYTES];
                }
            }
            buf[count++] = (byte) b;
        }

        /**
         * Small writes go to this stream's buffer. Large ones (parquet-java hands a column chunk's
         * pages over in 8 KiB pieces, {@code Channels.newChannel}'s transfer size, and each piece was
         * one {@code write(2)}: half a millisecond of CPU per MiB in {@code PartFileCostBench}) go to
         * the thread's burst buffer, which one stream holds at a time: a stream that takes it first
         * writes the holder's bytes to the holder's file. A sink subtask writes its parts from one
         * thread, so a thread's parts share one buffer.
         */
        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (len < BUFFER_BYTES) {
                if (buf.length == 0) {
                    buf = new byte[BUFFER_BYTES];
                }
                if (len > buf.length - count) {
                    drain();
                }
                System.arraycopy(b, off, buf, count, len);
                count += len;
                return;
            }
            check();
            Burst s = burst;
            if (s == null) {
                s = BURSTS.get();
                if (s.holder != null) {
                    s.holder.giveBack();
                }
                s.holder = this;
                burst = s;
            }
            if (count > 0) {
                gather(s, buf, 0, count);
                count = 0;
            }
            gather(s, b, off, len);
        }

        private void gather(Burst s, byte[] b, int off, int len) throws IOException {
            if (len > s.bytes.length - s.count) {
                writeBurst(s);
            }
            if (len >= s.bytes.length) {
                out.write(b, off, len);
                passed += len;
                return;
            }
            System.arraycopy(b, off, s.bytes, s.count, len);
            s.count += len;
        }

        private void writeBurst(Burst s) throws IOException {
            if (s.count > 0) {
                int n = s.count;
                s.count = 0;
                out.write(s.bytes, 0, n);
                passed += n;
            }
        }

        /** Another stream takes the burst buffer: this one's bytes in it go to its file first. */
        private void giveBack() {
            try {
                release();
            } catch (IOException e) {
                failed = e; // this stream's next write, flush or close reports it
            }
        }

        private void release() throws IOException {
            Burst s = burst;
            if (s != null) {
                burst = null;
                s.holder = null;
                try {
                    writeBurst(s);
                } finally {
                    s.count = 0;
                }
            }
        }

        private void check() throws IOException {
            if (failed != null) {
                throw new IOException("an earlier write to this part file failed", failed);
            }
        }

        private void drain() throws IOException {
            check();
            release();
            if (count > 0) {
                out.write(buf, 0, count);
                passed += count;
                count = 0;
            }
        }

        @Override
        public void flush() throws IOException {
            drain();
            out.flush();
        }

        @Override
        public void close() throws IOException {
            flush();
        }

        /** A thread's burst buffer and the stream whose bytes it holds. */
        private static final class Burst {
            final byte[] bytes = new byte[BURST_BYTES];
            int count;
            SinkStream holder;
        }
    }
}
