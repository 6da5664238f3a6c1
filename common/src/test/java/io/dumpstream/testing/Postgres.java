package io.dumpstream.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One PostgreSQL server (Debian's package) for every test of the JVM, started on first use by the
 * project's own {@code deploy/local/postgres.sh} on a free loopback port, stopped when the JVM exits.
 * Its password reaches the driver through a pgpass file named by the {@code org.postgresql.pgpassfile}
 * system property (so that an in-process job needs no credentials in its environment); {@link #env()}
 * gives the same credentials as the environment a child {@code ingest} process reads.
 */
public final class Postgres {
    public static final String USER = "dumpstream";
    private static Postgres instance;

    private final Path dir;
    private final int port;
    private final String password;

    private Postgres(Path dir, int port, String password) {
        this.dir = dir;
        this.port = port;
        this.password = password;
    }

    public static synchronized Postgres get() {
        if (instance == null) {
            try {
                instance = start(null);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        return instance;
    }

    /**
     * A second server of its own (stopped when the JVM exits), for a catalog that must not share its rows
     * with {@link #get()}'s: the same user, database name and password (one environment serves a reader of
     * both), another port; the pgpass file has both.
     */
    public static synchronized Postgres another() {
        Postgres first = get();
        try {
            return start(first.password);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static Postgres start(String password) throws IOException, InterruptedException {
        Path script = repo().resolve("deploy/local/postgres.sh");
        Path dir = Files.createTempDirectory("dumpstream-pg-");
        dir.toFile().setExecutable(true, false); // the server runs as postgres when the tests run as root
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        ProcessBuilder b = new ProcessBuilder(List.of("bash", script.toString(), "start", dir.toString(),
                Integer.toString(port))).redirectErrorStream(true);
        if (password != null) {
            b.environment().put("DUMPSTREAM_PG_PASSWORD", password);
        }
        Process p = b.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("deploy/local/postgres.sh start failed: " + out);
        }
        String made = Files.readString(dir.resolve("password"), StandardCharsets.UTF_8).trim();
        // one pgpass file for the JVM (the first server's), a line per server
        String shared = System.getProperty("org.postgresql.pgpassfile");
        Path pgpass = instance == null || shared == null ? dir.resolve("pgpass") : Path.of(shared);
        Files.writeString(pgpass, "127.0.0.1:" + port + ":*:" + USER + ":" + made + "\n", StandardCharsets.UTF_8,
                java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        System.setProperty("org.postgresql.pgpassfile", pgpass.toString());
        Postgres pg = new Postgres(dir, port, made);
        Runtime.getRuntime().addShutdownHook(new Thread(pg::stop, "postgres-stop"));
        return pg;
    }

    /** The repository root (tests run in a module's directory). */
    static Path repo() {
        Path here = Path.of("").toAbsolutePath();
        for (Path p = here; p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("deploy/local/postgres.sh"))) {
                return p;
            }
        }
        throw new IllegalStateException("no deploy/local/postgres.sh above " + here);
    }

    /** The database URL with its user, no password (the pgpass file has it). */
    public String url() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + USER + "?user=" + USER;
    }

    /** The URL without the user, for a process that takes its credentials from {@link #env()}. */
    public String bareUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + USER;
    }

    /** The credentials as the environment of an {@code ingest} process. */
    public Map<String, String> env() {
        return Map.of("DUMPSTREAM_ICEBERG_USER", USER, "DUMPSTREAM_ICEBERG_PASSWORD", password);
    }

    public Connection connect() throws java.sql.SQLException {
        return DriverManager.getConnection(bareUrl(), USER, password);
    }

    private void stop() {
        try {
            new ProcessBuilder(List.of("bash", repo().resolve("deploy/local/postgres.sh").toString(), "stop",
                    dir.toString())).redirectErrorStream(true).start().waitFor(60, TimeUnit.SECONDS);
            // the cluster's files (about 46 MB) go with it: one folder was left in /tmp per test JVM
            try (var paths = Files.walk(dir)) {
                for (Path f : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(f);
                }
            }
        } catch (IOException | InterruptedException e) {
            // the JVM is exiting: a folder left behind is only disk
        }
    }
}
