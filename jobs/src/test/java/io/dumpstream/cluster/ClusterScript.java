package io.dumpstream.cluster;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Drives {@code deploy/local/cluster.sh} (or {@code hosts.sh}, {@link #hosts}) as a user would, with its state in a
 * test directory.
 */
final class ClusterScript {
    static final Path REPO = Path.of(System.getProperty("dumpstream.repo", "..")).toAbsolutePath().normalize();
    static final Path SCRIPT = REPO.resolve("deploy/local/cluster.sh");
    static final Path JAR = Path.of(System.getProperty("dumpstream.cluster.jar",
            REPO.resolve("jobs/target/dumpstream-flink-job.jar").toString()));

    static final Path HOSTS_SCRIPT = REPO.resolve("deploy/local/hosts.sh");

    private final Path script;
    private final String stateVariable;
    private final Path state;
    private final Map<String, String> env;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    ClusterScript(Path state) {
        this(state, Map.of());
    }

    /** With {@code env} added to the script's environment on every run (the JVMs it starts inherit it). */
    ClusterScript(Path state, Map<String, String> env) {
        this(SCRIPT, "DUMPSTREAM_CLUSTER_DIR", state, env);
    }

    private ClusterScript(Path script, String stateVariable, Path state, Map<String, String> env) {
        this.script = script;
        this.stateVariable = stateVariable;
        this.state = state;
        this.env = Map.copyOf(env);
    }

    /** {@code deploy/local/hosts.sh} with its state in {@code state} ({@code DUMPSTREAM_HOSTS_DIR}). */
    static ClusterScript hosts(Path state) {
        return new ClusterScript(HOSTS_SCRIPT, "DUMPSTREAM_HOSTS_DIR", state, Map.of());
    }

    Path state() {
        return state;
    }

    /** Runs {@code cluster.sh ARGS}, fails with its stderr unless it exits 0, returns its stdout lines. */
    List<String> run(Duration timeout, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("bash", script.toString()));
        cmd.addAll(List.of(args));
        Files.createDirectories(state);
        Path out = Files.createTempFile(state.getParent(), "cluster-sh", ".out");
        Path err = Files.createTempFile(state.getParent(), "cluster-sh", ".err");
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(REPO.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().put(stateVariable, state.toString());
        pb.environment().put("DUMPSTREAM_CLUSTER_JAR", JAR.toString());
        pb.environment().putAll(env);
        Process p = pb.start();
        if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            throw new AssertionError(script.getFileName() + " " + String.join(" ", args) + " still running after " + timeout
                    + "; stderr:\n" + Files.readString(err));
        }
        String stderr = Files.readString(err);
        List<String> lines = Files.readAllLines(out);
        if (!stderr.isBlank()) {
            System.out.print(stderr);
        }
        Files.deleteIfExists(out);
        Files.deleteIfExists(err);
        assertTrue(p.exitValue() == 0, script.getFileName() + " " + String.join(" ", args) + " exited " + p.exitValue()
                + "; stdout " + lines + "; stderr:\n" + stderr);
        return lines;
    }

    /** The pids the script recorded for the cluster's JVMs (JobManager and TaskManagers). */
    List<Long> pids() throws IOException {
        List<Long> pids = new ArrayList<>();
        try (var files = Files.list(state)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                String name = f.getFileName().toString();
                if (name.endsWith(".pid") && !name.equals("watchdog.pid")) {
                    pids.add(Long.parseLong(Files.readString(f).trim()));
                }
            }
        }
        return pids;
    }

    /** GET {@code url}; empty when nothing answers there. */
    Optional<String> get(String url) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                    .GET().build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            return r.statusCode() == 200 ? Optional.of(r.body()) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /** A port P with P .. P + n - 1 all free on loopback now (the script uses P .. P + 11). */
    static int freePortBlock(int n) throws IOException {
        InetAddress lo = InetAddress.getLoopbackAddress();
        for (int attempt = 0; attempt < 200; attempt++) {
            int base = ThreadLocalRandom.current().nextInt(20_000, 40_000);
            boolean free = true;
            for (int p = base; p < base + n && free; p++) {
                try (ServerSocket s = new ServerSocket(p, 1, lo)) {
                    s.setReuseAddress(true);
                } catch (IOException e) {
                    free = false;
                }
            }
            if (free) {
                return base;
            }
        }
        throw new IOException("no block of " + n + " free ports on loopback");
    }
}
