package io.dumpstream.compare;

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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The compare command end to end: two runs built with {@link DumpBuilder}, decoded offline into one
 * root with the known perturbations of issue 7, compared by the Flink batch job on a MiniCluster,
 * the tables read back with DuckDB, every verdict, the first divergence per rank and the metrics
 * checked against values computed here from the generated numbers; the report rendered by
 * headless Chromium.
 */
class CompareJobTest {
    /** Run ids with characters the Hive escaping must carry through paths. */
    static final String BASE = "ref/gpu=a100";
    static final String CAND = "npu%try 1";
    static final String SHIFTED = "npu-shifted";

    @TempDir
    static Path tmp;
    static Path root;
    static Path out;
    static Path report;
    static String[] compareRun;

    // generated values, kept for the independent expectations
    static final float[] WITHIN_B = new float[64];
    static final float[] WITHIN_C = new float[64];
    static final double[] BF16_B = new double[128];
    static final int[] HALF_B = new int[32];
    static final int[] INT_B = new int[16];
    static final double[] F64_B = new double[50];
    static final float[] TRUNC = new float[100];

    static {
        for (int i = 0; i < 64; i++) {
            WITHIN_B[i] = (float) (1 + 0.25 * Math.sin(i));
            WITHIN_C[i] = WITHIN_B[i] + 1e-6f;
        }
        for (int i = 0; i < 128; i++) {
            BF16_B[i] = (i % 16 - 8) / 8.0; // exact in bfloat16
        }
        int[] patterns = {0x3C00, 0x4000, 0x3800, 0xBC00}; // 1, 2, 0.5, -1
        for (int i = 0; i < 32; i++) {
            HALF_B[i] = patterns[i % 4];
        }
        HALF_B[9] = 0x7E00; // NaN in both runs: NaN matches NaN
        for (int i = 0; i < 16; i++) {
            INT_B[i] = 3 * i - 7;
        }
        for (int i = 0; i < 50; i++) {
            F64_B[i] = Math.sin(i) + 2;
        }
        for (int i = 0; i < 100; i++) {
            TRUNC[i] = i * 0.5f;
        }
    }

