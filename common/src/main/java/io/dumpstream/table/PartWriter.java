package io.dumpstream.table;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.avro.LogicalType;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.avro.generic.IndexedRecord;
import org.apache.avro.util.Utf8;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.avro.AvroSchemaConverter;
import org.apache.parquet.avro.AvroWriteSupport;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.ColumnWriteStore;
import org.apache.parquet.column.ColumnWriter;
import org.apache.parquet.column.ParquetProperties;
import org.apache.parquet.compression.CompressionCodecFactory.BytesInputCompressor;
import org.apache.parquet.hadoop.CodecFactory;
import org.apache.parquet.hadoop.ColumnChunkPageWriteStore;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.OutputFile;
import org.apache.parquet.io.PositionOutputStream;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.MessageType;

/**
 * A lean Parquet writer for the job's flat table schemas (snapshots, dumps, rejects): one part
 * file, rows written straight into parquet-java's column writers. Everything a file does not own
 * is built once per {@link Factory}: the Parquet schema (from the Avro schema, as parquet-avro
 * derives it), the writer properties, the compressor (for ZSTD parquet-java's direct codec: one
 * native context for all pages) and the footer's key-value metadata (the Avro schema text, which
 * {@code AvroParquetReader} reads back). A part therefore costs its
 * column writers, its pages and its footer, not a schema conversion, a write-support, a record
 * consumer, a Hadoop configuration and a codec factory each.
 *
 * <p>The files are the ones {@link ParquetWriters} writes through parquet-avro: same schema (field
 * names, logical types, repetition, three-level lists), same codec, dictionaries, statistics
 * (none on binary columns), page and row-group limits, the same {@code parquet.avro.schema} and
 * {@code writer.model.name} metadata ({@code PartWriterTest} compares both writers' footers).
 *
 * <p>Supported fields: boolean, int, long, float, double, string, bytes, timestamp-millis and
 * -micros longs, each optionally in a {@code ["null", T]} union, and arrays of non-null such
 * values. Anything else is refused when the factory is built.
 *
 * <p>A part builds its Parquet writer only once its rows pass {@link #DEFER_BYTES} or it closes:
 * a small part (most of a stage partition's parts between two checkpoints) is until then its rows'
 * values, its payloads off the heap.
 */
public final class PartWriter<T extends IndexedRecord> implements Closeable {

    /** Column kinds the writer knows. */
    enum Kind { BOOLEAN, INT, LONG, FLOAT, DOUBLE, STRING, BYTES, TIMESTAMP_MILLIS, TIMESTAMP_MICROS }

    /** How one top-level field lands in its one leaf column. */
    record Field(int index, String name, Kind kind, boolean nullable, boolean array, int maxDefinition) {
    }

    /**
     * Per table schema and writing thread: the schema, properties and compressor every part shares.
     * Not thread-safe (the compressor reuses its buffers), like a Flink sink subtask that writes
     * its parts from one thread.
     */
    public static final class Factory {
        private final MessageType parquetSchema;
        private final Field[] fields;
        private final ColumnDescriptor[] columns;
        private final ParquetProperties props;
        private final Map<String, String> metadata;
        private final long rowGroupBytes;
        private final BytesInputCompressor compressor;
        /** Where pages and deferred payloads are held: {@link OffHeapPages#INSTANCE}, or unpooled (see {@link #PAGE_POOL}). */
        private final OffHeapPages memory;
        /** Writes the parts that close while still deferring their rows; null with dictionaries (or switched off). */
        private final SmallPartEncoder encoder;

        public Factory(Schema schema, ParquetWriters.Settings settings) {
            this(schema, settings, !"false".equals(System.getProperty(SMALL_PART_ENCODER)));
        }

