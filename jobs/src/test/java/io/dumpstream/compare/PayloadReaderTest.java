package io.dumpstream.compare;

import io.dumpstream.schema.TensorSnapshot;
import io.dumpstream.table.ParquetWriters;

import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.local.LocalDataInputStream;
import org.apache.flink.formats.parquet.ParquetInputFile;
import org.apache.parquet.HadoopReadOptions;
import org.apache.parquet.format.PageHeader;
import org.apache.parquet.format.Util;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The payload column read page by page: real snapshot files written by {@link ParquetWriters} (ZSTD
 * and Snappy, one page per payload and several payloads per page), every payload read back in a
 * shuffled order and checked byte for byte; corrupt page headers fail with the file, field and value.
 */
class PayloadReaderTest {
    @TempDir
    Path tmp;

    static byte[] payload(int length, long seed) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    static TensorSnapshot row(int i, byte[] data) {
        return TensorSnapshot.newBuilder()
                .setDumpId("A/0/1").setRunId("A").setStageName("s").setLaunchId(1).setStep(null).setRecordIndex(i)
                .setTaskId(i).setTaskIndex(i).setOwnerId(null).setOwnerLabel("").setCoreType("AIV").setCoreId(0).setWorkerId(null)
                .setIo("output").setPortIndex(0).setPhase("after").setParameterPosition(0).setTensorName("t" + i).setNote("")
                .setDtype("uint8").setShape(List.of((long) data.length)).setStoredShape(List.of((long) data.length))
                .setTruncated(false).setFullBytes(data.length).setPayloadBytes(data.length).setSourceOffsetBytes(0)
                .setData(ByteBuffer.wrap(data)).setNumel(data.length).setNanCount(0).setInfCount(0).setZeroCount(0)
                .setMin(null).setMax(null).setMean(null).setL2Norm(null).setPayloadCrc32c(0).setIngestedAt(Instant.EPOCH)
                .build();
    }

    /** Payloads of mixed sizes, empty included, written with {@code settings}. */
    List<byte[]> write(Path file, ParquetWriters.Settings settings) throws IOException {
        List<byte[]> data = new ArrayList<>();
        int[] sizes = {70_000, 0, 3, 1 << 20, 17, 5000, 250_000, 1};
        try (ParquetWriter<TensorSnapshot> w = ParquetWriters.create(file, TensorSnapshot.class, settings)) {
            for (int i = 0; i < sizes.length; i++) {
                data.add(payload(sizes[i], i));
                w.write(row(i, data.get(i)));
            }
        }
        return data;
    }

    static FSDataInputStream open(Path file) throws IOException {
        return new LocalDataInputStream(file.toFile());
    }

    void readsBack(ParquetWriters.Settings settings) throws IOException {
        Path file = tmp.resolve(settings.codec() + "-" + settings.pageBytes() + ".parquet");
        List<byte[]> data = write(file, settings);
        List<Operand> rows = new ArrayList<>();
        try (FSDataInputStream in = open(file)) {
            SnapshotRows.read(file.toString(), in, Files.size(file), 0, "A", "B", new PairKey(false, false), rows);
        }
        assertEquals(data.size(), rows.size());
        List<Operand> shuffled = new ArrayList<>(rows);
        java.util.Collections.shuffle(shuffled, new Random(3));
        try (PayloadColumn c = PayloadColumn.open(file.toString(), open(file), Files.size(file), 64 << 20);
             PayloadReader r = new PayloadReader()) {
            assertEquals(data.size(), c.rows());
            for (Operand o : shuffled) {
                r.read(c, o);
                byte[] expected = data.get(o.recordIndex);
                assertEquals(o.recordIndex, (int) o.row, "rows are numbered in file order");
                assertArrayEquals(expected, Arrays.copyOfRange(o.data, o.dataOffset, o.dataOffset + o.dataLength),
                        "payload of row " + o.row + " (" + settings + ")");
            }
        }
    }

    @Test
    void readsEveryPayloadZstdAndSnappyOnePerPageAndManyPerPage() throws IOException {
        readsBack(ParquetWriters.Settings.defaults().withCodec(CompressionCodecName.ZSTD));
        readsBack(ParquetWriters.Settings.defaults().withCodec(CompressionCodecName.SNAPPY));
        readsBack(ParquetWriters.Settings.defaults().withCodec(CompressionCodecName.ZSTD).withPageBytes(1024));
        readsBack(ParquetWriters.Settings.defaults().withCodec(CompressionCodecName.GZIP).withRowGroupBytes(300_000));
    }

    @Test
    void pageLargerThanTheBufferLimitIsAnErrorNamingFileFieldAndValue() throws IOException {
        Path file = tmp.resolve("limit.parquet");
        write(file, ParquetWriters.Settings.defaults().withCodec(CompressionCodecName.ZSTD).withPageBytes(1024));
        IOException e = assertThrows(IOException.class, () -> PayloadColumn.open(file.toString(), open(file), Files.size(file), 1000));
        assertTrue(e.getMessage().startsWith(file + ": column 'data' of row group 0, page at byte "), e.getMessage());
        assertTrue(e.getMessage().contains("uncompressed_page_size 70004 is outside [0, 1000]"), e.getMessage());
    }

    @Test
    void corruptPageSizeIsAnErrorNamingFileFieldAndValue() throws IOException {
        Path file = tmp.resolve("corrupt.parquet");
        write(file, ParquetWriters.Settings.defaults().withCodec(CompressionCodecName.ZSTD).withPageBytes(1024));
        byte[] bytes = Files.readAllBytes(file);
        long start;
        try (FSDataInputStream in = open(file)) {
            ParquetFileReader r = new ParquetFileReader(new ParquetInputFile(in, bytes.length),
                    HadoopReadOptions.builder(new org.apache.hadoop.conf.Configuration(false)).build());
            ColumnChunkMetaData chunk = r.getRowGroups().get(0).getColumns().stream()
                    .filter(c -> c.getPath().toDotString().equals("data")).findFirst().orElseThrow();
            start = chunk.getStartingPos();
        }
        PageHeader h = Util.readPageHeader(new ByteArrayInputStream(bytes, (int) start, bytes.length - (int) start));
        ByteArrayOutputStream original = new ByteArrayOutputStream();
        Util.writePageHeader(h, original);
        assertEquals(70_004, h.getUncompressed_page_size(), "the first page holds the 70000-byte payload and its length");
        // the same varint width (3 bytes), so the header keeps its length and the file its layout
        h.setUncompressed_page_size(1_000_000);
        ByteArrayOutputStream corrupt = new ByteArrayOutputStream();
        Util.writePageHeader(h, corrupt);
        assertEquals(original.size(), corrupt.size());
        assertArrayEquals(original.toByteArray(), Arrays.copyOfRange(bytes, (int) start, (int) start + original.size()));
        System.arraycopy(corrupt.toByteArray(), 0, bytes, (int) start, corrupt.size());
        Files.write(file, bytes);
        try (PayloadColumn c = PayloadColumn.open(file.toString(), open(file), bytes.length, 64 << 20);
             PayloadReader r = new PayloadReader()) {
            Operand o = new Operand();
            o.row = 0;
            IOException e = assertThrows(IOException.class, () -> r.read(c, o));
            assertEquals(file + ": column 'data', page at byte " + (start + original.size())
                    + ": page decompresses to 70004 bytes but its header says uncompressed_page_size 1000000", e.getMessage());
        }
    }
}
