package io.dumpstream.compare;

import io.dumpstream.schema.TensorSnapshot;
import io.dumpstream.table.ParquetWriters;

import org.apache.avro.specific.SpecificData;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.reader.StreamFormat;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.formats.parquet.ParquetInputFile;
import org.apache.parquet.avro.AvroParquetReader;
import org.apache.parquet.hadoop.ParquetReader;

import java.io.IOException;

/**
 * Reads snapshot Parquet files as {@link TensorSnapshot} rows, whole files (not split). Unlike
 * Flink's Avro Parquet format it builds the reader with an empty Hadoop configuration, so no HDFS
 * classes are needed and no {@code core-default.xml} is parsed per file.
 */
public final class SnapshotFormat implements StreamFormat<TensorSnapshot> {
    private static final long serialVersionUID = 1L;

    @Override
    public Reader<TensorSnapshot> createReader(Configuration config, FSDataInputStream stream, long fileLen, long splitEnd)
            throws IOException {
        if (splitEnd != fileLen) {
            throw new IllegalArgumentException("snapshot files are read whole: split ends at " + splitEnd + " of " + fileLen);
        }
        SpecificData model = ParquetWriters.modelOf(TensorSnapshot.class);
        ParquetReader<TensorSnapshot> reader = AvroParquetReader.<TensorSnapshot>builder(new ParquetInputFile(stream, fileLen))
                .withDataModel(model)
                .withConf(new org.apache.hadoop.conf.Configuration(false))
                .build();
        return new Reader<>() {
            @Override
            public TensorSnapshot read() throws IOException {
                return reader.read();
            }

            @Override
            public void close() throws IOException {
                reader.close();
            }
        };
    }

    @Override
    public Reader<TensorSnapshot> restoreReader(Configuration config, FSDataInputStream stream, long restoredOffset, long fileLen,
                                                long splitEnd) throws IOException {
        // batch jobs restart whole regions; a file is always read from its start
        return createReader(config, stream, fileLen, splitEnd);
    }

    @Override
    public boolean isSplittable() {
        return false;
    }

    @Override
    public TypeInformation<TensorSnapshot> getProducedType() {
        return TypeInformation.of(TensorSnapshot.class);
    }
}
