package io.dumpstream.job;

import io.dumpstream.table.CountingPositionStream;
import io.dumpstream.table.StreamOutputFile;
import org.apache.flink.connector.file.sink.compactor.OutputStreamBasedFileCompactor;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.formats.parquet.ParquetInputFile;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.metadata.FileMetaData;

import java.io.IOException;
import java.io.OutputStream;
import java.util.List;

/**
 * A {@link org.apache.flink.connector.file.sink.FileSink} compactor for our Parquet parts: the
 * committed parts of one partition become one file by copying their row groups byte for byte
 * ({@link ParquetFileReader#appendTo}), no row decoded or re-encoded. It streams: the copy goes
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
        try (ParquetFileReader r = open(inputs.get(0))) {
            first = r.getFooter().getFileMetaData();
        }
        ParquetFileWriter w = new ParquetFileWriter(new StreamOutputFile(new CountingPositionStream(out)), first.getSchema(),
                ParquetFileWriter.Mode.CREATE, 0, 0);
        w.start();
        for (Path p : inputs) {
            try (ParquetFileReader r = open(p)) {
                if (!r.getFooter().getFileMetaData().getSchema().equals(first.getSchema())) {
                    throw new IOException("cannot compact " + p + ": its schema differs from " + inputs.get(0)
                            + "'s");
                }
                r.appendTo(w); // what ParquetFileWriter.appendFile does, on the reader already open
            }
        }
        w.end(first.getKeyValueMetaData());
    }

    /**
     * A part on any Flink file system, read through flink-parquet's adapter of its seekable stream
     * (one stream per reader: {@link ParquetInputFile#newStream()} wraps the same stream each time).
     */
    private static ParquetFileReader open(Path path) throws IOException {
        FileSystem fs = path.getFileSystem();
        long length = fs.getFileStatus(path).getLen();
        FSDataInputStream in = fs.open(path);
        try {
            return ParquetFileReader.open(new ParquetInputFile(in, length) {
                @Override
                public String toString() {
                    return path.toString(); // parquet-java's errors name the file by it
                }
            });
        } catch (IOException | RuntimeException e) {
            in.close();
            throw e;
        }
    }
}
