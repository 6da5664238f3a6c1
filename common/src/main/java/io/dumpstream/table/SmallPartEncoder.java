package io.dumpstream.table;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32;
import org.apache.avro.util.Utf8;
import org.apache.parquet.Version;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.statistics.Statistics;
import org.apache.parquet.compression.CompressionCodecFactory.BytesInputCompressor;
import org.apache.parquet.format.Util;
import org.apache.parquet.format.converter.ParquetMetadataConverter;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.internal.column.columnindex.ColumnIndex;
import org.apache.parquet.internal.column.columnindex.ColumnIndexBuilder;
import org.apache.parquet.io.PositionOutputStream;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;

/**
 * Writes a whole small part in one go from its held rows: the file parquet-java's writer makes for
 * the same rows and settings without dictionaries (data pages v1, PLAIN values, RLE levels, one row
 * group, the same statistics, column and offset indexes, key-value metadata and created-by), but
 * without building 35 column writers, page writers and index builders per part and a Thrift object
 * graph per page header, index and footer. Each column's pages are encoded into one reused direct
 * buffer and compressed with the factory's compressor; headers, indexes and the footer are written
 * field by field ({@link ThriftCompact}). What is the same in every part (the schema, the
 * key-value metadata with the Avro schema text, created-by, column orders) is serialised once, by
 * parquet-java's own converter. Min/max statistics and column indexes come from parquet-java's
 * {@link Statistics} and {@link ColumnIndexBuilder}, so their orders, NaN counts and truncation
 * are parquet-java's.
 *
 * <p>Page boundaries fall at row boundaries, a page closing once it holds about a page size (as
 * parquet-java's 10% tolerance); they need not fall where parquet-java's size checks would put them.
 *
 * <p>Why the headers, indexes and footer are written by hand: the same structures built as
 * parquet-java's objects (its converter's page header, {@code toParquetColumnIndex},
 * {@code toParquetOffsetIndex}, {@code toParquetStatistics}, a cached {@code FileMetaData} template)
 * and serialised by its Thrift classes wrote the same bytes but cost 13% more CPU per part (about
 * 45 us of a 4 x 48 KiB part; A/B of 2026-12-07, BENCHMARKS.md "Parquet metadata on parquet-java
 * (issue 34)"). That arm is in the history at commit 92b656a. {@code SmallPartReadByParquetJavaTest}
 * reads these files with parquet-java's own reader.
 *
 * <p>Not thread-safe: one per {@link PartWriter.Factory}, like its compressor.
 */
final class SmallPartEncoder {
    private static final Cleaner CLEANER = Cleaner.create();
    private static final byte[] MAGIC = "PAR1".getBytes(StandardCharsets.US_ASCII);
    /** Thrift values of parquet.thrift enums used here. */
    private static final int PLAIN = 0;
    private static final int RLE = 3;
    private static final int BIT_PACKED = 4;
    private static final int DATA_PAGE = 0;
    /** Statistics larger than this are not written (parquet-java's {@code ParquetMetadataConverter.MAX_STATS_SIZE}). */
    private static final long MAX_STATS_SIZE = ParquetMetadataConverter.MAX_STATS_SIZE;

    private final PartWriter.Field[] fields;
    private final PrimitiveType[] types;
    private final int[] typeIds;
    private final boolean[] stats;
    private final byte[][][] paths;
    private final int[][] encodings;
    private final int pageThreshold;
    private final int truncateLength;
    private final int codec;
    private final BytesInputCompressor compressor;
    /** The footer's FileMetaData up to its schema (fields 1-2), and after its row groups (fields 5-7 and the struct's end). */
    private final byte[] footerHead;
    private final byte[] footerTail;

    private final ThriftCompact thrift = new ThriftCompact();
    private final CRC32 crc = new CRC32();
    private final byte[] scratch = new byte[64 << 10];
    private final Page page;

