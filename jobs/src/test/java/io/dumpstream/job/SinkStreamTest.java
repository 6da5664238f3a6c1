package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.RecoverableFsDataOutputStream;
import org.apache.flink.core.fs.RecoverableWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The sink's buffered part stream: its bytes, position and write sizes, parts sharing a thread's burst buffer. */
class SinkStreamTest {
    @TempDir
    Path dir;

    /**
     * Three parts written in turn on one thread through Flink's local recoverable writer (the job's
     * part files), each a random mix of metadata-sized writes, single bytes and page-sized writes:
     * every committed file holds exactly its own bytes in order, and each position is the count.
     */
    @Test
    void interleavedPartsEachGetExactlyTheirBytes() throws Exception {
        RecoverableWriter writer = FileSystem.getLocalFileSystem().createRecoverableWriter();
        int parts = 3;
        List<RecoverableFsDataOutputStream> files = new ArrayList<>();
        List<ParquetBulkWriterFactory.SinkStream> streams = new ArrayList<>();
        List<ByteArrayOutputStream> expected = new ArrayList<>();
        for (int i = 0; i < parts; i++) {
            RecoverableFsDataOutputStream f = writer.open(new org.apache.flink.core.fs.Path(dir.resolve("p" + i).toUri()));
            files.add(f);
            streams.add(new ParquetBulkWriterFactory.SinkStream(f));
            expected.add(new ByteArrayOutputStream());
        }
        Random r = new Random(7);
        byte[] source = new byte[3 << 20];
        r.nextBytes(source);
        for (int step = 0; step < 3000; step++) {
            int i = r.nextInt(parts);
            int kind = r.nextInt(10);
            if (kind == 0) {
                int v = r.nextInt(256);
                streams.get(i).write(v);
                expected.get(i).write(v);
            } else {
                int len = kind < 6 ? r.nextInt(200) : kind < 9 ? 8192 : 8192 + r.nextInt(2 << 20);
                int off = r.nextInt(source.length - len);
                streams.get(i).write(source, off, len);
                expected.get(i).write(source, off, len);
            }
            assertEquals(expected.get(i).size(), streams.get(i).getPos(), "position of part " + i + " at step " + step);
        }
        for (int i = 0; i < parts; i++) {
            streams.get(i).close();
            files.get(i).closeForCommit().commit();
            assertArrayEquals(expected.get(i).toByteArray(), Files.readAllBytes(dir.resolve("p" + i)), "bytes of part " + i);
        }
    }

    /** A column chunk handed over in 8 KiB pieces reaches the file in burst-sized writes, not 8 KiB ones. */
    @Test
    void pagePiecesReachTheFileInBursts() throws IOException {
        Recording file = new Recording();
        ParquetBulkWriterFactory.SinkStream stream = new ParquetBulkWriterFactory.SinkStream(file);
        byte[] piece = new byte[8192];
        int pieces = 3 * ParquetBulkWriterFactory.SinkStream.BURST_BYTES / piece.length; // 3 MiB
        for (int i = 0; i < pieces; i++) {
            piece[0] = (byte) i;
            stream.write(piece, 0, piece.length);
        }
        stream.close();
        assertEquals((long) pieces * piece.length, file.bytes.size());
        assertEquals(List.of(ParquetBulkWriterFactory.SinkStream.BURST_BYTES, ParquetBulkWriterFactory.SinkStream.BURST_BYTES,
                ParquetBulkWriterFactory.SinkStream.BURST_BYTES), file.writes, "write sizes");
        byte[] all = file.bytes.toByteArray();
        for (int i = 0; i < pieces; i++) {
            assertEquals((byte) i, all[i * piece.length], "first byte of piece " + i);
        }
    }

    /** A part whose burst bytes could not be written when another part took the buffer fails its next flush. */
    @Test
    void aFailedHandOverFailsTheHolder() throws IOException {
        Recording broken = new Recording();
        ParquetBulkWriterFactory.SinkStream first = new ParquetBulkWriterFactory.SinkStream(broken);
        first.write(new byte[8192], 0, 8192);
        broken.failing = true;
        Recording good = new Recording();
        ParquetBulkWriterFactory.SinkStream second = new ParquetBulkWriterFactory.SinkStream(good);
        second.write(new byte[8192], 0, 8192); // takes the buffer; the holder's write fails
        second.close();
        assertEquals(8192, good.bytes.size());
        IOException e = assertThrows(IOException.class, first::flush);
        assertTrue(e.getMessage().contains("earlier write"), e.getMessage());
    }

    /** A file that records the size of each write it is given. */
    private static final class Recording extends FSDataOutputStream {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final List<Integer> writes = new ArrayList<>();
        boolean failing;

        @Override
        public long getPos() {
            return bytes.size();
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (failing) {
                throw new IOException("disk full");
            }
            writes.add(len);
            bytes.write(b, off, len);
        }

        @Override
        public void flush() {
        }

        @Override
        public void sync() {
        }

        @Override
        public void close() {
        }
    }
}
