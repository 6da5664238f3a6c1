package io.dumpstream.tensors;

import io.dumpstream.cli.Main;
import io.dumpstream.format.Dtype;
import io.dumpstream.job.IngestConfig;
import io.dumpstream.job.LocalIngest;
import io.dumpstream.local.LocalKafka;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.publish.DumpPublisher;
import io.dumpstream.publish.PublisherConfig;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.table.DuckDb;
import io.dumpstream.testing.SharedKafka;
import io.dumpstream.testing.Traffic;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tensors command end to end over a real ingest: dumps built with DumpBuilder whose records are
 * tile views of known tensors (broadcast workers covering a parameter end to end in reverse manifest
 * order, a parameter read by two stages, truncated views, a gap, overlaps that agree and that disagree,
 * a dtype mismatch and a misaligned view, every dtype), published through DumpPublisher to the local
 * broker, landed by the ingest job on a MiniCluster, reassembled by {@code tensors}; the table read back
 * with DuckDB and every row checked against {@link TensorModel}. The offline decode of the same dumps
 * gives the same table.
 */
class TensorsJobTest {
    static final String RUN = "tensors/run 1";
    static final String OTHER = "other";
    private static final LocalKafka kafka = SharedKafka.get();

    @TempDir
    static Path tmp;
    static final TensorModel model = new TensorModel();
    static Path ingested;
    static Path decoded;
    static String[] ingestRun;

