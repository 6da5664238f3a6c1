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
import org.apache.parquet.format.BoundaryOrder;
import org.apache.parquet.format.ColumnChunk;
import org.apache.parquet.format.ColumnMetaData;
import org.apache.parquet.format.DataPageHeader;
import org.apache.parquet.format.Encoding;
import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.OffsetIndex;
import org.apache.parquet.format.PageEncodingStats;
import org.apache.parquet.format.PageHeader;
import org.apache.parquet.format.PageLocation;
import org.apache.parquet.format.PageType;
import org.apache.parquet.format.RowGroup;
import org.apache.parquet.format.Type;
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
 * field by field ({@link ThriftCompact}), their field ids and enum values taken from
 * parquet-format-structures' generated classes ({@link Ids}). What is the same in every part (the
 * schema, the key-value metadata with the Avro schema text, created-by, column orders) is
 * serialised once, by parquet-java's own converter. Statistics and column indexes come from
 * parquet-java's {@link Statistics}, {@link ColumnIndexBuilder} and its converter's
 * {@code toParquetStatistics}, so their orders, size limit, NaN counts and truncation are
 * parquet-java's.
 *
 * <p>Page boundaries fall at row boundaries, a page closing once it holds about a page size (as
 * parquet-java's 10% tolerance); they need not fall where parquet-java's size checks would put them.
 *
 * <p>Why the headers, indexes and footer are encoded by hand: the same structures built as
 * parquet-java's objects (its converter's page header, {@code toParquetColumnIndex},
 * {@code toParquetOffsetIndex}, a cached {@code FileMetaData} template) and serialised by its
 * Thrift classes wrote the same bytes but cost 13% more CPU per part (about 45 us of a 4 x 48 KiB
 * part; A/B of 2026-12-07, BENCHMARKS.md "Parquet metadata on parquet-java (issue 34)"). That arm
 * is in the history at commit 92b656a. {@code SmallPartReadByParquetJavaTest} reads these files
 * with parquet-java's own reader.
 *
 * <p>Not thread-safe: one per {@link PartWriter.Factory}, like its compressor.
 */
final class SmallPartEncoder {
    private static final Cleaner CLEANER = Cleaner.create();
    private static final byte[] MAGIC = "PAR1".getBytes(StandardCharsets.US_ASCII);

