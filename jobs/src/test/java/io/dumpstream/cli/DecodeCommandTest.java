package io.dumpstream.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The decode command end to end: exit status, the summary lines, the files it leaves. */
class DecodeCommandTest {

    static String[] run(String... argv) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = Main.run(argv, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new String[]{String.valueOf(rc), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8)};
    }

    @Test
    void exampleDecodesEveryBundledDump(@TempDir Path root) throws Exception {
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        List<Path> examplesBefore = exampleCopies(tmp);
        String[] r = run("decode", "--example", "--out", root.toString());
        assertEquals("0", r[0], r[2]);
        assertEquals(examplesBefore, exampleCopies(tmp), "decode --example removes the examples it extracted to " + tmp);
        assertTrue(r[1].contains("demo-run/0/1: COMPLETE, 24 accepted, 0 rejected of 24 records"), r[1]);
        assertTrue(r[1].contains("demo-run/1/2: COMPLETE, 5 accepted, 0 rejected of 5 records"), r[1]);
        assertTrue(r[1].contains("demo-run/6/7: COMPLETE, 3 accepted, 0 rejected of 3 records"), r[1]);
        assertTrue(r[1].contains(": PARTIAL, 5 accepted, 1 rejected of 6 records"), r[1]);
        assertTrue(r[1].contains("decoded 4 dump(s): 37 records accepted, 1 rejected"), r[1]);
        assertTrue(r[2].contains("decode: 4/4 dumps"), "progress line: " + r[2]);
        try (Stream<Path> files = Files.walk(root)) {
            List<Path> parquet = files.filter(p -> p.toString().endsWith(".parquet")).toList();
            assertTrue(parquet.stream().noneMatch(p -> p.getFileName().toString().startsWith(".")));
            assertEquals(1, parquet.stream().filter(p -> p.toString().contains("/rejects/")).count());
            assertEquals(4, parquet.stream().filter(p -> p.toString().contains("/dumps/")).count());
        }
    }

    private static List<Path> exampleCopies(Path tmp) throws Exception {
        try (Stream<Path> dirs = Files.list(tmp)) {
            return dirs.filter(d -> d.getFileName().toString().startsWith("dumpstream-example")).sorted().toList();
        }
    }

    @Test
    void unusableArgumentsExitTwoAndNameTheProblem(@TempDir Path root) {
        String[] r = run("decode", "--out", root.toString(), "--manifest", root.resolve("nope.json").toString(),
                "--buffer", root.resolve("b.bin").toString());
        assertEquals("2", r[0]);
        assertTrue(r[2].contains("nope.json does not exist"), r[2]);
        r = run("decode", "--manifest", "m.json");
        assertEquals("2", r[0]);
        assertTrue(r[2].contains("missing required option --out"), r[2]);
        r = run("decode", "--out", root.toString(), "--bogus", "1");
        assertEquals("2", r[0]);
        assertTrue(r[2].contains("unknown option --bogus"), r[2]);
        r = run("nosuchcommand");
        assertEquals("2", r[0]);
    }

    @Test
    void helpOnEveryCommand() {
        for (Command c : Main.commands()) {
            String[] r = run(c.name(), "--help");
            assertEquals("0", r[0], c.name());
            assertTrue(r[1].startsWith("usage:"), c.name() + ": " + r[1]);
        }
    }
}