    SmallPartEncoder(MessageType schema, PartWriter.Field[] fields, ColumnDescriptor[] columns, Set<String> binaryColumns,
                     Map<String, String> metadata, int pageBytes, int truncateLength, BytesInputCompressor compressor,
                     OffHeapPages memory) {
        this.page = new Page(memory);
        this.fields = fields;
        int n = columns.length;
        types = new PrimitiveType[n];
        typeIds = new int[n];
        stats = new boolean[n];
        paths = new byte[n][][];
        encodings = new int[n][];
        for (int i = 0; i < n; i++) {
            ColumnDescriptor c = columns[i];
            types[i] = c.getPrimitiveType();
            typeIds[i] = typeId(types[i].getPrimitiveTypeName());
            stats[i] = !binaryColumns.contains(fields[i].name());
            String[] path = c.getPath();
            paths[i] = new byte[path.length][];
            for (int p = 0; p < path.length; p++) {
                paths[i][p] = path[p].getBytes(StandardCharsets.UTF_8);
            }
            boolean rle = c.getMaxDefinitionLevel() > 0 || c.getMaxRepetitionLevel() > 0;
            boolean bitPacked = c.getMaxDefinitionLevel() == 0 || c.getMaxRepetitionLevel() == 0;
            encodings[i] = rle && bitPacked ? new int[] {PLAIN, RLE, BIT_PACKED}
                    : rle ? new int[] {PLAIN, RLE} : new int[] {PLAIN, BIT_PACKED};
        }
        this.pageThreshold = pageBytes - pageBytes / 10;
        this.truncateLength = truncateLength;
        this.compressor = compressor;
        this.codec = compressor.getCodecName().getParquetCompressionCodec().getValue();
        byte[][] split = footerTemplate(schema, metadata);
        footerHead = split[0];
        footerTail = split[1];
        Page p = page;
        CLEANER.register(this, p::free);
    }

    private static int typeId(PrimitiveTypeName t) {
        return switch (t) {
            case BOOLEAN -> 0;
            case INT32 -> 1;
            case INT64 -> 2;
            case FLOAT -> 4;
            case DOUBLE -> 5;
            case BINARY -> 6;
            default -> throw new IllegalArgumentException("type " + t + " is not written by the part writer");
        };
    }

