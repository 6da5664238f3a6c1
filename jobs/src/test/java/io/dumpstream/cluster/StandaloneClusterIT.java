package io.dumpstream.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.local.LocalKafka;
import io.dumpstream.testing.SharedKafka;
import io.dumpstream.testing.Traffic;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
 * broker, one TaskManager SIGKILLed mid-stream. Checks the exact multiset that landed, the job's own
 * counters on the Prometheus endpoints (scraped once), and that no cluster process outlives the test.
 */
@Tag("cluster")
class StandaloneClusterIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration LONG = Duration.ofSeconds(240);

    @TempDir
    Path dir;

    @Test
    void theClusterJarIngestsExactlyOnceWhileATaskManagerIsKilled() throws Exception {
        assertTrue(Files.isRegularFile(ClusterScript.JAR), "the cluster jar is built: " + ClusterScript.JAR);
        // the broker starts while the cluster does
        CompletableFuture<LocalKafka> broker = CompletableFuture.supplyAsync(SharedKafka::get);
        String topic = "cluster-it";
        Path out = dir.resolve("out");
        ClusterScript cluster = new ClusterScript(dir.resolve("cluster"));
        int restPort = ClusterScript.freePortBlock(12);
        List<Long> pids = new ArrayList<>();
        long t0 = System.nanoTime();
        try {
            List<String> started = cluster.run(Duration.ofSeconds(300), "start", "--taskmanagers", "2", "--slots", "2",
                    "--rest-port", Integer.toString(restPort), "--owner-pid", Long.toString(ProcessHandle.current().pid()));
            double startSeconds = (System.nanoTime() - t0) / 1e9;
            LocalKafka kafka = broker.get(LONG.toSeconds(), TimeUnit.SECONDS);
            kafka.createTopic(topic, 2);
            kafka.createTopic(topic + ".dlq", 1);
            Traffic traffic = new Traffic(kafka.bootstrapServers(), topic, "cluster/it", 2, 8, 8 * 1024, 32 * 1024, 61);
            String url = "http://127.0.0.1:" + restPort;
            assertEquals(url, started.get(started.size() - 1), "start prints the REST URL last");
            pids.addAll(cluster.pids());
            assertEquals(3, pids.size(), "a JobManager and two TaskManagers");
            assertEquals(2, json(cluster, url + "/taskmanagers").get("taskmanagers").size(), "two TaskManagers registered");

            List<String> submitted = cluster.run(Duration.ofSeconds(300), "submit",
                    "--bootstrap", kafka.bootstrapServers(), "--topic", topic, "--group", "cluster-it",
                    "--out", out.toString(), "--checkpoints", dir.resolve("checkpoints").toString(),
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
            boolean inFlight = publisher.isAlive();
            System.out.println("cluster: " + killed.get(killed.size() - 1) + " while publishing: " + inFlight);
            assertTrue(killed.get(killed.size() - 1).matches("killed tm-[12] \\(pid \\d+\\)"), "kill-taskmanager: " + killed);

            traffic.join(publisher, LONG.toMillis());
            await(() -> landed(out) >= traffic.dumpsSent(), cluster, jobUrl, "every dump landed");
            System.out.printf("cluster: started in %.1f s, job RUNNING at %.1f s, every dump landed %.1f s after the kill%n",
                    startSeconds, runningSeconds, (System.nanoTime() - killedAt) / 1e9);
            long completed = completedCheckpoints(cluster, jobUrl);
            // two more checkpoints: anything landing twice would have been committed by then
            await(() -> completedCheckpoints(cluster, jobUrl) >= completed + 2, cluster, jobUrl, "two more checkpoints");
            assertTrue(inFlight, "the TaskManager was killed mid-stream");
            JsonNode failures = json(cluster, jobUrl + "/exceptions").path("exceptionHistory").path("entries");
            assertFalse(failures.isEmpty(), "the job failed over after the kill (exception history is empty)");
            assertEquals("RUNNING", state(cluster, jobUrl), "the job recovered");
            traffic.assertExactlyOnce("standalone cluster, a TaskManager SIGKILLed", out);

            assertJobCounters(cluster, restPort, job, traffic);
        } finally {
            List<String> stopped = cluster.run(Duration.ofSeconds(120), "stop");
            System.out.println("cluster: " + String.join(" ", stopped));
        }
        for (long pid : pids) {
            assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false),
                    "cluster process " + pid + " outlived stop");
        }
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

    private static long landed(Path out) {
        try {
            return Traffic.landedDumps(out);
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
