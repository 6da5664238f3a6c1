package io.dumpstream.table;

import static io.dumpstream.table.TableRows.assertSameValues;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.schema.DumpOutcome;
import io.dumpstream.schema.RejectedRecord;
import io.dumpstream.schema.TensorSnapshot;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;
import org.apache.parquet.avro.AvroParquetReader;
import org.apache.parquet.column.statistics.Statistics;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.io.LocalInputFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The lean part writer writes the files parquet-avro writes: same footer, same values, every reader. */
class PartWriterTest {

    private static final int FOUR_MIB = 4 << 20;

    @TempDir
    Path temp;

    /** The job's sink settings (64 KiB pages, no dictionaries) and the offline defaults (dictionaries on). */
    private static final List<ParquetWriters.Settings> SETTINGS = List.of(
            ParquetWriters.Settings.defaults().withPageBytes(64 << 10).withDictionary(false),
            ParquetWriters.Settings.defaults(),
            ParquetWriters.Settings.defaults().withCodec(CompressionCodecName.SNAPPY).withPageBytes(1024));

    @Test
    void snapshotsMatchParquetAvro() throws Exception {
        sameAsParquetAvro(TensorSnapshot.class,
                i -> TableRows.snapshot(i, "run-" + (i % 2), "stage/é " + i, TableRows.bytes(1000 * i + 3, i), i % 3 == 1),
                7);
    }

    @Test
    void rejectsMatchParquetAvro() throws Exception {
        sameAsParquetAvro(RejectedRecord.class, i -> TableRows.reject(i, "run", i % 2 == 0), 6);
    }

    @Test
    void dumpsMatchParquetAvro() throws Exception {
        sameAsParquetAvro(DumpOutcome.class, i -> TableRows.dump(i, "run", i % 2 == 0), 5);
    }

    @Test
    void oneRowAndManyParts() throws Exception {
        // one factory, many files: nothing of one part leaks into the next
        PartWriter.Factory factory = new PartWriter.Factory(TensorSnapshot.getClassSchema(), SETTINGS.get(0));
        List<List<TensorSnapshot>> expected = new ArrayList<>();
        for (int p = 0; p < 5; p++) {
            List<TensorSnapshot> rows = new ArrayList<>();
            Path file = temp.resolve("part-" + p + ".parquet");
            try (PartWriter<TensorSnapshot> w = factory.open(new ChannelOutputFile(file))) {
                for (int i = 0; i <= p; i++) {
                    TensorSnapshot row = TableRows.snapshot(10 * p + i, "r", "s" + p, TableRows.bytes(100 + p * i, p), i == 0);
                    w.write(row);
                    rows.add(row);
                }
                assertEquals(p + 1, w.rows());
            }
            expected.add(rows);
        }
        for (int p = 0; p < 5; p++) {
            assertEquals(expected.get(p), readAvro(temp.resolve("part-" + p + ".parquet"), TensorSnapshot.class));
        }
    }

