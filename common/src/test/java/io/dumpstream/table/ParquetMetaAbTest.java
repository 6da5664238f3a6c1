package io.dumpstream.table;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.dumpstream.schema.TensorSnapshot;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * While both are in the code for the A/B: the hand-written metadata encoder and ZSTD compressor
 * and parquet-java's structures and direct ZSTD compressor write the same bytes, for the small-part
 * encoder and for parquet-java's writer. (Removed with the losing arm.)
 */
class ParquetMetaAbTest {
    @TempDir
    Path temp;

    @Test
    void sameBytes() throws Exception {
        ParquetWriters.Settings job = ParquetWriters.Settings.defaults().withPageBytes(64 << 10).withDictionary(false);
        for (ParquetWriters.Settings s : new ParquetWriters.Settings[] {job, job.withPageBytes(1024), job.withCodec(CompressionCodecName.SNAPPY)}) {
            for (int n : new int[] {1, 7, 40}) {
                byte[] base = write(s, n, "handwritten", "own", false);
                for (String meta : new String[] {"handwritten", "parquet-java"}) {
                    for (String z : new String[] {"own", "parquet-java"}) {
                        assertArrayEquals(base, write(s, n, meta, z, false), meta + " " + z + " " + n + " " + s);
                    }
                }
                byte[] big = write(s, n, "handwritten", "own", true);
                assertArrayEquals(big, write(s, n, "parquet-java", "parquet-java", true), "parquet-java writer " + n + " " + s);
            }
        }
    }

    /** A part of {@code n} snapshot rows written by a factory built with the given switches. */
    private byte[] write(ParquetWriters.Settings s, int n, String meta, String zstd, boolean parquetJavaWriter) throws Exception {
        System.setProperty(PartWriter.PARQUET_META, meta);
        System.setProperty(PartWriter.ZSTD_PAGES, zstd);
        PartWriter.Factory f;
        try {
            f = new PartWriter.Factory(TensorSnapshot.getClassSchema(), s, !parquetJavaWriter);
        } finally {
            System.clearProperty(PartWriter.PARQUET_META);
            System.clearProperty(PartWriter.ZSTD_PAGES);
        }
        Path p = Files.createTempFile(temp, "p", ".parquet");
        Files.delete(p);
        try (PartWriter<TensorSnapshot> w = f.open(new ChannelOutputFile(p))) {
            for (int i = 0; i < n; i++) {
                w.write(TableRows.snapshot(i, "run-" + (i % 2), "stage/é " + (i % 3), TableRows.bytes(700 * i + 3, i), i % 3 == 1));
            }
        }
        return Files.readAllBytes(p);
    }
}