    private final PartWriter.Field[] fields;
    private final PrimitiveType[] types;
    private final int[] typeIds;
    private final boolean[] stats;
    private final byte[][][] paths;
    private final int[][] encodings;
    private final int pageThreshold;
    private final int truncateLength;
    private final int statisticsTruncateLength;
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
                     Map<String, String> metadata, int pageBytes, int truncateLength, int statisticsTruncateLength,
                     BytesInputCompressor compressor, OffHeapPages memory) {
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
            encodings[i] = rle && bitPacked ? new int[] {Ids.PLAIN, Ids.RLE, Ids.BIT_PACKED}
                    : rle ? new int[] {Ids.PLAIN, Ids.RLE} : new int[] {Ids.PLAIN, Ids.BIT_PACKED};
        }
        this.pageThreshold = pageBytes - pageBytes / 10;
        this.truncateLength = truncateLength;
        this.statisticsTruncateLength = statisticsTruncateLength;
        this.compressor = compressor;
        this.codec = compressor.getCodecName().getParquetCompressionCodec().getValue();
        byte[][] split = footerTemplate(schema, metadata);
        footerHead = split[0];
        footerTail = split[1];
        Page p = page;
        CLEANER.register(this, p::free);
    }

    /** parquet.thrift's type of a column of primitive type {@code t}. */
    private static int typeId(PrimitiveTypeName t) {
        Type type = switch (t) {
            case BOOLEAN -> Type.BOOLEAN;
            case INT32 -> Type.INT32;
            case INT64 -> Type.INT64;
            case FLOAT -> Type.FLOAT;
            case DOUBLE -> Type.DOUBLE;
            case BINARY -> Type.BYTE_ARRAY;
            default -> throw new IllegalArgumentException("type " + t + " is not written by the part writer");
        };
        return type.getValue();
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
                offsetIndex(chunk, typeIds[c] == Type.BYTE_ARRAY.getValue());
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
        // a data page v1 header as parquet-java's converter makes it (statistics no longer go into page headers)
        thrift.reset();
        thrift.beginStruct();
        thrift.i32(Ids.PAGE_TYPE, Ids.DATA_PAGE);
        thrift.i32(Ids.PAGE_UNCOMPRESSED_SIZE, uncompressed);
        thrift.i32(Ids.PAGE_COMPRESSED_SIZE, compressedSize);
        thrift.i32(Ids.PAGE_CRC, (int) crc.getValue());
        thrift.beginStruct(Ids.PAGE_DATA_PAGE_HEADER);
        thrift.i32(Ids.DATA_NUM_VALUES, entries);
        thrift.i32(Ids.DATA_ENCODING, Ids.PLAIN);
        thrift.i32(Ids.DATA_DEFINITION_LEVEL_ENCODING, f.maxDefinition() > 0 ? Ids.RLE : Ids.BIT_PACKED);
        thrift.i32(Ids.DATA_REPETITION_LEVEL_ENCODING, f.array() ? Ids.RLE : Ids.BIT_PACKED);
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
        t.list(Ids.INDEX_NULL_PAGES, ThriftCompact.TRUE, nullPages.size());
        for (Boolean b : nullPages) {
            t.boolValue(b);
        }
        List<ByteBuffer> min = index.getMinValues();
        t.list(Ids.INDEX_MIN_VALUES, ThriftCompact.BINARY, min.size());
        for (ByteBuffer b : min) {
            t.binaryValue(b);
        }
        List<ByteBuffer> max = index.getMaxValues();
        t.list(Ids.INDEX_MAX_VALUES, ThriftCompact.BINARY, max.size());
        for (ByteBuffer b : max) {
            t.binaryValue(b);
        }
        t.i32(Ids.INDEX_BOUNDARY_ORDER, BoundaryOrder.valueOf(index.getBoundaryOrder().name()).getValue());
        List<Long> nulls = index.getNullCounts();
        if (nulls != null) {
            t.list(Ids.INDEX_NULL_COUNTS, ThriftCompact.I64, nulls.size());
            for (Long n : nulls) {
                t.intValue(n);
            }
        }
        List<Long> nans = index.getNanCounts();
        if (nans != null && !nans.isEmpty()) {
            t.list(Ids.INDEX_NAN_COUNTS, ThriftCompact.I64, nans.size());
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
        t.list(Ids.OFFSETS_PAGE_LOCATIONS, ThriftCompact.STRUCT, chunk.pages);
        for (int i = 0; i < chunk.pages; i++) {
            t.beginStruct();
            t.i64(Ids.LOCATION_OFFSET, chunk.pageOffsets[i]);
            t.i32(Ids.LOCATION_COMPRESSED_PAGE_SIZE, chunk.pageSizes[i]);
            t.i64(Ids.LOCATION_FIRST_ROW_INDEX, chunk.firstRows[i]);
            t.endStruct();
        }
        if (byteArray) {
            // parquet-java writes a count per page, 0 without size statistics
            t.list(Ids.OFFSETS_UNENCODED_BYTE_ARRAY_DATA_BYTES, ThriftCompact.I64, chunk.pages);
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
        t.resume(Ids.FILE_SCHEMA);
        t.i64(Ids.FILE_NUM_ROWS, rows);
        t.list(Ids.FILE_ROW_GROUPS, ThriftCompact.STRUCT, 1);
        t.beginStruct();
        t.list(Ids.GROUP_COLUMNS, ThriftCompact.STRUCT, chunks.length);
        for (int c = 0; c < chunks.length; c++) {
            Chunk chunk = chunks[c];
            t.beginStruct();
            t.i64(Ids.CHUNK_FILE_OFFSET, 0); // no column metadata after the chunk's data, as parquet-java
            t.beginStruct(Ids.CHUNK_META_DATA);
            t.i32(Ids.META_TYPE, typeIds[c]);
            t.list(Ids.META_ENCODINGS, ThriftCompact.I32, encodings[c].length);
            for (int e : encodings[c]) {
                t.intValue(e);
            }
            t.list(Ids.META_PATH_IN_SCHEMA, ThriftCompact.BINARY, paths[c].length);
            for (byte[] p : paths[c]) {
                t.binaryValue(p);
            }
            t.i32(Ids.META_CODEC, codec);
            t.i64(Ids.META_NUM_VALUES, chunk.values);
            t.i64(Ids.META_TOTAL_UNCOMPRESSED_SIZE, chunk.uncompressed);
            t.i64(Ids.META_TOTAL_COMPRESSED_SIZE, chunk.compressed);
            t.i64(Ids.META_DATA_PAGE_OFFSET, chunk.dataOffset);
            if (chunk.statistics != null && !chunk.statistics.isEmpty()) {
                statistics(ParquetMetadataConverter.toParquetStatistics(chunk.statistics, statisticsTruncateLength));
            }
            t.list(Ids.META_ENCODING_STATS, ThriftCompact.STRUCT, 1);
            t.beginStruct();
            t.i32(Ids.STATS_PAGE_TYPE, Ids.DATA_PAGE);
            t.i32(Ids.STATS_ENCODING, Ids.PLAIN);
            t.i32(Ids.STATS_COUNT, chunk.pages);
            t.endStruct();
            t.endStruct();
            t.i64(Ids.CHUNK_OFFSET_INDEX_OFFSET, chunk.offsetIndexOffset);
            t.i32(Ids.CHUNK_OFFSET_INDEX_LENGTH, chunk.offsetIndexLength);
            if (chunk.built != null) {
                t.i64(Ids.CHUNK_COLUMN_INDEX_OFFSET, chunk.indexOffset);
                t.i32(Ids.CHUNK_COLUMN_INDEX_LENGTH, chunk.indexLength);
            }
            t.endStruct();
        }
        t.i64(Ids.GROUP_TOTAL_BYTE_SIZE, totalUncompressed);
        t.i64(Ids.GROUP_NUM_ROWS, rows);
        t.i64(Ids.GROUP_FILE_OFFSET, groupStart);
        t.i64(Ids.GROUP_TOTAL_COMPRESSED_SIZE, totalCompressed);
        t.i16(Ids.GROUP_ORDINAL, 0);
        t.endStruct();
        t.raw(footerTail);
    }

    /**
     * A column chunk's statistics as parquet-java's converter makes them (what it leaves out past its
     * size limit, min and max only where the type's order is signed or they are equal, NaN counts),
     * written field by field.
     */
    private void statistics(org.apache.parquet.format.Statistics s) {
        ThriftCompact t = thrift;
        t.beginStruct(Ids.META_STATISTICS);
        if (s.isSetMax()) {
            t.binary(Ids.STATISTICS_MAX, s.getMax());
        }
        if (s.isSetMin()) {
            t.binary(Ids.STATISTICS_MIN, s.getMin());
        }
        if (s.isSetNull_count()) {
            t.i64(Ids.STATISTICS_NULL_COUNT, s.getNull_count());
        }
        if (s.isSetDistinct_count()) {
            t.i64(Ids.STATISTICS_DISTINCT_COUNT, s.getDistinct_count());
        }
        if (s.isSetMax_value()) {
            t.binary(Ids.STATISTICS_MAX_VALUE, s.getMax_value());
        }
        if (s.isSetMin_value()) {
            t.binary(Ids.STATISTICS_MIN_VALUE, s.getMin_value());
        }
        if (s.isSetIs_max_value_exact()) {
            t.bool(Ids.STATISTICS_IS_MAX_VALUE_EXACT, s.isIs_max_value_exact());
        }
        if (s.isSetIs_min_value_exact()) {
            t.bool(Ids.STATISTICS_IS_MIN_VALUE_EXACT, s.isIs_min_value_exact());
        }
        if (s.isSetNan_count()) {
            t.i64(Ids.STATISTICS_NAN_COUNT, s.getNan_count());
        }
        t.endStruct();
    }

    /**
     * parquet.thrift's field ids and enum values this encoder writes, from parquet-format-structures'
     * generated classes (ids in increasing order within a struct, as {@link ThriftCompact} needs).
     */
    private static final class Ids {
        static final int PAGE_TYPE = PageHeader._Fields.TYPE.getThriftFieldId();
        static final int PAGE_UNCOMPRESSED_SIZE = PageHeader._Fields.UNCOMPRESSED_PAGE_SIZE.getThriftFieldId();
        static final int PAGE_COMPRESSED_SIZE = PageHeader._Fields.COMPRESSED_PAGE_SIZE.getThriftFieldId();
        static final int PAGE_CRC = PageHeader._Fields.CRC.getThriftFieldId();
        static final int PAGE_DATA_PAGE_HEADER = PageHeader._Fields.DATA_PAGE_HEADER.getThriftFieldId();
        static final int DATA_NUM_VALUES = DataPageHeader._Fields.NUM_VALUES.getThriftFieldId();
        static final int DATA_ENCODING = DataPageHeader._Fields.ENCODING.getThriftFieldId();
        static final int DATA_DEFINITION_LEVEL_ENCODING = DataPageHeader._Fields.DEFINITION_LEVEL_ENCODING.getThriftFieldId();
        static final int DATA_REPETITION_LEVEL_ENCODING = DataPageHeader._Fields.REPETITION_LEVEL_ENCODING.getThriftFieldId();

        static final int INDEX_NULL_PAGES = org.apache.parquet.format.ColumnIndex._Fields.NULL_PAGES.getThriftFieldId();
        static final int INDEX_MIN_VALUES = org.apache.parquet.format.ColumnIndex._Fields.MIN_VALUES.getThriftFieldId();
        static final int INDEX_MAX_VALUES = org.apache.parquet.format.ColumnIndex._Fields.MAX_VALUES.getThriftFieldId();
        static final int INDEX_BOUNDARY_ORDER = org.apache.parquet.format.ColumnIndex._Fields.BOUNDARY_ORDER.getThriftFieldId();
        static final int INDEX_NULL_COUNTS = org.apache.parquet.format.ColumnIndex._Fields.NULL_COUNTS.getThriftFieldId();
        static final int INDEX_NAN_COUNTS = org.apache.parquet.format.ColumnIndex._Fields.NAN_COUNTS.getThriftFieldId();

        static final int OFFSETS_PAGE_LOCATIONS = OffsetIndex._Fields.PAGE_LOCATIONS.getThriftFieldId();
        static final int OFFSETS_UNENCODED_BYTE_ARRAY_DATA_BYTES =
                OffsetIndex._Fields.UNENCODED_BYTE_ARRAY_DATA_BYTES.getThriftFieldId();
        static final int LOCATION_OFFSET = PageLocation._Fields.OFFSET.getThriftFieldId();
        static final int LOCATION_COMPRESSED_PAGE_SIZE = PageLocation._Fields.COMPRESSED_PAGE_SIZE.getThriftFieldId();
        static final int LOCATION_FIRST_ROW_INDEX = PageLocation._Fields.FIRST_ROW_INDEX.getThriftFieldId();

        static final int FILE_SCHEMA = FileMetaData._Fields.SCHEMA.getThriftFieldId();
        static final int FILE_NUM_ROWS = FileMetaData._Fields.NUM_ROWS.getThriftFieldId();
        static final int FILE_ROW_GROUPS = FileMetaData._Fields.ROW_GROUPS.getThriftFieldId();
        static final int GROUP_COLUMNS = RowGroup._Fields.COLUMNS.getThriftFieldId();
        static final int GROUP_TOTAL_BYTE_SIZE = RowGroup._Fields.TOTAL_BYTE_SIZE.getThriftFieldId();
        static final int GROUP_NUM_ROWS = RowGroup._Fields.NUM_ROWS.getThriftFieldId();
        static final int GROUP_FILE_OFFSET = RowGroup._Fields.FILE_OFFSET.getThriftFieldId();
        static final int GROUP_TOTAL_COMPRESSED_SIZE = RowGroup._Fields.TOTAL_COMPRESSED_SIZE.getThriftFieldId();
        static final int GROUP_ORDINAL = RowGroup._Fields.ORDINAL.getThriftFieldId();
        static final int CHUNK_FILE_OFFSET = ColumnChunk._Fields.FILE_OFFSET.getThriftFieldId();
        static final int CHUNK_META_DATA = ColumnChunk._Fields.META_DATA.getThriftFieldId();
        static final int CHUNK_OFFSET_INDEX_OFFSET = ColumnChunk._Fields.OFFSET_INDEX_OFFSET.getThriftFieldId();
        static final int CHUNK_OFFSET_INDEX_LENGTH = ColumnChunk._Fields.OFFSET_INDEX_LENGTH.getThriftFieldId();
        static final int CHUNK_COLUMN_INDEX_OFFSET = ColumnChunk._Fields.COLUMN_INDEX_OFFSET.getThriftFieldId();
        static final int CHUNK_COLUMN_INDEX_LENGTH = ColumnChunk._Fields.COLUMN_INDEX_LENGTH.getThriftFieldId();
        static final int META_TYPE = ColumnMetaData._Fields.TYPE.getThriftFieldId();
        static final int META_ENCODINGS = ColumnMetaData._Fields.ENCODINGS.getThriftFieldId();
        static final int META_PATH_IN_SCHEMA = ColumnMetaData._Fields.PATH_IN_SCHEMA.getThriftFieldId();
        static final int META_CODEC = ColumnMetaData._Fields.CODEC.getThriftFieldId();
        static final int META_NUM_VALUES = ColumnMetaData._Fields.NUM_VALUES.getThriftFieldId();
        static final int META_TOTAL_UNCOMPRESSED_SIZE = ColumnMetaData._Fields.TOTAL_UNCOMPRESSED_SIZE.getThriftFieldId();
        static final int META_TOTAL_COMPRESSED_SIZE = ColumnMetaData._Fields.TOTAL_COMPRESSED_SIZE.getThriftFieldId();
        static final int META_DATA_PAGE_OFFSET = ColumnMetaData._Fields.DATA_PAGE_OFFSET.getThriftFieldId();
        static final int META_STATISTICS = ColumnMetaData._Fields.STATISTICS.getThriftFieldId();
        static final int META_ENCODING_STATS = ColumnMetaData._Fields.ENCODING_STATS.getThriftFieldId();
        static final int STATS_PAGE_TYPE = PageEncodingStats._Fields.PAGE_TYPE.getThriftFieldId();
        static final int STATS_ENCODING = PageEncodingStats._Fields.ENCODING.getThriftFieldId();
        static final int STATS_COUNT = PageEncodingStats._Fields.COUNT.getThriftFieldId();
        static final int STATISTICS_MAX = org.apache.parquet.format.Statistics._Fields.MAX.getThriftFieldId();
        static final int STATISTICS_MIN = org.apache.parquet.format.Statistics._Fields.MIN.getThriftFieldId();
        static final int STATISTICS_NULL_COUNT = org.apache.parquet.format.Statistics._Fields.NULL_COUNT.getThriftFieldId();
        static final int STATISTICS_DISTINCT_COUNT = org.apache.parquet.format.Statistics._Fields.DISTINCT_COUNT.getThriftFieldId();
        static final int STATISTICS_MAX_VALUE = org.apache.parquet.format.Statistics._Fields.MAX_VALUE.getThriftFieldId();
        static final int STATISTICS_MIN_VALUE = org.apache.parquet.format.Statistics._Fields.MIN_VALUE.getThriftFieldId();
        static final int STATISTICS_IS_MAX_VALUE_EXACT =
                org.apache.parquet.format.Statistics._Fields.IS_MAX_VALUE_EXACT.getThriftFieldId();
        static final int STATISTICS_IS_MIN_VALUE_EXACT =
                org.apache.parquet.format.Statistics._Fields.IS_MIN_VALUE_EXACT.getThriftFieldId();
        static final int STATISTICS_NAN_COUNT = org.apache.parquet.format.Statistics._Fields.NAN_COUNT.getThriftFieldId();

        static final int DATA_PAGE = PageType.DATA_PAGE.getValue();
        static final int PLAIN = Encoding.PLAIN.getValue();
        static final int RLE = Encoding.RLE.getValue();
        static final int BIT_PACKED = Encoding.BIT_PACKED.getValue();

        private Ids() {
        }
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
