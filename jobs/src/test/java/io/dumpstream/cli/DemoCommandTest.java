package io.dumpstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.table.DuckDb;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The README's first command end to end: its own broker, the job, synthetic ranks, the bundled examples. */
class DemoCommandTest {

    private static int run(ByteArrayOutputStream out, ByteArrayOutputStream err, String... argv) {
        return Main.run(argv, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void everyDumpLandsOnceAndTheSummaryAndItsQueriesMatchTheFiles(@TempDir Path dir) throws Exception {
        Path root = dir.resolve("demo");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = run(out, err, "demo", "--out", root.toString(), "--ranks", "2", "--launches", "3",
                "--records", "5", "--payload-bytes", "2048", "--parallelism", "2", "--timeout", "3m");
        String text = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, text + err.toString(StandardCharsets.UTF_8));
        // the collector note: present exactly when this JVM runs G1 (the surefire JVM's default here)
        boolean g1 = java.lang.management.ManagementFactory.getGarbageCollectorMXBeans().stream()
                .anyMatch(gc -> gc.getName().startsWith("G1"));
        assertEquals(g1, err.toString(StandardCharsets.UTF_8).contains("java -XX:+UseParallelGC -jar dumpstream.jar"),
                err.toString(StandardCharsets.UTF_8));

        // every dump exactly once: 2 ranks x 3 launches of run 'demo', and the four bundled examples
        List<String> dumps = new ArrayList<>();
        for (Map<String, Object> r : DuckDb.query("SELECT run_id, rank, launch_id, outcome, accepted, rejected"
                + " FROM read_parquet(" + DuckDb.glob(root, "dumps/**/*.parquet") + ", hive_partitioning = true)"
                + " ORDER BY run_id, rank, launch_id")) {
            dumps.add(r.get("run_id") + "/" + r.get("rank") + "/" + r.get("launch_id") + " " + r.get("outcome") + " "
                    + r.get("accepted") + "+" + r.get("rejected"));
        }
        assertEquals(List.of(
                "demo/0/0 COMPLETE 5+0", "demo/0/1 COMPLETE 5+0", "demo/0/2 COMPLETE 5+0",
                "demo/1/0 COMPLETE 5+0", "demo/1/1 COMPLETE 5+0", "demo/1/2 COMPLETE 5+0",
                "demo-run/0/1 COMPLETE 24+0", "demo-run/1/2 COMPLETE 5+0", "demo-run/5/107 PARTIAL 5+1",
                "demo-run/6/7 COMPLETE 3+0"), dumps);
        assertEquals(List.of(Map.of("reason", "UNKNOWN_DTYPE", "n", 1L)), DuckDb.query(
                "SELECT reason, count(*) AS n FROM read_parquet(" + DuckDb.glob(root, "rejects/**/*.parquet")
                        + ") GROUP BY reason"));
        long snapshots = ((Number) DuckDb.query("SELECT count(*) AS n FROM read_parquet("
                + DuckDb.glob(root, "snapshots/**/*.parquet") + ")").get(0).get("n")).longValue();
        assertEquals(6 * 5 + 24 + 5 + 5 + 3, snapshots);
        io.dumpstream.testing.TableLayout.assertLayout(root);

        // the printed counts are the files' counts
        assertTrue(text.contains("all 10 dumps landed"), text);
        assertLine(text, "demo / COMPLETE", 6);
        assertLine(text, "demo-run / PARTIAL", 1);
        assertLine(text, "demo / 0", 15);
        assertLine(text, "UNKNOWN_DTYPE", 1);

        // and the printed DuckDB queries run as printed
        Matcher q = Pattern.compile("duckdb -c \"(.*)\"").matcher(text);
        int queries = 0;
        while (q.find()) {
            List<Map<String, Object>> rows = DuckDb.query(q.group(1));
            assertTrue(!rows.isEmpty(), q.group(1));
            queries++;
        }
        assertEquals(3, queries, text);

        // a second demo into the same directory starts from empty tables; --dumps adds a user's own
        // pairs: a hostile run id and stage name, and a buffer file longer than its manifest says
        Path own = Files.createDirectories(dir.resolve("own"));
        writePair(own, "hostile", "run/../x y%", "a/b=c \u00e9", 0);
        writePair(own, "long", "own-run", "layer0.attn", 100);
        ByteArrayOutputStream out2 = new ByteArrayOutputStream();
        ByteArrayOutputStream err2 = new ByteArrayOutputStream();
        assertEquals(0, run(out2, err2, "demo", "--out", root.toString(), "--ranks", "1",
                "--launches", "1", "--records", "2", "--payload-bytes", "512", "--parallelism", "1",
                "--dumps", own.toString()), err2.toString(StandardCharsets.UTF_8));
        assertTrue(out2.toString(StandardCharsets.UTF_8).contains("all 7 dumps landed"), out2.toString(StandardCharsets.UTF_8));
        // the user's dumps land exactly as the offline decode of the same files
        Path offline = dir.resolve("offline");
        assertEquals(0, run(new ByteArrayOutputStream(), new ByteArrayOutputStream(), "decode", "--dir",
                own.toString(), "--out", offline.toString()));
        String byDump = "SELECT d.run_id, s.stage_name, d.outcome, d.reason, d.accepted, d.rejected, count(s.dump_id) AS n"
                + " FROM read_parquet(%2$s) d LEFT JOIN read_parquet(%1$s) s USING (dump_id) GROUP BY ALL ORDER BY ALL";
        List<Map<String, Object>> want = DuckDb.query(String.format(byDump, DuckDb.glob(offline, "snapshots/**/*.parquet"),
                DuckDb.glob(offline, "dumps/**/*.parquet")));
        assertEquals("[{run_id=own-run, stage_name=null, outcome=REJECTED, reason=BUFFER_SIZE_MISMATCH, accepted=0,"
                + " rejected=2, n=0}, {run_id=run/../x y%, stage_name=a/b=c \u00e9, outcome=COMPLETE, reason=null,"
                + " accepted=2, rejected=0, n=2}]", want.toString());
        List<Map<String, Object>> got = DuckDb.query(String.format(byDump, DuckDb.glob(root, "snapshots/**/*.parquet"),
                DuckDb.glob(root, "dumps/**/*.parquet")).replace(" GROUP", " WHERE d.run_id NOT IN ('demo', 'demo-run') GROUP"));
        assertEquals(want, got);
        io.dumpstream.testing.TableLayout.assertLayout(root);
    }

    /** NAME.manifest.json + NAME.bin in DIR: a two-record uint8 dump, its buffer file EXTRA bytes longer. */
    private static void writePair(Path dir, String name, String run, String stage, int extra) throws Exception {
        io.dumpstream.format.DumpBuilder b = new io.dumpstream.format.DumpBuilder(run, 3, 40 + extra);
        for (int r = 0; r < 2; r++) {
            byte[] payload = new byte[100 + r];
            java.util.Arrays.fill(payload, (byte) (r + 1));
            b.add(new io.dumpstream.format.DumpBuilder.RecordSpec().taskId(r).taskIndex(r).stage(stage).tensorName("t" + r)
                    .dtype("uint8").actualShape(payload.length).payload(payload));
        }
        io.dumpstream.format.DumpBuilder.Dump d = b.build();
        Files.write(dir.resolve(name + ".manifest.json"), io.dumpstream.manifest.ManifestParser.toJson(d.manifest()));
        Files.write(dir.resolve(name + ".bin"), java.util.Arrays.copyOf(d.buffer(), d.buffer().length + extra));
    }

    @Test
    void refusesToEmptyADirectoryItDidNotWrite(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("precious.txt"), "keep me");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertEquals(2, run(new ByteArrayOutputStream(), err, "demo", "--out", dir.toString()));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("is not empty and was not written by an earlier demo"),
                err.toString(StandardCharsets.UTF_8));
        assertEquals("keep me", Files.readString(dir.resolve("precious.txt")));
    }

    private static void assertLine(String text, String key, long n) {
        Matcher m = Pattern.compile("(?m)^\\s+" + Pattern.quote(key) + "\\s+(\\d+)$").matcher(text);
        assertTrue(m.find(), "no line '" + key + "' in\n" + text);
        assertEquals(n, Long.parseLong(m.group(1)), key);
    }
}
