package io.dumpstream.iceberg;

import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * Iceberg's file access through Flink's file systems: the ones the FileSink writes the data files
 * with (local disk, and the object store once its plugin is loaded), so the job needs no Hadoop file
 * system for the tables' metadata. Locations are Iceberg's strings ({@code file:/a/run=x%2Fy/f}): the
 * path part is taken literally, a Hive-escaped '%XX' stays as it is on disk.
 */
public final class FlinkFileIO implements FileIO {
    private static final long serialVersionUID = 1L;

    static Path path(String location) {
        return new Path(location);
    }

    private static FileSystem fs(Path p) {
        try {
            return p.getFileSystem();
        } catch (IOException e) {
            throw new UncheckedIOException("no file system for " + p, e);
        }
    }

    @Override
    public InputFile newInputFile(String location) {
        return new In(location, -1);
    }

    @Override
    public InputFile newInputFile(String location, long length) {
        return new In(location, length);
    }

    @Override
    public OutputFile newOutputFile(String location) {
        return new Out(location);
    }

    @Override
    public void deleteFile(String location) {
        Path p = path(location);
        try {
            fs(p).delete(p, false);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + location, e);
        }
    }

    private static final class In implements InputFile {
        private final String location;
        private long length;

        In(String location, long length) {
            this.location = location;
            this.length = length;
        }

        @Override
        public long getLength() {
            if (length < 0) {
                Path p = path(location);
                try {
                    length = fs(p).getFileStatus(p).getLen();
                } catch (FileNotFoundException e) {
                    throw new NotFoundException(e, "file does not exist: %s", location);
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot read the length of " + location, e);
                }
            }
            return length;
        }

        @Override
        public SeekableInputStream newStream() {
            Path p = path(location);
            FSDataInputStream in;
            try {
                in = fs(p).open(p);
            } catch (FileNotFoundException e) {
                throw new NotFoundException(e, "file does not exist: %s", location);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot open " + location, e);
            }
            return new SeekableInputStream() {
                @Override
                public long getPos() throws IOException {
                    return in.getPos();
                }

                @Override
                public void seek(long newPos) throws IOException {
                    in.seek(newPos);
                }

                @Override
                public int read() throws IOException {
                    return in.read();
                }

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    return in.read(b, off, len);
                }

                @Override
                public void close() throws IOException {
                    in.close();
                }
            };
        }

        @Override
        public String location() {
            return location;
        }

        @Override
        public boolean exists() {
            Path p = path(location);
            try {
                return fs(p).exists(p);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot look for " + location, e);
            }
        }
    }

    private static final class Out implements OutputFile {
        private final String location;

        Out(String location) {
            this.location = location;
        }

        @Override
        public PositionOutputStream create() {
            return open(FileSystem.WriteMode.NO_OVERWRITE);
        }

        @Override
        public PositionOutputStream createOrOverwrite() {
            return open(FileSystem.WriteMode.OVERWRITE);
        }

        private PositionOutputStream open(FileSystem.WriteMode mode) {
            Path p = path(location);
            FSDataOutputStream out;
            try {
                if (mode == FileSystem.WriteMode.NO_OVERWRITE && fs(p).exists(p)) {
                    throw new AlreadyExistsException("file already exists: %s", location);
                }
                out = fs(p).create(p, mode);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create " + location, e);
            }
            // counted, not asked: Iceberg asks a closed stream for its length
            return new PositionOutputStream() {
                private long pos;

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
                public void flush() {
                    // close() writes it all; a flush on S3 (Hadoop's S3A stream) is an unsupported hflush that warns
                }

                @Override
                public void close() throws IOException {
                    out.close();
                }
            };
        }

        @Override
        public String location() {
            return location;
        }

        @Override
        public InputFile toInputFile() {
            return new In(location, -1);
        }
    }
}
