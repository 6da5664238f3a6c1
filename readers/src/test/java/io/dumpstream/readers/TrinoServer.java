package io.dumpstream.readers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A real Trino server (the {@code io.trino:trino-server} tarball Maven fetched into
 * {@code target/trino}) on a free loopback port, one coordinator that also runs the work, with the
 * catalogs its caller gives (the README's catalog files). Trino 476's classes target Java 24, so the
 * server runs on a JDK of its own ({@link #javaHome()}); the tests and the project stay on Java 17.
 */
final class TrinoServer implements AutoCloseable {
    /** The first Java release Trino 476's server runs on. */
    static final int MIN_JAVA = 24;
    private static final Path JVMS = Path.of("/usr/lib/jvm");
    private static final Path TEMURIN_25 = JVMS.resolve("temurin-25-jdk-amd64");
    /** The connectors the README's catalog files use (readers-iceberg's tests share this unpacked server). */
    private static final List<String> KEPT_PLUGINS = List.of("hive", "iceberg");

    private final Path dir;
    private final Process process;
    private final int port;

    private TrinoServer(Path dir, Process process, int port) {
        this.dir = dir;
        this.process = process;
        this.port = port;
    }

    /**
     * Starts a server with one catalog per entry of {@code catalogs} (name to the text of its
     * {@code etc/catalog/NAME.properties}); {@code env} is added to the server process's environment (the
     * credentials a catalog file reads as {@code ${ENV:...}}, never written to a file or a log here).
     */
    static TrinoServer start(Map<String, String> catalogs, Map<String, String> env) throws Exception {
        Path java = javaHome().resolve("bin/java");
        Path home = unpack(Path.of(System.getProperty("trino.tarball", "target/trino/trino-server-476.tar.gz")).toAbsolutePath());
        Path dir = Files.createTempDirectory("dumpstream-trino");
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        Path etc = Files.createDirectories(dir.resolve("etc"));
        Path catalog = Files.createDirectories(etc.resolve("catalog"));
        Files.writeString(etc.resolve("config.properties"), String.join("\n",
                "coordinator=true",
                "node-scheduler.include-coordinator=true",
                "http-server.http.port=" + port,
                "discovery.uri=http://127.0.0.1:" + port,
                "query.max-memory=256MB",
                "query.max-memory-per-node=200MB", ""));
        for (Map.Entry<String, String> c : catalogs.entrySet()) {
            Files.writeString(catalog.resolve(c.getKey() + ".properties"), c.getValue());
        }
        Path log = dir.resolve("server.log");
        // a small heap, serial GC and C1 only: the test's queries are small, and on 2 busy cores the
        // server is up in about half the time it takes with C2 compiling Trino's startup
        ProcessBuilder pb = new ProcessBuilder(java.toString(), "-Xmx768m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Djdk.attach.allowAttachSelf=true", "-XX:+EnableDynamicAgentLoading", "-Dfile.encoding=UTF-8",
                "-cp", home.resolve("lib") + "/*",
                "-Dnode.environment=test", "-Dnode.id=dumpstream-readers", "-Dnode.data-dir=" + dir.resolve("data"),
                "-Dnode.internal-address=127.0.0.1", "-Dplugin.dir=" + home.resolve("plugin"),
                "-Dcatalog.config-dir=" + catalog, "-Dconfig=" + etc.resolve("config.properties"),
                "io.trino.server.TrinoServer")
                .directory(dir.toFile()) // Trino writes var/log/http-request.log below its working directory
                .redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().putAll(env);
        Process p = pb.start();
        TrinoServer server = new TrinoServer(dir, p, port);
        long t0 = System.nanoTime();
        long deadline = t0 + TimeUnit.MINUTES.toNanos(3);
        while (!server.started()) {
            if (!p.isAlive() || System.nanoTime() > deadline) {
                String out = Landed.read(log);
                server.close();
                throw new AssertionError("Trino did not start (" + (p.isAlive() ? "3 min" : "exited") + "):\n"
                        + out.substring(Math.max(0, out.length() - 6000)));
            }
            Thread.sleep(250);
        }
        // "starting":false comes before the coordinator's node manager has seen its own announcement (it
        // refreshes every few seconds): a query in between fails with "No nodes available to run query"
        String notYet = "";
        while (!(notYet = server.activeWorkers()).isEmpty()) {
            if (!p.isAlive() || System.nanoTime() > deadline) {
                String out = Landed.read(log);
                server.close();
                throw new AssertionError("Trino has no active node to run queries (" + notYet + "):\n"
                        + out.substring(Math.max(0, out.length() - 6000)));
            }
            Thread.sleep(250);
        }
        System.out.printf("Trino server up on 127.0.0.1:%d in %.1f s (%s)%n", port, (System.nanoTime() - t0) / 1e9, java);
        return server;
    }

    /**
     * The JDK Trino's server runs on: {@code -Dtrino.java.home}, else {@code $TRINO_JAVA_HOME}, else
     * Temurin 25 at its usual place, else the newest {@code temurin-2[4-9]*} under {@code /usr/lib/jvm};
     * an override that is no JDK of Java {@value #MIN_JAVA}+ stops with one line naming it.
     */
    static Path javaHome() throws IOException {
        for (String[] override : new String[][] {
                {"-Dtrino.java.home", System.getProperty("trino.java.home")}, {"$TRINO_JAVA_HOME", System.getenv("TRINO_JAVA_HOME")}}) {
            if (override[1] != null && !override[1].isBlank()) {
                Path jdk = Path.of(override[1]);
                int v = javaVersion(jdk);
                if (v < MIN_JAVA) {
                    throw new AssertionError(override[0] + "=" + override[1] + (v < 0 ? " is not a JDK (no bin/java and release file)"
                            : " is Java " + v) + "; Trino " + version() + "'s server needs Java " + MIN_JAVA + "+");
                }
                return jdk;
            }
        }
        if (javaVersion(TEMURIN_25) >= MIN_JAVA) {
            return TEMURIN_25;
        }
        List<Path> found = new ArrayList<>();
        if (Files.isDirectory(JVMS)) {
            try (DirectoryStream<Path> jdks = Files.newDirectoryStream(JVMS, "temurin-2[4-9]*")) {
                jdks.forEach(found::add);
            }
        }
        return found.stream().filter(j -> javaVersion(j) >= MIN_JAVA).max(Comparator.comparingInt(TrinoServer::javaVersion))
                .orElseThrow(() -> new AssertionError("no Java " + MIN_JAVA + "+ JDK for Trino " + version() + "'s server: set"
                        + " -Dtrino.java.home or TRINO_JAVA_HOME, or install Temurin 25 (" + TEMURIN_25 + ")"));
    }

    /** The feature release of the JDK at {@code jdk} from its {@code release} file, or -1 if it is no JDK. */
    private static int javaVersion(Path jdk) {
        try {
            if (!Files.isExecutable(jdk.resolve("bin/java"))) {
                return -1;
            }
            for (String line : Files.readAllLines(jdk.resolve("release"))) {
                Matcher m = Pattern.compile("JAVA_VERSION=\"(\\d+).*").matcher(line);
                if (m.matches()) {
                    return Integer.parseInt(m.group(1));
                }
            }
            return -1;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private static String version() {
        return System.getProperty("trino.version", "476");
    }

    /** A JDBC connection with {@code catalog} and {@code schema} as the session's defaults. */
    Connection connect(String catalog, String schema) throws Exception {
        return DriverManager.getConnection("jdbc:trino://127.0.0.1:" + port + "/" + catalog + "/" + schema, "dumpstream", null);
    }

    private boolean started() {
        try {
            HttpURLConnection c = (HttpURLConnection) URI.create("http://127.0.0.1:" + port + "/v1/info").toURL().openConnection();
            c.setConnectTimeout(1000);
            c.setReadTimeout(2000);
            try (InputStream in = c.getInputStream()) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8).contains("\"starting\":false");
            } finally {
                c.disconnect();
            }
        } catch (IOException notYet) {
            return false;
        }
    }

    /**
     * Empty once a query that needs a worker node runs: the server's active nodes (its own coordinator,
     * which also runs the work) are listed and a scan of them completes; else why not yet.
     */
    private String activeWorkers() {
        try (Connection c = connect("system", "runtime"); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT count(*) FROM system.runtime.nodes WHERE state = 'active'")) {
            rs.next();
            long active = rs.getLong(1);
            return active > 0 ? "" : "0 active nodes";
        } catch (Exception e) {
            return String.valueOf(e.getMessage());
        }
    }

    /**
     * The server directory, unpacked once next to the tarball with tar (the tarball holds hard links,
     * which Maven's unpacking does not restore). Only the Hive and Iceberg plugins are kept: every plugin
     * loads at start.
     */
    private static synchronized Path unpack(Path tarball) throws Exception {
        assertTrue(Files.isRegularFile(tarball), "no " + tarball + ": mvn -pl readers verify copies it from Maven Central");
        String name = tarball.getFileName().toString().replace(".tar.gz", "");
        Path home = tarball.resolveSibling(name);
        if (Files.isDirectory(home.resolve("lib")) && KEPT_PLUGINS.stream().allMatch(p -> Files.isDirectory(home.resolve("plugin/" + p)))) {
            return home;
        }
        Landed.delete(home);
        Process tar = new ProcessBuilder("tar", "xzf", tarball.toString(), "-C", tarball.getParent().toString())
                .redirectErrorStream(true).start();
        String out = new String(tar.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, tar.waitFor(), "tar xzf " + tarball + ": " + out);
        try (Stream<Path> plugins = Files.list(home.resolve("plugin"))) {
            for (Path p : plugins.filter(p -> !KEPT_PLUGINS.contains(p.getFileName().toString())).toList()) {
                Landed.delete(p);
            }
        }
        return home;
    }

    @Override
    public void close() throws Exception {
        Path status = Path.of("/proc", Long.toString(process.pid()), "status");
        if (process.isAlive() && Files.isReadable(status)) {
            Files.readAllLines(status).stream().filter(l -> l.startsWith("VmHWM:")).findFirst()
                    .ifPresent(l -> System.out.printf("Trino server peak RSS: %s%n", l.substring("VmHWM:".length()).trim()));
        }
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
        Landed.delete(dir);
    }
}
