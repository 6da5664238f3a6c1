package io.dumpstream.tensors;

import io.dumpstream.compare.SnapshotRows;

import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.Path;
import org.apache.parquet.hadoop.ParquetReader;

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads the view columns of a snapshot file (a projection through {@link SnapshotRows#reader}: the
 * payload column is not read here) into {@link ViewMeta}s. A row whose required column is null (not
 * written by our decoders) is an {@link IOException} naming the file, the row and the column.
 */
final class ViewColumns {
    static final Set<String> COLUMNS = Set.of("run_id", "launch_id", "phase", "parameter_position", "task_id", "task_index",
            "core_type", "core_id", "owner_id", "owner_label", "worker_id", "tensor_name", "dtype", "source_offset_bytes",
            "full_bytes", "payload_bytes");
    static final Schema PROJECTION = SnapshotRows.projection(COLUMNS, "TensorViewColumns");

    private final Map<String, String> strings = new HashMap<>();

    /** Appends the views of file {@code fileIndex} ({@code path}, {@code length} bytes) to {@code out}. */
    void read(String path, long length, int fileIndex, List<ViewMeta> out) throws IOException {
        Path p = new Path(path);
        FSDataInputStream in = p.getFileSystem().open(p);
        try (in; ParquetReader<GenericRecord> reader = SnapshotRows.reader(in, length, PROJECTION)) {
            long row = 0;
            for (GenericRecord r = reader.read(); r != null; r = reader.read(), row++) {
                ViewMeta v = new ViewMeta();
                v.file = fileIndex;
                v.row = row;
                v.runId = text(r, "run_id", path, row);
                v.launchId = number(r, "launch_id", path, row).longValue();
                v.phase = text(r, "phase", path, row);
                v.parameterPosition = number(r, "parameter_position", path, row).intValue();
                v.taskId = number(r, "task_id", path, row).longValue();
                v.taskIndex = number(r, "task_index", path, row).longValue();
                v.coreType = text(r, "core_type", path, row);
                v.coreId = number(r, "core_id", path, row).intValue();
                v.ownerId = r.get("owner_id") == null ? null : ((Number) r.get("owner_id")).longValue();
                v.ownerLabel = text(r, "owner_label", path, row);
                v.workerId = r.get("worker_id") == null ? null : ((Number) r.get("worker_id")).longValue();
                v.tensorName = text(r, "tensor_name", path, row);
                v.dtype = text(r, "dtype", path, row);
                v.sourceOffsetBytes = number(r, "source_offset_bytes", path, row).longValue();
                v.fullBytes = number(r, "full_bytes", path, row).longValue();
                v.payloadBytes = number(r, "payload_bytes", path, row).longValue();
                out.add(v);
            }
        } catch (RuntimeException e) {
            throw new IOException(path + ": " + e.getMessage(), e);
        }
    }

    private String text(GenericRecord r, String column, String path, long row) throws IOException {
        Object v = r.get(column);
        if (v == null) {
            throw new IOException(path + ": row " + row + ": column '" + column + "' is null");
        }
        String s = v.toString();
        String shared = strings.putIfAbsent(s, s);
        return shared == null ? s : shared;
    }

    private static Number number(GenericRecord r, String column, String path, long row) throws IOException {
        Object v = r.get(column);
        if (!(v instanceof Number n)) {
            throw new IOException(path + ": row " + row + ": column '" + column + "' is " + v + ", not a number");
        }
        return n;
    }
}
