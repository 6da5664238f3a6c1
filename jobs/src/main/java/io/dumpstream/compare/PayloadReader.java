package io.dumpstream.compare;

import org.apache.flink.core.fs.ByteBufferReadable;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Reads single payloads of the {@code data} column: the page holding a row is read and decompressed
 * into buffers reused from page to page, and the payload is a view into the decompressed page
 * (no copy, no Avro record). The last page stays decoded, so the rows of a page of small payloads
 * cost one decompression. One reader per side of a pair; its view is valid until its next read.
 */
final class PayloadReader implements Closeable {
    private final PageCodec codec = new PageCodec();
    private byte[] compressed = new byte[0];
    private byte[] page = new byte[0];
    /** Offsets and lengths of the values of the decoded page. */
    private int[] offsets = new int[16];
    private int[] lengths = new int[16];
    private PayloadColumn column;
    private int pageIndex = -1;
    /** Bytes of payload decompressed or copied so far (for the read-floor accounting). */
    long bytesRead;

    /** Points {@code o}'s data view ({@code data}, {@code dataOffset}, {@code dataLength}) at its payload. */
    void read(PayloadColumn c, Operand o) throws IOException {
        int p = c.pageOf(o.row);
        if (c != column || p != pageIndex) {
            load(c, p);
        }
        int v = (int) (o.row - c.firstRow(p));
        o.data = page;
        o.dataOffset = offsets[v];
        o.dataLength = lengths[v];
    }

    private void load(PayloadColumn c, int p) throws IOException {
        column = null; // a failed load leaves no stale page behind
        int csize = c.compressedSize(p);
        int usize = c.uncompressedSize(p);
        int levels = c.levelBytes(p);
        String where = c.file + ": column '" + PayloadColumn.COLUMN + "', page at byte " + c.bodyOffset(p);
        if (page.length < usize) {
            page = new byte[usize]; // bounded by the column's checked maximum page size
        }
        c.in.seek(c.bodyOffset(p));
        int valuesSize;
        if (c.compressed(p)) {
            if (compressed.length < csize) {
                compressed = new byte[csize]; // bounded by the bytes left in the file
            }
            // v2 levels are stored uncompressed ahead of the values; a required column has none but skip them if present
            readFully(c, compressed, 0, csize, where);
            valuesSize = usize - levels;
            if (levels > 0) {
                byte[] values = new byte[csize - levels];
                System.arraycopy(compressed, levels, values, 0, values.length);
                codec.decompress(c.codec(p), values, values.length, page, valuesSize, where);
            } else {
                codec.decompress(c.codec(p), compressed, csize, page, valuesSize, where);
            }
        } else {
            readFully(c, page, 0, csize, where);
            valuesSize = csize - levels;
            if (levels > 0) {
                System.arraycopy(page, levels, page, 0, valuesSize);
            }
        }
        bytesRead += valuesSize;
        index(c, p, valuesSize, where);
        column = c;
        pageIndex = p;
    }

    /** PLAIN binary: a little-endian int32 length then the bytes, per value; every length checked against the page. */
    private void index(PayloadColumn c, int p, int size, String where) throws IOException {
        int n = c.values(p);
        if (n > size / 4) {
            throw new IOException(where + ": num_values " + n + " cannot fit in " + size + " bytes (4 bytes of length per value)");
        }
        if (offsets.length < n) {
            offsets = new int[n]; // bounded by the page size just checked
            lengths = new int[n];
        }
        int pos = 0;
        for (int i = 0; i < n; i++) {
            if (size - pos < 4) {
                throw new IOException(where + ": value " + i + " of " + n + " has no length (the page ends at byte " + size + ")");
            }
            int len = (page[pos] & 0xFF) | (page[pos + 1] & 0xFF) << 8 | (page[pos + 2] & 0xFF) << 16 | (page[pos + 3] & 0xFF) << 24;
            pos += 4;
            if (len < 0 || len > size - pos) {
                throw new IOException(where + ": value " + i + " has length " + len + " but " + (size - pos)
                        + " bytes are left in the page");
            }
            offsets[i] = pos;
            lengths[i] = len;
            pos += len;
        }
        if (pos != size) {
            throw new IOException(where + ": " + (size - pos) + " bytes after the page's last value (num_values " + n + ")");
        }
    }

    /** True for a stream of Flink's local file system (under the safety net's wrappers). */
    private static boolean localFile(Object in) {
        Object s = in;
        while (s instanceof org.apache.flink.util.WrappingProxy<?> w && w.getWrappedDelegate() != s) {
            s = w.getWrappedDelegate();
        }
        return s instanceof org.apache.flink.core.fs.local.LocalDataInputStream;
    }

    private static void readFully(PayloadColumn c, byte[] b, int off, int len, String where) throws IOException {
        if (c.in instanceof ByteBufferReadable r && localFile(c.in)) {
            // local files: through the file channel, which reuses one cached direct buffer per thread;
            // FileInputStream.read mallocs (and page-faults in) a fresh native buffer of len per call.
            // Not for other file systems: the S3 plugin's read(ByteBuffer) ends in an EOFException on a page
            // well inside the file (seen reading a buffer that wraps part of a larger array)
            ByteBuffer bb = ByteBuffer.wrap(b, off, len);
            while (bb.hasRemaining()) {
                if (r.read(bb) < 0) {
                    throw new EOFException(where + ": the file ends " + bb.remaining() + " bytes before the page does");
                }
            }
            return;
        }
        int done = 0;
        while (done < len) {
            int n = c.in.read(b, off + done, len - done);
            if (n < 0) {
                throw new EOFException(where + ": the file ends " + (len - done) + " bytes before the page does");
            }
            done += n;
        }
    }

    @Override
    public void close() {
        codec.close();
    }
}
