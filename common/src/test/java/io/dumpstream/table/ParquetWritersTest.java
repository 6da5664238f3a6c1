package io.dumpstream.table;

import static io.dumpstream.table.TableRows.assertSameValues;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.schema.RejectedRecord;
import io.dumpstream.schema.TensorSnapshot;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.avro.specific.SpecificData;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ParquetWritersTest {

    private static final int FOUR_MIB = 4 << 20;

    @TempDir
    Path temp;

    @Test
    void zstdLoadsHere() {
        assertEquals(CompressionCodecName.ZSTD, ParquetWriters.defaultCodec());
        assertEquals(CompressionCodecName.ZSTD, ParquetWriters.Settings.defaults().codec());
        assertEquals(CompressionCodecName.ZSTD, TableWriter.Options.defaults().parquet().codec());
        assertTrue(ParquetWriters.codecWorks(CompressionCodecName.SNAPPY));
    }

    @Test
    void uncompressedAndSillySizesAreRefused() {
        ParquetWriters.Settings defaults = ParquetWriters.Settings.defaults();
        assertThrows(IllegalArgumentException.class, () -> defaults.withCodec(CompressionCodecName.UNCOMPRESSED));
        assertThrows(IllegalArgumentException.class, () -> defaults.withRowGroupBytes(1000));
        assertThrows(IllegalArgumentException.class, () -> defaults.withMaxRowsBetweenSizeChecks(0));
        assertEquals(64L << 20, defaults.rowGroupBytes());
    }

    @Test
    void localFileHasZstdAndEveryValue() throws Exception {
        Path file = temp.resolve("rejects.parquet");
        List<RejectedRecord> written = new ArrayList<>();
        try (ParquetWriter<RejectedRecord> writer =
                ParquetWriters.create(file, RejectedRecord.class, ParquetWriters.Settings.defaults())) {
            for (int i = 0; i < 4; i++) {
                RejectedRecord row = TableRows.reject(i, "run", i % 2 == 0);
                writer.write(row);
                written.add(row);
            }
        }
        assertThrows(IOException.class,
                () -> ParquetWriters.create(file, RejectedRecord.class, ParquetWriters.Settings.defaults()),
                "never overwrites");
        String path = DuckDb.literal(file.toString());
        List<Map<String, Object>> rows = DuckDb.query("SELECT * FROM read_parquet(" + path + ") ORDER BY dump_id");
        for (int i = 0; i < written.size(); i++) {
            assertSameValues(written.get(i), rows.get(i));
        }
        assertEquals(List.of("ZSTD"), DuckDb.query("SELECT DISTINCT compression FROM parquet_metadata(" + path + ")")
                .stream().map(r -> r.get("compression")).toList());
    }

    @Test
    void streamFactoryWritesAValidFileOverACallerOwnedStream() throws Exception {
        Path file = temp.resolve("stream.parquet");
        List<TensorSnapshot> written = new ArrayList<>();
        SpecificData model = ParquetWriters.modelOf(TensorSnapshot.class);
        try (OutputStream out = Files.newOutputStream(file)) {
            ParquetWriter<TensorSnapshot> writer = ParquetWriters.create(
                    new CountingPositionStream(out), TensorSnapshot.getClassSchema(), model, ParquetWriters.Settings.defaults());
            for (int i = 0; i < 3; i++) {
                TensorSnapshot row = TableRows.snapshot(i, "r", "s", TableRows.bytes(1000 * i, i), i == 1);
                writer.write(row);
                written.add(row);
            }
            writer.close();
        }
        String path = DuckDb.literal(file.toString());
        List<Map<String, Object>> rows = DuckDb.query("SELECT * FROM read_parquet(" + path + ") ORDER BY record_index");
        assertEquals(written.size(), rows.size());
        for (int i = 0; i < written.size(); i++) {
            assertSameValues(written.get(i), rows.get(i));
        }
        assertEquals(List.of("ZSTD"), DuckDb.query("SELECT DISTINCT compression FROM parquet_metadata(" + path + ")")
                .stream().map(r -> r.get("compression")).toList());
    }

    /**
     * With parquet-java's own defaults (first size check after 100 rows) twelve 4 MiB rows all
     * stay buffered in one 50 MB row group despite an 8 MiB limit; with ours the buffered bytes
     * (data size minus bytes already handed to the stream) never exceed the limit plus one row.
     */
    @Test
    void bufferedBytesStayWithinOneRowGroupForMultiMiBRows() throws Exception {
        long rowGroup = 8L << 20;
        ParquetWriters.Settings settings = ParquetWriters.Settings.defaults().withRowGroupBytes(rowGroup);
        Path file = temp.resolve("big.parquet");
        long maxBuffered = 0;
        try (OutputStream out = Files.newOutputStream(file)) {
            CountingPositionStream stream = new CountingPositionStream(out);
            ParquetWriter<TensorSnapshot> writer = ParquetWriters.create(
                    stream, TensorSnapshot.getClassSchema(), ParquetWriters.modelOf(TensorSnapshot.class), settings);
            for (int i = 0; i < 12; i++) {
                writer.write(TableRows.snapshot(i, "r", "big", TableRows.bytes(FOUR_MIB, i), false));
                maxBuffered = Math.max(maxBuffered, writer.getDataSize() - stream.getPos());
            }
            writer.close();
        }
        assertTrue(maxBuffered <= rowGroup + FOUR_MIB, "buffered " + maxBuffered);
        List<Map<String, Object>> groups = DuckDb.query("SELECT row_group_id, max(row_group_num_rows) AS num_rows,"
                + " max(row_group_bytes) AS bytes FROM parquet_metadata(" + DuckDb.literal(file.toString()) + ")"
                + " GROUP BY row_group_id ORDER BY row_group_id");
        assertTrue(groups.size() >= 4, "row groups: " + groups);
        for (Map<String, Object> group : groups) {
            assertTrue(((Number) group.get("num_rows")).longValue() <= 2, "row group " + group);
            assertTrue(((Number) group.get("bytes")).longValue() <= rowGroup + FOUR_MIB, "row group " + group);
        }
    }

    @Test
    void binaryColumnsAreFound() {
        assertEquals(List.of("data"), ParquetWriters.binaryColumns(TensorSnapshot.getClassSchema()));
        assertEquals(List.of("raw_record", "payload"), ParquetWriters.binaryColumns(RejectedRecord.getClassSchema()));
    }
}