        /** With {@code encodeSmallParts} false every part goes through parquet-java's writer (tests compare the two). */
        Factory(Schema schema, ParquetWriters.Settings settings, boolean encodeSmallParts) {
            Objects.requireNonNull(schema, "schema");
            Configuration conf = new Configuration(false);
            conf.setBoolean(AvroWriteSupport.WRITE_OLD_LIST_STRUCTURE, false);
            this.parquetSchema = new AvroSchemaConverter(conf).convert(schema);
            List<ColumnDescriptor> leaves = parquetSchema.getColumns();
            List<Schema.Field> avroFields = schema.getFields();
            for (Schema.Field f : avroFields) {
                shape(schema, f);
            }
            if (leaves.size() != avroFields.size()) {
                throw new IllegalArgumentException("schema " + schema.getFullName() + " is not flat: "
                        + avroFields.size() + " fields, " + leaves.size() + " columns");
            }
            fields = new Field[avroFields.size()];
            columns = leaves.toArray(new ColumnDescriptor[0]);
            for (int i = 0; i < fields.length; i++) {
                fields[i] = field(schema, avroFields.get(i), columns[i]);
            }
            ParquetProperties.Builder b = ParquetProperties.builder()
                    .withPageSize(settings.pageBytes())
                    .withDictionaryPageSize(settings.pageBytes())
                    .withMinRowCountForPageSizeCheck(1)
                    .withMaxRowCountForPageSizeCheck(settings.maxRowsBetweenSizeChecks())
                    .withDictionaryEncoding(settings.dictionary())
                    .withSizeStatisticsEnabled(ParquetWriters.SIZE_STATISTICS);
            List<String> binary = ParquetWriters.binaryColumns(schema);
            for (String column : binary) {
                b = b.withDictionaryEncoding(column, false).withStatisticsEnabled(column, false);
            }
            props = b.withValuesWriterFactory(new ReferencedBinaryWriter.Factory(java.util.Set.copyOf(binary))).build();
            Map<String, String> extra = new LinkedHashMap<>();
            // what parquet-avro's write support puts into every footer
            extra.put("parquet.avro.schema", schema.toString());
            extra.put(ParquetWriter.OBJECT_MODEL_NAME_PROP, "avro");
            metadata = Map.copyOf(extra);
            rowGroupBytes = settings.rowGroupBytes();
            memory = "false".equals(System.getProperty(PAGE_POOL)) ? OffHeapPages.UNPOOLED : OffHeapPages.INSTANCE;
            if (settings.codec() == CompressionCodecName.ZSTD) {
                compressor = directZstd(settings, memory);
            } else {
                compressor = new CodecFactory(new Configuration(false), settings.pageBytes()).getCompressor(settings.codec());
            }
            encoder = settings.dictionary() || !encodeSmallParts ? null
                    : new SmallPartEncoder(parquetSchema, fields, columns, java.util.Set.copyOf(binary), metadata,
                            settings.pageBytes(), props.getColumnIndexTruncateLength(), props.getStatisticsTruncateLength(),
                            compressor, memory);
        }

        /**
         * parquet-java's direct ZSTD compressor: one native context for every page of the factory's
         * parts (its heap codec opens a compressing stream, and so a native context, per page: 35 per
         * small part), each page gathered and compressed in reused direct buffers from {@code memory}
         * and checksummed where it lies. The context and buffers are freed with the factory (a sink's
         * writer factory has no close).
         */
        private BytesInputCompressor directZstd(ParquetWriters.Settings settings, OffHeapPages memory) {
            CodecFactory codecs = CodecFactory.createDirectCodecFactory(new Configuration(false), memory.directOnly(),
                    settings.pageBytes());
            BytesInputCompressor zstd = codecs.getCompressor(CompressionCodecName.ZSTD, settings.zstdLevel());
            CLEANER.register(this, codecs::release);
            return zstd;
        }

        /** The Parquet schema every part of this factory has. */
        public MessageType parquetSchema() {
            return parquetSchema;
        }

        /**
         * A writer whose file starts at the stream's current position. Like parquet-java's own
         * writer it closes the stream when the file ends, so pass a stream whose {@code close()}
         * only flushes when the caller owns the underlying stream (a Flink part file). Nothing is
         * written to the stream until the part has more than {@link PartWriter#DEFER_BYTES} of rows or closes.
         */
        public <T extends IndexedRecord> PartWriter<T> open(PositionOutputStream out) {
            return new PartWriter<>(this, new StreamOutputFile(out));
        }

