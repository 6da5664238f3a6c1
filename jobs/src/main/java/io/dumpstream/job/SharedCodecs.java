package io.dumpstream.job;

import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.compression.CompressionCodecFactory;
import org.apache.parquet.hadoop.CodecFactory;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;

import java.util.EnumMap;
import java.util.Map;

/**
 * One Parquet codec factory for all the part files one sink subtask writes, instead of one per
 * file. A {@code ParquetWriter} builds its own factory by default and a compressor inside it with
 * a page-sized buffer; with hundreds of small part files per checkpoint (one per stage partition)
 * that was about 5% of the writer thread in the 1 MiB-dump benchmark, plus the garbage.
 *
 * <p>Not thread-safe, like parquet's factory: a sink subtask writes all its parts from its task
 * thread, one at a time, and a page's compressed bytes are consumed before the next page is
 * compressed. Writers release their factory when they close, so writers get a view whose
 * {@code release} does nothing; the factory lives as long as the subtask's writer factory
 * (heap buffers only, nothing native to leak).
 */
final class SharedCodecs implements CompressionCodecFactory {
    private final CodecFactory codecs;
    private final Map<CompressionCodecName, BytesInputCompressor> compressors = new EnumMap<>(CompressionCodecName.class);

    SharedCodecs(int pageBytes, int zstdLevel) {
        Configuration conf = new Configuration(false);
        conf.setInt(io.dumpstream.table.ParquetWriters.ZSTD_LEVEL_PROPERTY, zstdLevel);
        // recycle zstd-jni's stream buffers: parquet opens a compressing stream for every page
        conf.setBoolean("parquet.compression.codec.zstd.bufferPool.enabled", true);
        codecs = new CodecFactory(conf, pageBytes);
    }

    @Override
    public BytesInputCompressor getCompressor(CompressionCodecName codec) {
        return compressors.computeIfAbsent(codec, c -> new Kept(codecs.getCompressor(c)));
    }

    @Override
    public BytesInputDecompressor getDecompressor(CompressionCodecName codec) {
        throw new UnsupportedOperationException("the sink only writes");
    }

    @Override
    public void release() {
        // shared: a writer closing must not release what the next writer uses
    }

    /** A compressor whose release, called by each writer's page store, keeps it for the next. */
    private static final class Kept implements BytesInputCompressor {
        private final BytesInputCompressor inner;

        Kept(BytesInputCompressor inner) {
            this.inner = inner;
        }

        @Override
        public org.apache.parquet.bytes.BytesInput compress(org.apache.parquet.bytes.BytesInput bytes)
                throws java.io.IOException {
            return inner.compress(bytes);
        }

        @Override
        public CompressionCodecName getCodecName() {
            return inner.getCodecName();
        }

        @Override
        public void release() {
        }
    }
}
