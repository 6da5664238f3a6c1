package io.dumpstream.table;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.apache.parquet.io.OutputFile;
import org.apache.parquet.io.PositionOutputStream;

/**
 * A local {@link OutputFile} over a {@link FileChannel}, without a Hadoop FileSystem. Closing the
 * stream forces the bytes to disk, so a file renamed into place after close is complete.
 */
public final class ChannelOutputFile implements OutputFile {

    private static final int BUFFER_BYTES = 64 * 1024;

    private final Path path;
    private ChannelStream stream;

    public ChannelOutputFile(Path path) {
        this.path = path;
    }

    @Override
    public PositionOutputStream create(long blockSizeHint) throws IOException {
        return open(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    }

    @Override
    public PositionOutputStream createOrOverwrite(long blockSizeHint) throws IOException {
        return open(StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE);
    }

    /**
     * Closes the open stream without flushing or syncing, so a writer that is being thrown away
     * does not first write its buffered row group and footer. Later writes fail or are dropped.
     */
    public void discard() throws IOException {
        ChannelStream open = stream;
        if (open != null) {
            open.discard();
        }
    }

    private synchronized PositionOutputStream open(StandardOpenOption... options) throws IOException {
        if (stream != null) {
            throw new IOException("already opened: " + path);
        }
        stream = new ChannelStream(FileChannel.open(path, options));
        return stream;
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
        return path.toString();
    }

    private static final class ChannelStream extends PositionOutputStream {
        private final FileChannel channel;
        private final ByteBuffer buffer = ByteBuffer.allocate(BUFFER_BYTES);
        private long position;
        private boolean closed;

        ChannelStream(FileChannel channel) {
            this.channel = channel;
        }

        @Override
        public long getPos() {
            return position;
        }

        @Override
        public void write(int b) throws IOException {
            if (!buffer.hasRemaining()) {
                drain();
            }
            buffer.put((byte) b);
            position++;
        }

        @Override
        public void write(byte[] bytes, int offset, int length) throws IOException {
            if (length >= BUFFER_BYTES) {
                drain();
                writeFully(ByteBuffer.wrap(bytes, offset, length));
            } else {
                if (length > buffer.remaining()) {
                    drain();
                }
                buffer.put(bytes, offset, length);
            }
            position += length;
        }

        @Override
        public void flush() throws IOException {
            drain();
        }

        @Override
        public void close() throws IOException {
            if (closed) {
                return;
            }
            closed = true;
            try (channel) {
                drain();
                channel.force(true);
            }
        }

        void discard() throws IOException {
            closed = true;
            channel.close();
        }

        private void drain() throws IOException {
            buffer.flip();
            writeFully(buffer);
            buffer.clear();
        }

        private void writeFully(ByteBuffer source) throws IOException {
            while (source.hasRemaining()) {
                channel.write(source);
            }
        }
    }
}