        /** A writer for any output file (created, never overwritten, when the part first writes: see {@link PartWriter#DEFER_BYTES}). */
        public <T extends IndexedRecord> PartWriter<T> open(OutputFile file) {
            return new PartWriter<>(this, file);
        }

        private static Field field(Schema record, Schema.Field f, ColumnDescriptor column) {
            if (!column.getPath()[0].equals(f.name())) {
                throw new IllegalArgumentException("column " + String.join(".", column.getPath()) + " is not field "
                        + f.name() + " of " + record.getFullName());
            }
            Field shape = shape(record, f);
            int expected = (shape.nullable ? 1 : 0) + (shape.array ? 1 : 0);
            if (column.getMaxDefinitionLevel() != expected || column.getMaxRepetitionLevel() != (shape.array ? 1 : 0)) {
                throw new IllegalArgumentException("field " + f.name() + " of " + record.getFullName()
                        + " converts to levels " + column.getMaxRepetitionLevel() + "/" + column.getMaxDefinitionLevel());
            }
            return shape;
        }

        /** The field's kind, nullability and list-ness (definition level as expected), or refused. */
        private static Field shape(Schema record, Schema.Field f) {
            Schema type = f.schema();
            boolean nullable = false;
            if (type.getType() == Schema.Type.UNION) {
                List<Schema> branches = type.getTypes();
                Schema other = null;
                int nulls = 0;
                for (Schema s : branches) {
                    if (s.getType() == Schema.Type.NULL) {
                        nulls++;
                    } else {
                        other = s;
                    }
                }
                if (branches.size() != 2 || nulls != 1) {
                    throw unsupported(record, f);
                }
                nullable = true;
                type = other;
            }
            boolean array = false;
            if (type.getType() == Schema.Type.ARRAY) {
                array = true;
                type = type.getElementType();
            }
            Kind kind = kind(type);
            if (kind == null) {
                throw unsupported(record, f);
            }
            return new Field(f.pos(), f.name(), kind, nullable, array, (nullable ? 1 : 0) + (array ? 1 : 0));
        }

        private static Kind kind(Schema type) {
            LogicalType logical = type.getLogicalType();
            switch (type.getType()) {
                case BOOLEAN:
                    return Kind.BOOLEAN;
                case INT:
                    return logical == null ? Kind.INT : null;
                case LONG:
                    if (logical == null) {
                        return Kind.LONG;
                    }
                    if (logical instanceof LogicalTypes.TimestampMillis) {
                        return Kind.TIMESTAMP_MILLIS;
                    }
                    if (logical instanceof LogicalTypes.TimestampMicros) {
                        return Kind.TIMESTAMP_MICROS;
                    }
                    return null;
                case FLOAT:
                    return Kind.FLOAT;
                case DOUBLE:
                    return Kind.DOUBLE;
                case STRING:
                    return Kind.STRING;
                case BYTES:
                    return logical == null ? Kind.BYTES : null;
                default:
                    return null;
            }
        }

        private static IllegalArgumentException unsupported(Schema record, Schema.Field f) {
            return new IllegalArgumentException("field " + f.name() + " of " + record.getFullName()
                    + " has a type the part writer does not write: " + f.schema());
        }
    }