    static String[] run(String... argv) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        int rc = Main.run(argv, new PrintStream(o, true, StandardCharsets.UTF_8), new PrintStream(e, true, StandardCharsets.UTF_8));
        return new String[]{String.valueOf(rc), o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8)};
    }

    static ByteBuffer le(int n) {
        return ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN);
    }

    static byte[] f32(int n, int from) {
        ByteBuffer b = le(4 * n);
        for (int i = 0; i < n; i++) {
            b.putFloat(((from + i) % 37 - 18) / 4f);
        }
        return b.array();
    }

    static byte[] slice(byte[] a, int from, int to) {
        return java.util.Arrays.copyOfRange(a, from, to);
    }

    /** A tensor of {@code n} elements of {@code d}: quarter steps for floats (some NaN and infinity), small integers. */
    static byte[] tensor(Dtype d, int n, long seed) {
        Random r = new Random(seed);
        ByteBuffer b = le(n * d.elementSize());
        for (int i = 0; i < n; i++) {
            double x = (r.nextInt(41) - 20) / 4.0;
            switch (d) {
                case FLOAT64 -> b.putDouble(i == 3 ? Double.NaN : x);
                case FLOAT32 -> b.putFloat(i == 3 ? Float.NaN : i == 5 ? Float.NEGATIVE_INFINITY : (float) x);
                case FLOAT16 -> b.putShort((short) (i == 3 ? 0x7E00 : i == 5 ? 0x7C00 : half(x)));
                case BFLOAT16 -> b.putShort((short) (i == 3 ? 0x7FC0 : Float.floatToIntBits((float) x) >>> 16));
                case FLOAT8_E4M3FN, FLOAT8_E5M2 -> b.put((byte) (i == 3 ? 0x7F : r.nextInt(0x70)));
                case INT64 -> b.putLong(r.nextInt(201) - 100);
                case INT32 -> b.putInt(r.nextInt(201) - 100);
                case INT16 -> b.putShort((short) (r.nextInt(201) - 100));
                case INT8 -> b.put((byte) (r.nextInt(201) - 100));
                case UINT8 -> b.put((byte) r.nextInt(256));
                case BOOL -> b.put((byte) (i % 3 == 0 ? 0 : 1));
            }
        }
        return b.array();
    }

    /** float16 bits of a quarter step in [-5, 5] (exact: normal numbers or zero). */
    static int half(double x) {
        if (x == 0) {
            return 0;
        }
        int f = Float.floatToIntBits((float) x);
        return (f >>> 16 & 0x8000) | (((f >>> 23 & 0xFF) - 127 + 15) << 10) | (f >>> 13 & 0x3FF);
    }

    static void views() {
        TensorModel m = model;
        // broadcast: one task, four workers, each a disjoint block of the parameter, dumped in reverse offset order
        byte[] x = f32(256, 0);
        for (int w = 3; w >= 0; w--) {
            m.add(RUN, 0, 1, "input", 0, "x", "float32", 100, "attn", (long) w, 256L * w, slice(x, 256 * w, 256 * (w + 1)), null);
        }
        // read by two stages: four tiles in attn, the whole tensor in mlp (agreeing overlaps across stage partitions)
        byte[] wgt = tensor(Dtype.BFLOAT16, 128, 1);
        for (int t = 0; t < 4; t++) {
            m.add(RUN, 0, 1, "input", 1, "w", "bfloat16", 20 + t, "attn", null, 64L * t, slice(wgt, 64 * t, 64 * (t + 1)), null);
        }
        m.add(RUN, 0, 1, "input", 1, "w", "bfloat16", 30, "mlp", null, 0, wgt, null);
        // truncated: four tiles of 64 float16, the odd ones stored only to 64 bytes (coverage 0.75, two gaps, one at the tail)
        byte[] y = tensor(Dtype.FLOAT16, 256, 2);
        for (int t = 0; t < 4; t++) {
            m.add(RUN, 0, 1, "output", 2, "y", "float16", 40 + t, "attn", null, 128L * t, slice(y, 128 * t, 128 * (t + 1)),
                    t % 2 == 1 ? 64L : null);
        }
        // a gap: tiles 0 and 2 of three
        byte[] z = tensor(Dtype.FLOAT64, 24, 3);
        m.add(RUN, 0, 1, "output", 3, "z", "float64", 45, "mlp", null, 0, slice(z, 0, 64), null);
        m.add(RUN, 0, 1, "output", 3, "z", "float64", 46, "mlp", null, 128, slice(z, 128, 192), null);
        // overlaps that disagree: t53 over t50 at element 3, t51 over t50 at elements 20 and 25; t52 over t51 agrees
        byte[] o = tensor(Dtype.INT32, 64, 4);
        m.add(RUN, 0, 1, "output", 4, "o", "int32", 50, "mlp", null, 0, slice(o, 0, 128), null);
        byte[] o51 = slice(o, 64, 192);
        o51[(20 - 16) * 4] ^= 1;
        o51[(25 - 16) * 4 + 2] ^= 0x40;
        m.add(RUN, 0, 1, "output", 4, "o", "int32", 51, "mlp", null, 64, o51, null);
        m.add(RUN, 0, 1, "output", 4, "o", "int32", 52, "mlp", null, 160, slice(o51, 96, 128), null);
        byte[] o53 = slice(o, 0, 32);
        o53[12] ^= (byte) 0x80;
        m.add(RUN, 0, 1, "output", 4, "o", "int32", 53, "mlp", null, 0, o53, null);
        // a dtype differing from the first view's, and a misaligned view: both listed, neither counted
        byte[] mm = f32(16, 5);
        m.add(RUN, 0, 1, "output", 5, "m", "float32", 70, "mlp", null, 0, mm, null);
        m.add(RUN, 0, 1, "output", 5, "m", "int32", 71, "mlp", null, 64, slice(o, 0, 64), null);
        m.add(RUN, 0, 1, "output", 5, "m", "float32", 72, "mlp", null, 66, slice(mm, 0, 8), null);
        // every dtype, launch 2: two tiles each, the second dumped first
        int p = 0;
        for (Dtype d : Dtype.values()) {
            byte[] t = tensor(d, 16, 10 + p);
            int half = t.length / 2;
            m.add(RUN, 0, 2, "output", p, "t_" + d.torchName(), d.torchName(), 201 + 2 * p, "all", null, half,
                    slice(t, half, t.length), null);
            m.add(RUN, 0, 2, "output", p, "t_" + d.torchName(), d.torchName(), 200 + 2 * p, "all", null, 0, slice(t, 0, half), null);
            p++;
        }
        // rank 1 and a second run
        m.add(RUN, 1, 1, "input", 0, "x", "float32", 100, "attn", 0L, 0, f32(64, 7), null);
        m.add(OTHER, 0, 7, "input", 0, "q", "float32", 1, "attn", null, 0, f32(8, 9), null);
    }

    @BeforeAll
    static void ingestAndReassemble() throws Exception {
        views();
        Path spool = Files.createDirectories(tmp.resolve("spool"));
        List<Path> manifests = model.writeDumps(spool);
        String topic = "tensors-ingest";
        kafka.createTopic(topic, 2);
        kafka.createTopic(topic + ".dlq", 1);
        for (Path mf : manifests) {
            DumpManifest m = ManifestParser.parseFile(mf);
            Path bin = Path.of(mf.toString().replace(".manifest.json", ".bin"));
            try (DumpPublisher pub = new DumpPublisher(PublisherConfig.builder(kafka.bootstrapServers()).topic(topic)
                    .chunkBytes(m.getChunkBytes()).build())) {
                assertTrue(pub.publish(m, bin).defects().isEmpty());
            }
        }
        IngestConfig c = new IngestConfig();
        c.bootstrap = kafka.bootstrapServers();
        c.topic = topic;
        c.group = "it-" + topic;
        ingested = tmp.resolve("ingested");
        c.out = ingested.toString();
        c.checkpoints = tmp.resolve("checkpoints").toString();
        c.checkpointInterval = Duration.ofSeconds(1);
        c.parallelism = 2;
        c.assemblyTimeout = Duration.ofSeconds(6);
        c.restartAttempts = 0;
        c.dlqTopic = topic + ".dlq";
        c.validate();
        Configuration none = new Configuration();
        none.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        try (LocalIngest job = LocalIngest.start(c, none)) {
            Traffic.awaitRecords(ingested, model.views.size());
        }
        assertEquals(model.views.size(), Traffic.landedRecords(ingested), "every view landed once");
        ingestRun = run("tensors", "--in", ingested.toString(), "--out", tmp.resolve("t-ingested").toString(), "--parallelism", "2");
        assertEquals("0", ingestRun[0], ingestRun[1] + ingestRun[2]);

        decoded = tmp.resolve("decoded");
        String[] d = run("decode", "--dir", spool.toString(), "--out", decoded.toString());
        assertEquals("0", d[0], d[2]);
    }

    static final String HIVE = ", hive_partitioning=true, hive_types={'rank': INTEGER})";

    /** The tensors table under {@code root} as rows shaped like {@link TensorModel.Row}, by key. */
    static Map<String, TensorModel.Row> table(Path root) throws Exception {
        List<Map<String, Object>> rows = DuckDb.query("SELECT *, list_transform(views, x -> x.task_id || '/' || coalesce("
                + "x.worker_id::VARCHAR, '-') || '/' || x.source_offset_bytes || '/' || x.stored_bytes || '/' || x.full_bytes"
                + " || '/' || coalesce(x.reject_reason, 'ok') || '/' || x.core_id) AS v, list_transform(disagreements, x ->"
                + " x.earlier_task_id || '>' || x.later_task_id || '@' || x.offset_bytes || '+' || x.length_bytes || ':' ||"
                + " x.differing_elements || '@' || x.first_difference_offset_bytes) AS d FROM read_parquet("
                + DuckDb.glob(root, "tensors/**/*.parquet") + HIVE);
        Map<String, TensorModel.Row> out = new TreeMap<>();
        for (Map<String, Object> r : rows) {
            String key = r.get("run_id") + "|" + r.get("rank") + "|" + r.get("launch_id") + "|" + r.get("phase") + "|"
                    + r.get("parameter_position");
            Object extent = r.get("extent_bytes");
            String line = String.format(java.util.Locale.ROOT, "%s name=%s dtype=%s extent=%d/%d covered=%d/%d coverage=%s"
                            + " gaps=%d/%d overlaps=%d/%d agree=%s numel=%d nan=%d inf=%d zero=%d min=%s max=%s", key,
                    r.get("tensor_name"), r.get("dtype"), extent, r.get("extent_elements"), r.get("covered_bytes"),
                    r.get("covered_elements"), r.get("coverage"), r.get("gap_count"), r.get("gap_bytes"), r.get("overlap_count"),
                    r.get("overlap_bytes"), r.get("overlaps_agree"), r.get("numel"), r.get("nan_count"), r.get("inf_count"),
                    r.get("zero_count"), r.get("min"), r.get("max"));
            @SuppressWarnings("unchecked")
            List<String> v = (List<String>) r.get("v");
            @SuppressWarnings("unchecked")
            List<String> d = (List<String>) r.get("d");
            TensorModel.Row prev = out.put(key, new TensorModel.Row(line, v, d, (Double) r.get("mean"), (Double) r.get("l2_norm")));
            assertEquals(null, prev, "one row per key " + key);
        }
        return out;
    }

    static void assertRows(Map<String, TensorModel.Row> expected, Map<String, TensorModel.Row> got) {
        assertEquals(expected.keySet(), got.keySet());
        for (String k : expected.keySet()) {
            TensorModel.Row e = expected.get(k);
            TensorModel.Row g = got.get(k);
            assertEquals(e.line(), g.line(), k);
            assertEquals(e.views(), g.views(), k);
            assertEquals(e.disagreements(), g.disagreements(), k);
            assertClose(e.mean(), g.mean(), k + " mean");
            assertClose(e.l2(), g.l2(), k + " l2_norm");
        }
    }

    /** Mean and norm are summed interval by interval: equal up to float64 rounding of the sums. */
    static void assertClose(Double e, Double g, String what) {
        if (e == null || g == null) {
            assertEquals(e, g, what);
            return;
        }
        assertEquals(e, g, Math.abs(e) * 1e-12 + 1e-300, what);
    }

    @Test
    void everyTensorOfTheIngestOutputMatchesTheModel() throws Exception {
        Map<String, TensorModel.Row> expected = model.expected(List.of(RUN, OTHER));
        Map<String, TensorModel.Row> got = table(tmp.resolve("t-ingested"));
        assertRows(expected, got);
        // the cases this test is about, spelled out (the model above computes them too)
        assertTrue(got.get(RUN + "|0|1|before|0").line().contains("extent=1024/256 covered=1024/256 coverage=1.0 gaps=0/0"
                + " overlaps=0/0 agree=true"), got.get(RUN + "|0|1|before|0").line());
        assertEquals(List.of("100/0/0/256/256/ok/4", "100/1/256/256/256/ok/4", "100/2/512/256/256/ok/4", "100/3/768/256/256/ok/4"),
                got.get(RUN + "|0|1|before|0").views());
        assertTrue(got.get(RUN + "|0|1|before|1").line().contains("coverage=1.0 gaps=0/0 overlaps=4/256 agree=true"));
        assertTrue(got.get(RUN + "|0|1|after|2").line().contains("extent=512/256 covered=384/192 coverage=0.75 gaps=2/128"));
        assertTrue(got.get(RUN + "|0|1|after|3").line().contains("extent=192/24 covered=128/16 coverage=0.6666666666666666 gaps=1/64"));
        assertEquals(List.of("50>53@0+32:1@12", "50>51@64+64:2@80"), got.get(RUN + "|0|1|after|4").disagreements());
        assertTrue(got.get(RUN + "|0|1|after|4").line().contains("overlaps=3/128 agree=false"));
        assertEquals(List.of("70/-/0/64/64/ok/6", "71/-/64/64/64/DTYPE_MISMATCH/7", "72/-/66/8/8/MISALIGNED/0"),
                got.get(RUN + "|0|1|after|5").views());
        for (int p = 0; p < Dtype.values().length; p++) {
            assertTrue(got.get(RUN + "|0|2|after|" + p).line().contains("coverage=1.0 gaps=0/0 overlaps=0/0"), "dtype " + p);
        }
    }

    @Test
    void disagreementsAndRejectedViewsArePrintedWithTheirTaskIds() {
        String out = ingestRun[1];
        assertTrue(out.contains("disagreement: run 'tensors/run 1' rank 0 launch 1 phase after parameter 4 ('o', int32): task 50"
                + " and task 53 differ over bytes [0, 32): 1 element(s), first at byte 12\n"), out);
        assertTrue(out.contains("disagreement: run 'tensors/run 1' rank 0 launch 1 phase after parameter 4 ('o', int32): task 50"
                + " and task 51 differ over bytes [64, 128): 2 element(s), first at byte 80\n"), out);
        assertEquals(2, out.lines().filter(l -> l.startsWith("disagreement: ")).count(), out);
        List<String> rejected = out.lines().filter(l -> l.startsWith("rejected view")).toList();
        assertEquals(2, rejected.size(), out);
        assertTrue(rejected.get(0).startsWith("rejected view (DTYPE_MISMATCH): task 71 ") || rejected.get(1).startsWith(
                "rejected view (DTYPE_MISMATCH): task 71 "), out);
        assertTrue(out.contains("source_offset_bytes 66"), out);
        int tensors = model.expected(List.of(RUN, OTHER)).size();
        assertTrue(out.contains("tensors: " + tensors + " tensors of 3 run/rank partitions from " + model.views.size()
                + " views"), out);
        assertTrue(out.contains(" 2 with coverage < 1, 1 with disagreeing overlaps (2 disagreements), 2 views rejected\n"), out);
    }

    @Test
    void theOfflineDecodeOutputGivesTheSameTableAndOneRunIsSelectedByRun() throws Exception {
        Path out = tmp.resolve("t-decoded");
        String[] r = run("tensors", "--in", decoded.toString(), "--out", out.toString(), "--run", RUN);
        assertEquals("0", r[0], r[1] + r[2]);
        assertRows(model.expected(List.of(RUN)), table(out));
        List<String> dirs = new ArrayList<>();
        try (var s = Files.list(out.resolve("tensors"))) {
            s.forEach(p -> dirs.add(p.getFileName().toString()));
        }
        assertEquals(List.of("run=tensors%2Frun 1"), dirs);
        // a second time into the same root is refused: it would add every row again
        String[] again = run("tensors", "--in", decoded.toString(), "--out", out.toString(), "--run", RUN);
        assertEquals("2", again[0]);
        assertTrue(again[2].contains("already holds tensors of run=tensors%2Frun 1"), again[2]);
    }
}
