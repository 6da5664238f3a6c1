package io.dumpstream.table;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import java.io.IOException;
import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import org.apache.parquet.bytes.ByteBufferAllocator;
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
 * <p>Pages are gathered into and compressed from one reused direct buffer into another (two per
 * compressor, each as large as the largest page so far): parquet-java checksums the compressed page
 * through its allocator, which for a direct allocator ({@link OffHeapPages}) copied every heap
 * result into a new direct buffer first, and it hands a page's pieces to a stream through
 * {@code Channels.newChannel}, 8 KiB at a time; a direct result is checksummed where it lies and
 * the pieces are put into the input buffer whole.
 *
 * <p>Not thread-safe: the input and output buffers are reused and the returned bytes are valid
 * until the next call (parquet-java's page writer copies them before compressing the next page,
 * as with its own heap compressor).
 */
final class ZstdPageCompressor implements BytesInputCompressor {
    private static final Cleaner CLEANER = Cleaner.create();

    private final ZstdCompressCtx ctx;
    private final Buffers buffers;
    /** Hands out the reused input buffer, grown as needed; parquet-java fills it with the page's pieces. */
    private final ByteBufferAllocator input = new ByteBufferAllocator() {
        @Override
        public ByteBuffer allocate(int size) {
            buffers.in = buffers.grown(buffers.in, size);
            return buffers.in.clear();
        }

        @Override
        public void release(ByteBuffer b) {
            // reused for the next page
        }

        @Override
        public boolean isDirect() {
            return true;
        }
    };

    /** At {@code level}, its buffers from {@code memory}. */
    ZstdPageCompressor(int level, OffHeapPages memory) {
        buffers = new Buffers(memory);
        ZstdCompressCtx c = new ZstdCompressCtx();
        c.setLevel(level);
        ctx = c;
        // the native context and the buffers go with this compressor (a sink's writer factory has no close)
        Buffers b = buffers;
        CLEANER.register(this, () -> {
            c.close();
            b.free();
        });
    }

    @Override
    public BytesInput compress(BytesInput bytes) throws IOException {
        long size = bytes.size();
        if (size > Integer.MAX_VALUE - 1024) {
            throw new IOException("page of " + size + " bytes is too large to compress");
        }
        // the page itself when it is one direct buffer, else its pieces put into the input buffer
        ByteBuffer src = bytes.toByteBuffer(input, b -> { });
        if (src.remaining() != size) {
            throw new IOException("page said " + size + " bytes but gave " + src.remaining());
        }
        int bound = (int) Math.min(Integer.MAX_VALUE, Zstd.compressBound(size));
        buffers.out = buffers.grown(buffers.out, bound);
        ByteBuffer out = buffers.out;
        int n = ctx.compressDirectByteBuffer(out, 0, out.capacity(), src, src.position(), src.remaining());
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

    /** The reused direct buffers, given back with the compressor. */
    private static final class Buffers {
        private final OffHeapPages memory;
        ByteBuffer in;
        ByteBuffer out;

        Buffers(OffHeapPages memory) {
            this.memory = memory;
        }

        /**
         * {@code b}, or a direct buffer of at least {@code size} bytes (and at least 64 KiB, a quarter
         * more than {@code b}: a growing page size regrows a few times, not at every new largest page)
         * in its place, the old one given back.
         */
        ByteBuffer grown(ByteBuffer b, int size) {
            if (b != null && b.capacity() >= size) {
                return b;
            }
            long want = Math.max(64 << 10, Math.max(size, b == null ? 0 : b.capacity() + (b.capacity() >>> 2)));
            if (b != null) {
                memory.release(b);
            }
            ByteBuffer grown = memory.direct((int) Math.min(Integer.MAX_VALUE - 8, want));
            return grown.limit(grown.capacity());
        }

        void free() {
            if (in != null) {
                memory.release(in);
            }
            if (out != null) {
                memory.release(out);
            }
        }
    }
}