    /**
     * Rows a part holds before it builds its Parquet writer: until then a part is its rows' values,
     * with payload-sized binary values copied off the heap ({@link OffHeapPages}), and no column
     * writers. A Parquet writer of the snapshots table holds about 82 KiB of heap before its first row
     * (35 column writers with their statistics, size statistics, index builders and slabs), and a sink
     * keeps a part open per partition until the checkpoint: with 1 MiB dumps over hundreds of stages,
     * about 550 open parts of about four rows per sink subtask, whose column writers and referenced
     * payload arrays were the heap's live set every young collection copied and then promoted (the
     * collector was a fifth of the job's CPU). Past this many bytes a part builds its writer and
     * writes on as before: the writer's fixed cost is then small against the rows. The system property
     * {@code dumpstream.partDeferBytes} sets it (0: no deferral, the writer built at the first row; for
     * benchmarks).
     */
    public static final long DEFER_BYTES = Long.getLong("dumpstream.partDeferBytes", 1 << 20);
    /**
     * Whether a part that closes while it still defers its rows is written by {@link SmallPartEncoder}
     * (in one go, without parquet-java's column writers) when the settings have no dictionaries, as
     * the job's sinks: this system property, read when a factory is built (default true; false for
     * benchmarks against parquet-java's writer).
     */
    public static final String SMALL_PART_ENCODER = "dumpstream.smallPartEncoder";
    /**
     * System property: {@code false} gives the factories made from then on page memory that keeps no
     * released buffer for reuse ({@link OffHeapPages#UNPOOLED}), for an A/B of the pool.
     */
    public static final String PAGE_POOL = "dumpstream.pagePool";
    private static final java.lang.ref.Cleaner CLEANER = java.lang.ref.Cleaner.create();
    /** What a deferred row is counted at besides its binary values: its values array and boxed fields. */
    static final int DEFERRED_ROW_BYTES = 1024;
    /**
     * What a part's Parquet writer holds on the heap besides its rows: 82 KiB measured for an open
     * snapshots part before its first row (heap after GC over 500 open parts, 2026-12-06), counted
     * with a margin.
     */
    public static final long WRITER_BYTES = 96 << 10;
    /** Smallest off-heap block the deferred payloads are copied into. */
    static final int ARENA_BLOCK_BYTES = 64 << 10;

    private final Factory factory;
    private final OutputFile out;
    /** Null while the part defers its rows. */
    private ParquetFileWriter file;
    private ColumnChunkPageWriteStore pages;
    private ColumnWriteStore store;
    private final ColumnWriter[] writers;
    /** The deferred rows' values (binary values of {@link OffHeapPages#MIN_DIRECT_BYTES} and up copied into {@link #arena}). */
    private List<Object[]> deferred = new ArrayList<>();
    private long deferredBytes;
    /** Off-heap blocks holding the deferred rows' payloads, freed once their pages are written. */
    private final List<ByteBuffer> arena = new ArrayList<>();
    private long arenaBytes;
    private boolean replaying;
    /** Bytes of the file when {@link SmallPartEncoder} wrote it. */
    private long written;
    private long rows;
    private long rowsInGroup;
    private int rowGroupOrdinal;
    private boolean closed;

    private PartWriter(Factory factory, OutputFile out) {
        this.factory = factory;
        this.out = out;
        this.writers = new ColumnWriter[factory.columns.length];
    }

    /** Builds the Parquet writer and writes the deferred rows into it. */
    private void start() throws IOException {
        file = new ParquetFileWriter(out, factory.parquetSchema, ParquetFileWriter.Mode.CREATE,
                factory.rowGroupBytes, ParquetWriter.MAX_PADDING_SIZE_DEFAULT, null, factory.props);
        file.start();
        startRowGroup();
        List<Object[]> held = deferred;
        deferred = null;
        deferredBytes = 0;
        replaying = true;
        try {
            for (Object[] values : held) {
                for (int i = 0; i < values.length; i++) {
                    column(i, values[i]);
                }
                endRow();
            }
        } finally {
            replaying = false;
        }
    }

    private void startRowGroup() {
        pages = new ColumnChunkPageWriteStore(factory.compressor, factory.parquetSchema, factory.memory,
                factory.props.getColumnIndexTruncateLength(), factory.props.getPageWriteChecksumEnabled(), null,
                rowGroupOrdinal);
        store = factory.props.newColumnWriteStore(factory.parquetSchema, pages, pages);
        for (int i = 0; i < writers.length; i++) {
            writers[i] = store.getColumnWriter(factory.columns[i]);
        }
    }

