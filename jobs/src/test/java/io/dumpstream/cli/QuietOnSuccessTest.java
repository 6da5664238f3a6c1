package io.dumpstream.cli;

import io.dumpstream.testing.ChildProcesses;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The batch commands (decode, compare, tensors, import-reference), each a JVM of its own with the command line's own
 * logging configuration (log4j2.properties, not the tests'), on a small input: stdout has the command's result lines,
 * stderr no framework WARN line and no exception; with --verbose Flink's own log lines are back.
 */
class QuietOnSuccessTest {
    private static final Pattern NOISE = Pattern.compile("(?m)^.*(WARN|Exception|Some data might be lost).*$");
    @TempDir
    static Path tmp;

    record Run(int status, String out, String err) {
    }

    static Run cli(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Dlog4j2.configurationFile=log4j2.properties", "-cp", System.getProperty("java.class.path"),
                Main.class.getName()));
        cmd.addAll(List.of(args));
        Path so = Files.createTempFile(tmp, "cli", ".out");
        Path se = Files.createTempFile(tmp, "cli", ".err");
        Process p = ChildProcesses.track(new ProcessBuilder(cmd).redirectOutput(so.toFile()).redirectError(se.toFile())
                .start());
        assertTrue(p.waitFor(300, TimeUnit.SECONDS), String.join(" ", args) + " ended within 300 s");
        return new Run(p.exitValue(), Files.readString(so, StandardCharsets.UTF_8), Files.readString(se, StandardCharsets.UTF_8));
    }

    static void assertQuiet(Run r, String what) {
        assertEquals(0, r.status(), what + ": " + r.out() + r.err());
        var noise = NOISE.matcher(r.err());
        assertTrue(!noise.find(), what + " printed on stderr: " + (noise.hitEnd() ? "" : noise.group()) + "\n" + r.err());
    }

    static Path spool(String run) {
        Path dir = tmp.resolve("spool-" + run);
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        PrintStream s = new PrintStream(sink, true, StandardCharsets.UTF_8);
        // the same seed: two runs with equal bytes
        assertEquals(0, Main.run(new String[]{"simulate", "--out", dir.toString(), "--ranks", "2", "--launches", "2",
            "--records", "4", "--payload-bytes", "2048", "--run-id", run}, s, s), sink.toString(StandardCharsets.UTF_8));
        return dir;
    }

    static Path root;

    @BeforeAll
    static void decodeTwoRuns() throws Exception {
        root = tmp.resolve("root");
        Path a = spool("A");
        Path b = spool("B");
        Run r = cli("decode", "--dir", a.toString(), "--out", root.toString());
        assertQuiet(r, "decode");
        assertTrue(r.out().contains("decoded 4 dump(s): 16 records accepted, 0 rejected, tables under " + root), r.out());
        assertTrue(r.err().contains("decode: 4/4 dumps"), "its own progress lines: " + r.err());
        assertQuiet(cli("decode", "--dir", b.toString(), "--out", root.toString()), "decode");
    }

    @Test
    void compareSaysItsVerdictsAndNothingElse() throws Exception {
        Run r = cli("compare", "--root", root.toString(), "--baseline", "A", "--candidate", "B", "--out",
                tmp.resolve("cmp").toString(), "--parallelism", "2");
        assertQuiet(r, "compare");
        assertTrue(Pattern.compile("(?m)^compare A vs B: 16 pairs in [0-9.]+ s: \\{PASS=16, FAIL=0, SHAPE_MISMATCH=0,"
                + " DTYPE_MISMATCH=0, MISSING_BASELINE=0, MISSING_CANDIDATE=0}$").matcher(r.out()).find(), r.out());
        assertTrue(r.out().contains("tables under " + tmp.resolve("cmp") + " (comparisons/, first_divergence/)"), r.out());
        assertEquals("", r.err(), "nothing on stderr");
    }

    @Test
    void verboseBringsTheFrameworksLoggingBack() throws Exception {
        Run r = cli("compare", "--root", root.toString(), "--baseline", "A", "--candidate", "B", "--out",
                tmp.resolve("cmp-verbose").toString(), "--parallelism", "2", "--verbose");
        assertEquals(0, r.status(), r.out() + r.err());
        assertTrue(r.out().contains("compare A vs B: 16 pairs in "), r.out());
        assertTrue(Pattern.compile("(?m)^\\d\\d:\\d\\d:\\d\\d INFO  MiniCluster - ").matcher(r.err()).find(),
                "Flink's INFO lines: " + r.err());
        // the iterator is closed before the cluster: Flink's collect client never loses the cluster under it
        assertTrue(!r.err().contains("MiniCluster is not yet running") && !r.err().contains("Some data might be lost"),
                r.err());
    }

    @Test
    void tensorsSaysWhatItFound() throws Exception {
        Run r = cli("tensors", "--in", root.toString(), "--run", "A", "--out", tmp.resolve("tensors").toString(),
                "--parallelism", "2");
        assertQuiet(r, "tensors");
        assertTrue(Pattern.compile("(?m)^tensors: \\d+ tensors of 2 run/rank partitions from 16 views").matcher(r.out()).find(),
                r.out());
    }

    @Test
    void importReferenceSaysWhatItWrote() throws Exception {
        Path st = tmp.resolve("ref.safetensors");
        // a safetensors file: u64 LE header length, the JSON header padded to 8 bytes, the data (float32 1.0, 2.0)
        byte[] header = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}          "
                .getBytes(StandardCharsets.US_ASCII);
        assertEquals(0, header.length % 8);
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(8 + header.length + 8).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        b.putLong(header.length).put(header).putFloat(1f).putFloat(2f);
        Files.write(st, b.array());
        Path ref = tmp.resolve("ref-root");
        Run r = cli("import-reference", "--safetensors", st.toString(), "--run", "eager", "--rank", "0", "--launch", "7",
                "--out", ref.toString());
        assertQuiet(r, "import-reference");
        assertTrue(r.out().contains("reference run 'eager' rank 0 launch 7 under " + ref + " (snapshots/, dumps/)"), r.out());
    }
}