    /**
     * parquet-java's footer for this schema and metadata with no row groups, cut around fields 3
     * (num_rows) and 4 (row_groups): found as the one byte where the footers of 0 and 1 rows differ.
     */
    private static byte[][] footerTemplate(MessageType schema, Map<String, String> metadata) {
        try {
            ParquetMetadata empty = new ParquetMetadata(
                    new org.apache.parquet.hadoop.metadata.FileMetaData(schema, metadata, Version.FULL_VERSION), List.of());
            org.apache.parquet.format.FileMetaData t = new ParquetMetadataConverter()
                    .toParquetMetadata(ParquetFileWriter.CURRENT_VERSION, empty);
            ByteArrayOutputStream a = new ByteArrayOutputStream();
            Util.writeFileMetaData(t, a);
            t.setNum_rows(1);
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            Util.writeFileMetaData(t, b);
            byte[] zero = a.toByteArray();
            byte[] one = b.toByteArray();
            int d = 0;
            while (d < zero.length && zero[d] == one[d]) {
                d++;
            }
            // ... 0x16 (field 3, i64) 0x00 (0 rows) 0x19 (field 4, list) 0x0C (no structs) ...
            if (zero.length != one.length || d < 1 || d + 3 > zero.length || zero[d - 1] != 0x16 || zero[d] != 0
                    || one[d] != 2 || zero[d + 1] != 0x19 || zero[d + 2] != 0x0C) {
                throw new IllegalStateException("parquet-java's footer is not laid out as expected");
            }
            return new byte[][] {java.util.Arrays.copyOf(zero, d - 1), java.util.Arrays.copyOfRange(zero, d + 3, zero.length)};
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** What one column chunk left for the indexes and the footer. */
    private static final class Chunk {
        long dataOffset;
        long values;
        long uncompressed;
        long compressed;
        int pages;
        long[] pageOffsets = new long[2];
        int[] pageSizes = new int[2];
        long[] firstRows = new long[2];
        Statistics<?> statistics;
        ColumnIndexBuilder index;
        ColumnIndex built;
        long indexOffset;
        int indexLength;
        long offsetIndexOffset;
        int offsetIndexLength;

        void page(long offset, int size, long firstRow) {
            if (pages == pageOffsets.length) {
                pageOffsets = java.util.Arrays.copyOf(pageOffsets, pages * 2);
                pageSizes = java.util.Arrays.copyOf(pageSizes, pages * 2);
                firstRows = java.util.Arrays.copyOf(firstRows, pages * 2);
            }
            pageOffsets[pages] = offset;
            pageSizes[pages] = size;
            firstRows[pages] = firstRow;
            pages++;
        }
    }

    /**
     * Writes the whole file of {@code rows} (values per field, nulls checked; at least one) from the
     * stream's position, and closes the stream; returns the file's bytes.
     */
    long write(PositionOutputStream out, List<Object[]> rows) throws IOException {
        if (rows.isEmpty()) {
            throw new IllegalArgumentException("a part of no rows has no row group to encode");
        }
        try (out) {
            long fileStart = out.getPos();
            out.write(MAGIC);
            Chunk[] chunks = new Chunk[fields.length];
            long groupStart = out.getPos();
            long totalUncompressed = 0;
            long totalCompressed = 0;
            for (int c = 0; c < fields.length; c++) {
                Chunk chunk = new Chunk();
                chunks[c] = chunk;
                writeChunk(out, c, rows, chunk);
                totalUncompressed += chunk.uncompressed;
                totalCompressed += chunk.compressed;
            }
            for (int c = 0; c < fields.length; c++) {
                Chunk chunk = chunks[c];
                chunk.built = chunk.index == null ? null : chunk.index.build();
                if (chunk.built != null) {
                    chunk.indexOffset = out.getPos();
                    columnIndex(chunk.built);
                    chunk.indexLength = thrift.size();
                    out.write(thrift.array(), 0, thrift.size());
                }
            }
            for (int c = 0; c < fields.length; c++) {
                Chunk chunk = chunks[c];
                chunk.offsetIndexOffset = out.getPos();
                offsetIndex(chunk, typeIds[c] == 6);
                chunk.offsetIndexLength = thrift.size();
                out.write(thrift.array(), 0, thrift.size());
            }
            footer(rows.size(), chunks, groupStart, totalUncompressed, totalCompressed);
            int length = thrift.size();
            out.write(thrift.array(), 0, length);
            out.write(length & 0xFF);
            out.write(length >>> 8 & 0xFF);
            out.write(length >>> 16 & 0xFF);
            out.write(length >>> 24 & 0xFF);
            out.write(MAGIC);
            return out.getPos() - fileStart;
        }
    }

    private void writeChunk(PositionOutputStream out, int c, List<Object[]> rows, Chunk chunk) throws IOException {
        PartWriter.Field f = fields[c];
        chunk.dataOffset = out.getPos();
        if (stats[c]) {
            chunk.statistics = Statistics.createStats(types[c]);
            chunk.index = ColumnIndexBuilder.getBuilder(types[c], truncateLength);
        }
        int start = 0;
        long estimate = 0;
        for (int r = 0; r < rows.size(); r++) {
            estimate += estimate(f, rows.get(r)[c]);
            if (estimate >= pageThreshold || r == rows.size() - 1) {
                writePage(out, c, rows, start, r + 1, chunk);
                start = r + 1;
                estimate = 0;
            }
        }
    }

    /** About what a value adds to a page (levels counted at a byte per entry). */
    private static long estimate(PartWriter.Field f, Object v) {
        if (v == null) {
            return 1;
        }
        if (f.array()) {
            List<?> items = (List<?>) v;
            long n = 1;
            for (Object item : items) {
                n += 1 + size(f.kind(), item);
            }
            return n;
        }
        return 1 + size(f.kind(), v);
    }

    private static long size(PartWriter.Kind kind, Object v) {
        return switch (kind) {
            case BOOLEAN -> 1;
            case INT, FLOAT -> 4;
            case LONG, DOUBLE, TIMESTAMP_MILLIS, TIMESTAMP_MICROS -> 8;
            case STRING -> 4 + (v instanceof Utf8 u ? u.getByteLength() : ((CharSequence) v).length());
            case BYTES -> 4 + ((ByteBuffer) v).remaining();
        };
    }

    private void writePage(PositionOutputStream out, int c, List<Object[]> rows, int from, int to, Chunk chunk) throws IOException {
        PartWriter.Field f = fields[c];
        Statistics<?> pageStats = stats[c] ? Statistics.createStats(types[c]) : null;
        Page p = page;
        p.clear();
        int entries = 0;
        if (f.array()) {
            int at = p.beginLevels();
            Levels levels = p.levels(1);
            for (int r = from; r < to; r++) {
                Object v = rows.get(r)[c];
                int n = v == null ? 0 : ((List<?>) v).size();
                levels.add(0);
                for (int i = 1; i < n; i++) {
                    levels.add(1);
                }
            }
            levels.finish();
            p.endLevels(at);
        }
        if (f.maxDefinition() > 0) {
            int at = p.beginLevels();
            Levels levels = p.levels(32 - Integer.numberOfLeadingZeros(f.maxDefinition()));
            for (int r = from; r < to; r++) {
                Object v = rows.get(r)[c];
                if (v == null) {
                    levels.add(0);
                    entries++;
                } else if (f.array()) {
                    List<?> items = (List<?>) v;
                    if (items.isEmpty()) {
                        levels.add(f.maxDefinition() - 1);
                        entries++;
                    } else {
                        for (int i = 0; i < items.size(); i++) {
                            levels.add(f.maxDefinition());
                        }
                        entries += items.size();
                    }
                } else {
                    levels.add(f.maxDefinition());
                    entries++;
                }
            }
            levels.finish();
            p.endLevels(at);
        } else {
            entries = to - from;
        }
        int bits = 0;
        int bitCount = 0;
        for (int r = from; r < to; r++) {
            Object v = rows.get(r)[c];
            if (v == null) {
                if (pageStats != null) {
                    pageStats.incrementNumNulls();
                }
            } else if (f.array()) {
                List<?> items = (List<?>) v;
                if (items.isEmpty() && pageStats != null) {
                    pageStats.incrementNumNulls();
                }
                for (Object item : items) {
                    if (f.kind() == PartWriter.Kind.BOOLEAN) {
                        bits = booleanBit(p, (Boolean) item, bits, bitCount++, pageStats);
                    } else {
                        value(p, f.kind(), item, pageStats);
                    }
                }
            } else if (f.kind() == PartWriter.Kind.BOOLEAN) {
                bits = booleanBit(p, (Boolean) v, bits, bitCount++, pageStats);
            } else {
                value(p, f.kind(), v, pageStats);
            }
        }
        if (bitCount % 8 != 0) {
            p.ensure(1).put((byte) bits);
        }
        ByteBuffer body = p.flip();
        int uncompressed = body.remaining();
        BytesInput compressedBytes = compressor.compress(BytesInput.from(body));
        ByteBuffer compressed = compressedBytes.toByteBuffer();
        int compressedSize = compressed.remaining();
        crc.reset();
        crc.update(compressed.duplicate());
        thrift.reset();
        thrift.beginStruct();
        thrift.i32(1, DATA_PAGE);
        thrift.i32(2, uncompressed);
        thrift.i32(3, compressedSize);
        thrift.i32(4, (int) crc.getValue());
        thrift.beginStruct(5);
        thrift.i32(1, entries);
        thrift.i32(2, PLAIN);
        thrift.i32(3, f.maxDefinition() > 0 ? RLE : BIT_PACKED);
        thrift.i32(4, f.array() ? RLE : BIT_PACKED);
        thrift.endStruct();
        thrift.endStruct();
        long offset = out.getPos();
        int header = thrift.size();
        out.write(thrift.array(), 0, header);
        writeBuffer(out, compressed);
        chunk.page(offset, header + compressedSize, from);
        chunk.values += entries;
        chunk.uncompressed += header + uncompressed;
        chunk.compressed += header + compressedSize;
        if (pageStats != null) {
            chunk.statistics.mergeStatistics(pageStats);
            chunk.index.add(pageStats);
        }
    }

    private static int booleanBit(Page p, boolean v, int bits, int index, Statistics<?> s) {
        if (s != null) {
            s.updateStats(v);
        }
        if (v) {
            bits |= 1 << (index % 8);
        }
        if (index % 8 == 7) {
            p.ensure(1).put((byte) bits);
            return 0;
        }
        return bits;
    }

    private static void value(Page p, PartWriter.Kind kind, Object v, Statistics<?> s) {
        switch (kind) {
            case INT -> {
                int x = ((Number) v).intValue();
                p.ensure(4).putInt(x);
                if (s != null) {
                    s.updateStats(x);
                }
            }
            case LONG, TIMESTAMP_MILLIS, TIMESTAMP_MICROS -> {
                long x = PartWriter.longValue(kind, v);
                p.ensure(8).putLong(x);
                if (s != null) {
                    s.updateStats(x);
                }
            }
            case FLOAT -> {
                float x = ((Number) v).floatValue();
                p.ensure(4).putFloat(x);
                if (s != null) {
                    s.updateStats(x);
                }
            }
            case DOUBLE -> {
                double x = ((Number) v).doubleValue();
                p.ensure(8).putDouble(x);
                if (s != null) {
                    s.updateStats(x);
                }
            }
            case STRING -> {
                Binary x = PartWriter.string(v);
                int n = x.length();
                p.ensure(4 + n).putInt(n).put(x.toByteBuffer());
                if (s != null) {
                    s.updateStats(x);
                }
            }
            case BYTES -> {
                ByteBuffer b = (ByteBuffer) v;
                int n = b.remaining();
                ByteBuffer to = p.ensure(4 + n).putInt(n);
                to.put(to.position(), b, b.position(), n);
                to.position(to.position() + n);
                if (s != null) {
                    s.updateStats(Binary.fromConstantByteBuffer(b));
                }
            }
            default -> throw new IllegalStateException(kind.name());
        }
    }

    private void writeBuffer(PositionOutputStream out, ByteBuffer b) throws IOException {
        if (b.hasArray()) {
            out.write(b.array(), b.arrayOffset() + b.position(), b.remaining());
            return;
        }
        ByteBuffer d = b.duplicate();
        while (d.hasRemaining()) {
            int n = Math.min(scratch.length, d.remaining());
            d.get(scratch, 0, n);
            out.write(scratch, 0, n);
        }
    }

    private void columnIndex(ColumnIndex index) {
        ThriftCompact t = thrift;
        t.reset();
        t.beginStruct();
        List<Boolean> nullPages = index.getNullPages();
        t.list(1, ThriftCompact.TRUE, nullPages.size());
        for (Boolean b : nullPages) {
            t.boolValue(b);
        }
        List<ByteBuffer> min = index.getMinValues();
        t.list(2, ThriftCompact.BINARY, min.size());
        for (ByteBuffer b : min) {
            t.binaryValue(b);
        }
        List<ByteBuffer> max = index.getMaxValues();
        t.list(3, ThriftCompact.BINARY, max.size());
        for (ByteBuffer b : max) {
            t.binaryValue(b);
        }
        t.i32(4, switch (index.getBoundaryOrder()) {
            case UNORDERED -> 0;
            case ASCENDING -> 1;
            case DESCENDING -> 2;
        });
        List<Long> nulls = index.getNullCounts();
        if (nulls != null) {
            t.list(5, ThriftCompact.I64, nulls.size());
            for (Long n : nulls) {
                t.intValue(n);
            }
        }
        List<Long> nans = index.getNanCounts();
        if (nans != null && !nans.isEmpty()) {
            t.list(8, ThriftCompact.I64, nans.size());
            for (Long n : nans) {
                t.intValue(n);
            }
        }
        t.endStruct();
    }

    private void offsetIndex(Chunk chunk, boolean byteArray) {
        ThriftCompact t = thrift;
        t.reset();
        t.beginStruct();
        t.list(1, ThriftCompact.STRUCT, chunk.pages);
        for (int i = 0; i < chunk.pages; i++) {
            t.beginStruct();
            t.i64(1, chunk.pageOffsets[i]);
            t.i32(2, chunk.pageSizes[i]);
            t.i64(3, chunk.firstRows[i]);
            t.endStruct();
        }
        if (byteArray) {
            // parquet-java writes a count per page, 0 without size statistics
            t.list(2, ThriftCompact.I64, chunk.pages);
            for (int i = 0; i < chunk.pages; i++) {
                t.intValue(0);
            }
        }
        t.endStruct();
    }

    private void footer(long rows, Chunk[] chunks, long groupStart, long totalUncompressed, long totalCompressed) {
        ThriftCompact t = thrift;
        t.reset();
        t.raw(footerHead);
        t.resume(2);
        t.i64(3, rows);
        t.list(4, ThriftCompact.STRUCT, 1);
        t.beginStruct();
        t.list(1, ThriftCompact.STRUCT, chunks.length);
        for (int c = 0; c < chunks.length; c++) {
            Chunk chunk = chunks[c];
            t.beginStruct();
            t.i64(2, 0);
            t.beginStruct(3);
            t.i32(1, typeIds[c]);
            t.list(2, ThriftCompact.I32, encodings[c].length);
            for (int e : encodings[c]) {
                t.intValue(e);
            }
            t.list(3, ThriftCompact.BINARY, paths[c].length);
            for (byte[] p : paths[c]) {
                t.binaryValue(p);
            }
            t.i32(4, codec);
            t.i64(5, chunk.values);
            t.i64(6, chunk.uncompressed);
            t.i64(7, chunk.compressed);
            t.i64(9, chunk.dataOffset);
            if (chunk.statistics != null && !chunk.statistics.isEmpty()) {
                statistics(chunk.statistics, typeIds[c] != 6);
            }
            t.list(13, ThriftCompact.STRUCT, 1);
            t.beginStruct();
            t.i32(1, DATA_PAGE);
            t.i32(2, PLAIN);
            t.i32(3, chunk.pages);
            t.endStruct();
            t.endStruct();
            t.i64(4, chunk.offsetIndexOffset);
            t.i32(5, chunk.offsetIndexLength);
            if (chunk.built != null) {
                t.i64(6, chunk.indexOffset);
                t.i32(7, chunk.indexLength);
            }
            t.endStruct();
        }
        t.i64(2, totalUncompressed);
        t.i64(3, rows);
        t.i64(5, groupStart);
        t.i64(6, totalCompressed);
        t.i16(7, 0);
        t.endStruct();
        t.raw(footerTail);
    }

    /** As parquet-java's {@code ParquetMetadataConverter.toParquetStatistics} without truncation. */
    private void statistics(Statistics<?> s, boolean signed) {
        ThriftCompact t = thrift;
        t.beginStruct(12);
        if (s.isSmallerThan(MAX_STATS_SIZE)) {
            byte[] min = null;
            byte[] max = null;
            boolean equal = false;
            if (s.hasNonNullValue()) {
                min = s.getMinBytes();
                max = s.getMaxBytes();
                equal = java.util.Arrays.equals(min, max);
                if (signed || equal) {
                    t.binary(1, max);
                    t.binary(2, min);
                }
            }
            t.i64(3, s.getNumNulls());
            if (min != null) {
                t.binary(5, max);
                t.binary(6, min);
            }
            if (s.isNanCountSet()) {
                t.i64(9, s.getNanCount());
            }
        }
        t.endStruct();
    }

    /** The levels of one page section, run-length encoded (the RLE/bit-packing hybrid's RLE runs only). */
    private static final class Levels {
        private Page page;
        private int current = -1;
        private int run;

        void add(int level) {
            if (level == current) {
                run++;
                return;
            }
            flush();
            current = level;
            run = 1;
        }

        private void flush() {
            if (run > 0) {
                ByteBuffer b = page.ensure(6);
                long header = (long) run << 1;
                while ((header & ~0x7FL) != 0) {
                    b.put((byte) ((header & 0x7F) | 0x80));
                    header >>>= 7;
                }
                b.put((byte) header);
                b.put((byte) current); // levels here need at most 8 bits: one byte per run value
            }
            run = 0;
        }

        void finish() {
            flush();
            current = -1;
        }
    }

    /** The reused direct buffer a page is encoded into, grown as pages need. */
    private static final class Page {
        private final OffHeapPages memory;
        private ByteBuffer buffer;
        private final Levels levels = new Levels();

        Page(OffHeapPages memory) {
            this.memory = memory;
            levels.page = this;
        }

        void clear() {
            if (buffer != null) {
                buffer.clear();
            }
        }

        ByteBuffer ensure(int n) {
            if (buffer == null || buffer.remaining() < n) {
                int used = buffer == null ? 0 : buffer.position();
                long need = (long) used + n;
                long capacity = Math.max(64 << 10, Math.max(need, buffer == null ? 0 : 2L * buffer.capacity()));
                if (capacity > Integer.MAX_VALUE - 8) {
                    throw new IllegalStateException("page of " + need + " bytes is too large");
                }
                ByteBuffer grown = memory.direct((int) capacity).clear().order(ByteOrder.LITTLE_ENDIAN);
                if (buffer != null) {
                    grown.put(buffer.flip());
                    memory.release(buffer);
                }
                buffer = grown;
            }
            return buffer;
        }

        Levels levels(int bitWidth) {
            if (bitWidth > 8) {
                throw new IllegalStateException("levels of " + bitWidth + " bits");
            }
            levels.current = -1;
            levels.run = 0;
            return levels;
        }

        /** Reserves a section's 4-byte length; returns where it is. */
        int beginLevels() {
            ByteBuffer b = ensure(4);
            int at = b.position();
            b.putInt(0);
            return at;
        }

        void endLevels(int at) {
            buffer.putInt(at, buffer.position() - at - 4);
        }

        ByteBuffer flip() {
            ensure(0);
            return buffer.duplicate().flip();
        }

        void free() {
            if (buffer != null) {
                memory.release(buffer);
                buffer = null;
            }
        }
    }
}