    /**
     * Appends one row. Its binary values are kept by reference until their page is written (those
     * of a deferred row from {@link OffHeapPages#MIN_DIRECT_BYTES} up are copied off the heap
     * instead), so their bytes must not change until the writer is closed.
     */
    public void write(T row) throws IOException {
        Field[] fields = factory.fields;
        if (file == null) {
            long size = deferredSize(row);
            if (deferredBytes + size <= DEFER_BYTES) {
                defer(row, size);
                rows++;
                return;
            }
            start();
        }
        for (int i = 0; i < fields.length; i++) {
            checkNulls(fields[i], row.get(fields[i].index)); // the whole row before any of its columns
        }
        for (int i = 0; i < fields.length; i++) {
            column(i, row.get(fields[i].index));
        }
        rows++;
        endRow();
    }

    private long deferredSize(T row) {
        long size = DEFERRED_ROW_BYTES;
        for (Field f : factory.fields) {
            if (f.kind == Kind.BYTES && !f.array && row.get(f.index) instanceof ByteBuffer b) {
                size += b.remaining();
            }
        }
        return size;
    }

    private void defer(T row, long size) {
        Field[] fields = factory.fields;
        Object[] values = new Object[fields.length];
        for (int i = 0; i < fields.length; i++) {
            Object v = row.get(fields[i].index);
            checkNulls(fields[i], v);
            if (fields[i].kind == Kind.BYTES && !fields[i].array && v instanceof ByteBuffer b && !b.isDirect()
                    && b.remaining() >= OffHeapPages.MIN_DIRECT_BYTES) {
                v = offHeap(b);
            }
            values[i] = v;
        }
        deferred.add(values);
        deferredBytes += size;
    }

    /**
     * A row's nulls where its schema allows none, refused when the row is written (a deferred row
     * fails its write, not the close; a written row fails before any of its columns takes a value).
     * {@link #column} writes only checked values.
     */
    private static void checkNulls(Field f, Object v) {
        if (v == null) {
            if (!f.nullable) {
                throw new NullPointerException("field " + f.name + " is null but not nullable");
            }
        } else if (f.array) {
            for (Object item : (List<?>) v) {
                if (item == null) {
                    throw new NullPointerException("field " + f.name + " has a null item");
                }
            }
        }
    }

    /** A copy of {@code b}'s remaining bytes in the arena (off the heap while the JVM has direct memory to spare). */
    private ByteBuffer offHeap(ByteBuffer b) {
        int n = b.remaining();
        ByteBuffer block = arena.isEmpty() ? null : arena.get(arena.size() - 1);
        if (block == null || block.remaining() < n) {
            // no doubling: the blocks' capacity is what the sink's budget counts, so slack is at most a
            // block; a payload of more than half a block gets a block of its own size (48 KiB rows in 64 KiB
            // blocks were counted a third over their bytes, and the sink rolled parts that much sooner)
            int size = n > ARENA_BLOCK_BYTES / 2 ? n : ARENA_BLOCK_BYTES;
            block = factory.memory.allocate(size);
            arena.add(block);
            arenaBytes += size;
        }
        ByteBuffer copy = block.slice(block.position(), n);
        copy.put(0, b, b.position(), n);
        block.position(block.position() + n);
        return copy;
    }

    private void releaseArena() {
        for (ByteBuffer block : arena) {
            factory.memory.release(block);
        }
        arena.clear();
        arenaBytes = 0;
    }

    /** Writes value {@code v} of field {@code i} into its column ({@link #checkNulls} has passed it). */
    private void column(int i, Object v) {
        Field f = factory.fields[i];
        ColumnWriter w = writers[i];
        if (v == null) {
            w.writeNull(0, 0);
        } else if (f.array) {
            List<?> items = (List<?>) v;
            if (items.isEmpty()) {
                w.writeNull(0, f.maxDefinition - 1);
            } else {
                int repetition = 0;
                for (Object item : items) {
                    value(w, f.kind, item, repetition, f.maxDefinition);
                    repetition = 1;
                }
            }
        } else {
            value(w, f.kind, v, 0, f.maxDefinition);
        }
    }