    /**
     * Parts open at once, as a sink's buckets are, written in turn, some closed while others go on and
     * new ones opened: the page memory they released (deferred payload copies, page buffers) is
     * handed to the others unzeroed, and every file still reads back its own rows exactly.
     */
    @Test
    void partsOpenAtOnceOnReusedPageMemoryReadBackTheirOwnRows() throws Exception {
        PartWriter.Factory factory = new PartWriter.Factory(TensorSnapshot.getClassSchema(), SETTINGS.get(0));
        java.util.Map<Integer, PartWriter<TensorSnapshot>> open = new java.util.TreeMap<>();
        java.util.Map<Integer, List<TensorSnapshot>> expected = new java.util.TreeMap<>();
        java.util.Random sizes = new java.util.Random(7);
        int next = 0;
        for (int round = 0; round < 6; round++) {
            while (open.size() < 8) {
                open.put(next, factory.open(new ChannelOutputFile(temp.resolve("reuse-" + next + ".parquet"))));
                expected.put(next, new ArrayList<>());
                next++;
            }
            for (var e : open.entrySet()) {
                // payloads of 4 KiB to 1.5 MiB: off the heap, deferred or (past the deferral) in pages
                int n = 4096 + sizes.nextInt(1536 << 10);
                TensorSnapshot row = TableRows.snapshot(100 * e.getKey() + round, "r", "s" + e.getKey(),
                        TableRows.bytes(n, 31L * e.getKey() + round), false);
                e.getValue().write(row);
                expected.get(e.getKey()).add(row);
            }
            // every other round the oldest half closes: its buffers go back for the others to reuse
            if (round % 2 == 1) {
                for (int k = 0; k < 4; k++) {
                    int oldest = open.keySet().iterator().next();
                    open.remove(oldest).close();
                }
            }
        }
        for (PartWriter<TensorSnapshot> w : open.values()) {
            w.close();
        }
        assertTrue(OffHeapPages.INSTANCE.keptBytes() > 0, "released page memory is kept for reuse");
        assertEquals(next, expected.size());
        for (var e : expected.entrySet()) {
            assertEquals(e.getValue(), readAvro(temp.resolve("reuse-" + e.getKey() + ".parquet"), TensorSnapshot.class),
                    "part " + e.getKey());
        }
    }

