package io.dumpstream.table;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Objects;
import org.apache.parquet.io.PositionOutputStream;

/**
 * A {@link PositionOutputStream} over a stream its caller owns, such as the output a Flink compactor
 * hands over: the position is the count of bytes written through this stream, and closing it only
 * flushes (the owner closes the stream underneath).
 */
public final class CountingPositionStream extends PositionOutputStream {
    private final OutputStream out;
    private long pos;

    public CountingPositionStream(OutputStream out) {
        this.out = Objects.requireNonNull(out, "out");
    }

    @Override
    public long getPos() {
        return pos;
    }

    @Override
    public void write(int b) throws IOException {
        out.write(b);
        pos++;
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        out.write(b, off, len);
        pos += len;
    }

    @Override
    public void flush() throws IOException {
        out.flush();
    }

    @Override
    public void close() throws IOException {
        flush();
    }
}
