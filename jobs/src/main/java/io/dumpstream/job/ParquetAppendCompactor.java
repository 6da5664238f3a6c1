package io.dumpstream.job;

import io.dumpstream.table.StreamOutputFile;
import org.apache.flink.connector.file.sink.compactor.OutputStreamBasedFileCompactor;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.metadata.FileMetaData;
import org.apache.parquet.io.DelegatingSeekableInputStream;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.PositionOutputStream;
import org.apache.parquet.io.SeekableInputStream;

import java.io.IOException;
import java.io.OutputStream;
import java.util.List;

/**
 * A {@link org.apache.flink.connector.file.sink.FileSink} compactor for our Parquet parts: the
 * committed parts of one partition become one file by copying their row groups byte for byte
 * ({@link ParquetFileWriter#appendFile}), no row decoded or re-encoded. It streams: the copy goes
 * through a small buffer, and only footers are held (one part's at a time, plus the row-group
 * metadata of the output). All inputs of one bucket share the table's schema; the key-value metadata
 * (the Avro schema) of the first part is kept. Flink's compactor operator writes the result under a
 * hidden in-progress name and its committer publishes it and removes the inputs on the checkpoint.
 */
public final class ParquetAppendCompactor extends OutputStreamBasedFileCompactor {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doCompact(List<Path> inputs, OutputStream out) throws Exception {
        if (inputs.isEmpty()) {
            throw new IOException("nothing to compact");
        }
        FileMetaData first;
        try (ParquetFileReader r = ParquetFileReader.open(new FlinkInputFile(inputs.get(0)))) {
            first = r.getFooter().getFileMetaData();
        }
        ParquetFileWriter w = new ParquetFileWriter(new StreamOutputFile(new CountingStream(out)), first.getSchema(),
                ParquetFileWriter.Mode.CREATE, 0, 0);
        w.start();
        for (Path p : inputs) {
            FlinkInputFile in = new FlinkInputFile(p);
            try (ParquetFileReader r = ParquetFileReader.open(in)) {
                if (!r.getFooter().getFileMetaData().getSchema().equals(first.getSchema())) {
                    throw new IOException("cannot compact " + p + ": its schema differs from " + inputs.get(0)
                            + "'s");
                }
            }
            w.appendFile(in);
        }
        w.end(first.getKeyValueMetaData());
    }

    /** A part on any Flink file system, read through its seekable stream. */
    static final class FlinkInputFile implements InputFile {
        private final Path path;
        private final long length;

        FlinkInputFile(Path path) throws IOException {
            this.path = path;
            this.length = path.getFileSystem().getFileStatus(path).getLen();
        }

        @Override
        public long getLength() {
            return length;
        }

        @Override
        public SeekableInputStream newStream() throws IOException {
            FileSystem fs = path.getFileSystem();
            FSDataInputStream s = fs.open(path);
            return new DelegatingSeekableInputStream(s) {
                @Override
                public long getPos() throws IOException {
                    return s.getPos();
                }

                @Override
                public void seek(long newPos) throws IOException {
                    s.seek(newPos);
                }
            };
        }

        @Override
        public String toString() {
            return path.toString();
        }
    }

    /** The compactor's output stream with its position counted; closing it only flushes (the compactor owns it). */
    static final class CountingStream extends PositionOutputStream {
        private final OutputStream out;
        private long pos;

        CountingStream(OutputStream out) {
            this.out = out;
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
            out.flush();
        }
    }
}
