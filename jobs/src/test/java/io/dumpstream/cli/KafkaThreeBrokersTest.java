package io.dumpstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Collectors;

import io.dumpstream.local.LocalKafka;
import io.dumpstream.options.UsageException;
import io.dumpstream.publish.PublisherConfig;
import io.dumpstream.testing.ChildProcesses;
import io.dumpstream.testing.TopicReader;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three {@code kafka --voters} processes on loopback form one cluster (every node a broker and a
 * KRaft voter): the topic has 3 replicas and min.insync.replicas 2; a publisher with the project's
 * producer settings (acks=all, idempotence) goes on through the SIGKILL of a partition leader and
 * every record lands exactly once; with two of the three brokers down a write is refused, not
 * acknowledged; the last node still stops on SIGTERM; once all three are back the topic holds every
 * acknowledged record once and nothing else. Prints each broker's start time and resident memory.
 */
class KafkaThreeBrokersTest {
    private static final String TOPIC = "l1dump.v1";
    private static final int RECORDS = 1500;
    /** The heap a broker gets; C1 only, to start three JVMs on two cores with less CPU (about 5 s instead of 8 each). */
    private static final List<String> JVM = List.of("-Xmx256m", "-XX:TieredStopAtLevel=1");

    @Test
    void anAcknowledgedWriteSurvivesTheLossOfOneBrokerAndTwoLostRefuseWrites(@TempDir Path dir) throws Exception {
        int[] ports = freePorts(6);
        String voters = "1@127.0.0.1:" + ports[3] + ",2@127.0.0.1:" + ports[4] + ",3@127.0.0.1:" + ports[5];
        String bootstrap = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1] + ",127.0.0.1:" + ports[2];
        Map<Integer, Process> nodes = new TreeMap<>();
        Map<Integer, Long> launched = new TreeMap<>();
        for (int id = 1; id <= 3; id++) {
            launched.put(id, System.nanoTime());
            nodes.put(id, startNode(id, ports[id - 1], voters, dir));
        }
        try {
            Map<Integer, String> started = new TreeMap<>();
            for (int id = 1; id <= 3; id++) {
                started.put(id, awaitStarted(nodes.get(id), dir.resolve("node-" + id + ".out")));
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - launched.get(id));
                System.out.printf("broker %d (%s): started %d ms after launch (3 JVMs starting at once on this"
                        + " machine), %.1f s of CPU, RSS %d MiB%n", id, String.join(" ", JVM), ms,
                        cpuSeconds(nodes.get(id)), rssKib(nodes.get(id)) / 1024);
            }
            String clusterId = LocalKafka.builder().nodeId(1).voters(voters).dataDir(dir.resolve("node-1")).build()
                    .clusterId();
            for (int id = 1; id <= 3; id++) {
                String line = started.get(id);
                assertTrue(line.startsWith("kafka broker at 127.0.0.1:" + ports[id - 1] + " (data "
                        + dir.resolve("node-" + id) + ") started in "), line);
                assertTrue(line.endsWith(" ms; topic " + TOPIC + "; node " + id + " of voters " + voters
                        + ", cluster id " + clusterId + ", replication factor 3, min.insync.replicas 2; Ctrl-C to stop"),
                        line);
            }

