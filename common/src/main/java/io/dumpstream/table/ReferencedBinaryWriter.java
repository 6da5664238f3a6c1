package io.dumpstream.table;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.column.ParquetProperties;
import org.apache.parquet.column.values.ValuesWriter;
import org.apache.parquet.column.values.factory.DefaultValuesWriterFactory;
import org.apache.parquet.column.values.factory.ValuesWriterFactory;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.PrimitiveType;

/**
 * PLAIN values of a binary column kept by reference until their page is written, instead of
 * copied into parquet-java's growing slabs: each value is a 4-byte little-endian length and the
 * value's own bytes, the page's bytes are those pieces in order (what {@code PlainValuesWriter}
 * writes, without the copy and the slab garbage, which for multi-MiB payloads was a copy of every
 * payload byte and about twice its size in short-lived arrays). The values' arrays must not change
 * until the page is written: the part writer's rows are not mutated after they are built.
 */
final class ReferencedBinaryWriter extends ValuesWriter {
    private final List<BytesInput> pieces = new ArrayList<>();
    private long size;

    @Override
    public void writeBytes(Binary v) {
        ByteBuffer b = v.toByteBuffer();
        pieces.add(BytesInput.fromInt(v.length()));
        pieces.add(b.hasArray() ? BytesInput.from(b.array(), b.arrayOffset() + b.position(), b.remaining())
                : BytesInput.from(b));
        size += 4L + v.length();
    }

    @Override
    public long getBufferedSize() {
        return size;
    }

    @Override
    public BytesInput getBytes() {
        return BytesInput.concat(new ArrayList<>(pieces));
    }

    @Override
    public Encoding getEncoding() {
        return Encoding.PLAIN;
    }

    @Override
    public void reset() {
        pieces.clear();
        size = 0;
    }

    @Override
    public void close() {
        reset();
    }

    @Override
    public long getAllocatedSize() {
        return size;
    }

    @Override
    public String memUsageString(String prefix) {
        return prefix + " ReferencedBinaryWriter " + size + " bytes in " + pieces.size() / 2 + " values";
    }

    /** parquet-java's values writers, except this one for the given top-level binary columns without a dictionary. */
    static final class Factory implements ValuesWriterFactory {
        private final DefaultValuesWriterFactory base = new DefaultValuesWriterFactory();
        private final Set<String> columns;
        private ParquetProperties props;

        Factory(Set<String> columns) {
            this.columns = Set.copyOf(columns);
        }

        @Override
        public void initialize(ParquetProperties properties) {
            base.initialize(properties);
            this.props = properties;
        }

        @Override
        public ValuesWriter newValuesWriter(ColumnDescriptor descriptor) {
            if (descriptor.getPrimitiveType().getPrimitiveTypeName() == PrimitiveType.PrimitiveTypeName.BINARY
                    && descriptor.getPath().length == 1 && columns.contains(descriptor.getPath()[0])
                    && !props.isDictionaryEnabled(descriptor)) {
                return new ReferencedBinaryWriter();
            }
            return base.newValuesWriter(descriptor);
        }
    }
}
