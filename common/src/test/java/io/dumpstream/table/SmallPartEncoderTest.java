package io.dumpstream.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.schema.DumpOutcome;
import io.dumpstream.schema.RejectedRecord;
import io.dumpstream.schema.TensorSnapshot;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.generic.IndexedRecord;
import org.apache.parquet.avro.AvroParquetReader;
import org.apache.parquet.format.ColumnChunk;
import org.apache.parquet.format.ColumnIndex;
import org.apache.parquet.format.ColumnMetaData;
import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.OffsetIndex;
import org.apache.parquet.format.PageHeader;
import org.apache.parquet.format.PageLocation;
import org.apache.parquet.format.RowGroup;
import org.apache.parquet.format.Util;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalInputFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A small part written in one go ({@link SmallPartEncoder}) is the file parquet-java's writer makes
 * from the same rows: footer, page headers, statistics, column and offset indexes equal field by
 * field (Thrift structures read back with parquet-format) but for offsets, sizes and checksums; and
 * where their page sizes let the two writers end pages at different rows, the same values in pages
 * no larger than a page size and a row.
 */
class SmallPartEncoderTest {

    @TempDir
    Path temp;

    /** The job's sink settings. */
    private static final ParquetWriters.Settings JOB = ParquetWriters.Settings.defaults().withPageBytes(64 << 10).withDictionary(false);

    @Test
    void snapshotsAreParquetJavasFile() throws Exception {
        for (ParquetWriters.Settings s : List.of(JOB, JOB.withPageBytes(1 << 20), JOB.withCodec(CompressionCodecName.SNAPPY))) {
            same(TensorSnapshot.getClassSchema(), SmallPartEncoderTest::snapshot, 7, s, true);
        }
    }

    @Test
    void rejectsAndDumpsAreParquetJavasFile() throws Exception {
        same(RejectedRecord.getClassSchema(), i -> TableRows.reject(i, "run", i % 2 == 0), 6, JOB, true);
        same(DumpOutcome.getClassSchema(), i -> TableRows.dump(i, "run", i % 2 == 0), 5, JOB, true);
    }

    @Test
    void everyKindAndLevelIsParquetJavasFile() throws Exception {
        same(KINDS, SmallPartEncoderTest::kinds, 40, JOB, true);
        same(KINDS, SmallPartEncoderTest::kinds, 1, JOB, true);
        same(KINDS, SmallPartEncoderTest::kinds, 40, JOB.withCodec(CompressionCodecName.SNAPPY), true);
    }

    @Test
    void smallPagesEndAtRowsAndHoldTheSameValues() throws Exception {
        // 1 KiB pages: both writers split every column into pages, each where its own size check says
        ParquetWriters.Settings small = JOB.withPageBytes(1024);
        same(TensorSnapshot.getClassSchema(), SmallPartEncoderTest::snapshot, 9, small, false);
        same(KINDS, SmallPartEncoderTest::kinds, 200, small, false);
    }

    private static TensorSnapshot snapshot(int i) {
        TensorSnapshot s = TableRows.snapshot(i, "run-" + (i % 2), "stage/é " + (i % 3), TableRows.bytes(700 * i + 3, i), i % 3 == 1);
        switch (i) {
            case 2 -> {
                s.setMin(Double.NaN);
                s.setShape(new ArrayList<>());
                s.setNote("n".repeat(100)); // past the column index's 64-byte truncation
            }
            case 3 -> {
                s.setMax(-0.0);
                s.setTensorName("t".repeat(5000)); // past the 4 KiB statistics limit
            }
            case 4 -> s.setMean(Double.NEGATIVE_INFINITY);
            default -> { }
        }
        return s;
    }

    /** Every kind the part writer writes, required, nullable and in lists. */
    private static final Schema KINDS = SchemaBuilder.record("Kinds").namespace("io.dumpstream.test").fields()
            .requiredBoolean("b").optionalBoolean("nb")
            .requiredInt("i").optionalInt("ni")
            .requiredLong("l").optionalLong("nl")
            .requiredFloat("f").optionalFloat("nf")
            .requiredDouble("d").optionalDouble("nd")
            .requiredString("s").optionalString("ns")
            .requiredBytes("by").optionalBytes("nby")
            .name("ms").type(LogicalTypes.timestampMillis().addToSchema(Schema.create(Schema.Type.LONG))).noDefault()
            .name("us").type(LogicalTypes.timestampMicros().addToSchema(Schema.create(Schema.Type.LONG))).noDefault()
            .name("ai").type().array().items().intType().noDefault()
            .name("ab").type().array().items().booleanType().noDefault()
            .name("as").type().array().items().stringType().noDefault()
            .name("nad").type().optional().array().items().doubleType()
            .endRecord();