            int leader;
            try (Admin admin = admin(bootstrap)) {
                // a replica placed on a broker registered but not yet unfenced joins the ISR once it fetches
                TopicDescription d = describe(admin);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (d.partitions().stream().anyMatch(p -> p.isr().size() < 3) && System.nanoTime() < deadline) {
                    Thread.sleep(200);
                    d = describe(admin);
                }
                assertEquals(3, d.partitions().size());
                for (TopicPartitionInfo p : d.partitions()) {
                    assertEquals(3, p.replicas().size(), p.toString());
                    assertEquals(3, p.isr().size(), p.toString());
                }
                leader = d.partitions().get(0).leader().id();
                ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, TOPIC);
                assertEquals("2", admin.describeConfigs(List.of(topic)).all().get(30, TimeUnit.SECONDS).get(topic)
                        .get("min.insync.replicas").value());
                ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, "1");
                Config b = admin.describeConfigs(List.of(broker)).all().get(30, TimeUnit.SECONDS).get(broker);
                assertEquals(Map.of("default.replication.factor", "3", "min.insync.replicas", "2",
                                "offsets.topic.replication.factor", "3", "transaction.state.log.replication.factor", "3",
                                "transaction.state.log.min.isr", "2"),
                        Map.of("default.replication.factor", b.get("default.replication.factor").value(),
                                "min.insync.replicas", b.get("min.insync.replicas").value(),
                                "offsets.topic.replication.factor", b.get("offsets.topic.replication.factor").value(),
                                "transaction.state.log.replication.factor",
                                b.get("transaction.state.log.replication.factor").value(),
                                "transaction.state.log.min.isr", b.get("transaction.state.log.min.isr").value()));
            }

            // the settings publish, agent and simulate produce with
            Properties producer = PublisherConfig.builder(bootstrap).build().producerProperties();
            assertEquals("all", producer.getProperty(ProducerConfig.ACKS_CONFIG));
            assertEquals("true", producer.getProperty(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG));
            AtomicInteger acked = new AtomicInteger();
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            long killedAt = 0;
            long t0 = System.nanoTime();
            try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(producer)) {
                for (int i = 0; i < RECORDS; i++) {
                    sent.add(p.send(new ProducerRecord<>(TOPIC, bytes("k" + i), bytes("v" + i)), (m, e) -> {
                        if (e == null) {
                            acked.incrementAndGet();
                        }
                    }));
                    if (killedAt == 0 && acked.get() >= RECORDS / 5) {
                        nodes.get(leader).destroyForcibly(); // SIGKILL, with records in flight
                        killedAt = System.nanoTime();
                        System.out.printf("SIGKILLed broker %d (leader of partition 0) after %d acks, %d sent%n",
                                leader, acked.get(), i + 1);
                    }
                    Thread.sleep(3);
                }
                for (Future<RecordMetadata> f : sent) {
                    f.get(120, TimeUnit.SECONDS); // every send acknowledged by acks=all, none failed
                }
            }
            assertTrue(killedAt != 0, "a broker was killed mid-publish");
            assertTrue(nodes.get(leader).waitFor(30, TimeUnit.SECONDS));
            System.out.printf("%d records acknowledged in %d ms, %d ms of them after the SIGKILL%n", RECORDS,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt));

            Map<String, Long> expected = new TreeMap<>();
            for (int i = 0; i < RECORDS; i++) {
                expected.put("k" + i + "=v" + i, 1L);
            }
            assertEquals(expected, landed(bootstrap), "every record exactly once");

            int survivor;
            try (Admin admin = admin(bootstrap)) {
                for (TopicPartitionInfo p : describe(admin).partitions()) {
                    assertTrue(p.leader() != null && p.leader().id() != leader, p.toString());
                    assertEquals(2, p.isr().size(), p.toString());
                }
                survivor = describe(admin).partitions().get(0).leader().id();
            }
            for (int id = 1; id <= 3; id++) {
                if (nodes.get(id).isAlive()) {
                    System.out.printf("broker %d after the run: RSS %d MiB%n", id, rssKib(nodes.get(id)) / 1024);
                }
            }
            int second = nodes.keySet().stream().filter(id -> id != leader && id != survivor).findFirst().orElseThrow();

            // A producer made while two brokers (a quorum) are up gets its producer id now: made after the second
            // broker is gone, its InitProducerId could wait for a controller quorum that no longer exists, and its
            // write would then neither fail nor succeed (CI saw a 60 s wait). Its first record is acknowledged.
            Properties refused = new Properties();
            refused.putAll(producer);
            refused.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + ports[survivor - 1]);
            refused.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "3000");
            refused.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "8000");
            refused.put(ProducerConfig.LINGER_MS_CONFIG, "0");
            KafkaProducer<byte[], byte[]> refusing = new KafkaProducer<>(refused);
            try {
                refusing.send(new ProducerRecord<>(TOPIC, 0, bytes("before"), bytes("one down"))).get(60, TimeUnit.SECONDS);
                expected.put("before=one down", 1L);

                nodes.get(second).destroy(); // SIGTERM: a controlled shutdown leaves the ISR while the quorum still holds
                assertTrue(nodes.get(second).waitFor(60, TimeUnit.SECONDS));

                Future<RecordMetadata> f = refusing.send(new ProducerRecord<>(TOPIC, 0, bytes("after"),
                        bytes("two down")));
                ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(60, TimeUnit.SECONDS));
                System.out.printf("with brokers %d and %d down the write to partition 0 failed: %s%n", leader, second,
                        e.getCause());
                // NotEnoughReplicas answers, until the delivery timeout expires the batch
                assertInstanceOf(org.apache.kafka.common.errors.RetriableException.class, e.getCause());
            } finally {
                // a plain close() waits without end for an idempotent producer's pending requests to a cluster
                // that cannot answer them
                refusing.close(java.time.Duration.ofSeconds(10));
            }

            // the last node stops on SIGTERM though no quorum can approve its controlled shutdown
            long term = System.nanoTime();
            nodes.get(survivor).destroy();
            assertTrue(nodes.get(survivor).waitFor(90, TimeUnit.SECONDS), "the last node exits on SIGTERM");
            System.out.printf("the last node exited %d ms after SIGTERM%n",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - term));
            assertTrue(Files.readString(dir.resolve("node-" + survivor + ".err")).contains("kafka node " + survivor
                    + " at 127.0.0.1:" + ports[survivor - 1] + ": no controller quorum approved the controlled shutdown"
                    + " within 20 s; exiting without it (the log is recovered on the next start)"));

            // all three come back with their data: the refused record was never appended, the others are all there once.
            // The two that went down first start while the last one (sole leader of the partitions) is still down: a
            // restarted node must not wait for partitions that another node leads
            for (int id : List.of(leader, second)) {
                nodes.put(id, startNode(id, ports[id - 1], voters, dir));
            }
            for (int id : List.of(leader, second)) {
                awaitStarted(nodes.get(id), dir.resolve("node-" + id + ".out"));
            }
            nodes.put(survivor, startNode(survivor, ports[survivor - 1], voters, dir));
            awaitStarted(nodes.get(survivor), dir.resolve("node-" + survivor + ".out"));
            try (Admin admin = admin(bootstrap)) {
                // the partitions the last node led come back with it, once it is registered again
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                TopicDescription d = describe(admin);
                while (d.partitions().stream().anyMatch(p -> p.leader() == null || p.leader().id() < 0)
                        && System.nanoTime() < deadline) {
                    Thread.sleep(200);
                    d = describe(admin);
                }
                assertTrue(d.partitions().stream().allMatch(p -> p.leader() != null && p.leader().id() >= 0),
                        d.toString());
            }
            assertEquals(expected, landed(bootstrap), "after the restarts, every acknowledged record once, no other");
        } finally {
            for (Process p : nodes.values()) {
                p.destroyForcibly();
            }
        }
    }

    @Test
    void badClusterOptionsStopWithOneLine(@TempDir Path dir) {
        assertEquals("--voters voter '1@h' is not ID@HOST:PORT", usage("--voters", "1@h", "--dir", dir.toString()));
        assertEquals("--voters voter id 1 appears twice in '1@a:1,1@b:2'",
                usage("--voters", "1@a:1,1@b:2", "--dir", dir.toString()));
        assertEquals("--node-id 4 is not one of --voters 1@a:1,2@b:2,3@c:3",
                usage("--voters", "1@a:1,2@b:2,3@c:3", "--node-id", "4", "--dir", dir.toString()));
        assertEquals("--cluster-id cluster id must be a Kafka UUID (22 characters of URL-safe base64), got 'abc'",
                usage("--voters", "1@a:1,2@b:2,3@c:3", "--cluster-id", "abc", "--dir", dir.toString()));
        assertEquals("--cluster-id needs --voters (a single node formats with a random id)",
                usage("--cluster-id", "abc", "--dir", dir.toString()));
    }

    @Test
    void theNodesOfOneVoterListAgreeOnTheClusterIdAndRefuseAnotherClustersData(@TempDir Path dir) throws Exception {
        String voters = "1@127.0.0.1:19093,2@127.0.0.1:19094,3@127.0.0.1:19095";
        String id;
        try (LocalKafka one = LocalKafka.builder().nodeId(1).voters(voters).build();
             LocalKafka three = LocalKafka.builder().nodeId(3).voters("3@127.0.0.1:19095, 1@127.0.0.1:19093,"
                     + "2@127.0.0.1:19094").build()) {
            id = one.clusterId();
            assertEquals(id, three.clusterId());
            assertEquals(voters, three.voters());
            assertEquals(3, three.replicationFactor());
            assertEquals(2, three.minInsyncReplicas());
        }
        try (LocalKafka other = LocalKafka.builder().nodeId(1).voters("1@127.0.0.1:19093,2@127.0.0.1:19094").build()) {
            assertTrue(!id.equals(other.clusterId()));
            assertEquals(2, other.replicationFactor());
            assertEquals(1, other.minInsyncReplicas());
        }
        // a data dir formatted for another cluster (here: a single node's random id) is refused before Kafka starts
        Path data = dir.resolve("node-1");
        Files.createDirectories(data.resolve("kraft-logs"));
        Files.writeString(data.resolve("kraft-logs/meta.properties"), "version=1\nnode.id=1\ncluster.id=AAAAAAAAAAAAAAAAAAAAAQ\n");
        LocalKafka node = LocalKafka.builder().nodeId(1).voters(voters).dataDir(data).build();
        assertEquals("Kafka data dir " + data + " belongs to cluster.id AAAAAAAAAAAAAAAAAAAAAQ, not " + id
                + " (derived from the voters " + voters + ")", assertThrows(java.io.IOException.class, node::start)
                .getMessage());
        LocalKafka node2 = LocalKafka.builder().nodeId(2).voters(voters).dataDir(data).build();
        assertEquals("Kafka data dir " + data + " belongs to node.id 1, not node 2",
                assertThrows(java.io.IOException.class, node2::start).getMessage());
    }

    private static String usage(String... argv) {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        PrintStream ps = new PrintStream(sink, true, StandardCharsets.UTF_8);
        return assertThrows(UsageException.class, () -> new KafkaCommand().run(argv, ps, ps)).getMessage();
    }

    private static Process startNode(int id, int port, String voters, Path dir) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.addAll(JVM);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName(), "kafka", "--node-id",
                Integer.toString(id), "--port", Integer.toString(port), "--voters", voters, "--dir",
                dir.resolve("node-" + id).toString(), "--partitions", "3"));
        return ChildProcesses.track(new ProcessBuilder(cmd)
                .redirectError(dir.resolve("node-" + id + ".err").toFile())
                .redirectOutput(dir.resolve("node-" + id + ".out").toFile()).start());
    }

    /** The command's own "kafka broker at" line, once printed. */
    private static String awaitStarted(Process p, Path out) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (p.isAlive() && System.nanoTime() < deadline) {
            String line = Files.readAllLines(out).stream().filter(l -> l.startsWith("kafka broker at ")).findFirst()
                    .orElse(null);
            if (line != null) {
                return line;
            }
            Thread.sleep(100);
        }
        Path err = out.resolveSibling(out.getFileName().toString().replace(".out", ".err"));
        throw new AssertionError("broker did not start (alive " + p.isAlive() + "); its stderr: " + Files.readString(err)
                + "; its stdout: " + Files.readString(out));
    }

    /** Every record of the topic as key=value, with its count. */
    private static Map<String, Long> landed(String bootstrap) {
        return TopicReader.readAll(bootstrap, TOPIC).stream()
                .map(r -> new String(r.key(), StandardCharsets.UTF_8) + "=" + new String(r.value(), StandardCharsets.UTF_8))
                .collect(Collectors.groupingBy(Function.identity(), TreeMap::new, Collectors.counting()));
    }

    private static TopicDescription describe(Admin admin) throws Exception {
        return admin.describeTopics(List.of(TOPIC)).allTopicNames().get(30, TimeUnit.SECONDS).get(TOPIC);
    }

    private static Admin admin(String bootstrap) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return Admin.create(p);
    }

    private static long rssKib(Process p) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(p.pid()), "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new AssertionError("no VmRSS for pid " + p.pid());
    }

    /** User plus system CPU time of {@code p} so far, from /proc (clock ticks of 1/100 s). */
    private static double cpuSeconds(Process p) throws Exception {
        String stat = Files.readString(Path.of("/proc", Long.toString(p.pid()), "stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static int[] freePorts(int n) throws Exception {
        List<ServerSocket> held = new ArrayList<>();
        try {
            int[] ports = new int[n];
            for (int i = 0; i < n; i++) {
                ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                held.add(s);
                ports[i] = s.getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket s : held) {
                s.close();
            }
        }
    }
}
