package io.dumpstream.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.table.DuckDb;
import io.dumpstream.testing.CephS3;
import io.dumpstream.testing.Landing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/**
 * The job on several test hosts made by {@code deploy/local/hosts.sh} (one network namespace per host: ZooKeeper,
 * the S3 server, two JobManagers with high availability on ZooKeeper, three TaskManagers, the Kafka broker(s), a
 * rank host whose agent publishes a spool the ranks fill the whole time), through the faults of a cluster's life.
 * After each fault heals, the tables on S3 equal the offline decode ({@code decode --dir}) of every dump the ranks
 * produced so far: the exact multiset of snapshot rows (every column but {@code ingested_at}) and one COMPLETE
 * {@code dumps} row per dump; per fault it prints dumps produced, landed, lost, duplicated and the seconds from the
 * heal to the tables caught up.
 *
 * <p>Faults ({@code -Dhosts.faults=1,2,...} or {@code all}; {@code mvn verify} runs 3 and 1): 1 a TaskManager host's
 * processes SIGKILLed, the host back after the job recovered on the others; 2 a TaskManager host's link down for longer
 * than the heartbeat timeout; 3 the leading JobManager SIGKILLed, the standby takes over; 4 the broker host cut off
 * for 30 s (with {@code -Dhosts.brokers=3}: the broker leading partition 0 killed for 30 s); 5 the rank host cut off
 * from Kafka for 60 s (the agent keeps its spool); 6 the S3 host cut off for 30 s.
 * Root only (network namespaces): as another user it fails with one line saying so.
 */
