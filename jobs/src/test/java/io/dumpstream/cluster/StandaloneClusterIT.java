package io.dumpstream.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.local.LocalKafka;
import io.dumpstream.testing.Landing;
import io.dumpstream.testing.SharedKafka;
import io.dumpstream.testing.Traffic;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The job on a real standalone Flink cluster, started the way the README shows: a JobManager and
 * two TaskManagers as separate JVMs by {@code deploy/local/cluster.sh}, the cluster jar submitted
 * over REST with the same arguments as {@code ingest}, synthetic ranks publishing to the local
 * broker, one TaskManager SIGKILLed mid-stream. Checks the exact multiset that landed, that the job
 * restored from a checkpoint under {@code --checkpoints}, the job's own counters on the Prometheus
 * endpoints (scraped once), and that no cluster process outlives the test.
 *
 * <p>Twice: tables and checkpoints on local disk, and on the project's S3 server (Ceph's RADOS Gateway,
 * {@link Landing#s3}). The S3 run is the cluster as one with object storage runs it: every JVM loads
 * flink-s3-fs-hadoop from the plugins folder, the endpoint comes with {@code start --conf}, the keys
 * from the environment; the killed TaskManager's open parts are multipart uploads that the restarted
 * writers resume or drop from the checkpoint the JobManager reads back from S3; what landed is read
 * back through an independent client (the AWS SDK v2), and the secret key is in no file the cluster wrote.
 */
@Tag("cluster")
class StandaloneClusterIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration LONG = Duration.ofSeconds(240);

    @TempDir
    Path dir;

    @ParameterizedTest(name = "tables and checkpoints on {0}")
    @ValueSource(strings = {"local", "s3"})
    void theClusterJarIngestsExactlyOnceWhileATaskManagerIsKilled(String storage) throws Exception {
        assertTrue(Files.isRegularFile(ClusterScript.JAR), "the cluster jar is built: " + ClusterScript.JAR);
        // the broker starts while the cluster does
        CompletableFuture<LocalKafka> broker = CompletableFuture.supplyAsync(SharedKafka::get);
        String topic = "cluster-it-" + storage;
        Landing out = storage.equals("s3") ? Landing.s3(dir, "cluster-it", "standalone") : Landing.local(dir);
        List<String> startArgs = new ArrayList<>(List.of("start", "--taskmanagers", "2", "--slots", "2"));
        Map<String, String> env = new TreeMap<>();
        if (out.onS3()) {
            // the endpoint and how to talk to it in config.yaml; the keys only in the processes' environment
            out.flinkConfig().forEach((k, v) -> {
                if (k.equals("s3.access-key")) {
                    env.put("AWS_ACCESS_KEY_ID", v);
                } else if (k.equals("s3.secret-key")) {
                    env.put("AWS_SECRET_ACCESS_KEY", v);
                } else {
                    startArgs.addAll(List.of("--conf", k + "=" + v));
                }
            });
            assertEquals(Set.of("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"), env.keySet());
        }
        ClusterScript cluster = new ClusterScript(dir.resolve("cluster"), env);
        int restPort = ClusterScript.freePortBlock(12);
        startArgs.addAll(List.of("--rest-port", Integer.toString(restPort),
                "--owner-pid", Long.toString(ProcessHandle.current().pid())));
        List<Long> pids = new ArrayList<>();
        long t0 = System.nanoTime();
        try {
            List<String> started = cluster.run(Duration.ofSeconds(300), startArgs.toArray(String[]::new));
            double startSeconds = (System.nanoTime() - t0) / 1e9;
            LocalKafka kafka = broker.get(LONG.toSeconds(), TimeUnit.SECONDS);
            kafka.createTopic(topic, 2);
            kafka.createTopic(topic + ".dlq", 1);
            Traffic traffic = new Traffic(kafka.bootstrapServers(), topic, "cluster/it-" + storage, 2, 8, 8 * 1024,
                    32 * 1024, 61);
            String url = "http://127.0.0.1:" + restPort;
            assertEquals(url, started.get(started.size() - 1), "start prints the REST URL last");
            pids.addAll(cluster.pids());
            assertEquals(3, pids.size(), "a JobManager and two TaskManagers");
            assertEquals(2, json(cluster, url + "/taskmanagers").get("taskmanagers").size(), "two TaskManagers registered");

            List<String> submitted = cluster.run(Duration.ofSeconds(300), "submit",
                    "--bootstrap", kafka.bootstrapServers(), "--topic", topic, "--group", "cluster-it",
                    "--out", out.out(), "--checkpoints", out.checkpoints(),
                    "--parallelism", "2", "--checkpoint-interval", "2s", "--restart-attempts", "20");
            String job = submitted.get(submitted.size() - 1);
            assertTrue(job.matches("[0-9a-f]{32}"), "submit prints the job id, got " + submitted);
            String jobUrl = url + "/jobs/" + job;
            await(() -> "RUNNING".equals(state(cluster, jobUrl)), cluster, jobUrl, "the job RUNNING");
            double runningSeconds = (System.nanoTime() - t0) / 1e9;

            // a first launch of every rank lands before the stream starts, so that the kill below
            // hits a job that is consuming, whatever its start-up took on a loaded machine
            traffic.join(traffic.publish(0, 1, 0), LONG.toMillis());
            await(() -> landed(out) >= 2, cluster, jobUrl, "the first 2 dumps landed");
            // 48 more dumps over 12 s; the kill comes a third of the way in, with dumps in flight
            // and in the job's state that no checkpoint has committed yet
            Thread publisher = traffic.publish(1, 24, 4.0);
            await(() -> traffic.dumpsSent() >= 2 + 16, cluster, jobUrl, "16 more dumps sent");
            List<String> killed = cluster.run(Duration.ofSeconds(60), "kill-taskmanager");
            long killedAt = System.nanoTime();
            long killedAtMillis = System.currentTimeMillis();
            boolean inFlight = publisher.isAlive();
            System.out.println("cluster: " + killed.get(killed.size() - 1) + " while publishing: " + inFlight);
            assertTrue(killed.get(killed.size() - 1).matches("killed tm-[12] \\(pid \\d+\\)"), "kill-taskmanager: " + killed);

            traffic.join(publisher, LONG.toMillis());
            await(() -> landed(out) >= traffic.dumpsSent(), cluster, jobUrl, "every dump landed");
            System.out.printf("cluster: started in %.1f s, job RUNNING at %.1f s, every dump landed %.1f s after the kill%n",
                    startSeconds, runningSeconds, (System.nanoTime() - killedAt) / 1e9);
            if (out.onS3()) {
                // how much of the time above is the test's own read-back: one refresh of the mirror
                long r0 = System.nanoTime();
                Path tables = out.tables();
                long files;
                try (var walk = Files.walk(tables)) {
                    files = walk.filter(Files::isRegularFile).count();
                }
                System.out.printf("cluster: one refresh of the S3 mirror (%d files) took %.2f s%n", files,
                        (System.nanoTime() - r0) / 1e9);
            }
            long completed = completedCheckpoints(cluster, jobUrl);
            // two more checkpoints: anything landing twice would have been committed by then
            await(() -> completedCheckpoints(cluster, jobUrl) >= completed + 2, cluster, jobUrl, "two more checkpoints");
            assertTrue(inFlight, "the TaskManager was killed mid-stream");
            JsonNode failures = json(cluster, jobUrl + "/exceptions").path("exceptionHistory").path("entries");
            assertFalse(failures.isEmpty(), "the job failed over after the kill (exception history is empty)");
            assertEquals("RUNNING", state(cluster, jobUrl), "the job recovered");
            traffic.assertExactlyOnce("standalone cluster, a TaskManager SIGKILLed", out);
            long restoredAt = assertRestoredFromACheckpointUnder(out, cluster, jobUrl, job);
            System.out.printf("cluster: restored %.1f s after the kill%n", (restoredAt - killedAtMillis) / 1e3);

            assertJobCounters(cluster, restPort, job, traffic);
            if (out.onS3()) {
                assertFalse(Files.exists(dir.resolve("out")) || Files.exists(dir.resolve("ck")), "nothing on local disk");
                assertNoFileHolds(cluster.state(), out.server().secretKey());
            }
        } finally {
            List<String> stopped = cluster.run(Duration.ofSeconds(120), "stop");
            System.out.println("cluster: " + String.join(" ", stopped));
            keepLogs(cluster.state().resolve("log"), Path.of("target", "standalone-cluster-logs", storage));
        }
        for (long pid : pids) {
            assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false),
                    "cluster process " + pid + " outlived stop");
        }
    }

    /**
     * The job's restore after the kill read a checkpoint written under {@code --checkpoints}: {@code chk-N} of
     * this job there (on S3 the JobManager read its {@code _metadata} from the bucket; that checkpoint is
     * subsumed by now, but the newest retained one is there). Returns the restore's wall-clock time.
     */
    private static long assertRestoredFromACheckpointUnder(Landing out, ClusterScript cluster, String jobUrl,
            String job) {
        JsonNode latest = json(cluster, jobUrl + "/checkpoints").path("latest").path("restored");
        String restored = latest.path("external_path").asText();
        String base = out.onS3() ? out.checkpoints() : Path.of(out.checkpoints()).toUri().toString();
        base = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
        // Flink writes local URIs as file:/x, not file:///x
        String expected = base.replaceFirst("^file:///", "file:/") + "/" + job + "/chk-";
        assertTrue(restored.startsWith(expected) && restored.substring(expected.length()).matches("\\d+"),
                "restored from " + restored + ", expected " + expected + "N");
        if (out.onS3()) {
            String bucketAndKey = expected.substring("s3://".length());
            String bucket = bucketAndKey.substring(0, bucketAndKey.indexOf('/'));
            String prefix = bucketAndKey.substring(bucket.length() + 1);
            List<String> metadata = out.server().listKeys(bucket, prefix).stream()
                    .filter(k -> k.matches(Pattern.quote(prefix) + "\\d+/_metadata")).toList();
            assertFalse(metadata.isEmpty(), "a retained checkpoint's _metadata under s3://" + bucket + "/" + prefix);
            System.out.println("cluster: retained on S3: " + metadata);
        }
        System.out.println("cluster: restored from " + restored);
        return latest.path("restore_timestamp").asLong();
    }

    /** Copies the cluster's logs where a CI run keeps them (the test's own folder is deleted). */
    private static void keepLogs(Path logs, Path to) throws java.io.IOException {
        Files.createDirectories(to);
        try (var files = Files.list(logs)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.copy(f, to.resolve(f.getFileName()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        }
        System.out.println("cluster: logs in " + to.toAbsolutePath());
    }

    /** No file under {@code dir} (config.yaml, logs, stdout of every process) contains {@code secret}. */
    private static void assertNoFileHolds(Path dir, String secret) throws java.io.IOException {
        byte[] needle = secret.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        List<Path> files;
        try (var walk = Files.walk(dir)) {
            files = walk.filter(Files::isRegularFile).toList();
        }
        assertTrue(files.stream().anyMatch(f -> f.getFileName().toString().equals("config.yaml")), "files in " + dir);
        for (Path f : files) {
            byte[] bytes = Files.readAllBytes(f);
            for (int i = 0; i + needle.length <= bytes.length; i++) {
                if (java.util.Arrays.equals(bytes, i, i + needle.length, needle, 0, needle.length)) {
                    throw new AssertionError("the S3 secret key is in " + f + " at byte " + i);
                }
            }
        }
        System.out.println("cluster: the S3 secret key is in none of " + files.size() + " files under " + dir);
    }

    /**
     * One scrape of every Prometheus port of the cluster. The job's {@code dumpstream} counters are
     * there for both subtasks; since the restart reset them together, at rest every record the
     * assembler accepted since then was decoded (equal sums), none was rejected or dead-lettered.
     */
    private static void assertJobCounters(ClusterScript cluster, int restPort, String job, Traffic traffic) {
        StringBuilder scraped = new StringBuilder();
        int endpoints = 0;
        for (int port = restPort + 2; port <= restPort + 11; port++) {
            Optional<String> body = cluster.get("http://127.0.0.1:" + port + "/metrics");
            if (body.isPresent()) {
                endpoints++;
                scraped.append(body.get()).append('\n');
            }
        }
        // the JobManager and the TaskManager that survived
        assertEquals(2, endpoints, "Prometheus endpoints answering on ports " + (restPort + 2) + ".." + (restPort + 11));
        Map<Integer, Double> accepted = counter(scraped, "recordsAccepted", job);
        Map<Integer, Double> decoded = counter(scraped, "recordsDecoded", job);
        Map<Integer, Double> rejected = counter(scraped, "recordsRejected", job);
        Map<Integer, Double> deadLetters = counter(scraped, "deadLetterMessages", job);
        System.out.printf("cluster: Prometheus dumpstream counters per subtask: recordsAccepted %s, recordsDecoded %s,"
                + " recordsRejected %s, deadLetterMessages %s%n", accepted, decoded, rejected, deadLetters);
        assertEquals(List.of(0, 1), List.copyOf(accepted.keySet()), "recordsAccepted of both assembler subtasks");
        assertEquals(List.of(0, 1), List.copyOf(decoded.keySet()), "recordsDecoded of both decoder subtasks");
        double acceptedSum = accepted.values().stream().mapToDouble(Double::doubleValue).sum();
        double decodedSum = decoded.values().stream().mapToDouble(Double::doubleValue).sum();
        assertEquals(acceptedSum, decodedSum, "every record accepted since the restart was decoded");
        assertTrue(acceptedSum > 0 && acceptedSum <= traffic.dumpsSent() * 8.0,
                "records accepted since the restart: " + acceptedSum + " of " + traffic.dumpsSent() * 8 + " sent");
        assertEquals(Map.of(0, 0.0, 1, 0.0), rejected, "no record rejected");
        assertEquals(Map.of(0, 0.0, 1, 0.0), deadLetters, "nothing dead-lettered");
    }

    /** {@code flink_taskmanager_job_task_operator_dumpstream_<name>} of {@code job} per subtask index. */
    private static Map<Integer, Double> counter(CharSequence scraped, String name, String job) {
        Pattern line = Pattern.compile("^flink_taskmanager_job_task_operator_dumpstream_" + name
                + "\\{([^}]*)\\} (\\S+)$", Pattern.MULTILINE);
        Pattern subtask = Pattern.compile("subtask_index=\"(\\d+)\"");
        Map<Integer, Double> values = new TreeMap<>();
        Matcher m = line.matcher(scraped);
        while (m.find()) {
            if (!m.group(1).contains("job_id=\"" + job + "\"")) {
                continue;
            }
            Matcher s = subtask.matcher(m.group(1));
            assertTrue(s.find(), "subtask_index label in " + m.group());
            values.merge(Integer.parseInt(s.group(1)), Double.parseDouble(m.group(2)), Double::sum);
        }
        return values;
    }

    private static long landed(Landing out) {
        try {
            return Traffic.landedDumps(out.tables());
        } catch (Exception e) {
            return 0;
        }
    }

    private static JsonNode json(ClusterScript cluster, String url) {
        String body = cluster.get(url).orElseThrow(() -> new AssertionError("no answer from " + url));
        try {
            return JSON.readTree(body);
        } catch (java.io.IOException e) {
            throw new AssertionError("not JSON from " + url + ": " + body, e);
        }
    }

    private static String state(ClusterScript cluster, String jobUrl) {
        return cluster.get(jobUrl).map(b -> {
            try {
                return JSON.readTree(b).path("state").asText();
            } catch (java.io.IOException e) {
                return "";
            }
        }).orElse("");
    }

    private static long completedCheckpoints(ClusterScript cluster, String jobUrl) {
        return cluster.get(jobUrl + "/checkpoints").map(b -> {
            try {
                return JSON.readTree(b).path("counts").path("completed").asLong();
            } catch (java.io.IOException e) {
                return 0L;
            }
        }).orElse(0L);
    }

    /** Waits for {@code done}, failing at once if the job reaches a terminal state. */
    private static void await(BooleanSupplier done, ClusterScript cluster, String jobUrl, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + LONG.toNanos();
        while (!done.getAsBoolean()) {
            String s = state(cluster, jobUrl);
            if (s.equals("FAILED") || s.equals("CANCELED") || s.equals("FINISHED")) {
                throw new AssertionError("job " + s + " waiting for " + what + "; exceptions: "
                        + cluster.get(jobUrl + "/exceptions").orElse("?"));
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + LONG + " waiting for " + what + " (job " + s + ")");
            }
            Thread.sleep(250);
        }
    }
}
