package io.dumpstream.readers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.testing.HostileNames;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The tables the readers read, made once per test JVM by the shaded {@code dumpstream.jar} as a user
 * runs it, and deleted at exit.
 *
 * <ul>
 * <li>{@link #demo()}: a real ingest ({@code demo}: local Kafka broker, the Flink job on a MiniCluster,
 * synthetic ranks, the bundled examples, one of them rejected) that also publishes every hostile-named
 * dump ({@code --dumps}).</li>
 * <li>{@link #hostile()}: the same hostile-named dumps through {@code decode --dir}.</li>
 * </ul>
 */
final class Landed {
    private static Path base;
    private static Path pairs;
    private static Path demo;
    private static Path hostile;

    private Landed() {
    }

    static synchronized Path demo() throws Exception {
        if (demo == null) {
            demo = base().resolve("demo");
            run("demo", List.of("demo", "--out", demo.toString(), "--ranks", "2", "--launches", "3", "--records", "8",
                    "--parallelism", "2", "--dumps", pairs().toString()));
        }
        return demo;
    }

    static synchronized Path hostile() throws Exception {
        if (hostile == null) {
            hostile = base().resolve("hostile");
            run("decode", List.of("decode", "--dir", pairs().toString(), "--out", hostile.toString()));
        }
        return hostile;
    }

    /**
     * A manifest and buffer pair per hostile name, written once by a JVM of the shaded jar and common's
     * test classes (their Avro and Jackson, not Spark's).
     */
    private static Path pairs() throws Exception {
        if (pairs == null) {
            Path dir = base().resolve("hostile-pairs");
            String cp = System.getProperty("dumpstream.jar", "../jobs/target/dumpstream.jar") + java.io.File.pathSeparator
                    + System.getProperty("common.tests.jar");
            run("pairs", List.of("-cp", cp, HostileNames.class.getName(), dir.toString(), "all"), false);
            pairs = dir;
        }
        return pairs;
    }

    private static Path base() throws IOException {
        if (base == null) {
            base = Files.createTempDirectory("dumpstream-readers");
            Path b = base;
            Runtime.getRuntime().addShutdownHook(new Thread(() -> delete(b)));
        }
        return base;
    }

    private static void run(String name, List<String> args) throws Exception {
        run(name, args, true);
    }

    private static void run(String name, List<String> args, boolean jar) throws Exception {
        Path file = Path.of(System.getProperty("dumpstream.jar", "../jobs/target/dumpstream.jar"));
        assertTrue(Files.isRegularFile(file), "no " + file + ": build it first (mvn -B package -DskipTests)");
        Path log = base().resolve(name + ".log");
        List<String> cmd = new ArrayList<>(List.of(javaBin(), "-XX:+UseParallelGC", "-Xmx1g"));
        if (jar) {
            cmd.addAll(List.of("-jar", file.toString()));
        }
        cmd.addAll(args);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
            p.destroyForcibly().waitFor();
            throw new AssertionError(name + " did not finish in 5 min; output in " + log);
        }
        assertEquals(0, p.exitValue(), () -> String.join(" ", args) + " failed: " + read(log));
    }

    static String javaBin() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            return "(cannot read " + p + ": " + e + ")";
        }
    }

    static void delete(Path root) {
        try (var paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            System.err.println("could not delete " + root + ": " + e);
        }
    }
}
