package io.dumpstream.local;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialAlteration;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.MetadataVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real Apache Kafka node (KRaft, combined broker and controller) running in this JVM, by default
 * alone on loopback, for local runs and tests.
 *
 * <p>The broker and controller ports are fixed when the object is built, so {@link #stop()} then
 * {@link #start()} (or {@link #restart()}) brings the same broker back on the same address with the
 * same data: what clients see as "broker down, then up". Limits fit 1 MiB chunks and manifests up
 * to 16 MiB; the transaction and offsets topics use one replica so transactional producers work.
 *
 * <p>With {@link Builder#voters} several such nodes, each in its own process (usually on its own host),
 * form one cluster: every node is a broker and a voter of the KRaft controller quorum, all format
 * their storage with one cluster id, and topics get {@link #replicationFactor()} replicas (up to 3)
 * with {@code min.insync.replicas} {@link #minInsyncReplicas()}: with 3 nodes an {@code acks=all}
 * write is acknowledged once 2 replicas have it, so one node can be lost without losing an
 * acknowledged record or stopping writes, and with two lost writes stop rather than go on unreplicated.
 * The internal offsets and transaction topics get the same replication.
 *
 * <p>With {@link Builder#saslUsers} the client port takes SASL_PLAINTEXT with SCRAM-SHA-256 and
 * SCRAM-SHA-512 only. Each start then creates (or updates) the SCRAM credentials of the given users
 * with the Admin API over an internal PLAINTEXT listener on another loopback port, which also
 * carries the inter-broker traffic; {@link #admin()} uses that listener. The credentials are stored
 * salted and hashed in the cluster metadata; no password is written to a file or a log.
 */
public final class LocalKafka implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LocalKafka.class);

    /** Largest record batch the broker accepts: a 16 MiB manifest plus 2 MiB of headroom. */
    public static final int MAX_MESSAGE_BYTES = 18 * 1024 * 1024;
    private static final int DEFAULT_NODE_ID = 1;
    /** The most replicas a topic gets, however many nodes the cluster has. */
    public static final int MAX_REPLICATION_FACTOR = 3;
    private static final String CLUSTER_ID_FILE = "local-kafka.cluster-id";
    private static final String LOOPBACK = "127.0.0.1";
    /** How long {@link #stop()} waits for a cluster node's shutdown; a healthy quorum approves it in seconds. */
    public static final Duration CLUSTER_SHUTDOWN_WAIT = Duration.ofSeconds(20);
    /** The SASL mechanisms of the client listener with {@link Builder#saslUsers}; every user gets both. */
    public static final List<String> SCRAM_MECHANISMS = List.of("SCRAM-SHA-256", "SCRAM-SHA-512");
    private static final int SCRAM_ITERATIONS = 8192;

    private final int nodeId;
    private final String host;
    private final int port;
    private final String controllerHost;
    private final int controllerPort;
    /** The controller quorum, sorted by node id; one voter (this node) unless {@link Builder#voters} was given. */
    private final List<Voter> voters;
    private final String clusterId;
    private final Path dataDir;
    private final boolean deleteOnClose;
    private final int defaultPartitions;
    private final Map<String, String> overrides;
    private final Map<String, String> saslUsers;
    private final int internalPort;
    private KafkaRaftServer server;
    private Duration lastStartup = Duration.ZERO;

    private LocalKafka(Builder b) throws IOException {
        this.nodeId = b.nodeId;
        Voter self = b.voters.stream().filter(v -> v.id() == b.nodeId).findFirst().orElse(null);
        if (!b.voters.isEmpty() && self == null) {
            throw new IllegalArgumentException("node id " + b.nodeId + " is not one of the voters " + voterList(b.voters));
        }
        if (self != null && b.controllerPort != 0 && b.controllerPort != self.port()) {
            throw new IllegalArgumentException("controller port " + b.controllerPort + " differs from this node's voter "
                    + self);
        }
        if (b.voters.size() > 1 && !b.saslUsers.isEmpty()) {
            throw new IllegalArgumentException("SASL users are supported on a single node only, not with "
                    + b.voters.size() + " voters");
        }
        this.host = b.host != null ? b.host : self != null ? self.host() : LOOPBACK;
        this.port = b.port == 0 ? freePort(host) : b.port;
        if (self != null) {
            this.controllerHost = self.host();
            this.controllerPort = self.port();
        } else {
            this.controllerHost = host;
            this.controllerPort = b.controllerPort == 0 ? freePort(host, this.port) : b.controllerPort;
        }
        if (controllerHost.equals(host) && controllerPort == port) {
            throw new IllegalArgumentException("client port and controller port are both " + host + ":" + port);
        }
        this.voters = self != null ? List.copyOf(b.voters) : List.of(new Voter(nodeId, controllerHost, controllerPort));
        this.clusterId = b.clusterId;
        if (b.dataDir == null) {
            this.dataDir = Files.createTempDirectory("local-kafka-");
            this.deleteOnClose = true;
        } else {
            this.dataDir = b.dataDir.toAbsolutePath();
            this.deleteOnClose = false;
        }
        this.defaultPartitions = b.defaultPartitions;
        this.overrides = Map.copyOf(b.overrides);
        this.saslUsers = Map.copyOf(b.saslUsers);
        this.internalPort = saslUsers.isEmpty() ? this.port : freePort(host, this.port, this.controllerPort);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Starts a broker on a free port with a temporary data directory removed by {@link #close()}. */
    public static LocalKafka startEphemeral() throws IOException {
        return builder().build().start();
    }

    /** Formats the data directory on first use, then starts the broker and waits until it serves clients. */
    public synchronized LocalKafka start() throws IOException {
        if (server != null) {
            throw new IllegalStateException("broker on port " + port + " is already running");
        }
        long t0 = System.nanoTime();
        Map<String, String> props = brokerProperties();
        KafkaConfig config = new KafkaConfig(props, false);
        formatIfNeeded();
        KafkaRaftServer s = new KafkaRaftServer(config, Time.SYSTEM);
        try {
            s.startup();
        } catch (RuntimeException e) {
            shutdownQuietly(s);
            throw new IOException("Kafka broker on " + host + ":" + port + " (dir " + dataDir + ") failed to start: "
                    + e.getMessage(), e);
        }
        server = s;
        try {
            // a cluster node serves once a majority of the voters is up: its peers may start minutes later
            awaitReady(voters.size() > 1 ? Duration.ofMinutes(10) : Duration.ofSeconds(60));
            if (!saslUsers.isEmpty()) {
                applyScramCredentials(Duration.ofSeconds(60));
            }
        } catch (IOException | RuntimeException e) {
            stop(); // not left running behind a failed start
            throw e;
        }
        lastStartup = Duration.ofNanos(System.nanoTime() - t0);
        LOG.info("Kafka broker up at {} (data {}) in {} ms", bootstrapServers(), dataDir, lastStartup.toMillis());
        return this;
    }

    /**
     * Stops the broker cleanly and waits for it; the data directory is kept. No-op when stopped.
     *
     * <p>In a cluster the broker first asks the active controller to move its leaderships away, and
     * Kafka waits up to 5 minutes for the answer; with no controller quorum left (the other voters
     * down or cut off) none comes. So a cluster node waits {@link #CLUSTER_SHUTDOWN_WAIT} at most and
     * then returns false, the shutdown going on in a daemon thread: a process that then exits leaves
     * its log to be recovered on the next start, as after a crash.
     *
     * @return true when the broker stopped, false when a cluster node gave up waiting
     */
    public synchronized boolean stop() {
        if (server == null) {
            return true;
        }
        long t0 = System.nanoTime();
        KafkaRaftServer s = server;
        server = null;
        if (voters.size() == 1) {
            shutdownQuietly(s);
        } else {
            Thread t = new Thread(() -> shutdownQuietly(s), "kafka-node-" + nodeId + "-shutdown");
            t.setDaemon(true);
            t.start();
            try {
                t.join(CLUSTER_SHUTDOWN_WAIT.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (t.isAlive()) {
                LOG.warn("Kafka node {} at {} not stopped after {} s (no controller quorum to approve its controlled"
                        + " shutdown?); leaving it", nodeId, bootstrapServers(), CLUSTER_SHUTDOWN_WAIT.toSeconds());
                return false;
            }
        }
        LOG.info("Kafka broker at {} stopped in {} ms", bootstrapServers(),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        return true;
    }

    /** {@link #stop()} then {@link #start()} on the same ports and data directory. */
    public synchronized LocalKafka restart() throws IOException {
        stop();
        return start();
    }

    public synchronized boolean isRunning() {
        return server != null;
    }

    /** {@code <host>:<port>} of this node ({@code 127.0.0.1:<port>} by default); valid before start and after stop. */
    public String bootstrapServers() {
        return host + ":" + port;
    }

    public int nodeId() {
        return nodeId;
    }

    /** The controller quorum, {@code id@host:port} comma-separated, sorted by id. */
    public String voters() {
        return voterList(voters);
    }

    /** The cluster id this node's storage was (or will be) formatted with; null before the first start formats it. */
    public String clusterId() throws IOException {
        Path meta = logDir().resolve("meta.properties");
        if (Files.exists(meta)) {
            return metaProperties(meta).getProperty("cluster.id");
        }
        return wantedClusterId();
    }

    /** The cluster id given, or with several voters the derived one; null: a random one at format. */
    private String wantedClusterId() {
        return clusterId != null ? clusterId : voters.size() > 1 ? derivedClusterId(voters) : null;
    }

    /** Replicas of the topics this cluster creates: the number of voters, at most {@value #MAX_REPLICATION_FACTOR}. */
    public int replicationFactor() {
        return Math.min(MAX_REPLICATION_FACTOR, voters.size());
    }

    /**
     * {@code min.insync.replicas} of every topic: one less than {@link #replicationFactor()} (2 of 3), at
     * least 1, so an {@code acks=all} write survives the loss of any one replica.
     */
    public int minInsyncReplicas() {
        return Math.max(1, replicationFactor() - 1);
    }

    public int port() {
        return port;
    }

    /** True when the client port takes SASL (SCRAM) only. */
    public boolean sasl() {
        return !saslUsers.isEmpty();
    }

    /** The user names given SCRAM credentials; empty without SASL. */
    public java.util.Set<String> saslUserNames() {
        return new java.util.TreeSet<>(saslUsers.keySet());
    }

    /**
     * Where {@link #admin()} connects: the client address, or with SASL the internal PLAINTEXT
     * listener {@code <host>:<internal port>}.
     */
    public String internalBootstrapServers() {
        return host + ":" + internalPort;
    }

    /** Client properties for {@code user} on this broker: SASL_PLAINTEXT with {@code mechanism}; empty without SASL. */
    public Properties clientProperties(String user, String mechanism) {
        Properties p = new Properties();
        if (sasl()) {
            String password = saslUsers.get(user);
            if (password == null) {
                throw new IllegalArgumentException("no SASL user '" + user + "' on the broker at " + bootstrapServers());
            }
            p.setProperty("security.protocol", "SASL_PLAINTEXT");
            p.setProperty("sasl.mechanism", mechanism);
            p.setProperty("sasl.jaas.config", scramJaas(user, password));
        }
        return p;
    }

    /** A client {@code sasl.jaas.config} value for SCRAM. */
    public static String scramJaas(String user, String password) {
        return "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + jaasEscape(user)
                + "\" password=\"" + jaasEscape(password) + "\";";
    }

    private static String jaasEscape(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"");
    }

    public Path dataDir() {
        return dataDir;
    }

    /** How long the last {@link #start()} took, formatting included. */
    public Duration lastStartupTime() {
        return lastStartup;
    }

    /**
     * Creates a topic (no-op if it exists) with {@link #replicationFactor()} replicas and waits until
     * every partition has a leader. In a cluster it waits (up to 60 s) for enough brokers to place
     * the replicas; a topic that already exists in a cluster is not waited for (a node restarted before
     * the others must start while they are still down).
     */
    public void createTopic(String name, int partitions) {
        if (partitions < 1) {
            throw new IllegalArgumentException("partitions must be >= 1, got " + partitions);
        }
        NewTopic topic = new NewTopic(name, partitions, (short) replicationFactor());
        if (voters.size() > 1) {
            topic.configs(Map.of("min.insync.replicas", Integer.toString(minInsyncReplicas())));
        }
        try (Admin admin = admin()) {
            long placeDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                try {
                    admin.createTopics(List.of(topic)).all().get(30, TimeUnit.SECONDS);
                    break;
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof TopicExistsException) {
                        if (voters.size() > 1) {
                            // a restarted node of a cluster: partitions led by nodes not back yet get their
                            // leader when those nodes return; this broker must not wait for (or die of) them
                            return;
                        }
                        break;
                    }
                    // the other nodes' brokers are not all registered yet
                    if (!(e.getCause() instanceof InvalidReplicationFactorException)
                            || System.nanoTime() > placeDeadline) {
                        throw new IllegalStateException("creating topic " + name + " with " + replicationFactor()
                                + " replicas failed: " + e.getCause(), e.getCause());
                    }
                }
                Thread.sleep(200);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                try {
                    TopicDescription d = admin.describeTopics(List.of(name)).allTopicNames().get(10, TimeUnit.SECONDS)
                            .get(name);
                    if (d.partitions().stream().allMatch(p -> p.leader() != null && p.leader().id() >= 0)) {
                        // Metadata can name the leader before its replica manager leads the partition; a
                        // produce then fails NOT_LEADER and an idempotent producer's retry can get stuck on
                        // OUT_OF_ORDER_SEQUENCE_NUMBER. ListOffsets is answered by the leader itself.
                        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
                        d.partitions().forEach(p -> latest.put(new TopicPartition(name, p.partition()),
                                OffsetSpec.latest()));
                        admin.listOffsets(latest).all().get(10, TimeUnit.SECONDS);
                        return;
                    }
                } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
                    // not visible in metadata, or not led yet, or the answer is slow on a busy machine
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("topic " + name + " has no leader after 60 s");
                }
                Thread.sleep(50);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating topic " + name, e);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("creating topic " + name + " timed out", e);
        }
    }

    /** An admin client for this broker (with SASL: on the internal PLAINTEXT listener); the caller closes it. */
    public Admin admin() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, internalBootstrapServers());
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        return Admin.create(p);
    }

    /** Stops the broker; a temporary data directory is deleted. */
    @Override
    public void close() {
        stop();
        if (deleteOnClose) {
            deleteRecursively(dataDir);
        }
    }

    private Map<String, String> brokerProperties() {
        String max = Integer.toString(MAX_MESSAGE_BYTES);
        Map<String, String> p = new HashMap<>();
        p.put("process.roles", "broker,controller");
        p.put("node.id", Integer.toString(nodeId));
        p.put("controller.quorum.voters", voters());
        p.put("controller.listener.names", "CONTROLLER");
        String controller = ",CONTROLLER://" + controllerHost + ":" + controllerPort;
        if (saslUsers.isEmpty()) {
            p.put("listeners", "PLAINTEXT://" + host + ":" + port + controller);
            p.put("advertised.listeners", "PLAINTEXT://" + host + ":" + port);
            p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
            p.put("inter.broker.listener.name", "PLAINTEXT");
        } else {
            p.put("listeners", "CLIENT://" + host + ":" + port + ",INTERNAL://" + host + ":" + internalPort
                    + controller);
            p.put("advertised.listeners", "CLIENT://" + host + ":" + port + ",INTERNAL://" + host + ":" + internalPort);
            p.put("listener.security.protocol.map",
                    "CLIENT:SASL_PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT");
            p.put("inter.broker.listener.name", "INTERNAL");
            p.put("listener.name.client.sasl.enabled.mechanisms", String.join(",", SCRAM_MECHANISMS));
            for (String m : SCRAM_MECHANISMS) {
                p.put("listener.name.client." + m.toLowerCase(java.util.Locale.ROOT) + ".sasl.jaas.config",
                        "org.apache.kafka.common.security.scram.ScramLoginModule required;");
            }
        }
        p.put("log.dirs", logDir().toString());
        p.put("num.partitions", Integer.toString(defaultPartitions));
        String rf = Integer.toString(replicationFactor());
        String minIsr = Integer.toString(minInsyncReplicas());
        p.put("default.replication.factor", rf);
        p.put("min.insync.replicas", minIsr);
        p.put("auto.create.topics.enable", "true");
        p.put("offsets.topic.replication.factor", rf);
        p.put("offsets.topic.num.partitions", "1");
        p.put("transaction.state.log.replication.factor", rf);
        p.put("transaction.state.log.min.isr", minIsr);
        p.put("transaction.state.log.num.partitions", "1");
        p.put("share.coordinator.state.topic.replication.factor", rf);
        p.put("share.coordinator.state.topic.min.isr", minIsr);
        p.put("group.initial.rebalance.delay.ms", "0");
        p.put("message.max.bytes", max);
        p.put("replica.fetch.max.bytes", max);
        p.put("replica.fetch.response.max.bytes", Integer.toString(2 * MAX_MESSAGE_BYTES));
        p.put("fetch.max.bytes", Integer.toString(4 * MAX_MESSAGE_BYTES));
        p.put("socket.request.max.bytes", Integer.toString(8 * MAX_MESSAGE_BYTES));
        // The cleaner only compacts the small internal topics here; its 128 MiB default buffer is waste.
        p.put("log.cleaner.dedupe.buffer.size", Integer.toString(8 * 1024 * 1024));
        p.put("num.network.threads", "2");
        p.put("num.io.threads", "4");
        p.put("log.flush.interval.messages", Long.toString(Long.MAX_VALUE));
        p.putAll(overrides);
        return p;
    }

    private Path logDir() {
        return dataDir.resolve("kraft-logs");
    }

    /**
     * Formats the storage on first use; a formatted directory must belong to this node and cluster
     * (Kafka would refuse it later with a less direct message).
     */
    private void formatIfNeeded() throws IOException {
        Path logDir = logDir();
        Path meta = logDir.resolve("meta.properties");
        if (Files.exists(meta)) {
            Properties m = metaProperties(meta);
            if (!Integer.toString(nodeId).equals(m.getProperty("node.id"))) {
                throw new IOException("Kafka data dir " + dataDir + " belongs to node.id " + m.getProperty("node.id")
                        + ", not node " + nodeId);
            }
            String wanted = wantedClusterId();
            if (wanted != null && !wanted.equals(m.getProperty("cluster.id"))) {
                throw new IOException("Kafka data dir " + dataDir + " belongs to cluster.id " + m.getProperty("cluster.id")
                        + ", not " + wanted + (clusterId == null ? " (derived from the voters " + voters() + ")" : ""));
            }
            return;
        }
        Files.createDirectories(logDir);
        String clusterId = wantedClusterId() != null ? wantedClusterId() : Uuid.randomUuid().toString();
        Formatter f = new Formatter()
                .setPrintStream(new PrintStream(java.io.OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8))
                .setNodeId(nodeId)
                .setClusterId(clusterId)
                .setDirectories(List.of(logDir.toString()))
                .setMetadataLogDirectory(logDir.toString())
                .setControllerListenerName("CONTROLLER")
                .setReleaseVersion(MetadataVersion.LATEST_PRODUCTION)
                .setUnstableFeatureVersionsEnabled(false)
                .setHasDynamicQuorum(false);
        try {
            f.run();
        } catch (Exception e) {
            throw new IOException("formatting Kafka storage in " + logDir + " failed: " + e.getMessage(), e);
        }
        Files.writeString(dataDir.resolve(CLUSTER_ID_FILE), clusterId + "\n");
        LOG.info("formatted Kafka storage in {} (cluster id {})", logDir, clusterId);
    }

    /**
     * Makes the users given the only SCRAM users: deletes the credentials of any other user (left
     * by an earlier start of this data directory), upserts every given user's credentials for both
     * mechanisms, then waits until each can log in on the client port.
     */
    private void applyScramCredentials(Duration timeout) throws IOException {
        try (Admin admin = admin()) {
            // one request per mechanism: a request may alter each user only once
            Map<ScramMechanism, List<UserScramCredentialAlteration>> deletions = new java.util.TreeMap<>();
            java.util.Set<String> removed = new java.util.TreeSet<>();
            for (UserScramCredentialsDescription d : admin.describeUserScramCredentials().all()
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS).values()) {
                if (!saslUsers.containsKey(d.name())) {
                    removed.add(d.name());
                    d.credentialInfos().forEach(i -> deletions.computeIfAbsent(i.mechanism(),
                            k -> new java.util.ArrayList<>()).add(new UserScramCredentialDeletion(d.name(),
                            i.mechanism())));
                }
            }
            for (List<UserScramCredentialAlteration> batch : deletions.values()) {
                admin.alterUserScramCredentials(batch).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            }
            if (!removed.isEmpty()) {
                LOG.info("removed the SCRAM credentials of users no longer listed: {}", removed);
            }
            for (String m : SCRAM_MECHANISMS) {
                List<UserScramCredentialAlteration> alterations = new java.util.ArrayList<>();
                for (Map.Entry<String, String> u : new java.util.TreeMap<>(saslUsers).entrySet()) {
                    alterations.add(new UserScramCredentialUpsertion(u.getKey(),
                            new ScramCredentialInfo(ScramMechanism.fromMechanismName(m), SCRAM_ITERATIONS),
                            u.getValue()));
                }
                admin.alterUserScramCredentials(alterations).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IOException("creating the SCRAM credentials of " + saslUserNames() + " on the broker at "
                    + bootstrapServers() + " failed: " + (e.getCause() == null ? e : e.getCause()), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while creating SCRAM credentials", e);
        }
        // the metadata log is applied in order: a login with the last mechanism's credentials shows
        // that the user's earlier records (deletions, the other mechanism) are applied too
        long deadline = System.nanoTime() + timeout.toNanos();
        for (String user : saslUserNames()) {
            awaitLogin(user, SCRAM_MECHANISMS.get(SCRAM_MECHANISMS.size() - 1), deadline);
        }
        LOG.info("SASL users {} can log in at {} with {}", saslUserNames(), bootstrapServers(), SCRAM_MECHANISMS);
    }

    private void awaitLogin(String user, String mechanism, long deadline) throws IOException {
        Properties p = clientProperties(user, mechanism);
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
        try {
            while (true) {
                try (Admin admin = Admin.create(p)) {
                    admin.describeCluster().nodes().get(10, TimeUnit.SECONDS);
                    return;
                } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
                    if (System.nanoTime() > deadline) {
                        throw new IOException("SASL user " + user + " cannot log in at " + bootstrapServers()
                                + " with " + mechanism + ": " + (e.getCause() == null ? e : e.getCause()), e);
                    }
                }
                Thread.sleep(100);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for SASL logins", e);
        }
    }

    private void awaitReady(Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Admin admin = admin()) {
            while (true) {
                try {
                    // this node's broker is registered and unfenced (in a cluster: once a quorum of voters runs)
                    if (admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).stream()
                            .anyMatch(n -> n.id() == nodeId)) {
                        return;
                    }
                } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
                    // not serving yet
                }
                if (System.nanoTime() > deadline) {
                    throw new IOException("Kafka broker at " + bootstrapServers() + " not ready after " + timeout);
                }
                Thread.sleep(50);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for the broker", e);
        }
    }

    private static void shutdownQuietly(KafkaRaftServer s) {
        try {
            s.shutdown();
            s.awaitShutdown();
        } catch (RuntimeException e) {
            LOG.warn("Kafka broker shutdown failed: {}", e.toString());
        }
    }

    private static Properties metaProperties(Path meta) throws IOException {
        Properties m = new Properties();
        try (var in = Files.newBufferedReader(meta, StandardCharsets.UTF_8)) {
            m.load(in);
        }
        return m;
    }

    /**
     * The cluster id of nodes given the same voters and no id: a name-based UUID of the sorted voter
     * list, so the nodes of one cluster agree without sharing a file.
     */
    static String derivedClusterId(List<Voter> voters) {
        java.util.UUID u = java.util.UUID.nameUUIDFromBytes(("dumpstream-kafka " + voterList(voters))
                .getBytes(StandardCharsets.UTF_8));
        return new Uuid(u.getMostSignificantBits(), u.getLeastSignificantBits()).toString();
    }

    private static String voterList(List<Voter> voters) {
        return voters.stream().map(Voter::toString).collect(java.util.stream.Collectors.joining(","));
    }

    /**
     * Parses a controller quorum {@code ID@HOST:PORT,ID@HOST:PORT,...} (Kafka's
     * {@code controller.quorum.voters}); the error names the entry and what is wrong with it.
     */
    public static List<Voter> parseVoters(String spec) {
        if (spec == null || spec.isBlank()) {
            throw new IllegalArgumentException("voters must be ID@HOST:PORT,... got '" + spec + "'");
        }
        Map<Integer, Voter> byId = new java.util.TreeMap<>();
        java.util.Set<String> addresses = new java.util.HashSet<>();
        for (String entry : spec.split(",", -1)) {
            String e = entry.trim();
            int at = e.indexOf('@');
            int colon = e.lastIndexOf(':');
            if (at < 1 || colon < at + 2 || colon == e.length() - 1) {
                throw new IllegalArgumentException("voter '" + e + "' is not ID@HOST:PORT");
            }
            int id;
            int port;
            try {
                id = Integer.parseInt(e.substring(0, at));
                port = Integer.parseInt(e.substring(colon + 1));
            } catch (NumberFormatException x) {
                throw new IllegalArgumentException("voter '" + e + "' is not ID@HOST:PORT (ID and PORT are numbers)");
            }
            if (id < 0) {
                throw new IllegalArgumentException("voter '" + e + "' has a negative node id");
            }
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("voter '" + e + "' has port " + port + ", not in [1, 65535]");
            }
            Voter v = new Voter(id, e.substring(at + 1, colon), port);
            if (byId.put(id, v) != null) {
                throw new IllegalArgumentException("voter id " + id + " appears twice in '" + spec + "'");
            }
            if (!addresses.add(v.host() + ":" + port)) {
                throw new IllegalArgumentException("voter address " + v.host() + ":" + port + " appears twice in '"
                        + spec + "'");
            }
        }
        return List.copyOf(byId.values());
    }

    /** A member of the controller quorum: node id and controller listener address. */
    public record Voter(int id, String host, int port) {
        @Override
        public String toString() {
            return id + "@" + host + ":" + port;
        }
    }

    private static int freePort(String host, int... avoid) throws IOException {
        InetAddress address = InetAddress.getByName(host);
        for (int attempt = 0; attempt < 20; attempt++) {
            try (ServerSocket s = new ServerSocket(0, 1, address)) {
                int p = s.getLocalPort();
                if (java.util.Arrays.stream(avoid).noneMatch(x -> x == p)) {
                    return p;
                }
            }
        }
        throw new IOException("no free loopback port found");
    }

    private static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException | UncheckedIOException e) {
            LOG.warn("could not delete {}: {}", dir, e.toString());
        }
    }

    /** Options of a {@link LocalKafka}; every one has a default. */
    public static final class Builder {
        private int nodeId = DEFAULT_NODE_ID;
        private String host;
        private List<Voter> voters = List.of();
        private String clusterId;
        private int port;
        private int controllerPort;
        private Path dataDir;
        private int defaultPartitions = 1;
        private final Map<String, String> overrides = new HashMap<>();
        private final Map<String, String> saslUsers = new HashMap<>();

        private Builder() {
        }

        /**
         * Turns on SASL (SCRAM-SHA-256 and SCRAM-SHA-512) on the client port with these users and
         * passwords (see {@link SaslUsers#load} for the file form); empty (the default): PLAINTEXT.
         */
        public Builder saslUsers(Map<String, String> users) {
            users.forEach((user, password) -> {
                if (!SaslUsers.validName(user)) {
                    throw new IllegalArgumentException("SASL user name must be letters, digits, '.', '_', '-' or '@',"
                            + " got '" + user + "'");
                }
                if (password == null || password.isEmpty()) {
                    throw new IllegalArgumentException("SASL user " + user + " has an empty password");
                }
            });
            this.saslUsers.clear();
            this.saslUsers.putAll(users);
            return this;
        }

        /** This node's id in the cluster (default 1); with {@link #voters} it must be one of them. */
        public Builder nodeId(int id) {
            if (id < 0) {
                throw new IllegalArgumentException("node id must be >= 0, got " + id);
            }
            this.nodeId = id;
            return this;
        }

        /**
         * The address the client listener binds to and advertises; default this node's voter host
         * with {@link #voters}, else 127.0.0.1.
         */
        public Builder host(String host) {
            if (host == null || host.isBlank() || host.contains(":") || host.contains(",")) {
                throw new IllegalArgumentException("host must be a host name or IPv4 address, got '" + host + "'");
            }
            this.host = host;
            return this;
        }

        /**
         * The controller quorum {@code ID@HOST:PORT,...} (see {@link #parseVoters}); this node's
         * entry is its controller listener. Default: this node alone, a controller on a free port.
         */
        public Builder voters(String spec) {
            this.voters = parseVoters(spec);
            return this;
        }

        /**
         * The cluster id to format new storage with (22 characters of base64, as {@code kafka-storage
         * random-uuid} prints); default with several voters: derived from the voter list, else random.
         */
        public Builder clusterId(String id) {
            try {
                Uuid u = Uuid.fromString(id);
                if (u.equals(Uuid.ZERO_UUID) || u.equals(Uuid.METADATA_TOPIC_ID)) {
                    throw new IllegalArgumentException("reserved");
                }
            } catch (IllegalArgumentException | NullPointerException e) {
                throw new IllegalArgumentException("cluster id must be a Kafka UUID (22 characters of URL-safe base64),"
                        + " got '" + id + "'");
            }
            this.clusterId = id;
            return this;
        }

        /** Client port on the host; 0 (the default) picks a free one once, kept across restarts. */
        public Builder port(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port must be in [0, 65535], got " + port);
            }
            this.port = port;
            return this;
        }

        /** KRaft controller port; 0 (the default) picks a free one. */
        public Builder controllerPort(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("controller port must be in [0, 65535], got " + port);
            }
            this.controllerPort = port;
            return this;
        }

        /** Data directory, kept on close; without one a temporary directory is used and deleted. */
        public Builder dataDir(Path dir) {
            this.dataDir = dir;
            return this;
        }

        /** Partitions of auto-created topics. */
        public Builder defaultPartitions(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("default partitions must be >= 1, got " + n);
            }
            this.defaultPartitions = n;
            return this;
        }

        /** Any broker property, applied last. */
        public Builder brokerProperty(String name, String value) {
            overrides.put(name, value);
            return this;
        }

        public LocalKafka build() throws IOException {
            return new LocalKafka(this);
        }
    }
}
