package io.dumpstream.readers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.testing.CephS3;
import io.dumpstream.testing.HostileNames;

import software.amazon.awssdk.core.sync.RequestBody;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The tables the readers read, made once per test JVM by the shaded {@code dumpstream.jar} as a user
 * runs it, and deleted at exit.
 *
 * <ul>
 * <li>{@link #demo()}: a real ingest ({@code demo}: local Kafka broker, the Flink job on a MiniCluster,
 * synthetic ranks, the bundled examples, one of them rejected) that also publishes every hostile-named
 * dump ({@code --dumps}).</li>
 * <li>{@link #hostile()}: the same hostile-named dumps through {@code decode --dir}.</li>
 * <li>{@link #demoOnS3()}: the files of {@link #demo()} on a real S3 server (Ceph's RADOS Gateway, one
 * per test JVM), uploaded under {@code s3://BUCKET/ROOT/}, and downloaded again for DuckDB.</li>
 * </ul>
 */
final class Landed {
    private static Path base;
    private static Path pairs;
    private static Path demo;
    private static Path hostile;
    private static OnS3 demoOnS3;

    /** Tables on S3: the server, {@code s3://bucket/root/{snapshots,dumps,rejects}}, and a download of them. */
    record OnS3(CephS3 s3, String bucket, String root, Path downloaded) {
    }

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
     * {@link #demo()}'s files uploaded as they are to the shared Ceph S3 server (a key per file, its
     * path below the tables' root), then downloaded to a folder of their own: the download has every
     * file, byte for byte the same length, and is what DuckDB reads for the readers on S3.
     */
    static synchronized OnS3 demoOnS3() throws Exception {
        if (demoOnS3 == null) {
            Path local = demo();
            CephS3 s3 = CephS3.shared();
            String bucket = "dumpstream-readers";
            String root = "runs/demo";
            s3.createBucket(bucket);
            Map<String, Long> files = new TreeMap<>();
            long t0 = System.nanoTime();
            try (Stream<Path> walk = Files.walk(local)) {
                for (Path f : walk.filter(Files::isRegularFile).toList()) {
                    String rel = local.relativize(f).toString().replace(java.io.File.separatorChar, '/');
                    s3.client().putObject(b -> b.bucket(bucket).key(root + "/" + rel), RequestBody.fromFile(f));
                    files.put(rel, Files.size(f));
                }
            }
            Path downloaded = base().resolve("demo-from-s3");
            Map<String, Long> back = new TreeMap<>();
            for (Path f : s3.download(bucket, root, downloaded)) {
                back.put(downloaded.relativize(f).toString().replace(java.io.File.separatorChar, '/'), Files.size(f));
            }
            assertEquals(files, back, "the demo tables downloaded from s3://" + bucket + "/" + root);
            System.out.printf("demo tables on S3: %d files up and down in %.1f s (s3://%s/%s on %s)%n", files.size(),
                    (System.nanoTime() - t0) / 1e9, bucket, root, s3.endpoint());
            demoOnS3 = new OnS3(s3, bucket, root, downloaded);
        }
        return demoOnS3;
    }

    /**
     * A manifest and buffer pair per hostile name, written once by a JVM of the shaded jar and common's
     * test classes (their Avro and Jackson, not Spark's).
     */
    static synchronized Path pairs() throws Exception {
        if (pairs == null) {
            Path dir = base().resolve("hostile-pairs");
            String cp = System.getProperty("dumpstream.jar", "../jobs/target/dumpstream.jar") + java.io.File.pathSeparator
                    + System.getProperty("common.tests.jar");
            run("pairs", List.of("-cp", cp, HostileNames.class.getName(), dir.toString(), "all"), false);
            pairs = dir;
        }
        return pairs;
    }

    static synchronized Path base() throws IOException {
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
        if (!Files.exists(root, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (var paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            System.err.println("could not delete " + root + ": " + e);
        }
    }
}