    private void endRow() throws IOException {
        store.endRecord();
        rowsInGroup++;
        // a check every row: 35 sums; with multi-MiB rows a row group must not outgrow its limit by more than a row
        long buffered = store.getBufferedSize();
        if (buffered > factory.rowGroupBytes - 2 * (buffered / rowsInGroup)) {
            flushRowGroup();
            startRowGroup();
        }
    }

    private static void value(ColumnWriter w, Kind kind, Object v, int r, int d) {
        switch (kind) {
            case BOOLEAN -> w.write((Boolean) v, r, d);
            case INT -> w.write(((Number) v).intValue(), r, d);
            case LONG, TIMESTAMP_MILLIS, TIMESTAMP_MICROS -> w.write(longValue(kind, v), r, d);
            case FLOAT -> w.write(((Number) v).floatValue(), r, d);
            case DOUBLE -> w.write(((Number) v).doubleValue(), r, d);
            case STRING -> w.write(string(v), r, d);
            case BYTES -> w.write(bytes((ByteBuffer) v), r, d);
            default -> throw new IllegalStateException(kind.name());
        }
    }

    /** The long a LONG or timestamp field holds (a timestamp as an {@link Instant} or its count of units). */
    static long longValue(Kind kind, Object v) {
        if (v instanceof Instant t) {
            if (kind == Kind.TIMESTAMP_MILLIS) {
                return t.toEpochMilli();
            }
            if (kind == Kind.TIMESTAMP_MICROS) {
                return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000L), t.getNano() / 1000);
            }
        }
        return ((Number) v).longValue();
    }

    /** A string field's UTF-8 bytes (a {@link Utf8}'s without a copy). */
    static Binary string(Object v) {
        if (v instanceof Utf8 u) {
            return Binary.fromConstantByteArray(u.getBytes(), 0, u.getByteLength());
        }
        return Binary.fromConstantByteArray(v.toString().getBytes(StandardCharsets.UTF_8));
    }

    private static Binary bytes(ByteBuffer b) {
        if (b.hasArray()) {
            return Binary.fromConstantByteArray(b.array(), b.arrayOffset() + b.position(), b.remaining());
        }
        return Binary.fromConstantByteBuffer(b.duplicate());
    }

    private void flushRowGroup() throws IOException {
        if (rowsInGroup > 0) {
            file.startBlock(rowsInGroup);
            store.flush();
            pages.flushToFileWriter(file);
            file.endBlock();
            rowGroupOrdinal++;
        }
        store.close();
        pages.close(); // frees the row group's off-heap pages now
        rowsInGroup = 0;
        if (!replaying) {
            releaseArena(); // every deferred row is in a written page by now
        }
    }

    /** Rows written so far. */
    public long rows() {
        return rows;
    }

    /**
     * Bytes written to the stream plus those buffered for the open row group (as
     * {@link ParquetWriter#getDataSize()}); while the part defers its rows, what they are counted at.
     */
    public long dataSize() throws IOException {
        if (file == null) {
            return closed ? written : deferredBytes;
        }
        return file.getPos() + (closed ? 0 : store.getBufferedSize());
    }

    /**
     * The memory this part holds (for a sink's budget): while it defers, its payload blocks and a
     * fixed count per row; then its column writers, its open row group (pages and the current
     * page's values) and any payload blocks not yet released.
     */
    public long memoryBytes() {
        if (file == null) {
            return closed ? 0 : arenaBytes + (long) deferred.size() * DEFERRED_ROW_BYTES;
        }
        return arenaBytes + (closed ? 0 : WRITER_BYTES + store.getBufferedSize());
    }

    /** Writes the last row group and the footer, and closes the stream. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (file == null && factory.encoder != null && !deferred.isEmpty()) {
                written = factory.encoder.write(out.create(factory.rowGroupBytes), deferred);
                deferred = null;
                return;
            }
            if (file == null) {
                start();
            }
            flushRowGroup();
            file.end(factory.metadata);
        } finally {
            releaseArena();
        }
    }
}