    private static GenericRecord kinds(int i) {
        GenericData.Record r = new GenericData.Record(KINDS);
        boolean nulls = i % 3 == 0;
        r.put("b", i % 2 == 0);
        r.put("nb", nulls ? null : i % 5 == 0);
        r.put("i", i * 7 - 50);
        r.put("ni", nulls ? null : -i);
        r.put("l", (long) i << 33);
        r.put("nl", nulls ? null : Long.MIN_VALUE + i);
        r.put("f", i == 4 ? Float.NaN : i * 0.5f - 3);
        r.put("nf", nulls ? null : i == 5 ? -0.0f : (float) i);
        r.put("d", i == 7 ? Double.NaN : i == 8 ? Double.POSITIVE_INFINITY : i * -1.25);
        r.put("nd", nulls ? null : i == 1 ? 0.0 : Math.sqrt(i));
        r.put("s", "s" + (i % 4) + "é".repeat(i % 3));
        r.put("ns", nulls ? null : i % 7 == 1 ? "z".repeat(80) : "n" + i);
        r.put("by", ByteBuffer.wrap(TableRows.bytes(i * 37 % 900, i)));
        r.put("nby", nulls ? null : ByteBuffer.wrap(TableRows.bytes(5000 + i, i)));
        r.put("ms", 1_700_000_000_000L + i);
        r.put("us", -1_700_000_000_000_000L + i);
        List<Integer> ai = new ArrayList<>();
        List<Boolean> ab = new ArrayList<>();
        List<CharSequence> as = new ArrayList<>();
        for (int k = 0; k < i % 4; k++) {
            ai.add(k - i);
            ab.add((k + i) % 3 == 0);
            as.add("e" + k);
        }
        r.put("ai", ai);
        r.put("ab", ab);
        r.put("as", as);
        r.put("nad", i % 4 == 1 ? null : i % 4 == 2 ? List.of() : List.of(1.5 * i, -2.0, Double.NaN));
        return r;
    }

