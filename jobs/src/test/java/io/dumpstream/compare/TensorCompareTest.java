package io.dumpstream.compare;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.dumpstream.cli.Main;
import io.dumpstream.format.DumpBuilder;
import io.dumpstream.format.DumpBuilder.RecordSpec;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.table.DuckDb;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * import-reference then compare --by tensor, end to end through the commands: a safetensors file
 * written here with exact values, a MegaKernel-like candidate dump built with {@link DumpBuilder}
 * (tiles, broadcast workers, a truncated view, a gap, one perturbed element per failing tensor),
 * decoded offline into the same root; the tensor_comparisons rows read back with DuckDB and checked
 * field by field against what the construction implies.
 */
class TensorCompareTest {
    static final String REF = "eager/torch 1.13";
    static final String KERNEL = "mk%run=1";
    static final int RANK = 0;
    static final long LAUNCH = 3;

    @TempDir
    static Path tmp;
    static Path root;
    static Path out;
    static Path report;
    static String[] importRun;
    static String[] compareRun;

    static final float[] OUT = new float[32];
    static final float[] SCORES = new float[64];
    static final double[] GATE = new double[16];
    static final int[] IDX = {5, -2, 7, 11, 0, 3, 9, -8};

    static {
        for (int i = 0; i < 32; i++) {
            OUT[i] = i * 0.25f - 3;
        }
        for (int i = 0; i < 64; i++) {
            SCORES[i] = (float) (i % 7) / 8;
        }
        for (int i = 0; i < 16; i++) {
            GATE[i] = (i - 8) / 4.0;
        }
    }

