package io.dumpstream.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.Version;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.column.EncodingStats;
import org.apache.parquet.column.page.DataPageV1;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.column.page.PageReader;
import org.apache.parquet.column.statistics.Statistics;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.internal.column.columnindex.BoundaryOrder;
import org.apache.parquet.internal.column.columnindex.ColumnIndex;
import org.apache.parquet.internal.column.columnindex.OffsetIndex;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.io.api.Binary;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A small part written in one go ({@link SmallPartEncoder}) read by parquet-java's own
 * {@link ParquetFileReader}, page checksums verified: the footer (rows, key-value metadata,
 * created-by, each chunk's codec, encodings, values, page encoding statistics and statistics), the
 * column and offset indexes and every page header hold exactly the values the rows give.
 */
class SmallPartReadByParquetJavaTest {

    @TempDir
    Path temp;

    private static final Schema SCHEMA = SchemaBuilder.record("Part").namespace("io.dumpstream.test").fields()
            .requiredLong("id")
            .optionalString("name")
            .requiredFloat("score")
            .requiredBytes("payload")
            .name("temps").type().array().items().doubleType().noDefault()
            .endRecord();
    private static final int ROWS = 10;
    private static final int PAYLOAD = 296;

    /** Row i: id 100 + i, name "n" + i but null at 2 and 5, score i / 2 but NaN at 7, 296 payload bytes, temps [i, -i] but empty at 3. */
    private static GenericRecord row(int i) {
        GenericData.Record r = new GenericData.Record(SCHEMA);
        r.put("id", 100L + i);
        r.put("name", i == 2 || i == 5 ? null : "n" + i);
        r.put("score", i == 7 ? Float.NaN : i / 2.0f);
        r.put("payload", ByteBuffer.wrap(TableRows.bytes(PAYLOAD, i)));
        r.put("temps", i == 3 ? List.of() : List.of((double) i, (double) -i));
        return r;
    }

    @Test
    void parquetJavasReaderSeesTheExactMetadata() throws Exception {
        // 1 KiB pages: a page closes at the first row that takes it past 90% (922 bytes); the payload column's rows
        // count 301 bytes each (its 296 bytes, a length, a level), so its pages hold rows 0-3, 4-7 and 8-9
        ParquetWriters.Settings settings = ParquetWriters.Settings.defaults().withPageBytes(1024).withDictionary(false)
                .withCodec(CompressionCodecName.ZSTD);
        Path file = temp.resolve("part.parquet");
        PartWriter.Factory factory = new PartWriter.Factory(SCHEMA, settings, true);
        try (PartWriter<GenericRecord> w = factory.open(new ChannelOutputFile(file))) {
            for (int i = 0; i < ROWS; i++) {
                w.write(row(i));
            }
        }
        ParquetReadOptions options = ParquetReadOptions.builder().usePageChecksumVerification(true).build();
        try (ParquetFileReader reader = ParquetFileReader.open(new LocalInputFile(file), options)) {
            ParquetMetadata footer = reader.getFooter();
            assertEquals(Map.of("parquet.avro.schema", SCHEMA.toString(), "writer.model.name", "avro"),
                    footer.getFileMetaData().getKeyValueMetaData());
            assertEquals(Version.FULL_VERSION, footer.getFileMetaData().getCreatedBy());
            assertEquals(factory.parquetSchema(), footer.getFileMetaData().getSchema());
            assertEquals(1, footer.getBlocks().size());
            BlockMetaData group = footer.getBlocks().get(0);
            assertEquals(ROWS, group.getRowCount());
            assertEquals(4, group.getStartingPos(), "the row group starts after the magic");
            List<ColumnChunkMetaData> chunks = group.getColumns();
            assertEquals(List.of("id", "name", "score", "payload", "temps.list.element"),
                    chunks.stream().map(c -> c.getPath().toDotString()).toList());
            long compressed = 0;
            long uncompressed = 0;
            long next = 4;
            for (ColumnChunkMetaData c : chunks) {
                assertEquals(CompressionCodecName.ZSTD, c.getCodec(), c.getPath().toDotString());
                assertEquals(next, c.getFirstDataPageOffset(), "chunks follow each other: " + c.getPath());
                next += c.getTotalSize();
                compressed += c.getTotalSize();
                uncompressed += c.getTotalUncompressedSize();
            }
            assertEquals(compressed, group.getCompressedSize());
            assertEquals(uncompressed, group.getTotalByteSize());

            ColumnChunkMetaData id = chunks.get(0);
            assertEquals(Set.of(Encoding.PLAIN, Encoding.BIT_PACKED), id.getEncodings());
            assertEquals(ROWS, id.getValueCount());
            stats(id.getStatistics(), 100L, 109L, 0);
            index(reader.readColumnIndex(id), List.of(false), List.of(0L), BoundaryOrder.ASCENDING, null,
                    longBytes(100), longBytes(109));
            offsets(reader.readOffsetIndex(id), id, List.of(0L), Optional.empty());

            ColumnChunkMetaData name = chunks.get(1);
            assertEquals(Set.of(Encoding.PLAIN, Encoding.RLE, Encoding.BIT_PACKED), name.getEncodings());
            assertEquals(ROWS, name.getValueCount());
            stats(name.getStatistics(), Binary.fromString("n0"), Binary.fromString("n9"), 2);
            index(reader.readColumnIndex(name), List.of(false), List.of(2L), BoundaryOrder.ASCENDING, null,
                    "n0".getBytes(StandardCharsets.UTF_8), "n9".getBytes(StandardCharsets.UTF_8));
            offsets(reader.readOffsetIndex(name), name, List.of(0L), Optional.of(0L));

            ColumnChunkMetaData score = chunks.get(2);
            stats(score.getStatistics(), 0.0f, 4.5f, 0);
            assertEquals(1, score.getStatistics().getNanCount(), "score's NaN");
            index(reader.readColumnIndex(score), List.of(false), List.of(0L), BoundaryOrder.ASCENDING, List.of(1L),
                    floatBytes(0.0f), floatBytes(4.5f));
            offsets(reader.readOffsetIndex(score), score, List.of(0L), Optional.empty());

            // binary payloads: no statistics, no column index (as the sinks' parquet-java writer)
            ColumnChunkMetaData payload = chunks.get(3);
            assertEquals(Set.of(Encoding.PLAIN, Encoding.BIT_PACKED), payload.getEncodings());
            assertTrue(payload.getStatistics().isEmpty(), "payload statistics " + payload.getStatistics());
            assertNull(reader.readColumnIndex(payload));
            offsets(reader.readOffsetIndex(payload), payload, List.of(0L, 4L, 8L), Optional.of(0L));

            ColumnChunkMetaData temps = chunks.get(4);
            assertEquals(Set.of(Encoding.PLAIN, Encoding.RLE), temps.getEncodings());
            assertEquals(2 * ROWS - 1, temps.getValueCount(), "two values a row, one empty list's null");
            stats(temps.getStatistics(), -9.0, 9.0, 1);
            index(reader.readColumnIndex(temps), List.of(false), List.of(1L), BoundaryOrder.ASCENDING, List.of(0L),
                    doubleBytes(-9.0), doubleBytes(9.0));
            offsets(reader.readOffsetIndex(temps), temps, List.of(0L), Optional.empty());

            for (ColumnChunkMetaData c : chunks) {
                EncodingStats e = c.getEncodingStats();
                assertFalse(e.hasDictionaryPages(), c.getPath().toDotString());
                assertEquals(Set.of(Encoding.PLAIN), e.getDataEncodings(), c.getPath().toDotString());
                assertEquals(reader.readOffsetIndex(c).getPageCount(), e.getNumDataPagesEncodedAs(Encoding.PLAIN));
            }

            // every page: a v1 data page whose header counts its values and names its encodings (checksums verified)
            PageReadStore pages = reader.readNextRowGroup();
            List<ColumnDescriptor> columns = factory.parquetSchema().getColumns();
            List<List<Integer>> values = new ArrayList<>();
            for (ColumnDescriptor column : columns) {
                PageReader pr = pages.getPageReader(column);
                assertNull(pr.readDictionaryPage());
                List<Integer> counts = new ArrayList<>();
                for (DataPageV1 p = (DataPageV1) pr.readPage(); p != null; p = (DataPageV1) pr.readPage()) {
                    counts.add(p.getValueCount());
                    assertEquals(Encoding.PLAIN, p.getValueEncoding());
                    assertEquals(column.getMaxDefinitionLevel() > 0 ? Encoding.RLE : Encoding.BIT_PACKED, p.getDlEncoding());
                    assertEquals(column.getMaxRepetitionLevel() > 0 ? Encoding.RLE : Encoding.BIT_PACKED, p.getRlEncoding());
                    assertTrue(p.getCrc().isPresent(), "a checksum on every page");
                    assertTrue(p.getStatistics().isEmpty(), "no statistics in page headers");
                }
                values.add(counts);
            }
            assertEquals(List.of(List.of(10), List.of(10), List.of(10), List.of(4, 4, 2), List.of(19)), values);
            assertNull(reader.readNextRowGroup());
        }
    }

    private static void stats(Statistics<?> s, Object min, Object max, long nulls) {
        assertTrue(s.hasNonNullValue(), s.toString());
        assertEquals(min, s.genericGetMin(), s.toString());
        assertEquals(max, s.genericGetMax(), s.toString());
        assertEquals(nulls, s.getNumNulls(), s.toString());
    }

    private static void index(ColumnIndex index, List<Boolean> nullPages, List<Long> nullCounts, BoundaryOrder order,
                              List<Long> nanCounts, byte[]... minMax) {
        assertEquals(nullPages, index.getNullPages());
        assertEquals(nullCounts, index.getNullCounts());
        assertEquals(order, index.getBoundaryOrder());
        if (nanCounts != null) {
            assertEquals(nanCounts, index.getNanCounts());
        }
        assertEquals(List.of(ByteBuffer.wrap(minMax[0])), index.getMinValues());
        assertEquals(List.of(ByteBuffer.wrap(minMax[1])), index.getMaxValues());
    }

    /** Pages starting at the given rows, laid end to end from the chunk's first data page to its end. */
    private static void offsets(OffsetIndex index, ColumnChunkMetaData chunk, List<Long> firstRows,
                                Optional<Long> unencoded) {
        assertEquals(firstRows.size(), index.getPageCount(), chunk.getPath().toDotString());
        long at = chunk.getFirstDataPageOffset();
        for (int i = 0; i < index.getPageCount(); i++) {
            assertEquals(firstRows.get(i), index.getFirstRowIndex(i), chunk.getPath() + " page " + i);
            assertEquals(at, index.getOffset(i), chunk.getPath() + " page " + i);
            assertEquals(unencoded, index.getUnencodedByteArrayDataBytes(i), chunk.getPath() + " page " + i);
            at += index.getCompressedPageSize(i);
        }
        assertEquals(chunk.getFirstDataPageOffset() + chunk.getTotalSize(), at, chunk.getPath().toDotString());
    }

    private static byte[] longBytes(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }

    private static byte[] floatBytes(float v) {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putFloat(v).array();
    }

    private static byte[] doubleBytes(double v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putDouble(v).array();
    }
}
