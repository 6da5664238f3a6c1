package io.dumpstream.compare;

import io.dumpstream.schema.TensorSnapshot;

import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.formats.parquet.ParquetInputFile;
import org.apache.parquet.avro.AvroParquetReader;
import org.apache.parquet.avro.AvroReadSupport;
import org.apache.parquet.avro.AvroWriteSupport;
import org.apache.parquet.conf.HadoopParquetConfiguration;
import org.apache.parquet.hadoop.ParquetReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The key and metadata columns of one snapshot file (a Parquet column projection: the payload column
 * is never read here) as {@link Operand}s of the two runs, each with its row number for the payload
 * read that follows pairing. Rows of any other run are skipped, and so are rows not written by our
 * decoders (logged), as the row-at-a-time job did.
 */
public final class SnapshotRows {
    private static final Logger LOG = LoggerFactory.getLogger(SnapshotRows.class);
    /** The columns a pair needs besides its payload. */
    static final Set<String> COLUMNS = Set.of("dump_id", "run_id", "stage_name", "launch_id", "step", "record_index", "task_id",
            "task_index", "owner_id", "io", "port_index", "tensor_name", "worker_id", "dtype", "shape", "truncated", "numel",
            "nan_count", "inf_count", "l2_norm", "payload_crc32c");
    static final Schema PROJECTION = projection(COLUMNS, "TensorSnapshotKeys");

    private SnapshotRows() {
    }

    /** The snapshot schema's {@code columns} only, in schema order, as a record named {@code name}. */
    public static Schema projection(Set<String> columns, String name) {
        List<Schema.Field> fields = new ArrayList<>();
        for (Schema.Field f : TensorSnapshot.getClassSchema().getFields()) {
            if (columns.contains(f.name())) {
                fields.add(new Schema.Field(f, f.schema()));
            }
        }
        return Schema.createRecord(name, "snapshot columns without the payload", "io.dumpstream.compare", false, fields);
    }

    /**
     * A reader of the {@code projection} columns of the snapshot file {@code in} ({@code length} bytes) as generic
     * records, in row order (row numbers match the payload column's); a projection without {@code data} never reads
     * a payload. The caller closes it (the stream too).
     */
    public static ParquetReader<GenericRecord> reader(FSDataInputStream in, long length, Schema projection) throws IOException {
        org.apache.hadoop.conf.Configuration conf = new org.apache.hadoop.conf.Configuration(false);
        AvroReadSupport.setRequestedProjection(conf, projection);
        // the projection is converted to a Parquet schema: it must use the three-level list layout
        // the writers use (ParquetWriters), or shape would match no column and read as null
        conf.setBoolean(AvroWriteSupport.WRITE_OLD_LIST_STRUCTURE, false);
        // an explicit configuration: the builder's default one parses core-default.xml for every file
        return AvroParquetReader.<GenericRecord>builder(new ParquetInputFile(in, length), new HadoopParquetConfiguration(conf))
                .withDataModel(GenericData.get())
                .build();
    }

    /** Appends the rows of {@code in} ({@code file}, {@code length} bytes, number {@code fileIndex} of its partition) to {@code out}. */
    static void read(String file, FSDataInputStream in, long length, int fileIndex, String baseline, String candidate, PairKey keys,
                     List<Operand> out) throws IOException {
        read(file, in, length, fileIndex, baseline, candidate, PROJECTION, (r, base, f, row) -> Operand.of(r, base, keys, f, row), out);
    }

    /** How a projected row becomes a side (it throws IllegalArgumentException for a row not written by our decoders). */
    interface RowMapper<T extends Operand> {
        T map(GenericRecord r, boolean baseline, int fileIndex, long row);
    }

    /** As {@link #read(String, FSDataInputStream, long, int, String, String, PairKey, List)} with another projection and row type. */
    static <T extends Operand> void read(String file, FSDataInputStream in, long length, int fileIndex, String baseline,
                                         String candidate, Schema projection, RowMapper<T> mapper, List<? super T> out)
            throws IOException {
        try (ParquetReader<GenericRecord> reader = reader(in, length, projection)) {
            long row = 0;
            for (GenericRecord r = reader.read(); r != null; r = reader.read(), row++) {
                String run = String.valueOf(r.get("run_id"));
                boolean base = baseline.equals(run);
                if (!base && !candidate.equals(run)) {
                    continue;
                }
                try {
                    out.add(mapper.map(r, base, fileIndex, row));
                } catch (IllegalArgumentException e) {
                    // a row not written by our decoders: say which and go on with the rest
                    LOG.warn("skipping snapshot row {} of {} (run '{}' record {}): {}", row, file, run, r.get("record_index"),
                            e.getMessage());
                }
            }
        } catch (RuntimeException e) {
            throw new IOException(file + ": " + e.getMessage(), e);
        }
    }
}