    static String[] run(String... argv) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        int rc = Main.run(argv, new PrintStream(o, true, StandardCharsets.UTF_8), new PrintStream(e, true, StandardCharsets.UTF_8));
        return new String[]{String.valueOf(rc), o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8)};
    }

    /** A safetensors file as the format defines it: u64 LE header length, JSON header (space-padded to 8), raw bytes. */
    static void safetensors(Path file, Map<String, Object[]> tensors) throws Exception {
        Map<String, Object> header = new LinkedHashMap<>();
        ByteArrayOutputStream data = new ByteArrayOutputStream();
        header.put("__metadata__", Map.of("format", "pt"));
        for (Map.Entry<String, Object[]> e : tensors.entrySet()) {
            byte[] bytes = (byte[]) e.getValue()[2];
            header.put(e.getKey(), Map.of("dtype", e.getValue()[0], "shape", e.getValue()[1],
                    "data_offsets", List.of(data.size(), data.size() + bytes.length)));
            data.write(bytes);
        }
        StringBuilder json = new StringBuilder(new ObjectMapper().writeValueAsString(header));
        while (json.length() % 8 != 0) {
            json.append(' ');
        }
        byte[] h = json.toString().getBytes(StandardCharsets.UTF_8);
        ByteBuffer len = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(h.length);
        ByteArrayOutputStream f = new ByteArrayOutputStream();
        f.write(len.array());
        f.write(h);
        f.write(data.toByteArray());
        Files.write(file, f.toByteArray());
    }

    static Object[] t(String dtype, List<Integer> shape, byte[] bytes) {
        return new Object[]{dtype, shape, bytes};
    }

    static float[] slice(float[] v, int from, int to) {
        float[] s = new float[to - from];
        System.arraycopy(v, from, s, 0, s.length);
        return s;
    }

    static RecordSpec view(long task, long taskIndex, String stage, int pp, String name, String dtype, long offsetBytes, long... shape) {
        return new RecordSpec().taskId(task).taskIndex(taskIndex).stage(stage).io("output").index(0).parameterPosition(pp)
                .tensorName(name).dtype(dtype).sourceOffsetBytes(offsetBytes).actualShape(shape).coreType("AIV").coreId((int) task % 4)
                .ownerLabel("tile");
    }

    @BeforeAll
    static void importAndCompare() throws Exception {
        root = tmp.resolve("root");
        out = tmp.resolve("out");
        report = tmp.resolve("report/tensors.html");
        Path st = tmp.resolve("reference.safetensors");
        Map<String, Object[]> tensors = new LinkedHashMap<>();
        tensors.put("layer0.out", t("F32", List.of(4, 8), CompareJobTest.f32(OUT)));
        tensors.put("attn.scores", t("F32", List.of(64), CompareJobTest.f32(SCORES)));
        tensors.put("gate", t("BF16", List.of(16), CompareJobTest.bf16(GATE)));
        tensors.put("idx", t("I32", List.of(8), CompareJobTest.i32(IDX)));
        tensors.put("lonely", t("F32", List.of(4), CompareJobTest.f32(new float[]{1, 2, 3, 4})));
        tensors.put("wide", t("F32", List.of(8), CompareJobTest.f32(slice(OUT, 0, 8))));
        tensors.put("half", t("F16", List.of(4), CompareJobTest.f16(new int[]{0x3C00, 0x4000, 0x3800, 0xBC00})));
        safetensors(st, tensors);
        Path names = tmp.resolve("names.json");
        Files.writeString(names, """
                {"layer0.out": {"tensor_name": "out", "stage": "mlp", "phase": "after", "parameter_position": 2},
                 "attn.scores": "scores",
                 "gate": {"parameter_position": 5},
                 "idx": {"parameter_position": 6},
                 "lonely": {"parameter_position": 11},
                 "wide": {"parameter_position": 7},
                 "half": {"parameter_position": 8}}
                """);
        importRun = run("import-reference", "--safetensors", st.toString(), "--run", REF, "--rank", "0", "--launch", "3",
                "--step", "10", "--names", names.toString(), "--out", root.toString());
        assertEquals("0", importRun[0], importRun[1] + importRun[2]);

        DumpBuilder b = new DumpBuilder(KERNEL, RANK, LAUNCH).step(10L).chunkBytes(4096);
        // out: four row tiles, tile 2 off by 0.5 at [2][5] (element 21), tile 3 dumped by two broadcast workers
        for (int tile = 0; tile < 4; tile++) {
            float[] rows = slice(OUT, tile * 8, tile * 8 + 8);
            if (tile == 2) {
                rows[5] += 0.5f;
            }
            if (tile < 3) {
                b.add(view(10 + tile, tile, "mlp", 2, "out", "float32", tile * 32L, 1, 8).payload(CompareJobTest.f32(rows)));
            } else {
                for (long w = 0; w < 2; w++) {
                    b.add(view(13, 3, "mlp", 2, "out", "float32", 96, 1, 8).workerId(w).payload(CompareJobTest.f32(rows)));
                }
            }
        }
        // scores: [0, 16), a view of [16, 40) truncated to 16 elements, a gap [32, 48), then [48, 64)
        b.add(view(20, 0, "attn", 4, "scores", "float32", 0, 16).payload(CompareJobTest.f32(slice(SCORES, 0, 16))));
        b.add(view(21, 1, "attn", 4, "scores", "float32", 64, 24).maxPayloadBytes(64L)
                .payload(CompareJobTest.f32(slice(SCORES, 16, 40))));
        b.add(view(22, 2, "attn", 4, "scores", "float32", 192, 16).payload(CompareJobTest.f32(slice(SCORES, 48, 64))));
        // gate: two bf16 halves, equal bytes
        double[] g0 = new double[8];
        double[] g1 = new double[8];
        System.arraycopy(GATE, 0, g0, 0, 8);
        System.arraycopy(GATE, 8, g1, 0, 8);
        b.add(view(30, 0, "router", 5, "gate", "bfloat16", 0, 8).payload(CompareJobTest.bf16(g0)));
        b.add(view(31, 1, "router", 5, "gate", "bfloat16", 16, 8).payload(CompareJobTest.bf16(g1)));
        // idx: one view, element 3 off by one
        int[] idx = IDX.clone();
        idx[3] += 1;
        b.add(view(40, 0, "router", 6, "idx", "int32", 0, 8).payload(CompareJobTest.i32(idx)));
        // wide: views reach element 12 of an 8-element reference
        b.add(view(50, 0, "mlp", 7, "wide", "float32", 0, 6).payload(CompareJobTest.f32(slice(OUT, 0, 6))));
        b.add(view(51, 1, "mlp", 7, "wide", "float32", 24, 6).payload(CompareJobTest.f32(slice(OUT, 6, 12))));
        // half: float32 where the reference is float16
        b.add(view(60, 0, "mlp", 8, "half", "float32", 0, 4).payload(CompareJobTest.f32(new float[]{1, 2, 0.5f, -1})));
        // extra: no reference names it
        b.add(view(70, 0, "head", 9, "extra", "float32", 0, 4).payload(CompareJobTest.f32(new float[]{1, 2, 3, 4})));
        DumpBuilder.Dump dump = b.build();
        Path spool = Files.createDirectories(tmp.resolve("spool"));
        Files.write(spool.resolve("k.bin"), dump.buffer());
        Files.write(spool.resolve("k.manifest.json"), ManifestParser.toJson(dump.manifest()));
        String[] d = run("decode", "--dir", spool.toString(), "--out", root.toString());
        assertEquals("0", d[0], d[1] + d[2]);
        assertTrue(d[1].contains("COMPLETE"), d[1]);

        compareRun = run("compare", "--by", "tensor", "--root", root.toString(), "--baseline", REF, "--candidate", KERNEL,
                "--out", out.toString(), "--report", report.toString(), "--parallelism", "2");
        assertEquals("0", compareRun[0], compareRun[1] + compareRun[2]);
    }

    static final String HIVE = ", hive_partitioning=true, hive_types={'baseline': VARCHAR, 'candidate': VARCHAR, 'rank': INTEGER})";

    static Map<String, Map<String, Object>> rows(Path dir) throws Exception {
        Map<String, Map<String, Object>> byName = new TreeMap<>();
        for (Map<String, Object> r : DuckDb.query("SELECT * FROM read_parquet(" + DuckDb.glob(dir, "tensor_comparisons/**/*.parquet")
                + HIVE)) {
            assertNull(byName.put((String) r.get("tensor_name"), r), "one row per tensor: " + r);
        }
        return byName;
    }

    @Test
    void theReferenceRunLandsAsFullViews() throws Exception {
        List<Map<String, Object>> snaps = DuckDb.query("SELECT stage, tensor_name, note, phase, parameter_position, dtype, shape,"
                + " source_offset_bytes, full_bytes, payload_bytes, truncated, numel, min, max, task_id, io FROM read_parquet("
                + DuckDb.glob(root, "snapshots/**/*.parquet") + ", hive_partitioning=true, hive_types={'run': VARCHAR, 'rank':"
                + " INTEGER, 'stage': VARCHAR}) WHERE run = " + DuckDb.literal(REF) + " ORDER BY task_id");
        assertEquals(7, snaps.size(), snaps.toString());
        Map<String, Object> out0 = snaps.get(0);
        assertEquals("mlp", out0.get("stage"));
        assertEquals("out", out0.get("tensor_name"));
        assertEquals("safetensors:layer0.out", out0.get("note"));
        assertEquals("after", out0.get("phase"));
        assertEquals("output", out0.get("io"));
        assertEquals(2, out0.get("parameter_position"));
        assertEquals("float32", out0.get("dtype"));
        assertEquals(List.of(4L, 8L), out0.get("shape"));
        assertEquals(0L, out0.get("source_offset_bytes"));
        assertEquals(128L, out0.get("full_bytes"));
        assertEquals(128L, out0.get("payload_bytes"));
        assertEquals(false, out0.get("truncated"));
        assertEquals(32L, out0.get("numel"));
        assertEquals(-3.0, out0.get("min"));
        assertEquals(4.75, out0.get("max"));
        Map<String, Object> scores = snaps.get(1);
        assertEquals("scores", scores.get("tensor_name"));
        assertEquals("reference", scores.get("stage"), "the default stage");
        assertEquals(-1, scores.get("parameter_position"), "not given: matched by name");
        assertEquals("gate", snaps.get(2).get("tensor_name"), "the key is the default name");
        List<Map<String, Object>> dumps = DuckDb.query("SELECT dump_id, outcome, records, accepted, rejected, step FROM read_parquet("
                + DuckDb.glob(root, "dumps/**/*.parquet") + ", hive_partitioning=true, hive_types={'run': VARCHAR, 'rank': INTEGER})"
                + " WHERE run = " + DuckDb.literal(REF));
        assertEquals(List.of(Map.of("dump_id", REF + "/0/3", "outcome", "COMPLETE", "records", 7, "accepted", 7, "rejected", 0,
                "step", 10L)), dumps);
        assertTrue(importRun[1].contains(REF + "/0/3: COMPLETE, 7 tensors"), importRun[1]);
    }

    @Test
    void everyTensorVerdictAsBuilt() throws Exception {
        Map<String, Map<String, Object>> rows = rows(out);
        Map<String, String> verdicts = new TreeMap<>();
        rows.forEach((k, r) -> verdicts.put(k, (String) r.get("verdict")));
        assertEquals(new TreeMap<>(Map.of("out", "FAIL", "scores", "PASS", "gate", "PASS", "idx", "FAIL", "lonely", "MISSING_CANDIDATE",
                "wide", "SHAPE_MISMATCH", "half", "DTYPE_MISMATCH", "extra", "MISSING_BASELINE")), verdicts);
        assertTrue(compareRun[1].contains("8 tensors"), compareRun[1]);
        assertTrue(compareRun[1].contains("{PASS=2, FAIL=2, SHAPE_MISMATCH=1, DTYPE_MISMATCH=1, MISSING_BASELINE=1, MISSING_CANDIDATE=1}"),
                compareRun[1]);
        for (Map<String, Object> r : rows.values()) {
            assertEquals(REF, r.get("baseline_run"));
            assertEquals(KERNEL, r.get("candidate_run"));
            assertEquals(3L, r.get("launch_id"));
            assertEquals(0, r.get("rank"));
            assertEquals("after", r.get("phase"));
        }
    }

    @Test
    void firstDivergenceElementTaskAndMetrics() throws Exception {
        Map<String, Map<String, Object>> rows = rows(out);
        Map<String, Object> o = rows.get("out");
        assertEquals(2, o.get("parameter_position"));
        assertEquals("layer0.out", o.get("reference_key"));
        assertEquals(21L, o.get("first_mismatch_index"), "row 2, column 5 of a 4 x 8 tensor");
        assertEquals(12L, o.get("first_mismatch_task_id"), "the view of tile 2");
        assertEquals(2L, o.get("first_mismatch_task_index"));
        assertEquals(1L, o.get("mismatch_count"));
        assertEquals(0.5, o.get("max_abs_err"));
        assertEquals(0.5 / 2.25, (double) o.get("max_rel_err"), 1e-15);
        assertEquals(0.5 / 32, (double) o.get("mean_abs_err"), 1e-15);
        assertEquals(Math.sqrt(0.25 / 32), (double) o.get("rmse"), 1e-15);
        double dot = 0;
        double nb = 0;
        double nc = 0;
        for (int i = 0; i < 32; i++) {
            double c = OUT[i] + (i == 21 ? 0.5 : 0);
            dot += OUT[i] * c;
            nb += (double) OUT[i] * OUT[i];
            nc += c * c;
        }
        assertEquals(dot / Math.sqrt(nb * nc), (double) o.get("cosine_similarity"), 1e-12);
        assertEquals(1.0, o.get("coverage"));
        assertEquals(32L, o.get("covered_elements"));
        assertEquals(32L, o.get("extent_elements"));
        assertEquals(32L, o.get("compared_numel"));
        assertEquals(0L, o.get("gap_count"));
        assertEquals(5, o.get("views"), "four tiles, the last from two workers");
        assertEquals(0, o.get("rejected_views"));
        assertEquals(true, o.get("overlaps_agree"));
        assertEquals(false, o.get("bitwise_equal"));
        assertEquals(10L, o.get("task_id"), "the first view in offset order");
        assertEquals("mlp", o.get("stage"));
        assertEquals(List.of(4L, 8L), o.get("shape"));
        assertEquals(List.of(32L), o.get("candidate_shape"));
        assertEquals(1.3e-6, o.get("rtol"));
        assertNull(o.get("detail"));

        Map<String, Object> idx = rows.get("idx");
        assertEquals(3L, idx.get("first_mismatch_index"));
        assertEquals(40L, idx.get("first_mismatch_task_id"));
        assertEquals(0.0, idx.get("rtol"));
        assertEquals(1.0, idx.get("max_abs_err"));
        assertEquals(1.0 / 11, (double) idx.get("max_rel_err"), 1e-15);
    }

    @Test
    void coverageGapsTruncationAndMismatchesExplained() throws Exception {
        Map<String, Map<String, Object>> rows = rows(out);
        Map<String, Object> s = rows.get("scores");
        assertEquals("attn.scores", s.get("reference_key"));
        assertEquals(4, s.get("parameter_position"), "matched by tensor name");
        assertEquals(0.75, s.get("coverage"));
        assertEquals(48L, s.get("covered_elements"));
        assertEquals(64L, s.get("extent_elements"));
        assertEquals(1L, s.get("gap_count"));
        assertEquals(true, s.get("truncated"));
        assertEquals(true, s.get("bitwise_equal"));
        assertEquals(0L, s.get("mismatch_count"));
        assertNull(s.get("first_mismatch_index"));
        assertEquals(List.of(64L), s.get("candidate_shape"), "the views' own extent: the last view ends at element 64");
        assertEquals("coverage 0.7500: the views cover 48 of the reference's 64 elements (1 gap); only those are compared",
                s.get("detail"));

        Map<String, Object> gate = rows.get("gate");
        assertEquals(true, gate.get("bitwise_equal"));
        assertEquals(1.0, gate.get("cosine_similarity"));
        assertEquals(1.6e-2, gate.get("rtol"));

        assertTrue(((String) rows.get("wide").get("detail")).endsWith("the views reach element 12 (byte 48), the reference has 8 elements"),
                rows.get("wide").toString());
        assertEquals("dtype float16 in the reference, float32 in the candidate's views", rows.get("half").get("detail"));
        assertEquals("float32", rows.get("half").get("candidate_dtype"));
        Map<String, Object> lonely = rows.get("lonely");
        assertEquals(0.0, lonely.get("coverage"));
        assertEquals(0, lonely.get("views"));
        assertEquals("no candidate view of launch 3, phase after, parameter_position 11", lonely.get("detail"));
        Map<String, Object> extra = rows.get("extra");
        assertNull(extra.get("coverage"));
        assertEquals(9, extra.get("parameter_position"));
        assertEquals(1, extra.get("views"));
    }

    @Test
    void firstDivergenceTableIsTheEarliestTask() throws Exception {
        List<Map<String, Object>> rows = DuckDb.query("SELECT rank, tensor_name, verdict, task_id, first_mismatch_index FROM read_parquet("
                + DuckDb.glob(out, "tensor_first_divergence/**/*.parquet") + ", hive_partitioning=true, hive_types={'baseline':"
                + " VARCHAR, 'candidate': VARCHAR})");
        assertEquals(1, rows.size(), rows.toString());
        assertEquals("out", rows.get(0).get("tensor_name"), "tasks 10..13 run before every other diverging tensor's");
        assertEquals(21L, rows.get(0).get("first_mismatch_index"));
        try (var files = Files.walk(out)) {
            assertFalse(files.anyMatch(f -> f.toString().contains("/comparisons/")), "the pair tables are not written");
        }
    }

    @Test
    void reportShowsCoverageBesideEachVerdict() throws Exception {
        String html = Files.readString(report);
        assertTrue(html.contains("<h1>Tensor comparison:"), html);
        List<String> tensorRows = new ArrayList<>();
        for (String line : html.split("\n")) {
            if (line.startsWith("<tr class=\"tensor\">")) {
                tensorRows.add(line);
            }
        }
        assertEquals(8, tensorRows.size());
        String outRow = tensorRows.stream().filter(l -> l.contains("data-v=\"layer0.out\"")).findFirst().orElseThrow();
        assertTrue(outRow.contains("<td class=\"FAIL\" data-v=\"FAIL\">FAIL</td><td class=\"num cov\" data-v=\"1.0\">100.00%</td>"), outRow);
        String scoresRow = tensorRows.stream().filter(l -> l.contains("data-v=\"attn.scores\"")).findFirst().orElseThrow();
        assertTrue(scoresRow.contains("<td class=\"PASS\" data-v=\"PASS\">PASS</td><td class=\"num cov partial\" data-v=\"0.75\">75.00%</td>"
                + "<td class=\"num\" data-v=\"48\">48 / 64</td>"), scoresRow);
        assertTrue(html.contains("<tr><td class=\"PASS\">PASS</td><td class=\"num\">2</td><td class=\"num\">0.750000</td>"
                + "<td class=\"num\">0.875000</td></tr>"), "verdict counts with their coverage");
    }

    @Test
    void theClusterEntryPointWritesTheSameRows() throws Exception {
        Path out2 = tmp.resolve("out-main");
        CompareJob.main(new String[]{"--by", "tensor", "--root", root.toString(), "--baseline", REF, "--candidate", KERNEL,
                "--out", out2.toString(), "--parallelism", "1"});
        String select = "SELECT tensor_name, verdict, coverage, first_mismatch_index, first_mismatch_task_id, max_abs_err FROM read_parquet(";
        assertEquals(DuckDb.query(select + DuckDb.glob(out, "tensor_comparisons/**/*.parquet") + HIVE + " ORDER BY ALL"),
                DuckDb.query(select + DuckDb.glob(out2, "tensor_comparisons/**/*.parquet") + HIVE + " ORDER BY ALL"));
    }

    @Test
    void badReferenceInputIsRefusedByNameAndNothingLands() throws Exception {
        Path root2 = tmp.resolve("root-bad");
        Path st = tmp.resolve("short.safetensors");
        Map<String, Object[]> one = new LinkedHashMap<>();
        one.put("x", t("F32", List.of(4), CompareJobTest.f32(new float[]{1, 2, 3, 4})));
        safetensors(st, one);
        byte[] whole = Files.readAllBytes(st);
        Files.write(st, java.util.Arrays.copyOf(whole, whole.length - 4)); // the data section is 4 bytes short
        String[] r = run("import-reference", "--safetensors", st.toString(), "--run", "r", "--rank", "0", "--launch", "1",
                "--out", root2.toString());
        assertEquals("1", r[0], r[1] + r[2]);
        assertTrue(r[2].contains(st + ": 'x'.data_offsets: [0, 16] ends past the 12-byte data section"), r[2]);

        Path names = tmp.resolve("bad-names.json");
        Files.writeString(names, "{\"y\": {\"tensor_name\": \"y\"}}");
        safetensors(st, one);
        r = run("import-reference", "--safetensors", st.toString(), "--run", "r", "--rank", "0", "--launch", "1", "--names",
                names.toString(), "--out", root2.toString());
        assertEquals("1", r[0], r[1] + r[2]);
        assertTrue(r[2].contains("names map: key 'y' is not a tensor of " + st), r[2]);

        Files.writeString(names, "{\"x\": {\"phase\": \"during\"}}");
        r = run("import-reference", "--safetensors", st.toString(), "--run", "r", "--rank", "0", "--launch", "1", "--names",
                names.toString(), "--out", root2.toString());
        assertEquals("1", r[0], r[1] + r[2]);
        assertTrue(r[2].contains(names + ": key 'x': field 'phase' must be before or after, got 'during'"), r[2]);

        r = run("import-reference", "--safetensors", st.toString(), "--run", "r", "--rank", "0", "--launch", "1",
                "--max-tensor-bytes", "15", "--out", root2.toString());
        assertEquals("1", r[0], r[1] + r[2]);
        assertTrue(r[2].contains(st + ": 'x': 16 bytes, more than --max-tensor-bytes 15"), r[2]);
        try (var files = Files.walk(root2)) {
            assertEquals(List.of(), files.filter(f -> f.toString().endsWith(".parquet")).toList(), "nothing of a failed import lands");
        }
        r = run("compare", "--by", "tensor", "--root", root.toString(), "--baseline", REF, "--candidate", KERNEL, "--out",
                out.toString(), "--align-by", "step");
        assertEquals("2", r[0], r[1] + r[2]);
    }
}