@Tag("hosts")
class HostsFaultsIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration LONG = Duration.ofSeconds(300);
    private static final Path CLI_JAR = ClusterScript.REPO.resolve("jobs/target/dumpstream.jar");
    private static final String TOPIC = "dumps";

    private ClusterScript hosts;
    private Path state;
    private Path spool;
    private Landing landing;
    private String job;
    private int brokers;
    private final List<String> figures = new ArrayList<>();

    @Test
    void theJobOnSeveralHostsKeepsExactlyOnceThroughEachFault() throws Exception {
        assertEquals("0", run(Duration.ofSeconds(10), "id", "-u").trim(),
                "HostsFaultsIT needs root for network namespaces (ip netns, iptables); CI runs as root;"
                        + " skip it with -DexcludedTags=benchmark,hosts");
        assertTrue(Files.isRegularFile(ClusterScript.JAR), "the cluster jar is built: " + ClusterScript.JAR);
        List<Integer> faults = faults(System.getProperty("hosts.faults", "3,1"));
        brokers = Integer.parseInt(System.getProperty("hosts.brokers", "1"));
        state = Path.of("target", "hosts-it").toAbsolutePath();
        hosts = ClusterScript.hosts(state);
        // the expected tables and the S3 mirror of a previous run (the hosts' own folders go at up)
        deleteTree(state.resolve("check"));
        long t0 = System.nanoTime();
        try {
            Map<String, String> env = envLines(hosts.run(Duration.ofSeconds(400), "up", "--topic", TOPIC,
                    "--partitions", "2", "--brokers", Integer.toString(brokers),
                    "--owner-pid", Long.toString(ProcessHandle.current().pid())));
            double upSeconds = seconds(t0);
            spool = Path.of(env.get("spool"));
            CephS3 s3 = CephS3.attach(Path.of(env.get("s3_env")).getParent());
            landing = Landing.s3(state.resolve("check"), s3, env.get("bucket"), "it");
            List<String> submitted = hosts.run(Duration.ofSeconds(300), "submit", "--bootstrap", env.get("bootstrap"),
                    "--topic", TOPIC, "--group", "hosts-it", "--out", landing.out(), "--checkpoints",
                    landing.checkpoints(), "--parallelism", "2", "--checkpoint-interval", "2s");
            job = submitted.get(submitted.size() - 1);
            assertTrue(job.matches("[0-9a-f]{32}"), "submit prints the job id, got " + submitted);
            await(this::allTasksRunning, "the job RUNNING with every task");
            System.out.printf("hosts: up in %.1f s, job running at %.1f s%n", upSeconds, seconds(t0));
            hosts.run(Duration.ofSeconds(30), "ranks", "start");
            await(() -> landedDumps() >= 4, "the first dumps landed");
            for (int fault : faults) {
                long f0 = System.nanoTime();
                double healToCaughtUp = switch (fault) {
                    case 1 -> taskManagerHostKilled();
                    case 2 -> taskManagerLinkDown();
                    case 3 -> leadingJobManagerKilled();
                    case 4 -> brokers == 1 ? cutFor("kafka1", null, 30)
                            : brokerKilled(leaderHost(env.get("bootstrap")), 30);
                    case 5 -> rankCutFromKafka();
                    case 6 -> cutFor("s3", null, 30);
                    default -> throw new IllegalArgumentException("no fault " + fault);
                };
                assertExactlyOnce(fault, healToCaughtUp, seconds(f0));
                if (fault != faults.get(faults.size() - 1)) {
                    hosts.run(Duration.ofSeconds(30), "ranks", "start");
                }
            }
            System.out.printf("hosts: faults %s in %.1f s (with the hosts' start)%n", faults, seconds(t0));
            figures.forEach(System.out::println);
        } catch (Throwable failed) {
            try {
                hosts.run(Duration.ofSeconds(120), "down");
            } catch (Throwable alsoFailed) {
                failed.addSuppressed(alsoFailed); // the fault's failure stays the one reported
            }
            throw failed;
        }
        hosts.run(Duration.ofSeconds(120), "down");
    }

    private static void deleteTree(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    private static List<Integer> faults(String spec) {
        if (spec.equals("all")) {
            return List.of(1, 2, 3, 4, 5, 6);
        }
        List<Integer> out = new ArrayList<>();
        for (String s : spec.split(",")) {
            int f = Integer.parseInt(s.trim());
            assertTrue(f >= 1 && f <= 6, "-Dhosts.faults: faults are 1..6 or all, got " + spec);
            out.add(f);
        }
        return out;
    }

    // --- the faults: each returns the seconds from its heal until every dump produced landed ------------------

    /** 1: a TaskManager host running tasks loses every process; the job recovers on the other two; the host returns. */
    private double taskManagerHostKilled() throws Exception {
        String tm = busyTaskManager();
        producing(4);
        hosts.run(Duration.ofSeconds(60), "kill", tm);
        System.out.println("hosts: fault 1, killed every process on " + tm);
        await(() -> allTasksRunning() && registeredTaskManagers() == 2, "the job running on the two other TaskManagers");
        producing(4);
        hosts.run(Duration.ofSeconds(120), "start", tm);
        long heal = System.nanoTime();
        await(() -> registeredTaskManagers() == 3, tm + " registered again");
        return caughtUpAfter(heal);
    }

    /**
     * 2: a TaskManager host running tasks loses its link for 30 s, twice the heartbeat timeout (15 s): the
     * JobManager declares it lost within that time and the job restarts on the others; then the link comes back.
     */
    private double taskManagerLinkDown() throws Exception {
        String tm = busyTaskManager();
        producing(4);
        hosts.run(Duration.ofSeconds(30), "link-down", tm);
        long down = System.nanoTime();
        System.out.println("hosts: fault 2, link of " + tm + " down for 30 s");
        await(() -> registeredTaskManagers() == 2, "the JobManager declaring " + tm + " lost");
        double lostAfter = seconds(down);
        System.out.printf("hosts: %s declared lost %.1f s after its link went down%n", tm, lostAfter);
        assertTrue(lostAfter < 30, tm + " declared lost while its link was down (after " + lostAfter + " s)");
        Thread.sleep(Math.max(0, 30_000 - (System.nanoTime() - down) / 1_000_000));
        hosts.run(Duration.ofSeconds(30), "link-up", tm);
        long heal = System.nanoTime();
        await(() -> registeredTaskManagers() == 3 && allTasksRunning(), tm + " back and the job running");
        return caughtUpAfter(heal);
    }

    /**
     * 3: the leading JobManager SIGKILLed: the standby wins the ZooKeeper election, recovers the job from the HA
     * store and restores its latest checkpoint, with nothing done by hand; the killed host returns as the standby.
     */
    private double leadingJobManagerKilled() throws Exception {
        String before = leader();
        String host = before.contains(".4:") ? "jm1" : "jm2";
        long lastCheckpoint = latestCompletedCheckpoint();
        producing(4);
        hosts.run(Duration.ofSeconds(60), "kill", host);
        long heal = System.nanoTime();
        System.out.println("hosts: fault 3, killed the leading JobManager " + host + " (" + before + ")");
        await(() -> {
            String now = leaderOrEmpty();
            return !now.isEmpty() && !now.equals(before) && allTasksRunning();
        }, "the standby leading and the job running");
        double takeover = seconds(heal);
        JsonNode restored = json(leader() + "/jobs/" + job + "/checkpoints").path("latest").path("restored");
        long restoredId = restored.path("id").asLong(-1);
        System.out.printf("hosts: the standby %s leads, job running %.1f s after the kill, restored checkpoint %d"
                + " (latest before the kill: %d) from %s%n", leader(), takeover, restoredId, lastCheckpoint,
                restored.path("external_path").asText());
        assertTrue(restoredId >= lastCheckpoint && lastCheckpoint > 0,
                "the new leader restored the latest checkpoint " + lastCheckpoint + " or later, got " + restored);
        double caughtUp = caughtUpAfter(heal);
        hosts.run(Duration.ofSeconds(120), "start", host);
        return caughtUp;
    }

    /** 5: the rank host cut off from every broker for 60 s: its agent keeps the pairs in the spool, then publishes them. */
    private double rankCutFromKafka() throws Exception {
        producing(4);
        hosts.run(Duration.ofSeconds(30), "cut", "rank", "--from", "kafka");
        System.out.println("hosts: fault 5, rank cut off from Kafka for 60 s");
        Thread.sleep(60_000);
        long waiting = pendingInSpool();
        hosts.run(Duration.ofSeconds(30), "heal", "rank");
        long heal = System.nanoTime();
        System.out.println("hosts: " + waiting + " dumps waited in the spool during the cut");
        assertTrue(waiting > 0, "dumps waited in the rank host's spool while Kafka was cut off");
        return caughtUpAfter(heal);
    }

    /** The host (kafkaN, N its node id) of the broker leading partition 0 of the topic: the broker whose loss counts. */
    private static String leaderHost(String bootstrap) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(p)) {
            TopicDescription d = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(60, TimeUnit.SECONDS)
                    .get(TOPIC);
            return "kafka" + d.partitions().get(0).leader().id();
        }
    }

    /** 4 with three brokers: one broker host's processes killed for {@code seconds}, then back (2 of 3 in sync). */
    private double brokerKilled(String host, int seconds) throws Exception {
        producing(4);
        hosts.run(Duration.ofSeconds(60), "kill", host);
        System.out.println("hosts: fault 4, killed the broker on " + host + " (leader of partition 0) for " + seconds + " s");
        Thread.sleep(seconds * 1000L);
        hosts.run(Duration.ofSeconds(120), "start", host);
        return caughtUpAfter(System.nanoTime());
    }

    /** 4 and 6: {@code host} cut off from every other host for {@code seconds}. */
    private double cutFor(String host, String from, int seconds) throws Exception {
        producing(4);
        if (from == null) {
            hosts.run(Duration.ofSeconds(30), "cut", host);
        } else {
            hosts.run(Duration.ofSeconds(30), "cut", host, "--from", from);
        }
        System.out.println("hosts: " + host + " cut off for " + seconds + " s");
        Thread.sleep(seconds * 1000L);
        hosts.run(Duration.ofSeconds(30), "heal", host);
        return caughtUpAfter(System.nanoTime());
    }

    /**
     * Lets the ranks go on 3 s after the heal (dumps produced after it too), stops them, and waits until every dump
     * they produced is in the {@code dumps} table on S3; the seconds since {@code heal}.
     */
    private double caughtUpAfter(long heal) throws Exception {
        Thread.sleep(3000);
        hosts.run(Duration.ofSeconds(60), "ranks", "stop");
        long produced = producedDumps();
        await(() -> pendingInSpool() == 0 && landedDumps() >= produced, "all " + produced + " dumps landed");
        return seconds(heal);
    }

    /** Waits until the ranks have produced {@code n} more dumps (the fault then hits data in flight). */
    private void producing(int n) throws Exception {
        long before = producedDumps();
        await(() -> producedDumps() >= before + n, n + " more dumps produced");
    }

    // --- the exactly-once check -----------------------------------------------------------------------------

    private void assertExactlyOnce(int fault, double healToCaughtUp, double faultSeconds) throws Exception {
        Path expected = state.resolve("check/expected-" + fault);
        Path done = spool.resolve("done");
        run(Duration.ofSeconds(300), "java", "-jar", CLI_JAR.toString(), "decode", "--dir", done.toString(), "--out",
                expected.toString());
        Path landed = landing.tables();
        long produced = producedDumps();
        String columns = "* EXCLUDE (ingested_at)";
        String exp = "read_parquet(" + DuckDb.glob(expected, "snapshots/**/[!.]*.parquet") + ", hive_partitioning=false)";
        String got = "read_parquet(" + DuckDb.glob(landed, "snapshots/**/[!.]*.parquet") + ", hive_partitioning=false)";
        long lost = count("SELECT " + columns + " FROM " + exp + " EXCEPT ALL SELECT " + columns + " FROM " + got);
        long extra = count("SELECT " + columns + " FROM " + got + " EXCEPT ALL SELECT " + columns + " FROM " + exp);
        long rows = count("SELECT 1 FROM " + got);
        String dumpCols = "dump_id, run_id, launch_id, step, records, accepted, rejected, buffer_bytes, outcome, reason";
        String expDumps = "read_parquet(" + DuckDb.glob(expected, "dumps/**/[!.]*.parquet") + ", hive_partitioning=false)";
        String gotDumps = "read_parquet(" + DuckDb.glob(landed, "dumps/**/[!.]*.parquet") + ", hive_partitioning=false)";
        long dumpsLost = count("SELECT " + dumpCols + " FROM " + expDumps + " EXCEPT ALL SELECT " + dumpCols + " FROM " + gotDumps);
        long dumpsExtra = count("SELECT " + dumpCols + " FROM " + gotDumps + " EXCEPT ALL SELECT " + dumpCols + " FROM " + expDumps);
        long landedDumps = count("SELECT 1 FROM " + gotDumps);
        long notComplete = count("SELECT 1 FROM " + gotDumps + " WHERE outcome <> 'COMPLETE'");
        long expectedDumps = count("SELECT 1 FROM " + expDumps);
        String line = String.format("hosts: fault %d (%s): dumps produced %d, landed %d, lost %d, duplicated %d;"
                + " snapshot rows %d, lost %d, duplicated %d; %.1f s from the heal to caught up (fault and check %.1f s)",
                fault, name(fault), produced, landedDumps, dumpsLost, dumpsExtra, rows, lost, extra, healToCaughtUp,
                faultSeconds + 0.0);
        JsonNode counts = json(leader() + "/jobs/" + job + "/checkpoints").path("counts");
        line += String.format("; checkpoints completed %d, failed %d (this JobManager's)",
                counts.path("completed").asLong(), counts.path("failed").asLong());
        System.out.println(line);
        figures.add(line);
        assertEquals(produced, expectedDumps, "the offline decode has one dumps row per dump produced");
        assertEquals(0, lost, "fault " + fault + ": snapshot rows lost");
        assertEquals(0, extra, "fault " + fault + ": snapshot rows duplicated or not produced");
        assertEquals(0, dumpsLost, "fault " + fault + ": dumps rows lost");
        assertEquals(0, dumpsExtra, "fault " + fault + ": dumps rows duplicated or not produced");
        assertEquals(produced, landedDumps, "fault " + fault + ": one dumps row per dump produced");
        assertEquals(0, notComplete, "fault " + fault + ": every dump COMPLETE");
    }

    private String name(int fault) {
        return switch (fault) {
            case 1 -> "TaskManager host killed";
            case 2 -> "TaskManager link down 30 s";
            case 3 -> "leading JobManager killed";
            case 4 -> brokers == 1 ? "broker host cut off 30 s" : "partition 0's leader, one of " + brokers + " brokers, killed 30 s";
            case 5 -> "rank host cut off from Kafka 60 s";
            case 6 -> "S3 host cut off 30 s";
            default -> "?";
        };
    }

    private static long count(String select) throws Exception {
        return ((Number) DuckDb.query("SELECT count(*) AS n FROM (" + select + ")").get(0).get("n")).longValue();
    }

    /** Pairs the ranks wrote: published ones in {@code done/}, waiting ones in the spool (by their manifests). */
    private long producedDumps() {
        return manifests(spool.resolve("done")) + pendingInSpool();
    }

    private long pendingInSpool() {
        return manifests(spool);
    }

    private static long manifests(Path dir) {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".manifest.json")).count();
        } catch (IOException e) {
            return 0;
        }
    }

    private long landedDumps() {
        try {
            Path t = landing.tables();
            if (!Files.isDirectory(t.resolve("dumps"))) {
                return 0;
            }
            return count("SELECT 1 FROM read_parquet(" + DuckDb.glob(t, "dumps/**/[!.]*.parquet") + ")");
        } catch (Exception e) {
            return 0;
        }
    }

    // --- the cluster through the leading JobManager's REST API -------------------------------------------------

    private String leader() throws Exception {
        return hosts.run(Duration.ofSeconds(30), "leader").get(0);
    }

    private String leaderOrEmpty() {
        try {
            return leader();
        } catch (Throwable e) {
            return "";
        }
    }

    private JsonNode json(String url) {
        String body = hosts.get(url).orElseThrow(() -> new AssertionError("no answer from " + url));
        try {
            return JSON.readTree(body);
        } catch (IOException e) {
            throw new AssertionError("not JSON from " + url + ": " + body, e);
        }
    }

    private boolean allTasksRunning() {
        String l = leaderOrEmpty();
        if (l.isEmpty()) {
            return false;
        }
        return hosts.get(l + "/jobs/" + job).map(b -> {
            try {
                JsonNode j = JSON.readTree(b);
                String s = j.path("state").asText();
                if (s.equals("FAILED") || s.equals("CANCELED") || s.equals("FINISHED")) {
                    throw new AssertionError("job " + s + ": " + hosts.get(l + "/jobs/" + job + "/exceptions").orElse("?"));
                }
                if (!s.equals("RUNNING")) {
                    return false;
                }
                for (JsonNode v : j.path("vertices")) {
                    if (!v.path("status").asText().equals("RUNNING")) {
                        return false;
                    }
                }
                return true;
            } catch (IOException e) {
                return false;
            }
        }).orElse(false);
    }

    private int registeredTaskManagers() {
        String l = leaderOrEmpty();
        return l.isEmpty() ? 0 : hosts.get(l + "/taskmanagers").map(b -> {
            try {
                return JSON.readTree(b).path("taskmanagers").size();
            } catch (IOException e) {
                return 0;
            }
        }).orElse(0);
    }

    /** A TaskManager that runs tasks of the job (losing an idle one tests nothing): its host name. */
    private String busyTaskManager() throws Exception {
        for (JsonNode tm : json(leader() + "/taskmanagers").path("taskmanagers")) {
            if (tm.path("freeSlots").asInt() < tm.path("slotsNumber").asInt()) {
                return tm.path("id").asText();
            }
        }
        throw new AssertionError("no TaskManager runs a task");
    }

    private long latestCompletedCheckpoint() throws Exception {
        return json(leader() + "/jobs/" + job + "/checkpoints").path("latest").path("completed").path("id").asLong(0);
    }

    private void await(BooleanSupplier done, String what) throws InterruptedException {
        long deadline = System.nanoTime() + LONG.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + LONG + " waiting for " + what);
            }
            Thread.sleep(500);
        }
    }

    private static double seconds(long since) {
        return (System.nanoTime() - since) / 1e9;
    }

    private static Map<String, String> envLines(List<String> lines) {
        Map<String, String> env = new LinkedHashMap<>();
        for (String l : lines) {
            int eq = l.indexOf('=');
            if (eq > 0) {
                env.put(l.substring(0, eq), l.substring(eq + 1));
            }
        }
        assertNotEquals(null, env.get("bootstrap"), "hosts.sh up prints bootstrap=: " + lines);
        return env;
    }

    /** Runs a command, fails with its output unless it exits 0; its stdout. */
    private static String run(Duration timeout, String... cmd) throws Exception {
        Path out = Files.createTempFile("hosts-it", ".out");
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new AssertionError(String.join(" ", cmd) + " still running after " + timeout);
            }
            String text = Files.readString(out);
            assertEquals(0, p.exitValue(), String.join(" ", cmd) + " exited " + p.exitValue() + ": " + text);
            assertFalse(text.isEmpty() && cmd[0].equals("id"), "id -u printed nothing");
            return text;
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
