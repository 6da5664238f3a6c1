package io.dumpstream.compare;

import com.github.luben.zstd.ZstdDecompressCtx;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.hadoop.CodecFactory;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.xerial.snappy.Snappy;

import java.io.Closeable;
import java.io.IOException;

/**
 * Decompresses one Parquet page from a byte array into a byte array, with no intermediate copy for
 * ZSTD (one reused zstd-jni context) and Snappy; other codecs go through parquet's own codec
 * factory. The decompressed size must be exactly the size the page header announced. Not
 * thread-safe (one per reader).
 */
final class PageCodec implements Closeable {
    private ZstdDecompressCtx zstd;
    private CodecFactory factory;

    /**
     * Decompresses {@code src[0, srcLength)} into {@code dst[0, expected)}; {@code where} names the
     * file and page for errors.
     */
    void decompress(CompressionCodecName codec, byte[] src, int srcLength, byte[] dst, int expected, String where)
            throws IOException {
        int got;
        try {
            switch (codec) {
                case UNCOMPRESSED -> {
                    if (srcLength != expected) {
                        throw new IOException(where + ": uncompressed page holds " + srcLength
                                + " bytes but its header says uncompressed_page_size " + expected);
                    }
                    System.arraycopy(src, 0, dst, 0, srcLength);
                    got = srcLength;
                }
                case ZSTD -> {
                    if (zstd == null) {
                        zstd = new ZstdDecompressCtx();
                    }
                    got = zstd.decompressByteArray(dst, 0, expected, src, 0, srcLength);
                }
                case SNAPPY -> {
                    int length = Snappy.uncompressedLength(src, 0, srcLength);
                    if (length != expected) {
                        throw new IOException(where + ": snappy page decompresses to " + length
                                + " bytes but its header says uncompressed_page_size " + expected);
                    }
                    got = Snappy.uncompress(src, 0, srcLength, dst, 0);
                }
                default -> {
                    if (factory == null) {
                        factory = new CodecFactory(new org.apache.hadoop.conf.Configuration(false), 0);
                    }
                    byte[] out = factory.getDecompressor(codec).decompress(BytesInput.from(src, 0, srcLength), expected).toByteArray();
                    got = out.length;
                    System.arraycopy(out, 0, dst, 0, Math.min(out.length, expected));
                }
            }
        } catch (IOException e) {
            throw e.getMessage() != null && e.getMessage().startsWith(where) ? e
                    : new IOException(where + ": " + codec + " page does not decompress: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            // zstd-jni reports corrupt input as ZstdException (a RuntimeException)
            throw new IOException(where + ": " + codec + " page does not decompress: " + e.getMessage(), e);
        }
        if (got != expected) {
            throw new IOException(where + ": page decompresses to " + got + " bytes but its header says uncompressed_page_size "
                    + expected);
        }
    }

    @Override
    public void close() {
        if (zstd != null) {
            zstd.close();
            zstd = null;
        }
        if (factory != null) {
            factory.release();
            factory = null;
        }
    }
}