    /**
     * Writes {@code n} rows with parquet-java's writer and with the encoder; both read back to the
     * rows, and with {@code samePages} their Thrift structures are equal but for positions, sizes
     * and checksums, else each of the encoder's pages starts at a row and holds about a page.
     */
    private <T extends IndexedRecord> void same(Schema schema, IntFunction<T> row, int n, ParquetWriters.Settings settings,
                                                boolean samePages) throws Exception {
        List<T> rows = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            rows.add(row.apply(i));
        }
        Path java = temp.resolve(schema.getName() + "-java-" + n + "-" + settings.pageBytes() + settings.codec() + ".parquet");
        Path encoded = temp.resolve(schema.getName() + "-encoded-" + n + "-" + settings.pageBytes() + settings.codec() + ".parquet");
        try (PartWriter<T> w = new PartWriter.Factory(schema, settings, false).open(new ChannelOutputFile(java))) {
            for (T r : rows) {
                w.write(r);
            }
        }
        long written;
        try (PartWriter<T> w = new PartWriter.Factory(schema, settings, true).open(new ChannelOutputFile(encoded))) {
            for (T r : rows) {
                w.write(r);
            }
            w.close();
            written = w.dataSize();
        }
        assertEquals(Files.size(encoded), written, "the encoder's part reports its file's size");
        String what = schema.getName() + " " + n + " rows " + settings;
        Parts a = Parts.read(java);
        Parts b = Parts.read(encoded);
        if (samePages) {
            sameText(a.normalised(), b.normalised(), what);
        } else {
            assertEquals(a.footer.getSchema(), b.footer.getSchema(), what);
            assertEquals(a.footer.getKey_value_metadata(), b.footer.getKey_value_metadata(), what);
            assertEquals(a.footer.getColumn_orders(), b.footer.getColumn_orders(), what);
            RowGroup g = b.footer.getRow_groups().get(0);
            int split = 0;
            for (int c = 0; c < g.getColumns().size(); c++) {
                ColumnMetaData m = g.getColumns().get(c).getMeta_data();
                ColumnMetaData old = a.footer.getRow_groups().get(0).getColumns().get(c).getMeta_data();
                assertEquals(old.getNum_values(), m.getNum_values(), what + " " + m.getPath_in_schema());
                assertEquals(old.getStatistics(), m.getStatistics(), what + " " + m.getPath_in_schema());
                assertEquals(old.getEncodings(), m.getEncodings(), what + " " + m.getPath_in_schema());
                List<PageLocation> pages = b.offsetIndexes.get(c).getPage_locations();
                split += pages.size() > 1 ? 1 : 0;
                for (int p = 0; p < pages.size(); p++) {
                    PageHeader h = b.headers.get(c).get(p);
                    long firstRow = pages.get(p).getFirst_row_index();
                    long nextRow = p + 1 < pages.size() ? pages.get(p + 1).getFirst_row_index() : n;
                    assertTrue(nextRow > firstRow, what + " page " + p + " of " + m.getPath_in_schema() + " holds no row");
                    // a page closes once it passes 90% of the page size: at most that and the row that passed it
                    long largestRow = 16 + 16L * 6000;
                    assertTrue(h.getUncompressed_page_size() <= settings.pageBytes() + largestRow,
                            what + " page " + p + " of " + m.getPath_in_schema() + ": " + h.getUncompressed_page_size());
                }
            }
            assertTrue(split > 0, what + ": no column has more than one page");
        }
        // parquet-avro reads back the same records from both files (PartWriterTest shows parquet-java's are the rows)
        List<Object> back = readAvro(encoded, schema);
        assertEquals(n, back.size(), what);
        sameText(readAvro(java, schema).toString(), back.toString(), what);
        // and DuckDB reads the same table from both files
        List<Map<String, Object>> fromJava = DuckDb.query("SELECT * FROM read_parquet(" + DuckDb.literal(java.toString()) + ")");
        List<Map<String, Object>> fromEncoded = DuckDb.query("SELECT * FROM read_parquet(" + DuckDb.literal(encoded.toString()) + ")");
        assertEquals(n, fromEncoded.size(), what);
        sameText(hex(fromJava), hex(fromEncoded), what + " (DuckDB)");
    }

    /** Equal texts, or a failure showing where they part. */
    private static void sameText(String expected, String actual, String what) {
        if (!expected.equals(actual)) {
            int d = 0;
            while (d < Math.min(expected.length(), actual.length()) && expected.charAt(d) == actual.charAt(d)) {
                d++;
            }
            int from = Math.max(0, d - 200);
            throw new AssertionError(what + ": differ at " + d + ":\n expected ..." + expected.substring(from, Math.min(expected.length(), d + 200))
                    + "\n actual   ..." + actual.substring(from, Math.min(actual.length(), d + 200)));
        }
    }

    private static String hex(List<Map<String, Object>> rows) {
        StringBuilder sb = new StringBuilder();
        for (Map<String, Object> row : rows) {
            row.forEach((k, v) -> sb.append(k).append('=')
                    .append(v instanceof byte[] bytes ? java.util.HexFormat.of().formatHex(bytes) : String.valueOf(v)).append(';'));
            sb.append('\n');
        }
        return sb.toString();
    }

    private static List<Object> readAvro(Path file, Schema schema) throws IOException {
        io.dumpstream.manifest.AvroTrust.ensure();
        List<Object> out = new ArrayList<>();
        try (ParquetReader<GenericRecord> r = AvroParquetReader.<GenericRecord>builder(new LocalInputFile(file))
                .withDataModel(GenericData.get()).build()) {
            for (GenericRecord row = r.read(); row != null; row = r.read()) {
                out.add(row);
            }
        }
        return out;
    }

    /** A file's Thrift structures: footer, every page header, column and offset indexes. */
    private record Parts(FileMetaData footer, List<List<PageHeader>> headers, List<ColumnIndex> columnIndexes,
                         List<OffsetIndex> offsetIndexes) {

        static Parts read(Path file) throws IOException {
            byte[] f = Files.readAllBytes(file);
            int n = f.length;
            assertEquals("PAR1", new String(f, n - 4, 4, java.nio.charset.StandardCharsets.US_ASCII));
            assertEquals("PAR1", new String(f, 0, 4, java.nio.charset.StandardCharsets.US_ASCII));
            int len = ByteBuffer.wrap(f, n - 8, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt();
            FileMetaData md = Util.readFileMetaData(new ByteArrayInputStream(f, n - 8 - len, len));
            List<List<PageHeader>> headers = new ArrayList<>();
            List<ColumnIndex> cis = new ArrayList<>();
            List<OffsetIndex> ois = new ArrayList<>();
            for (RowGroup g : md.getRow_groups()) {
                for (ColumnChunk cc : g.getColumns()) {
                    OffsetIndex oi = Util.readOffsetIndex(new ByteArrayInputStream(f, (int) cc.getOffset_index_offset(),
                            cc.getOffset_index_length()));
                    ois.add(oi);
                    cis.add(cc.isSetColumn_index_offset() ? Util.readColumnIndex(new ByteArrayInputStream(f,
                            (int) cc.getColumn_index_offset(), cc.getColumn_index_length())) : null);
                    List<PageHeader> hs = new ArrayList<>();
                    long compressed = 0;
                    for (PageLocation loc : oi.getPage_locations()) {
                        ByteArrayInputStream in = new ByteArrayInputStream(f, (int) loc.getOffset(), loc.getCompressed_page_size());
                        PageHeader h = Util.readPageHeader(in);
                        // the header and its page fill the location exactly, and the checksum is the page's
                        assertEquals(h.getCompressed_page_size(), in.available(), "page at " + loc.getOffset());
                        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
                        crc.update(f, (int) (loc.getOffset() + loc.getCompressed_page_size() - h.getCompressed_page_size()),
                                h.getCompressed_page_size());
                        assertEquals((int) crc.getValue(), h.getCrc(), "crc of the page at " + loc.getOffset());
                        compressed += loc.getCompressed_page_size();
                        hs.add(h);
                    }
                    assertEquals(cc.getMeta_data().getTotal_compressed_size(), compressed, "chunk size");
                    assertEquals(cc.getMeta_data().getData_page_offset(), oi.getPage_locations().get(0).getOffset());
                    headers.add(hs);
                }
            }
            return new Parts(md, headers, cis, ois);
        }

        /** Everything but positions, sizes and checksums (and so the level runs' encoding). */
        String normalised() {
            FileMetaData md = footer.deepCopy();
            for (RowGroup g : md.getRow_groups()) {
                g.setTotal_byte_size(0);
                g.setTotal_compressed_size(0);
                g.setFile_offset(0);
                for (ColumnChunk cc : g.getColumns()) {
                    cc.setOffset_index_offset(0);
                    cc.setOffset_index_length(0);
                    if (cc.isSetColumn_index_offset()) {
                        cc.setColumn_index_offset(0);
                        cc.setColumn_index_length(0);
                    }
                    ColumnMetaData m = cc.getMeta_data();
                    m.setTotal_compressed_size(0);
                    m.setTotal_uncompressed_size(0);
                    m.setData_page_offset(0);
                }
            }
            StringBuilder sb = new StringBuilder(md.toString());
            for (List<PageHeader> hs : headers) {
                for (PageHeader h : hs) {
                    PageHeader c = h.deepCopy();
                    c.setCompressed_page_size(0);
                    c.setUncompressed_page_size(0); // levels: RLE runs here, parquet-java bit-packs short runs
                    c.setCrc(0);
                    sb.append('\n').append(c);
                }
            }
            for (ColumnIndex ci : columnIndexes) {
                sb.append('\n').append(ci);
            }
            for (OffsetIndex oi : offsetIndexes) {
                OffsetIndex c = oi.deepCopy();
                for (PageLocation loc : c.getPage_locations()) {
                    loc.setOffset(0);
                    loc.setCompressed_page_size(0);
                }
                sb.append('\n').append(c);
            }
            return sb.toString();
        }
    }
}
