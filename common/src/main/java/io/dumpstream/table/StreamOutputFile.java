package io.dumpstream.table;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.parquet.io.OutputFile;
import org.apache.parquet.io.PositionOutputStream;

/** An {@link OutputFile} that hands out one already-open stream, once (for stream-based sinks). */
public final class StreamOutputFile implements OutputFile {

    private final PositionOutputStream stream;
    private final AtomicBoolean used = new AtomicBoolean();

    public StreamOutputFile(PositionOutputStream stream) {
        this.stream = java.util.Objects.requireNonNull(stream, "stream");
    }

    @Override
    public PositionOutputStream create(long blockSizeHint) throws IOException {
        if (!used.compareAndSet(false, true)) {
            throw new IOException("the stream of this output file was already handed out");
        }
        return stream;
    }

    @Override
    public PositionOutputStream createOrOverwrite(long blockSizeHint) throws IOException {
        return create(blockSizeHint);
    }

    @Override
    public boolean supportsBlockSize() {
        return false;
    }

    @Override
    public long defaultBlockSize() {
        return 0;
    }

    @Override
    public String getPath() {
        return "stream:" + stream;
    }
}
