package io.dumpstream.tensor;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.dumpstream.decode.OfflineDecoder;
import io.dumpstream.decode.TensorStats;
import io.dumpstream.format.Dtype;
import io.dumpstream.table.DuckDb;
import io.dumpstream.table.TableWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The public broadcast_workers vector decoded offline to the snapshots table, read back by DuckDB and
 * reassembled: six workers' row blocks cover parameter 0 end to end. The model is the manifest's payload
 * ranges of the buffer file concatenated in offset order.
 */
class BroadcastVectorReassemblyTest {
    @Test
    void sixWorkersCoverTheParameterEndToEnd(@TempDir Path root) throws Exception {
        Path dir = Path.of(getClass().getResource("/vectors/broadcast_workers.bin").toURI()).getParent();
        Path manifestFile = dir.resolve("broadcast_workers.manifest.json");
        Path bin = dir.resolve("broadcast_workers.bin");
        try (TableWriter w = new TableWriter(root, TableWriter.Options.defaults())) {
            new OfflineDecoder(w, Clock.fixed(Instant.parse("2026-12-02T00:00:00Z"), ZoneOffset.UTC))
                    .decode(manifestFile, bin);
        }
        JsonNode manifest = new ObjectMapper().readTree(manifestFile.toFile());
        byte[] buffer = Files.readAllBytes(bin);
        ByteArrayOutputStream model = new ByteArrayOutputStream();
        for (JsonNode r : manifest.get("records")) {
            model.write(buffer, r.get("payload_offset").asInt(), r.get("payload_bytes").asInt());
        }
        byte[] whole = model.toByteArray();

        List<Map<String, Object>> rows;
        try (DuckDb db = DuckDb.open()) {
            rows = db.rows("SELECT task_id, task_index, core_type, core_id, owner_id, owner_label, worker_id, "
                    + "tensor_name, dtype, source_offset_bytes, full_bytes, data FROM read_parquet("
                    + DuckDb.glob(root, "snapshots/**/*.parquet") + ", hive_partitioning=true) "
                    + "WHERE parameter_position = 0 ORDER BY source_offset_bytes, task_index");
        }
        ByteArrayOutputStream walked = new ByteArrayOutputStream();
        Reassembler r = new Reassembler(new TensorKey(manifest.get("run_id").asText(), manifest.get("rank").asInt(),
                manifest.get("launch_id").asLong(), "after", 0), iv -> walked.write(iv.bytes(), iv.off(), iv.length()));
        for (Map<String, Object> s : rows) {
            assertTrue(r.add(new View(((Number) s.get("task_id")).longValue(), ((Number) s.get("task_index")).longValue(),
                    new View.Placement((String) s.get("core_type"), ((Number) s.get("core_id")).intValue(),
                            s.get("owner_id") == null ? null : ((Number) s.get("owner_id")).longValue(),
                            (String) s.get("owner_label"),
                            s.get("worker_id") == null ? null : ((Number) s.get("worker_id")).longValue()),
                    (String) s.get("tensor_name"), Dtype.fromName((String) s.get("dtype")),
                    ((Number) s.get("source_offset_bytes")).longValue(), ((Number) s.get("full_bytes")).longValue(),
                    (byte[]) s.get("data"))));
        }
        TensorRow row = r.finish();
        assertEquals(6, row.views().size());
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L),
                row.views().stream().map(v -> v.placement().workerId()).toList());
        assertEquals(List.of(0, 1, 2, 3, 4, 5), row.views().stream().map(v -> v.placement().coreId()).toList());
        assertEquals("n", row.tensorName());
        assertEquals("float32", row.dtype());
        assertEquals(1536, row.extentBytes());
        assertEquals(384, row.extentElements());
        assertEquals(1536, row.coveredBytes());
        assertEquals(1.0, row.coverage());
        assertEquals(0, row.gapCount());
        assertEquals(0, row.overlapCount());
        assertTrue(row.overlapsAgree());
        assertArrayEquals(whole, walked.toByteArray());
        TensorStats.Stats m = TensorStats.compute(Dtype.FLOAT32, whole, 0, whole.length);
        TensorStats.Stats got = row.stats();
        assertEquals(m.numel(), got.numel());
        assertEquals(m.nanCount(), got.nanCount());
        assertEquals(m.infCount(), got.infCount());
        assertEquals(m.zeroCount(), got.zeroCount());
        assertEquals(m.min(), got.min());
        assertEquals(m.max(), got.max());
        assertEquals(m.mean(), got.mean(), Math.abs(m.mean()) * 1e-12);
        assertEquals(m.l2Norm(), got.l2Norm(), m.l2Norm() * 1e-12);
    }
}
