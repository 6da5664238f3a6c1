package io.dumpstream.compare;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.dumpstream.format.DumpBuilder;
import io.dumpstream.format.DumpBuilder.RecordSpec;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.table.DuckDb;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An eager torch computation checked end to end against its kernel-like tile views: the test resource
 * {@code torch/eager_tiles.py}, run by a real python3 with Debian's python3-torch, computes a matmul and
 * a softmax eagerly, saves them (and the inputs) as a safetensors file, and writes the tile views a fused
 * kernel would dump (each matmul task recomputing its row tile, each softmax task its tile, every matmul
 * task reading all of b; one softmax element perturbed). Here the views become an L1 dump
 * ({@link DumpBuilder}), decoded offline; the safetensors file goes through import-reference; compare --by
 * tensor must find exactly the perturbed tensor, element and task, and pass the rest at full coverage.
 * Skipped (with the reason) only when no python3 on this machine imports torch; .ci/run installs it.
 */
class TorchReferenceTest {
    static final String SCRIPT = "/torch/eager_tiles.py";

    /** The first of /usr/bin/python3 (Debian's, where python3-torch installs) and PATH's python3 that imports torch. */
    static String pythonWithTorch() {
        for (String py : List.of("/usr/bin/python3", "python3")) {
            try {
                Process p = new ProcessBuilder(py, "-c", "import torch").redirectErrorStream(true).start();
                p.getInputStream().readAllBytes();
                if (p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0) {
                    return py;
                }
            } catch (Exception e) {
                // not this one
            }
        }
        return null;
    }

    @Test
    void thePerturbedSoftmaxTileIsFoundAndTheRestPass(@TempDir Path tmp) throws Exception {
        String python = pythonWithTorch();
        Assumptions.assumeTrue(python != null,
                "no python3 with torch (apt-get install python3-torch; .ci/run installs it): skipping the eager torch check");
        Path script = Path.of(getClass().getResource(SCRIPT).toURI());
        Path work = tmp.resolve("torch");
        Process p = new ProcessBuilder(python, script.toString(), work.toString()).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(300, TimeUnit.SECONDS), "the torch script timed out");
        assertEquals(0, p.exitValue(), log);

        ObjectMapper json = new ObjectMapper();
        JsonNode views = json.readTree(work.resolve("views.json").toFile());
        JsonNode perturbed = json.readTree(work.resolve("perturbed.json").toFile());
        DumpBuilder b = new DumpBuilder("megakernel", 0, 7).step(1L).chunkBytes(1 << 16);
        for (JsonNode v : views) {
            List<Long> shape = new ArrayList<>();
            v.get("shape").forEach(d -> shape.add(d.asLong()));
            boolean input = v.get("io").asText().equals("input");
            b.add(new RecordSpec().taskId(v.get("task_id").asLong()).taskIndex(v.get("task_index").asLong())
                    .stage(v.get("stage").asText()).io(v.get("io").asText()).index(input ? v.get("parameter_position").asInt() : 0)
                    .parameterPosition(v.get("parameter_position").asInt()).tensorName(v.get("tensor_name").asText())
                    .dtype("float32").sourceOffsetBytes(v.get("source_offset_bytes").asLong())
                    .actualShape(shape.stream().mapToLong(Long::longValue).toArray()).coreType("AIV")
                    .coreId(v.get("task_index").asInt()).ownerLabel("tile")
                    .payload(Files.readAllBytes(work.resolve(v.get("file").asText()))));
        }
        DumpBuilder.Dump dump = b.build();
        Path spool = Files.createDirectories(tmp.resolve("spool"));
        Files.write(spool.resolve("mk.bin"), dump.buffer());
        Files.write(spool.resolve("mk.manifest.json"), ManifestParser.toJson(dump.manifest()));
        Path root = tmp.resolve("root");
        String[] d = TensorCompareTest.run("decode", "--dir", spool.toString(), "--out", root.toString());
        assertEquals("0", d[0], d[1] + d[2]);
        assertTrue(d[1].contains("COMPLETE, 16 accepted, 0 rejected"), d[1]);
        String[] imp = TensorCompareTest.run("import-reference", "--safetensors", work.resolve("reference.safetensors").toString(),
                "--run", "eager", "--rank", "0", "--launch", "7", "--names", work.resolve("names.json").toString(), "--out",
                root.toString());
        assertEquals("0", imp[0], imp[1] + imp[2]);
        Path out = tmp.resolve("out");
        String[] c = TensorCompareTest.run("compare", "--by", "tensor", "--root", root.toString(), "--baseline", "eager",
                "--candidate", "megakernel", "--out", out.toString(), "--report", tmp.resolve("report.html").toString());
        assertEquals("0", c[0], c[1] + c[2]);

        Map<String, Map<String, Object>> rows = new TreeMap<>();
        for (Map<String, Object> r : DuckDb.query("SELECT * FROM read_parquet(" + DuckDb.glob(out, "tensor_comparisons/**/*.parquet")
                + TensorCompareTest.HIVE)) {
            rows.put((String) r.get("reference_key"), r);
        }
        assertEquals(List.of("a", "b", "mm", "softmax"), new ArrayList<>(rows.keySet()));
        for (String k : List.of("a", "b", "mm")) {
            Map<String, Object> r = rows.get(k);
            assertEquals("PASS", r.get("verdict"), r.toString());
            assertEquals(1.0, r.get("coverage"), r.toString());
            assertEquals(0L, r.get("mismatch_count"));
            assertEquals(true, r.get("overlaps_agree"));
        }
        assertEquals(4, rows.get("b").get("views"), "every matmul task read all of b");
        assertEquals(0, rows.get("b").get("rejected_views"));
        assertEquals(perturbed.get("mm_tiles_bitwise_equal").asBoolean(), rows.get("mm").get("bitwise_equal"),
                "the tiles recomputed by torch equal the eager matmul bit for bit exactly when the script says so");
        Map<String, Object> s = rows.get("softmax");
        assertEquals("FAIL", s.get("verdict"), s.toString());
        assertEquals("p", s.get("tensor_name"));
        assertEquals(3, s.get("parameter_position"));
        assertEquals(1L, s.get("mismatch_count"), "one perturbed element");
        assertEquals(perturbed.get("flat_index").asLong(), s.get("first_mismatch_index"));
        assertEquals(perturbed.get("task_id").asLong(), s.get("first_mismatch_task_id"));
        assertEquals(perturbed.get("task_index").asLong(), s.get("first_mismatch_task_index"));
        assertEquals(1.0, s.get("coverage"));
        assertEquals(3072L, s.get("covered_elements"));
        assertTrue(c[1].contains("4 tensors") && c[1].contains("PASS=3, FAIL=1"), c[1]);
        List<Map<String, Object>> first = DuckDb.query("SELECT tensor_name, first_mismatch_index FROM read_parquet("
                + DuckDb.glob(out, "tensor_first_divergence/**/*.parquet") + ")");
        assertEquals(List.of(Map.of("tensor_name", "p", "first_mismatch_index", perturbed.get("flat_index").asLong())), first);
    }
}