    /** The ZSTD level is the settings': a higher level gives a smaller file of compressible rows, both read back. */
    @Test
    void zstdLevelIsTheSettingsAndEveryLevelReadsBack() throws Exception {
        List<TensorSnapshot> rows = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            byte[] b = new byte[64 << 10];
            for (int j = 0; j < b.length; j++) {
                b[j] = (byte) ((j * 7 + i) % 13 + (j >> 9)); // repetitive but not trivial
            }
            rows.add(TableRows.snapshot(i, "run", "stage", b, false));
        }
        long[] sizes = new long[2];
        int[] levels = {1, 19};
        for (int k = 0; k < 2; k++) {
            ParquetWriters.Settings settings = SETTINGS.get(0).withCodec(CompressionCodecName.ZSTD).withZstdLevel(levels[k]);
            assertEquals(levels[k], settings.zstdLevel());
            Path file = temp.resolve("level-" + levels[k] + ".parquet");
            try (PartWriter<TensorSnapshot> w = new PartWriter.Factory(TensorSnapshot.getClassSchema(), settings)
                    .open(new ChannelOutputFile(file))) {
                for (TensorSnapshot r : rows) {
                    w.write(r);
                }
            }
            sizes[k] = Files.size(file);
            assertEquals(rows, readAvro(file, TensorSnapshot.class));
        }
        org.junit.jupiter.api.Assertions.assertTrue(sizes[1] < sizes[0], "level 19 " + sizes[1] + " vs level 1 " + sizes[0]);
        assertEquals(ParquetWriters.Settings.DEFAULT_ZSTD_LEVEL, ParquetWriters.Settings.defaults().zstdLevel());
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> ParquetWriters.Settings.defaults().withZstdLevel(0));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> ParquetWriters.Settings.defaults().withZstdLevel(20));
    }

    /** As {@code ParquetWritersTest}: with 4 MiB rows the buffered bytes never exceed the row group plus a row. */
    @Test
    void bufferedBytesStayWithinOneRowGroupForMultiMiBRows() throws Exception {
        long rowGroup = 8L << 20;
        ParquetWriters.Settings settings = ParquetWriters.Settings.defaults().withRowGroupBytes(rowGroup);
        PartWriter.Factory factory = new PartWriter.Factory(TensorSnapshot.getClassSchema(), settings);
        Path file = temp.resolve("big.parquet");
        long maxBuffered = 0;
        List<TensorSnapshot> written = new ArrayList<>();
        try (OutputStream out = Files.newOutputStream(file)) {
            CountingPositionStream stream = new CountingPositionStream(out);
            PartWriter<TensorSnapshot> writer = factory.open(stream);
            for (int i = 0; i < 12; i++) {
                TensorSnapshot row = TableRows.snapshot(i, "r", "big", TableRows.bytes(FOUR_MIB, i), false);
                writer.write(row);
                written.add(row);
                maxBuffered = Math.max(maxBuffered, writer.dataSize() - stream.getPos());
            }
            writer.close();
        }
        assertTrue(maxBuffered <= rowGroup + FOUR_MIB, "buffered " + maxBuffered);
        ParquetMetadata footer = footer(file);
        assertTrue(footer.getBlocks().size() >= 4, "row groups: " + footer.getBlocks().size());
        for (BlockMetaData block : footer.getBlocks()) {
            assertTrue(block.getRowCount() <= 2, "rows in a row group: " + block.getRowCount());
            assertTrue(block.getCompressedSize() <= rowGroup + FOUR_MIB, "row group bytes " + block.getCompressedSize());
        }
        assertEquals(written, readAvro(file, TensorSnapshot.class));
    }

    /**
     * The open row group's payload pages are held off the heap (OffHeapPages) and freed when the row
     * group is written, not left for a collection; the file reads back the same.
     */
    @Test
    void payloadPagesAreOffHeapUntilTheirRowGroupIsWritten() throws Exception {
        PartWriter.Factory factory = new PartWriter.Factory(TensorSnapshot.getClassSchema(), SETTINGS.get(0));
        Path file = temp.resolve("offheap.parquet");
        List<TensorSnapshot> written = new ArrayList<>();
        // a first part grows the compressor's two reused page buffers, which stay with the factory
        try (PartWriter<TensorSnapshot> w = factory.open(new ChannelOutputFile(temp.resolve("first.parquet")))) {
            w.write(TableRows.snapshot(0, "r", "s", TableRows.bytes(1 << 20, 0), false));
        }
        long before = settledDirectBytes();
        long held;
        try (PartWriter<TensorSnapshot> w = factory.open(new ChannelOutputFile(file))) {
            for (int i = 0; i < 4; i++) {
                TensorSnapshot row = TableRows.snapshot(i, "r", "s", TableRows.bytes(1 << 20, i), false);
                w.write(row);
                written.add(row);
            }
            held = held() - before;
        }
        // 4 MiB of payload, little of it compressible: the pages written so far are off the heap
        assertTrue(held >= 2L << 20, "off-heap page bytes while the row group is open: " + held);
        long still = held() - before;
        assertTrue(still < 64 << 10, "freed once written: " + still + " bytes still held");
        assertEquals(written, readAvro(file, TensorSnapshot.class));
    }

    /**
     * A small part writes nothing and builds no column writers until it closes: its rows are held
     * with their payloads copied off the heap (the row's own array may be dropped), and closing
     * writes them as one file that reads back the same; the copies are freed.
     */
    @Test
    void aSmallPartDefersItsRowsWithPayloadsOffTheHeap() throws Exception {
        PartWriter.Factory factory = new PartWriter.Factory(TensorSnapshot.getClassSchema(), SETTINGS.get(0));
        try (PartWriter<TensorSnapshot> w = factory.open(new ChannelOutputFile(temp.resolve("warm.parquet")))) {
            for (int i = 0; i < 4; i++) { // the same pages: the compressor's reused buffers grow here
                w.write(TableRows.snapshot(i, "r", "s", TableRows.bytes(48 << 10, i), false));
            }
        }
        Path file = temp.resolve("deferred.parquet");
        List<TensorSnapshot> written = new ArrayList<>();
        long before = settledDirectBytes();
        try (OutputStream os = Files.newOutputStream(file)) {
            CountingPositionStream stream = new CountingPositionStream(os);
            PartWriter<TensorSnapshot> w = factory.open(stream);
            for (int i = 0; i < 4; i++) {
                TensorSnapshot row = TableRows.snapshot(i, "r", "s", TableRows.bytes(48 << 10, i), false);
                w.write(row);
                written.add(row);
            }
            assertEquals(0, stream.getPos(), "bytes written before the part closes");
            assertEquals(4, w.rows());
            long offHeap = held() - before;
            assertTrue(offHeap >= 4L * (48 << 10), "payload bytes held off the heap: " + offHeap);
            assertTrue(w.memoryBytes() >= offHeap && w.memoryBytes() < PartWriter.WRITER_BYTES + offHeap,
                    "memory " + w.memoryBytes() + " for " + offHeap + " off-heap bytes");
            w.close();
            assertTrue(stream.getPos() > 4L * (48 << 10), "file bytes " + stream.getPos());
        }
        long still = held() - before;
        assertTrue(still <= 0, "payload copies freed at close: " + still + " bytes still held");
        assertEquals(written, readAvro(file, TensorSnapshot.class));
        assertEquals(1, footer(file).getBlocks().size());
    }

    /**
     * Past {@link PartWriter#DEFER_BYTES} a part builds its writer, writes the held rows first and
     * goes on writing rows as they come: one file with every row in order, also when the held rows
     * alone fill row groups.
     */
    @Test
    void aPartPastTheDeferLimitWritesTheHeldRowsFirst() throws Exception {
        long rowGroup = 256 << 10;
        for (long groupBytes : new long[] {ParquetWriters.DEFAULT_ROW_GROUP_BYTES, rowGroup}) {
            PartWriter.Factory factory = new PartWriter.Factory(TensorSnapshot.getClassSchema(),
                    SETTINGS.get(0).withRowGroupBytes(groupBytes));
            Path file = temp.resolve("past-" + groupBytes + ".parquet");
            List<TensorSnapshot> written = new ArrayList<>();
            try (OutputStream os = Files.newOutputStream(file)) {
                CountingPositionStream stream = new CountingPositionStream(os);
                PartWriter<TensorSnapshot> w = factory.open(stream);
                int deferred = (int) (PartWriter.DEFER_BYTES / ((100 << 10) + PartWriter.DEFERRED_ROW_BYTES));
                for (int i = 0; i < deferred + 5; i++) {
                    TensorSnapshot row = TableRows.snapshot(i, "r", "s", TableRows.bytes(100 << 10, i), false);
                    w.write(row);
                    written.add(row);
                    if (i < deferred) {
                        assertEquals(0, stream.getPos(), "row " + i + " is held");
                    } else {
                        assertTrue(stream.getPos() >= 4, "row " + i + ": the file has started");
                    }
                }
                w.close();
            }
            assertEquals(written, readAvro(file, TensorSnapshot.class));
            int groups = footer(file).getBlocks().size();
            assertTrue(groupBytes == rowGroup ? groups >= 4 : groups == 1, groups + " row groups of " + groupBytes);
        }
    }

    /** A row refused by a writing part leaves no values behind: the file holds the rows before it, whole. */
    @Test
    void aRefusedRowOfAWritingPartLeavesNoPartialRow() throws Exception {
        PartWriter.Factory factory = new PartWriter.Factory(TensorSnapshot.getClassSchema(), SETTINGS.get(0));
        Path file = temp.resolve("refused.parquet");
        TensorSnapshot good = TableRows.snapshot(0, "r", "s", TableRows.bytes(2 << 20, 0), false); // past the limit
        TensorSnapshot bad = TableRows.snapshot(1, "r", "s", TableRows.bytes(1024, 1), false);
        bad.put(bad.getSchema().getField("tensor_name").pos(), null);
        try (PartWriter<TensorSnapshot> w = factory.open(new ChannelOutputFile(file))) {
            w.write(good);
            NullPointerException e = assertThrows(NullPointerException.class, () -> w.write(bad));
            assertTrue(e.getMessage().contains("tensor_name"), e.getMessage());
        }
        assertEquals(List.of(good), readAvro(file, TensorSnapshot.class));
        // no column took a value of the refused row: every column of single values holds exactly one
        for (ColumnChunkMetaData c : footer(file).getBlocks().get(0).getColumns()) {
            if (c.getPath().size() == 1) {
                assertEquals(1, c.getValueCount(), "values in column " + c.getPath());
            }
        }
    }

    /** Direct memory in use less the released buffers the page memory keeps for reuse: what writers hold. */
    private static long held() {
        return OffHeapPages.directBytesInUse() - OffHeapPages.INSTANCE.keptBytes();
    }

    /**
     * What writers hold ({@link #held}) once buffers other tests dropped are freed (their cleaners run
     * after a collection, on their own thread).
     */
    private static long settledDirectBytes() throws InterruptedException {
        long last = -1;
        for (int i = 0; i < 50; i++) {
            System.gc();
            Thread.sleep(20);
            long now = held();
            if (now == last) {
                return now;
            }
            last = now;
        }
        return last;
    }

    /** A held row is checked when it is written, not when the part closes. */
    @Test
    void aHeldRowWithANullInANonNullFieldFailsItsWrite() throws Exception {
        PartWriter.Factory factory = new PartWriter.Factory(TensorSnapshot.getClassSchema(), SETTINGS.get(0));
        PartWriter<TensorSnapshot> w = factory.open(new ChannelOutputFile(temp.resolve("null.parquet")));
        TensorSnapshot row = TableRows.snapshot(0, "r", "s", TableRows.bytes(1024, 0), false);
        row.put(row.getSchema().getField("tensor_name").pos(), null);
        NullPointerException e = assertThrows(NullPointerException.class, () -> w.write(row));
        assertTrue(e.getMessage().contains("tensor_name"), e.getMessage());
    }

    @Test
    void refusesWhatItCannotWrite() {
        Schema nested = SchemaBuilder.record("Outer").namespace("t").fields()
                .name("inner").type(SchemaBuilder.record("Inner").fields().requiredLong("x").endRecord()).noDefault()
                .endRecord();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new PartWriter.Factory(nested, ParquetWriters.Settings.defaults()));
        assertTrue(e.getMessage().contains("t.Outer"), e.getMessage());
        Schema map = SchemaBuilder.record("M").namespace("t").fields()
                .name("tags").type().map().values().stringType().noDefault().endRecord();
        e = assertThrows(IllegalArgumentException.class, () -> new PartWriter.Factory(map, ParquetWriters.Settings.defaults()));
        assertTrue(e.getMessage().contains("tags"), e.getMessage());
    }

    private <T extends SpecificRecord> void sameAsParquetAvro(Class<T> type, IntFunction<T> row, int n) throws Exception {
        SpecificData model = ParquetWriters.modelOf(type);
        Schema schema = model.getSchema(type);
        int round = 0;
        for (ParquetWriters.Settings settings : SETTINGS) {
            List<T> rows = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                rows.add(row.apply(i));
            }
            Path old = temp.resolve(type.getSimpleName() + "-avro-" + round + ".parquet");
            Path lean = temp.resolve(type.getSimpleName() + "-lean-" + round + ".parquet");
            round++;
            try (ParquetWriter<T> w = ParquetWriters.create(new ChannelOutputFile(old), schema, model, settings)) {
                for (T r : rows) {
                    w.write(r);
                }
            }
            try (PartWriter<T> w = new PartWriter.Factory(schema, settings).open(new ChannelOutputFile(lean))) {
                for (T r : rows) {
                    w.write(r);
                }
            }
            ParquetMetadata a = footer(old);
            ParquetMetadata b = footer(lean);
            assertEquals(a.getFileMetaData().getSchema(), b.getFileMetaData().getSchema());
            assertEquals(a.getFileMetaData().getKeyValueMetaData(), b.getFileMetaData().getKeyValueMetaData());
            assertEquals(a.getFileMetaData().getCreatedBy(), b.getFileMetaData().getCreatedBy());
            assertEquals(a.getBlocks().size(), b.getBlocks().size());
            for (int g = 0; g < a.getBlocks().size(); g++) {
                BlockMetaData ga = a.getBlocks().get(g);
                BlockMetaData gb = b.getBlocks().get(g);
                assertEquals(ga.getRowCount(), gb.getRowCount());
                assertEquals(ga.getColumns().size(), gb.getColumns().size());
                for (int c = 0; c < ga.getColumns().size(); c++) {
                    ColumnChunkMetaData ca = ga.getColumns().get(c);
                    ColumnChunkMetaData cb = gb.getColumns().get(c);
                    String what = type.getSimpleName() + " " + ca.getPath() + " " + settings;
                    assertEquals(ca.getPath(), cb.getPath(), what);
                    assertEquals(settings.codec(), cb.getCodec(), what);
                    assertEquals(ca.getCodec(), cb.getCodec(), what);
                    assertEquals(ca.getEncodings(), cb.getEncodings(), what);
                    assertEquals(ca.getValueCount(), cb.getValueCount(), what);
                    // the uncompressed size counts the page headers, whose compressed-size varint may
                    // take a byte more or less (one ZSTD frame per page either way, framed differently)
                    assertTrue(Math.abs(ca.getTotalUncompressedSize() - cb.getTotalUncompressedSize()) <= 4L * pages(ca),
                            what + ": " + ca.getTotalUncompressedSize() + " vs " + cb.getTotalUncompressedSize());
                    Statistics<?> sa = ca.getStatistics();
                    Statistics<?> sb = cb.getStatistics();
                    assertEquals(sa.isEmpty(), sb.isEmpty(), what);
                    assertEquals(sa.hasNonNullValue(), sb.hasNonNullValue(), what);
                    assertEquals(sa.getNumNulls(), sb.getNumNulls(), what);
                    if (sa.hasNonNullValue()) {
                        assertEquals(sa.genericGetMin(), sb.genericGetMin(), what);
                        assertEquals(sa.genericGetMax(), sb.genericGetMax(), what);
                    }
                    assertEquals(ca.getColumnIndexReference() != null, cb.getColumnIndexReference() != null, what);
                    assertEquals(ca.getOffsetIndexReference() != null, cb.getOffsetIndexReference() != null, what);
                }
            }
            // parquet-avro reads back the very records (the footer's Avro schema, logical types included)
            assertEquals(rows, readAvro(lean, type));
            // DuckDB sees the same table in both files, value for value
            String order = type == DumpOutcome.class || type == RejectedRecord.class ? "dump_id" : "record_index";
            List<Map<String, Object>> fromOld = DuckDb.query(
                    "SELECT * FROM read_parquet(" + DuckDb.literal(old.toString()) + ") ORDER BY " + order);
            List<Map<String, Object>> fromLean = DuckDb.query(
                    "SELECT * FROM read_parquet(" + DuckDb.literal(lean.toString()) + ") ORDER BY " + order);
            assertEquals(n, fromLean.size());
            assertEquals(plain(fromOld), plain(fromLean));
            for (int i = 0; i < n; i++) {
                assertSameValues(rows.get(i), fromLean.get(i));
            }
        }
    }

    /** Rows with blobs as hex text, so that equal contents compare equal. */
    private static List<Map<String, Object>> plain(List<Map<String, Object>> rows) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map<String, Object> row : rows) {
            Map<String, Object> copy = new java.util.LinkedHashMap<>();
            row.forEach((k, v) -> copy.put(k, v instanceof byte[] b ? java.util.HexFormat.of().formatHex(b) : v));
            out.add(copy);
        }
        return out;
    }

    /** At most this many pages in the chunk: one per value at worst. */
    private static long pages(ColumnChunkMetaData c) {
        return Math.max(1, c.getValueCount());
    }

    private static ParquetMetadata footer(Path file) throws IOException {
        try (ParquetFileReader r = ParquetFileReader.open(new LocalInputFile(file))) {
            return r.getFooter();
        }
    }

    private static <T extends SpecificRecord> List<T> readAvro(Path file, Class<T> type) throws IOException {
        io.dumpstream.manifest.AvroTrust.ensure();
        List<T> out = new ArrayList<>();
        try (ParquetReader<T> r = AvroParquetReader.<T>builder(new LocalInputFile(file))
                .withDataModel(ParquetWriters.modelOf(type)).build()) {
            for (T row = r.read(); row != null; row = r.read()) {
                out.add(row);
            }
        }
        return out;
    }
}
