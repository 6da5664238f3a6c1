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
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real Trino server (the {@code io.trino:trino-server} tarball Maven fetched into
 * {@code target/trino}) on a free loopback port, one coordinator that also runs the work, with one
 * catalog {@code hive}: the Hive connector over a file metastore in a temporary directory.
 */
final class TrinoServer implements AutoCloseable {
    private final Path dir;
    private final Process process;
    private final int port;

    private TrinoServer(Path dir, Process process, int port) {
        this.dir = dir;
        this.process = process;
        this.port = port;
    }

    static TrinoServer start() throws Exception {
        Path home = unpack(Path.of(System.getProperty("trino.tarball", "target/trino/trino-server-368.tar.gz")).toAbsolutePath());
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
                "query.max-memory=512MB",
                "query.max-memory-per-node=200MB", ""));
        Files.writeString(catalog.resolve("hive.properties"), String.join("\n",
                "connector.name=hive",
                "hive.metastore=file",
                "hive.metastore.catalog.dir=" + Files.createDirectories(dir.resolve("metastore")).toUri(), ""));
        Path log = dir.resolve("server.log");
        Process p = new ProcessBuilder(Landed.javaBin(), "-Xmx1g", "-XX:+UseG1GC", "-Djdk.attach.allowAttachSelf=true",
                "-cp", home.resolve("lib") + "/*",
                "-Dnode.environment=test", "-Dnode.id=dumpstream-readers", "-Dnode.data-dir=" + dir.resolve("data"),
                "-Dnode.internal-address=127.0.0.1", "-Dplugin.dir=" + home.resolve("plugin"),
                "-Dcatalog.config-dir=" + catalog, "-Dconfig=" + etc.resolve("config.properties"),
                "io.trino.server.TrinoServer")
                .directory(dir.toFile()) // Trino writes var/log/http-request.log below its working directory
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
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
            Thread.sleep(500);
        }
        System.out.printf("Trino server up on 127.0.0.1:%d in %.1f s%n", port, (System.nanoTime() - t0) / 1e9);
        return server;
    }

    /** A JDBC connection to catalog {@code hive}, schema {@code default}. */
    Connection connect() throws Exception {
        return DriverManager.getConnection("jdbc:trino://127.0.0.1:" + port + "/hive/default", "dumpstream", null);
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
     * The server directory, unpacked once next to the tarball with tar (the tarball holds hard links,
     * which Maven's unpacking does not restore). Only the Hive plugin is kept: every plugin loads at start.
     */
    private static synchronized Path unpack(Path tarball) throws Exception {
        assertTrue(Files.isRegularFile(tarball), "no " + tarball + ": mvn -pl readers verify copies it from Maven Central");
        String name = tarball.getFileName().toString().replace(".tar.gz", "");
        Path home = tarball.resolveSibling(name);
        if (Files.isDirectory(home.resolve("lib")) && Files.isDirectory(home.resolve("plugin/hive"))) {
            return home;
        }
        Landed.delete(home);
        Process tar = new ProcessBuilder("tar", "xzf", tarball.toString(), "-C", tarball.getParent().toString())
                .redirectErrorStream(true).start();
        String out = new String(tar.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, tar.waitFor(), "tar xzf " + tarball + ": " + out);
        try (Stream<Path> plugins = Files.list(home.resolve("plugin"))) {
            for (Path p : plugins.filter(p -> !p.getFileName().toString().equals("hive")).toList()) {
                Landed.delete(p);
            }
        }
        return home;
    }

    @Override
    public void close() throws Exception {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
        Landed.delete(dir);
    }
}
