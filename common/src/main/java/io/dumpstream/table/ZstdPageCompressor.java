package io.dumpstream.table;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.ref.Cleaner;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.compression.CompressionCodecFactory.BytesInputCompressor;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;

/**
 * ZSTD for Parquet pages with one compression context for all the pages of all the parts a
 * writer factory writes. parquet-java's ZSTD codec opens a compressing stream per page, and each
 * stream creates and frees its own native context ({@code ZSTD_createCStream}, a few hundred KiB of
 * tables set up): with 35 columns that is 35 contexts per small part file, which a profile of part
 * writing put at as much native time as compressing the payload itself. A page here is one
 * standard ZSTD frame of the whole page (what the stream writes too), at the settings' level, so
 * every Parquet reader decodes it as before.
 *
 * <p>Not thread-safe: the input and output buffers are reused and the returned bytes are valid
 * until the next call (parquet-java's page writer copies them before compressing the next page,
 * as with its own heap compressor).
 */
final class ZstdPageCompressor implements BytesInputCompressor {
    private static final Cleaner CLEANER = Cleaner.create();

    private final ZstdCompressCtx ctx;
    private final Filling in = new Filling();
    private byte[] out = new byte[0];

    ZstdPageCompressor(int level) {
        ZstdCompressCtx c = new ZstdCompressCtx();
        c.setLevel(level);
        ctx = c;
        // the native context goes with this compressor (a sink's writer factory has no close)
        CLEANER.register(this, c::close);
    }

    @Override
    public BytesInput compress(BytesInput bytes) throws IOException {
        long size = bytes.size();
        if (size > Integer.MAX_VALUE - 1024) {
            throw new IOException("page of " + size + " bytes is too large to compress");
        }
        in.reset((int) size);
        bytes.writeAllTo(in);
        if (in.count != size) {
            throw new IOException("page said " + size + " bytes but gave " + in.count);
        }
        int bound = (int) Math.min(Integer.MAX_VALUE, Zstd.compressBound(size));
        if (out.length < bound) {
            out = new byte[bound];
        }
        int n = ctx.compressByteArray(out, 0, out.length, in.buf, 0, in.count);
        return BytesInput.from(out, 0, n);
    }

    @Override
    public CompressionCodecName getCodecName() {
        return CompressionCodecName.ZSTD;
    }

    @Override
    public void release() {
        // shared by every part of the factory
    }

    /** A reused, growing byte buffer to gather a page's pieces into one array. */
    private static final class Filling extends OutputStream {
        byte[] buf = new byte[0];
        int count;

        void reset(int capacity) {
            if (buf.length < capacity) {
                buf = new byte[capacity];
            }
            count = 0;
        }

        @Override
        public void write(int b) {
            ensure(1);
            buf[count++] = (byte) b;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            ensure(len);
            System.arraycopy(b, off, buf, count, len);
            count += len;
        }

        private void ensure(int more) {
            if (buf.length - count < more) {
                buf = java.util.Arrays.copyOf(buf, Math.max(buf.length * 2, count + more));
            }
        }
    }
}
