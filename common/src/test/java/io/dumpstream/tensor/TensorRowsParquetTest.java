package io.dumpstream.tensor;

import io.dumpstream.format.Dtype;
import io.dumpstream.schema.ReassembledTensor;
import io.dumpstream.table.DuckDb;
import io.dumpstream.table.ParquetWriters;
import org.apache.parquet.hadoop.ParquetWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** A reassembled tensor with an agreeing and a disagreeing overlap written as Parquet and read by DuckDB. */
class TensorRowsParquetTest {
    @Test
    void rowReadsBackWithViewsAndFindings(@TempDir Path dir) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 16; i++) {
            b.putFloat(i);
        }
        byte[] t = b.array();
        byte[] bad = java.util.Arrays.copyOfRange(t, 32, 64);
        bad[4] ^= 1;                                          // tensor byte 36, element 9
        Reassembler r = new Reassembler(new TensorKey("run/x", 2, 9, "after", 3));
        r.add(new View(1, 0, new View.Placement("AIC", 0, 5L, "expert", null), "w", Dtype.FLOAT32, 0, 48, t, 0, 48));
        r.add(new View(2, 1, new View.Placement("AIV", 1, null, "", 1L), "w", Dtype.FLOAT32, 0, 16, t, 0, 16));
        r.add(new View(3, 2, new View.Placement("AIV", 2, null, "", 2L), "w", Dtype.FLOAT32, 32, 48, bad, 0, 32));
        Path file = dir.resolve("t.parquet");
        try (ParquetWriter<ReassembledTensor> w = ParquetWriters.create(file, ReassembledTensor.class,
                ParquetWriters.Settings.defaults())) {
            w.write(TensorRows.toAvro(r.finish()));
        }
        try (DuckDb db = DuckDb.open()) {
            List<Map<String, Object>> rows = db.rows("SELECT run_id, launch_id, parameter_position, dtype, extent_bytes, "
                    + "covered_bytes, coverage, gap_count, overlap_count, overlap_bytes, overlaps_agree, numel, min, max, "
                    + "[v.task_id for v in views] AS tasks, [v.core_type for v in views] AS cores, "
                    + "[v.owner_id for v in views] AS owners, [v.worker_id for v in views] AS workers, "
                    + "disagreements[1].earlier_task_id AS a, disagreements[1].later_task_id AS b, "
                    + "disagreements[1].offset_bytes AS o, disagreements[1].length_bytes AS l, "
                    + "disagreements[1].first_difference_offset_bytes AS f, len(disagreements) AS nd FROM read_parquet("
                    + DuckDb.literal(file.toString()) + ")");
            assertEquals(1, rows.size());
            Map<String, Object> x = rows.get(0);
            assertEquals("run/x", x.get("run_id"));
            assertEquals(9L, ((Number) x.get("launch_id")).longValue());
            assertEquals(3, ((Number) x.get("parameter_position")).intValue());
            assertEquals("float32", x.get("dtype"));
            assertEquals(80L, ((Number) x.get("extent_bytes")).longValue());
            assertEquals(64L, ((Number) x.get("covered_bytes")).longValue());
            assertEquals(0.8, ((Number) x.get("coverage")).doubleValue());
            assertEquals(1L, ((Number) x.get("gap_count")).longValue());
            assertEquals(2L, ((Number) x.get("overlap_count")).longValue());
            assertEquals(32L, ((Number) x.get("overlap_bytes")).longValue());
            assertEquals(false, x.get("overlaps_agree"));
            assertEquals(16L, ((Number) x.get("numel")).longValue());
            assertEquals(0.0, ((Number) x.get("min")).doubleValue());
            assertEquals(15.0, ((Number) x.get("max")).doubleValue());
            assertEquals(List.of(1L, 2L, 3L), x.get("tasks"));
            assertEquals(List.of("AIC", "AIV", "AIV"), x.get("cores"));
            assertEquals(java.util.Arrays.asList(5L, null, null), x.get("owners"));
            assertEquals(java.util.Arrays.asList(null, 1L, 2L), x.get("workers"));
            assertEquals(1L, ((Number) x.get("a")).longValue());
            assertEquals(3L, ((Number) x.get("b")).longValue());
            assertEquals(32L, ((Number) x.get("o")).longValue());
            assertEquals(16L, ((Number) x.get("l")).longValue());
            assertEquals(36L, ((Number) x.get("f")).longValue());
            assertEquals(1L, ((Number) x.get("nd")).longValue());
        }
    }
}
