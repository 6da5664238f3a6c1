package io.dumpstream.testing;

import io.dumpstream.cli.Main;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code java [JVM options] -cp <test class path> io.dumpstream.cli.Main ARGS} as a child process
 * with its output in files, started once it printed its whole "ingest: job ..." line. A child still
 * running when the test ends is killed by {@link #close()} or, if an assertion skipped that, when
 * the test JVM exits: a failed test never leaves an ingest JVM behind.
 */
public record IngestProc(Process process, Path stdoutFile, Path stderrFile) implements AutoCloseable {
    public static IngestProc start(List<String> jvm, List<String> args, Path base) throws Exception {
        return start(jvm, args, base, java.util.Map.of());
    }

    /** As {@link #start(List, List, Path)}, with {@code env} added to the child's environment. */
    public static IngestProc start(List<String> jvm, List<String> args, Path base, java.util.Map<String, String> env)
            throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.addAll(jvm);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName()));
        cmd.addAll(args);
        Path so = Path.of(base + ".out");
        Path se = Path.of(base + ".err");
        ProcessBuilder b = new ProcessBuilder(cmd).redirectOutput(so.toFile()).redirectError(se.toFile());
        b.environment().putAll(env);
        Process p = ChildProcesses.track(b.start());
        IngestProc proc = new IngestProc(p, so, se);
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (!proc.stdout().matches("(?s).*ingest: job [^\\n]*\\n.*")) { // the whole line
            if (!p.isAlive() || System.nanoTime() > deadline) {
                p.destroyForcibly();
                throw new AssertionError("ingest did not start: " + proc.stdout() + proc.stderr());
            }
            Thread.sleep(100);
        }
        return proc;
    }

    /** Kills the child if it still runs (a test that stopped it itself finds it gone). */
    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }

    public String stdout() throws IOException {
        return Files.readString(stdoutFile, StandardCharsets.UTF_8);
    }

    /** The last 4000 characters of stderr. */
    public String stderr() throws IOException {
        String s = Files.readString(stderrFile, StandardCharsets.UTF_8);
        return s.length() > 4000 ? s.substring(s.length() - 4000) : s;
    }

    /** Waits until {@code n} dumps landed under {@code out}, failing if the process exits first. */
    public void awaitLanded(Path out, long n, Duration timeout) throws Exception {
        awaitLanded(() -> out, n, timeout);
    }

    /** As {@link #awaitLanded(Path, long, Duration)} on the tables of {@code landing}. */
    public void awaitLanded(Landing landing, long n, Duration timeout) throws Exception {
        awaitLanded(landing::tables, n, timeout);
    }

    private void awaitLanded(java.util.function.Supplier<Path> tables, long n, Duration timeout) throws Exception {
        Path out = tables.get();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            out = tables.get();
            if (Traffic.landedDumps(out) >= n) {
                return;
            }
            if (!process.isAlive()) {
                String so = stdout();
                throw new AssertionError("ingest exited with " + process.exitValue() + ": " + stderr() + "\n--- stdout:\n"
                        + so.substring(Math.max(0, so.length() - 4000)));
            }
            Thread.sleep(300);
        }
        throw new AssertionError("only " + Traffic.landedDumps(out) + " of " + n + " dumps landed; " + stderr());
    }
}