    static String[] run(String... argv) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        int rc = Main.run(argv, new PrintStream(o, true, StandardCharsets.UTF_8), new PrintStream(e, true, StandardCharsets.UTF_8));
        return new String[]{String.valueOf(rc), o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8)};
    }

    @BeforeAll
    static void decodeAndCompare() throws Exception {
        Path spool = Files.createDirectories(tmp.resolve("spool"));
        root = tmp.resolve("root");
        out = tmp.resolve("out");
        report = tmp.resolve("report/compare.html");
        for (int rank = 0; rank < 2; rank++) {
            write(spool, "b" + rank, dump(BASE, rank, 1, 10, true, false));
            write(spool, "c" + rank, dump(CAND, rank, 1, 10, false, false));
            write(spool, "s" + rank, dump(SHIFTED, rank, 500 + rank, 10, true, true));
        }
        String[] d = run("decode", "--dir", spool.toString(), "--out", root.toString());
        assertEquals("0", d[0], d[2]);
        compareRun = run("compare", "--root", root.toString(), "--baseline", BASE, "--candidate", CAND, "--out", out.toString(),
                "--report", report.toString(), "--parallelism", "2");
        assertEquals("0", compareRun[0], compareRun[1] + compareRun[2]);
    }

    static void write(Path dir, String name, DumpBuilder.Dump dump) throws Exception {
        Files.write(dir.resolve(name + ".bin"), dump.buffer());
        Files.write(dir.resolve(name + ".manifest.json"), ManifestParser.toJson(dump.manifest()));
    }

    static ByteBuffer le(int n) {
        return ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN);
    }

    static byte[] f32(float[] v) {
        ByteBuffer b = le(4 * v.length);
        for (float x : v) {
            b.putFloat(x);
        }
        return b.array();
    }

    static byte[] bf16(double[] v) {
        ByteBuffer b = le(2 * v.length);
        for (double x : v) {
            b.putShort((short) (Float.floatToIntBits((float) x) >>> 16));
        }
        return b.array();
    }

    static byte[] f16(int[] bits) {
        ByteBuffer b = le(2 * bits.length);
        for (int x : bits) {
            b.putShort((short) x);
        }
        return b.array();
    }

    static byte[] i32(int[] v) {
        ByteBuffer b = le(4 * v.length);
        for (int x : v) {
            b.putInt(x);
        }
        return b.array();
    }

    static byte[] f64(double[] v) {
        ByteBuffer b = le(8 * v.length);
        for (double x : v) {
            b.putDouble(x);
        }
        return b.array();
    }

    /**
     * One launch of one rank. The baseline ({@code base}) holds the reference values; the candidate
     * carries the perturbations of issue 7; {@code shifted} is a baseline copy with other launch ids
     * and worker ids, for alignment by step with placement ignored.
     */
    static DumpBuilder.Dump dump(String runId, int rank, long launch, long step, boolean base, boolean shifted) throws Exception {
        DumpBuilder b = new DumpBuilder(runId, rank, launch).step(step).chunkBytes(4096);
        long worker = shifted ? 7 : 3;
        boolean r0 = rank == 0;
        // identical
        b.add(spec(0, "attn", "input", 0, "x", "float32", 8, 8).workerId(worker).payload(f32(WITHIN_B)));
        // within tolerance
        b.add(spec(1, "attn", "output", 0, "y", "float32", 64).workerId(worker).payload(f32(base ? WITHIN_B : WITHIN_C)));
        // one element off (rank 0)
        double[] h = BF16_B.clone();
        if (!base && r0) {
            h[37] = 1.5;
        }
        b.add(spec(2, "mlp", "output", 0, "h", "bfloat16", 128).workerId(worker).payload(bf16(h)));
        // NaN where the baseline is finite (rank 0)
        int[] z = HALF_B.clone();
        if (!base && r0) {
            z[5] = 0x7E00;
        }
        b.add(spec(3, "mlp", "output", 1, "z", "float16", 32).workerId(worker).payload(f16(z)));
        // an integer off by one (both ranks)
        int[] idx = INT_B.clone();
        if (!base) {
            idx[3] += 1;
        }
        b.add(spec(4, "router", "output", 0, "idx", "int32", 16).workerId(worker).payload(i32(idx)));
        // scaled tensor (rank 0)
        double[] w = F64_B.clone();
        if (!base && r0) {
            for (int i = 0; i < w.length; i++) {
                w[i] *= 2;
            }
        }
        b.add(spec(5, "moe", "output", 0, "w", "float64", 50).workerId(worker).payload(f64(w)));
        // missing from the candidate (rank 0)
        if (base || !r0) {
            b.add(spec(6, "moe", "output", 1, "gone", "float32", 8).workerId(worker).payload(f32(new float[]{1, 2, 3, 4, 5, 6, 7, 8})));
        }
        // truncated to its first 40 elements, identical
        b.add(spec(7, "moe", "output", 2, "big", "float32", 100).workerId(worker).maxPayloadBytes(160L).payload(f32(TRUNC)));
        if (!r0) {
            if (!base) {
                b.add(spec(8, "head", "output", 0, "extra", "float32", 4).workerId(worker).payload(f32(new float[]{1, 2, 3, 4})));
            }
            b.add(spec(9, "head", "output", 1, "s", "float32", base ? new long[]{8} : new long[]{2, 4}).workerId(worker)
                    .payload(f32(new float[]{1, 2, 3, 4, 5, 6, 7, 8})));
            b.add(spec(10, "head", "output", 2, "d", base ? "float32" : "float16", 4).workerId(worker)
                    .payload(base ? f32(new float[]{1, 2, 3, 4}) : f16(new int[]{0x3C00, 0x4000, 0x3800, 0xBC00})));
        }
        return b.build();
    }

    static RecordSpec spec(long task, String stage, String io, int index, String name, String dtype, long... shape) {
        return new RecordSpec().taskId(task).taskIndex(task % 3).stage(stage).io(io).index(index).tensorName(name).dtype(dtype)
                .actualShape(shape).ownerLabel("expert").ownerId(task == 5 ? 2L : null);
    }

    static final String HIVE = ", hive_partitioning=true, hive_types={'baseline': VARCHAR, 'candidate': VARCHAR, 'rank': INTEGER})";

    static Map<String, Map<String, Object>> comparisons(String baseline, String candidate) throws Exception {
        List<Map<String, Object>> rows = DuckDb.query("SELECT * FROM read_parquet(" + DuckDb.glob(out, "comparisons/**/*.parquet") + HIVE
                + " WHERE baseline = " + DuckDb.literal(baseline) + " AND candidate = " + DuckDb.literal(candidate));
        Map<String, Map<String, Object>> byKey = new TreeMap<>();
        for (Map<String, Object> r : rows) {
            assertNull(byKey.put(r.get("rank") + "/" + r.get("tensor_name"), r), "one row per key: " + r);
        }
        return byKey;
    }

    @Test
    void everyVerdictAsDesigned() throws Exception {
        Map<String, Map<String, Object>> rows = comparisons(BASE, CAND);
        Map<String, String> verdicts = new TreeMap<>();
        rows.forEach((k, r) -> verdicts.put(k, (String) r.get("verdict")));
        Map<String, String> expected = new TreeMap<>(Map.ofEntries(
                Map.entry("0/x", "PASS"), Map.entry("0/y", "PASS"), Map.entry("0/h", "FAIL"), Map.entry("0/z", "FAIL"),
                Map.entry("0/idx", "FAIL"), Map.entry("0/w", "FAIL"), Map.entry("0/gone", "MISSING_CANDIDATE"),
                Map.entry("0/big", "PASS"),
                Map.entry("1/x", "PASS"), Map.entry("1/y", "PASS"), Map.entry("1/h", "PASS"), Map.entry("1/z", "PASS"),
                Map.entry("1/idx", "FAIL"), Map.entry("1/w", "PASS"), Map.entry("1/gone", "PASS"), Map.entry("1/big", "PASS"),
                Map.entry("1/extra", "MISSING_BASELINE"), Map.entry("1/s", "SHAPE_MISMATCH"), Map.entry("1/d", "DTYPE_MISMATCH")));
        assertEquals(expected, verdicts);
        for (Map<String, Object> r : rows.values()) {
            assertEquals(BASE, r.get("baseline_run"));
            assertEquals(CAND, r.get("candidate_run"));
            assertEquals(1L, r.get("launch_id"));
            assertEquals(10L, r.get("step"));
            assertEquals(3L, r.get("worker_id"));
        }
        assertTrue(compareRun[1].contains("19 pairs"), compareRun[1]);
        assertTrue(compareRun[1].contains("{PASS=10, FAIL=5, SHAPE_MISMATCH=1, DTYPE_MISMATCH=1, MISSING_BASELINE=1, MISSING_CANDIDATE=1}"),
                compareRun[1]);
        Map<String, Object> d = rows.get("1/d");
        assertEquals("float32", d.get("dtype"));
        assertEquals("float16", d.get("candidate_dtype"));
        assertEquals("dtype float32 in the baseline, float16 in the candidate", d.get("detail"));
        assertEquals("shape [8] in the baseline, [2, 4] in the candidate", rows.get("1/s").get("detail"));
        Map<String, Object> gone = rows.get("0/gone");
        assertNull(gone.get("candidate_dtype"));
        assertNull(gone.get("max_abs_err"));
        assertNull(gone.get("mismatch_count"));
        assertEquals(6L, gone.get("task_id"));
        assertEquals(2L, rows.get("0/w").get("owner_id"));
    }

    @Test
    void firstDivergencePerRank() throws Exception {
        List<Map<String, Object>> rows = DuckDb.query("SELECT * FROM read_parquet(" + DuckDb.glob(out, "first_divergence/**/*.parquet")
                + ", hive_partitioning=true, hive_types={'baseline': VARCHAR, 'candidate': VARCHAR}) ORDER BY rank");
        assertEquals(2, rows.size(), rows.toString());
        Map<String, Object> r0 = rows.get(0);
        assertEquals(0, r0.get("rank"));
        assertEquals(BASE, r0.get("baseline"));
        assertEquals(CAND, r0.get("candidate"));
        assertEquals(2L, r0.get("task_id"));
        assertEquals("h", r0.get("tensor_name"));
        assertEquals("FAIL", r0.get("verdict"));
        assertEquals(37L, r0.get("first_mismatch_index"));
        Map<String, Object> r1 = rows.get(1);
        assertEquals(1, r1.get("rank"));
        assertEquals(4L, r1.get("task_id"));
        assertEquals("idx", r1.get("tensor_name"));
        assertEquals("FAIL", r1.get("verdict"));
        assertEquals(3L, r1.get("first_mismatch_index"));
    }

    /** Metrics computed here with plain loops over the generated values. */
    record Expected(double maxAbs, double maxRel, double meanAbs, double rmse, double cosine) {
        static Expected of(double[] b, double[] c) {
            double maxAbs = 0, maxRel = 0, sum = 0, sq = 0, dot = 0, nb = 0, nc = 0;
            int n = 0;
            for (int i = 0; i < b.length; i++) {
                if (!Double.isFinite(b[i]) || !Double.isFinite(c[i])) {
                    continue;
                }
                double d = Math.abs(c[i] - b[i]);
                n++;
                maxAbs = Math.max(maxAbs, d);
                maxRel = Math.max(maxRel, d == 0 ? 0 : d / Math.abs(b[i]));
                sum += d;
                sq += d * d;
                dot += b[i] * c[i];
                nb += b[i] * b[i];
                nc += c[i] * c[i];
            }
            return new Expected(maxAbs, maxRel, sum / n, Math.sqrt(sq / n), dot / Math.sqrt(nb * nc));
        }

        void check(Map<String, Object> row) {
            assertEquals(maxAbs, (double) row.get("max_abs_err"), 1e-15 + 1e-12 * maxAbs, "max_abs_err " + row);
            assertEquals(maxRel, (double) row.get("max_rel_err"), 1e-15 + 1e-12 * maxRel, "max_rel_err " + row);
            assertEquals(meanAbs, (double) row.get("mean_abs_err"), 1e-15 + 1e-12 * meanAbs, "mean_abs_err " + row);
            assertEquals(rmse, (double) row.get("rmse"), 1e-15 + 1e-12 * rmse, "rmse " + row);
            assertEquals(cosine, (double) row.get("cosine_similarity"), 1e-12, "cosine " + row);
        }
    }

    static double[] widen(float[] v) {
        double[] d = new double[v.length];
        for (int i = 0; i < v.length; i++) {
            d[i] = v[i];
        }
        return d;
    }

    static double[] halves(int[] bits) {
        Map<Integer, Double> value = Map.of(0x3C00, 1.0, 0x4000, 2.0, 0x3800, 0.5, 0xBC00, -1.0, 0x7E00, Double.NaN);
        double[] d = new double[bits.length];
        for (int i = 0; i < bits.length; i++) {
            d[i] = value.get(bits[i]);
        }
        return d;
    }

    @Test
    void metricsMatchIndependentComputation() throws Exception {
        Map<String, Map<String, Object>> rows = comparisons(BASE, CAND);

        Map<String, Object> x = rows.get("0/x");
        assertEquals(true, x.get("bitwise_equal"));
        assertEquals(0.0, x.get("max_abs_err"));
        assertEquals(1.0, x.get("cosine_similarity"));
        assertEquals(0L, x.get("mismatch_count"));
        assertNull(x.get("first_mismatch_index"));
        assertEquals(64L, x.get("compared_numel"));

        Map<String, Object> y = rows.get("0/y");
        assertEquals(false, y.get("bitwise_equal"));
        assertEquals(0L, y.get("mismatch_count"));
        assertEquals(1.3e-6, y.get("rtol"));
        assertEquals(1e-5, y.get("atol"));
        assertEquals("default", y.get("tolerance_source"));
        Expected.of(widen(WITHIN_B), widen(WITHIN_C)).check(y);
        assertTrue((double) y.get("max_abs_err") > 0);

        Map<String, Object> h = rows.get("0/h");
        double[] hc = BF16_B.clone();
        hc[37] = 1.5;
        assertEquals(1L, h.get("mismatch_count"));
        assertEquals(37L, h.get("first_mismatch_index"));
        assertEquals(1.6e-2, h.get("rtol"));
        Expected.of(BF16_B, hc).check(h);
        assertEquals(1.875, h.get("max_abs_err"));
        assertEquals(5.0, h.get("max_rel_err"));

        Map<String, Object> z = rows.get("0/z");
        int[] zc = HALF_B.clone();
        zc[5] = 0x7E00;
        assertEquals(1L, z.get("mismatch_count"), "NaN vs 1.0 mismatches, NaN vs NaN matches");
        assertEquals(5L, z.get("first_mismatch_index"));
        Expected.of(halves(HALF_B), halves(zc)).check(z);
        assertEquals(0.0, z.get("max_abs_err"));

        Map<String, Object> idx = rows.get("0/idx");
        double[] ib = new double[16];
        double[] ic = new double[16];
        for (int i = 0; i < 16; i++) {
            ib[i] = INT_B[i];
            ic[i] = INT_B[i] + (i == 3 ? 1 : 0);
        }
        assertEquals(1L, idx.get("mismatch_count"));
        assertEquals(3L, idx.get("first_mismatch_index"));
        assertEquals(0.0, idx.get("rtol"));
        assertEquals(0.0, idx.get("atol"));
        Expected.of(ib, ic).check(idx);
        assertEquals(1.0, idx.get("max_abs_err"));
        assertEquals(0.5, idx.get("max_rel_err"));
        assertEquals(0.25, idx.get("rmse"));

        Map<String, Object> w = rows.get("0/w");
        double[] wc = new double[50];
        for (int i = 0; i < 50; i++) {
            wc[i] = 2 * F64_B[i];
        }
        assertEquals(50L, w.get("mismatch_count"));
        assertEquals(0L, w.get("first_mismatch_index"));
        Expected.of(F64_B, wc).check(w);
        assertEquals(1.0, w.get("max_rel_err"));

        Map<String, Object> big = rows.get("0/big");
        assertEquals(true, big.get("truncated"));
        assertEquals(40L, big.get("compared_numel"));
        assertEquals("truncated: compared the first 40 of 100 elements (the stored prefix)", big.get("detail"));
        assertEquals(true, big.get("bitwise_equal"));
    }

    @Test
    void alignByStepIgnoringPlacementWithToleranceFile() throws Exception {
        Path tol = tmp.resolve("tol.csv");
        Files.writeString(tol, "stage,dtype,rtol,atol\nml?,bfloat16,0.5,0.001\n*,*,0,0\n");
        Path out2 = tmp.resolve("out2");
        String[] r = run("compare", "--root", root.toString(), "--baseline", BASE, "--candidate", SHIFTED, "--out", out2.toString(),
                "--align-by", "step", "--ignore-placement", "--tolerances", tol.toString(), "--parallelism", "1");
        assertEquals("0", r[0], r[1] + r[2]);
        List<Map<String, Object>> rows = DuckDb.query("SELECT rank, tensor_name, verdict, launch_id, candidate_launch_id, worker_id, rtol,"
                + " atol, tolerance_source FROM read_parquet(" + DuckDb.glob(out2, "comparisons/**/*.parquet") + HIVE
                + " ORDER BY rank, tensor_name");
        assertEquals(18, rows.size(), rows.toString());
        for (Map<String, Object> row : rows) {
            assertEquals("PASS", row.get("verdict"), row.toString());
            assertEquals(1L, row.get("launch_id"));
            assertEquals(500L + (int) row.get("rank"), row.get("candidate_launch_id"));
            assertEquals(3L, row.get("worker_id"), "the baseline's placement");
            boolean mlpBf16 = "h".equals(row.get("tensor_name"));
            assertEquals(mlpBf16 ? tol + ":2" : tol + ":3", row.get("tolerance_source"), row.toString());
            assertEquals(mlpBf16 ? 0.5 : 0.0, row.get("rtol"));
        }
        try (java.util.stream.Stream<Path> files = Files.walk(out2)) {
            assertEquals(List.of(), files.filter(f -> f.toString().contains("first_divergence") && f.toString().endsWith(".parquet"))
                    .toList(), "no rank diverged");
        }
    }

    @Test
    void theClusterEntryPointWritesTheSameTablesAndReport() throws Exception {
        // what `flink run -c io.dumpstream.compare.CompareJob` runs, here on the local environment it gets outside a cluster
        Path out3 = tmp.resolve("out-main");
        Path report3 = tmp.resolve("report-main/compare.html");
        CompareJob.main(new String[] {"--root", root.toString(), "--baseline", BASE, "--candidate", CAND,
                "--out", out3.toString(), "--report", report3.toString(), "--parallelism", "2"});
        String select = "SELECT rank, launch_id, stage, task_index, io, port_index, tensor_name, worker_id, verdict,"
                + " max_abs_err, mismatch_count FROM read_parquet(";
        String order = HIVE + " ORDER BY ALL";
        List<Map<String, Object>> cli = DuckDb.query(select + DuckDb.glob(out, "comparisons/**/*.parquet") + order);
        assertEquals(19, cli.size(), cli.toString());
        assertEquals(cli, DuckDb.query(select + DuckDb.glob(out3, "comparisons/**/*.parquet") + order));
        String stamp = "\\d{4}-\\d{2}-\\d{2}T[0-9:.]+Z";
        assertEquals(Files.readString(report).replaceAll(stamp, "T"), Files.readString(report3).replaceAll(stamp, "T"),
                "the same report as the compare command's, but for the time it was written");
    }

    @Test
    void reportRendersInHeadlessChromium() throws Exception {
        String html = Files.readString(report);
        assertTrue(html.contains("<svg id=\"heatmap\""), "inline SVG heatmap");
        assertTrue(!html.contains("http://") || html.indexOf("http://") == html.indexOf("http://www.w3.org/2000/svg"),
                "no link that would need the network");
        String chromium = chromium();
        assumeTrue(chromium != null, "chromium is not installed (.ci/run installs it)");
        Path png = tmp.resolve("report.png");
        exec(List.of(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--screenshot=" + png,
                "--window-size=1400,1000", report.toUri().toString()));
        String keep = System.getProperty("compare.keep"); // a directory to look at the rendering by eye
        if (keep != null) {
            Files.createDirectories(Path.of(keep));
            Files.copy(png, Path.of(keep, "report.png"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            Files.copy(report, Path.of(keep, "report.html"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        assertTrue(Files.size(png) > 10_000, "a non-trivial screenshot: " + Files.size(png) + " bytes");
        java.awt.image.BufferedImage img = javax.imageio.ImageIO.read(png.toFile());
        assertEquals(1400, img.getWidth());
        Map<Integer, Integer> colors = new HashMap<>();
        for (int yy = 0; yy < img.getHeight(); yy += 2) {
            for (int xx = 0; xx < img.getWidth(); xx += 2) {
                colors.merge(img.getRGB(xx, yy) & 0xFFFFFF, 1, Integer::sum);
            }
        }
        assertTrue(colors.getOrDefault(0x4caf50, 0) > 100, "green PASS cells are painted");
        assertTrue(colors.getOrDefault(0xc62828, 0) > 100, "red cells (not comparable) are painted");

        String dom = exec(List.of(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", report.toUri().toString()));
        assertTrue(dom.contains("<svg id=\"heatmap\""), dom);
        assertEquals(9, count(dom, "<rect class=\"cell\""), "5 stages x 2 ranks, head has no rank-0 pairs");
        assertEquals(1, count(dom, "<rect class=\"cell empty\""));
        assertEquals(9, count(dom, "<tr class=\"pair\">"), "one table row per non-PASS pair");
        assertTrue(dom.contains("<table id=\"first\">"));
        assertTrue(dom.contains("data-v=\"idx\""));
    }

    static int count(String s, String what) {
        int n = 0;
        for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }

    static String chromium() {
        for (String c : List.of("/usr/bin/chromium", "/usr/bin/chromium-browser")) {
            if (Files.isExecutable(Path.of(c))) {
                return c;
            }
        }
        return null;
    }

    static String exec(List<String> cmd) throws Exception {
        Path log = Files.createTempFile(tmp, "chromium", ".out");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(false).redirectOutput(log.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "chromium finished in 120 s");
        assertEquals(0, p.exitValue(), String.join(" ", cmd));
        return Files.readString(log);
    }
}
