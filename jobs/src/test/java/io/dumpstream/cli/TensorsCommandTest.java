package io.dumpstream.cli;

import io.dumpstream.table.DuckDb;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The tensors command's wiring: the command list, usage, every unusable argument named, a failing input named, a run. */
class TensorsCommandTest {

    static String[] run(String... argv) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = Main.run(argv, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new String[]{String.valueOf(rc), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8)};
    }

    static void usageError(String expected, String... argv) {
        String[] r = run(argv);
        assertEquals("2", r[0], r[1] + r[2]);
        assertTrue(r[2].contains("dumpstream tensors: " + expected), r[2]);
        assertTrue(r[2].contains("run 'dumpstream tensors --help' for usage"), r[2]);
    }

    @Test
    void listedWithUsage() {
        String[] help = run("--help");
        assertEquals("0", help[0]);
        assertTrue(help[1].contains("  tensors    reassemble whole tensors from their task views"), help[1]);
        String[] usage = run("tensors", "--help");
        assertEquals("0", usage[0]);
        assertTrue(usage[1].startsWith("usage: tensors --in ROOT [--out OUT] [--run RUN]... [--parallelism N] [-D key=value]..."
                + " [--verbose]\n"), usage[1]);
        assertTrue(usage[1].contains("flink run -c io.dumpstream.tensors.TensorsJob"), usage[1]);
    }

    @Test
    void unusableArgumentsAreNamed(@TempDir Path tmp) throws Exception {
        usageError("missing required option --in", "tensors");
        usageError("unknown option --root", "tensors", "--root", tmp.toString());
        usageError("unexpected argument 'extra'", "tensors", "--in", tmp.toString(), "extra");
        usageError("option --parallelism must be an integer", "tensors", "--in", tmp.toString(), "--parallelism", "two");
        usageError("--parallelism must be >= 0, got -1", "tensors", "--in", tmp.toString(), "--parallelism", "-1");
        usageError("--in " + tmp.resolve("nowhere") + " has no snapshots table", "tensors", "--in", tmp.resolve("nowhere").toString());
        Files.createDirectories(tmp.resolve("empty/snapshots"));
        usageError("--in " + tmp.resolve("empty") + ": file:" + tmp.resolve("empty/snapshots") + " holds no run=<run> directory",
                "tensors", "--in", tmp.resolve("empty").toString());
        Path root = tmp.resolve("root");
        assertEquals("0", run("decode", "--example", "--out", root.toString())[0]);
        usageError("--run 'no such run': --in " + root + " has no snapshots of it", "tensors", "--in", root.toString(), "--run",
                "no such run");
        usageError("option --run needs a run id, got ''", "tensors", "--in", root.toString(), "--run=");
    }

    @Test
    void theBundledExamplesAndADamagedFile(@TempDir Path tmp) throws Exception {
        Path root = tmp.resolve("root");
        assertEquals("0", run("decode", "--example", "--out", root.toString())[0]);
        long keys = ((Number) DuckDb.query("SELECT count(*) AS n FROM (SELECT DISTINCT dump_id, phase, parameter_position FROM"
                + " read_parquet(" + DuckDb.glob(root, "snapshots/**/*.parquet") + "))").get(0).get("n")).longValue();
        long views = ((Number) DuckDb.query("SELECT count(*) AS n FROM read_parquet(" + DuckDb.glob(root, "snapshots/**/*.parquet")
                + ")").get(0).get("n")).longValue();
        String[] r = run("tensors", "--in", root.toString(), "--parallelism", "1");
        assertEquals("0", r[0], r[1] + r[2]);
        assertTrue(r[1].contains("tensors: " + keys + " tensors of 4 run/rank partitions from " + views + " views"), r[1]);
        long rows = ((Number) DuckDb.query("SELECT count(*) AS n FROM read_parquet(" + DuckDb.glob(root, "tensors/**/*.parquet")
                + ")").get(0).get("n")).longValue();
        assertEquals(keys, rows);

        // a file that is not Parquet, in a second run: the job fails naming it
        Path bad = Files.createDirectories(root.resolve("snapshots/run=broken/rank=0/stage=s")).resolve("part-0.parquet");
        Files.write(bad, "not a parquet file at all".getBytes(StandardCharsets.US_ASCII));
        String[] f = run("tensors", "--in", root.toString(), "--run", "broken", "--out", tmp.resolve("out").toString());
        assertEquals("1", f[0], f[1] + f[2]);
        assertTrue(f[2].startsWith("dumpstream tensors: the job failed: file:" + bad), f[2]);
    }
}
