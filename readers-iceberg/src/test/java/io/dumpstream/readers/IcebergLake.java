package io.dumpstream.readers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.testing.CephS3;
import io.dumpstream.testing.HostileNames;
import io.dumpstream.testing.Postgres;

import org.apache.iceberg.Snapshot;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.jdbc.JdbcCatalog;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * One continuously fed lake with Iceberg on, shared by the reader tests of this JVM, made with the shaded
 * {@code dumpstream.jar} as a user runs it: PostgreSQL ({@code deploy/local/postgres.sh}, through
 * {@link Postgres}) for the JDBC catalog, a {@code kafka} broker process, an {@code ingest} process with
 * {@code --iceberg-catalog} (checkpoints every second) that keeps running, and {@code publish} /
 * {@code simulate} processes: the bundled examples (one rejected), every hostile-named dump, and two
 * synthetic ranks. {@link #landNewRun} publishes a run id of its own later, while the readers run.
 *
 * <p>{@link #awaitCommitted} waits until every published dump is in the Hive layout and each Iceberg
 * table's current snapshot counts exactly the rows DuckDB reads from the layout's files (checked with
 * Iceberg's own {@link JdbcCatalog}, not with a reader under test): the lake is then still, and what a
 * reader returns can be compared with DuckDB's read of the same files.
 *
 * <p>{@link #onS3()} is the same lake on a real S3 server (Ceph's RADOS Gateway): ingest's output,
 * checkpoints and Iceberg metadata in a bucket, its own PostgreSQL and broker; DuckDB then reads a
 * download of the tables' objects, taken once Iceberg has every published dump.
 */
final class IcebergLake {
    /** The README's namespace (ingest's default) and catalog name. */
    static final String NAMESPACE = "dumpstream";
    static final List<String> TABLES = List.of("snapshots", "dumps", "rejects");
    private static IcebergLake lake;
    private static IcebergLake lakeOnS3;

    /** Where a lake on S3 lies: {@code s3://BUCKET/ROOT} on the server. */
    record OnS3(CephS3 server, String bucket, String root) {
        String uri() {
            return "s3://" + bucket + "/" + root;
        }
    }

    final Postgres pg;
    /** The Hive layout DuckDB reads: the lake's folder, or for a lake on S3 the latest download of its tables. */
    final Path out;
    /** Null for a lake on local disk. */
    final OnS3 s3;
    private final Path logs;
    private final String bootstrap;
    private final List<Process> processes = new ArrayList<>();
    private final JdbcCatalog catalog = new JdbcCatalog();
    private long published;

    private IcebergLake(Postgres pg, Path out, OnS3 s3, Path logs, String bootstrap) {
        this.pg = pg;
        this.out = out;
        this.s3 = s3;
        this.logs = logs;
        this.bootstrap = bootstrap;
    }

    /** The lake on local disk, made on first use: its first dumps are all in the Iceberg tables when this returns. */
    static synchronized IcebergLake get() throws Exception {
        if (lake == null) {
            lake = make(null);
        }
        return lake;
    }

    /**
     * The same lake on a real S3 server (Ceph's RADOS Gateway, {@link CephS3#shared()}): ingest writes the tables,
     * its checkpoints and the Iceberg metadata under {@code s3://dumpstream-iceberg/lake}, with a PostgreSQL of its own
     * for the catalog (the README's catalog name and namespace, as a user on S3 has them).
     */
    static synchronized IcebergLake onS3() throws Exception {
        if (lakeOnS3 == null) {
            CephS3 server = CephS3.shared();
            server.createBucket("dumpstream-iceberg");
            lakeOnS3 = make(new OnS3(server, "dumpstream-iceberg", "lake"));
        }
        return lakeOnS3;
    }

    /** Starts a lake (on local disk when {@code s3} is null) and waits until its first dumps are all in Iceberg. */
    private static IcebergLake make(OnS3 s3) throws Exception {
        String name = s3 == null ? "iceberg" : "iceberg-s3";
        long t0 = System.nanoTime();
        Path base = Landed.base();
        // the hostile pairs (a JVM of their own) and PostgreSQL start while the broker does
        CompletableFuture<Path> pairsMade = CompletableFuture.supplyAsync(() -> {
            try {
                return Landed.pairs();
            } catch (Exception e) {
                throw new CompletionException(e);
            }
        });
        CompletableFuture<Postgres> pgUp = CompletableFuture.supplyAsync(s3 == null ? Postgres::get : Postgres::another);
        Path logs = Files.createDirectories(base.resolve(name + "-logs"));
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        Process kafka = background("kafka", logs, List.of("kafka", "--port", Integer.toString(port), "--dir",
                base.resolve(name + "-kafka").toString(), "--partitions", "2"), Map.of(), "kafka broker at ");
        Path pairs;
        Postgres pg;
        try {
            pairs = pairsMade.get();
            pg = pgUp.get();
        } catch (Exception e) {
            kafka.destroyForcibly();
            throw e;
        }
        IcebergLake l = new IcebergLake(pg, base.resolve(name + "-lake"), s3, logs, "127.0.0.1:" + port);
        l.processes.add(kafka);
        Runtime.getRuntime().addShutdownHook(new Thread(l::stop, name + "-lake-stop"));
        double serversUp = (System.nanoTime() - t0) / 1e9;
        // the broker made the topic: the publishers and the job start together (ingest reads from the earliest offsets)
        Path examples = Files.createDirectories(base.resolve(name + "-examples"));
        l.published += extractExamples(examples) + manifests(pairs) + 2 * 2;
        List<Finished> publishers = List.of(
                l.start("publish-examples", List.of("publish", "--bootstrap", l.bootstrap, "--dir", examples.toString())),
                l.start("publish-hostile", List.of("publish", "--bootstrap", l.bootstrap, "--dir", pairs.toString())),
                l.start("simulate", List.of("simulate", "--bootstrap", l.bootstrap, "--ranks", "2", "--launches", "2",
                        "--records", "8", "--run-id", "demo")));
        // the credentials reach ingest through its environment only, as the README says
        List<String> ingest = new ArrayList<>(List.of("ingest", "--bootstrap", l.bootstrap, "--out", l.location(),
                "--checkpoints", s3 == null ? base.resolve(name + "-ck").toString() : "s3://" + s3.bucket() + "/checkpoints",
                "--checkpoint-interval", "1s", "--parallelism", "2", "--iceberg-catalog", pg.bareUrl()));
        Map<String, String> env = new LinkedHashMap<>(pg.env());
        if (s3 != null) {
            // the endpoint as Flink settings, the keys from the environment only (README "Object storage")
            s3.server().flinkConfig().forEach((k, v) -> {
                if (!k.endsWith("-key")) {
                    ingest.addAll(List.of("-D", k + "=" + v));
                }
            });
            env.putAll(s3.server().awsEnvironment());
        }
        l.processes.add(background("ingest", logs, ingest, env, "ingest: job "));
        double ingestUp = (System.nanoTime() - t0) / 1e9;
        org.apache.hadoop.conf.Configuration conf = new org.apache.hadoop.conf.Configuration();
        if (s3 != null) {
            // Iceberg's HadoopFileIO reads the metadata through S3A (s3:// is ingest's scheme)
            conf.set("fs.s3.impl", "org.apache.hadoop.fs.s3a.S3AFileSystem");
            conf.set("fs.s3a.endpoint", s3.server().endpoint());
            conf.set("fs.s3a.endpoint.region", "us-east-1");
            conf.set("fs.s3a.path.style.access", "true");
            conf.set("fs.s3a.connection.ssl.enabled", "false");
            conf.set("fs.s3a.access.key", s3.server().accessKey());
            conf.set("fs.s3a.secret.key", s3.server().secretKey());
        }
        l.catalog.setConf(conf);
        // the test JVM's pgpass file (Postgres) gives the driver the password
        l.catalog.initialize(NAMESPACE, Map.of("uri", pg.url(), "warehouse",
                s3 == null ? "file:" + l.out.resolve("_iceberg") : s3.uri() + "/_iceberg"));
        for (Finished f : publishers) {
            f.await();
        }
        double publishedAt = (System.nanoTime() - t0) / 1e9;
        l.awaitCommitted();
        System.out.printf("%s lake: %d dumps published and in the Iceberg tables in %.1f s (broker, PostgreSQL and pairs ready at %.1f s,"
                + " ingest started at %.1f s, all published at %.1f s; %s)%n", name, l.published, (System.nanoTime() - t0) / 1e9,
                serversUp, ingestUp, publishedAt, l.location());
        return l;
    }

    /** Where ingest writes: the local folder, or {@code s3://BUCKET/ROOT}. */
    String location() {
        return s3 == null ? out.toString() : s3.uri();
    }

    /**
     * The README's placeholders in the catalog settings: the PostgreSQL port and the lake's root (local), or the
     * endpoint, bucket, root and keys (on S3).
     */
    Map<String, String> placeholders() {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("PORT", pg.bareUrl().replaceAll(".*:(\\d+)/.*", "$1"));
        if (s3 == null) {
            p.put("/path/to/out", out.toString());
        } else {
            p.put("ENDPOINT", s3.server().endpoint());
            p.put("BUCKET", s3.bucket());
            p.put("ROOT", s3.root());
            p.put("$AWS_ACCESS_KEY_ID", s3.server().accessKey());
            p.put("$AWS_SECRET_ACCESS_KEY", s3.server().secretKey());
        }
        return p;
    }

    /** The environment of a Trino server reading this lake: the catalog's password, and the S3 keys for a lake on S3. */
    Map<String, String> readerEnv() {
        Map<String, String> env = new LinkedHashMap<>(pg.env());
        if (s3 != null) {
            env.put("AWS_ACCESS_KEY_ID", s3.server().accessKey());
            env.put("AWS_SECRET_ACCESS_KEY", s3.server().secretKey());
        }
        return env;
    }

    /**
     * Publishes one dump of a new run id (a partition no table has yet) while ingest keeps running, and
     * waits until its Iceberg commit, as {@link #awaitCommitted} does; returns the time from publishing
     * to the commit.
     */
    synchronized double landNewRun(String runId) throws Exception {
        long t0 = System.nanoTime();
        published += 1;
        run("simulate-" + runId, List.of("simulate", "--bootstrap", bootstrap, "--ranks", "1", "--launches", "1",
                "--records", "4", "--run-id", runId));
        awaitCommitted();
        return (System.nanoTime() - t0) / 1e9;
    }

    /**
     * Waits (3 min at most) until all published dumps are in the Hive layout and each Iceberg table's
     * current snapshot has exactly as many rows as DuckDB reads from that table's files.
     */
    synchronized void awaitCommitted() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
        String state = "";
        try (Connection duck = DriverManager.getConnection("jdbc:duckdb:"); Statement st = duck.createStatement()) {
            while (System.nanoTime() < deadline) {
                for (Process p : processes) {
                    if (!p.isAlive()) {
                        String ingest = Landed.read(logs.resolve("ingest.log"));
                        throw new AssertionError("a lake process exited; logs in " + logs + "; ingest's last lines: "
                                + ingest.substring(Math.max(0, ingest.length() - 4000)));
                    }
                }
                if (s3 != null) {
                    // on S3, the tables' files are downloaded (for DuckDB) once Iceberg has every dump
                    long committed = icebergRows("dumps");
                    if (committed < published) {
                        state = committed + " dumps in Iceberg, " + published + " published";
                        Thread.sleep(500);
                        continue;
                    }
                    download();
                }
                Map<String, long[]> counts = new LinkedHashMap<>();
                for (String table : TABLES) {
                    // a table's directory comes with its first hidden in-progress file: count published files only
                    long files = published(table) ? Rows.count(st, "SELECT count(*) FROM read_parquet('"
                            + out.resolve(table).toString().replace("'", "''") + "/**/*.parquet')") : 0;
                    counts.put(table, new long[] {files, icebergRows(table)});
                }
                state = counts.entrySet().stream().map(e -> e.getKey() + " " + e.getValue()[0] + " in files, " + e.getValue()[1]
                        + " in Iceberg").toList() + ", " + published + " dumps published";
                if (counts.get("dumps")[0] == published && counts.values().stream().allMatch(c -> c[0] == c[1])) {
                    return;
                }
                Thread.sleep(250);
            }
        }
        throw new AssertionError("the lake did not settle in 3 min: " + state + "; logs in " + logs);
    }

    /** A lake on S3: its tables' objects as they are now, mirrored into {@link #out} (what was there before goes). */
    private void download() {
        Landed.delete(out);
        for (String table : TABLES) {
            s3.server().download(s3.bucket(), s3.root() + "/" + table, out.resolve(table));
        }
    }

    /** Whether {@code table} has a published file (the glob {@code **}{@code /*.parquet} sees no hidden in-progress file). */
    private boolean published(String table) throws IOException {
        if (!Files.isDirectory(out.resolve(table))) {
            return false;
        }
        try (var files = Files.walk(out.resolve(table))) {
            return files.anyMatch(f -> f.getFileName().toString().endsWith(".parquet") && !f.getFileName().toString().startsWith("."));
        }
    }

    /** The row count of {@code table}'s current Iceberg snapshot (0 before its first commit). */
    long icebergRows(String table) {
        TableIdentifier id = TableIdentifier.of(NAMESPACE, table);
        if (!catalog.tableExists(id)) {
            return 0;
        }
        Snapshot s = catalog.loadTable(id).currentSnapshot();
        return s == null ? 0 : Long.parseLong(s.summary().get("total-records"));
    }

    /**
     * The rows every hostile name gives in {@code SELECT run, rank, stage, run_id, stage_name, count(*),
     * sum(numel) ... GROUP BY} over snapshots: as run id (its Hive partition value as read back) and as
     * stage name; {@code rows} must hold each of them.
     */
    static void assertHostileNames(List<String> rows) {
        List<String> missing = Rows.hostileSnapshotRows().stream().filter(w -> !rows.contains(w)).toList();
        assertTrue(missing.isEmpty(), "hostile-name rows the reader does not give: " + missing);
        assertTrue(HostileNames.NAMES.stream().filter(HostileNames.SUPPLEMENTARY).count() >= 2, "names beyond the BMP among them");
    }

    /** The jar's bundled examples ({@code examples/NAME.manifest.json} + {@code .bin}) into {@code dir}; their count. */
    private static int extractExamples(Path dir) throws IOException {
        int pairs = 0;
        try (ZipFile jar = new ZipFile(jar().toFile())) {
            for (ZipEntry e : jar.stream().filter(e -> e.getName().startsWith("examples/") && !e.isDirectory()).toList()) {
                try (InputStream in = jar.getInputStream(e)) {
                    Files.copy(in, dir.resolve(e.getName().substring("examples/".length())));
                }
                pairs += e.getName().endsWith(".manifest.json") ? 1 : 0;
            }
        }
        assertTrue(pairs > 0, "no bundled examples in " + jar());
        return pairs;
    }

    private static long manifests(Path dir) throws IOException {
        try (var files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".manifest.json")).count();
        }
    }

    private static Path jar() {
        Path file = Path.of(System.getProperty("dumpstream.jar", "../jobs/target/dumpstream.jar"));
        assertTrue(Files.isRegularFile(file), "no " + file + ": build it first (mvn -B package -DskipTests)");
        return file;
    }

    private static List<String> command(List<String> args) {
        List<String> cmd = new ArrayList<>(List.of(Landed.javaBin(), "-XX:+UseParallelGC", "-Xmx768m", "-jar", jar().toString()));
        cmd.addAll(args);
        return cmd;
    }

    /** A command of the jar running to its end. */
    private record Finished(String name, List<String> args, Process process, Path log) {
        /** Waits for it (2 min at most); it must succeed. */
        void await() throws Exception {
            if (!process.waitFor(2, TimeUnit.MINUTES)) {
                process.destroyForcibly().waitFor();
                throw new AssertionError(name + " did not finish in 2 min: " + Landed.read(log));
            }
            assertEquals(0, process.exitValue(), () -> String.join(" ", args) + " failed: " + Landed.read(log));
        }
    }

    private Finished start(String name, List<String> args) throws IOException {
        Path log = logs.resolve(name + ".log");
        return new Finished(name, args, new ProcessBuilder(command(args)).redirectErrorStream(true).redirectOutput(log.toFile()).start(), log);
    }

    /** Runs a command of the jar to its end (2 min at most), which must succeed. */
    private void run(String name, List<String> args) throws Exception {
        start(name, args).await();
    }

    /** Starts a command of the jar that keeps running, once its output has a line starting with {@code ready}. */
    private static Process background(String name, Path logs, List<String> args, Map<String, String> env, String ready)
            throws Exception {
        Path log = logs.resolve(name + ".log");
        ProcessBuilder b = new ProcessBuilder(command(args)).redirectErrorStream(true).redirectOutput(log.toFile());
        b.environment().putAll(env);
        Process p = b.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!Landed.read(log).lines().anyMatch(l -> l.startsWith(ready))) {
            if (!p.isAlive() || System.nanoTime() > deadline) {
                p.destroyForcibly();
                throw new AssertionError(name + " did not start: " + Landed.read(log));
            }
            Thread.sleep(100);
        }
        return p;
    }

    /** Stops ingest, then the broker (the JVM is exiting; PostgreSQL stops with {@link Postgres}'s own hook). */
    private void stop() {
        for (int i = processes.size() - 1; i >= 0; i--) {
            Process p = processes.get(i);
            p.destroy();
            try {
                if (!p.waitFor(20, TimeUnit.SECONDS)) {
                    p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        try {
            catalog.close();
        } catch (RuntimeException e) {
            // the JVM is exiting
        }
    }
}
