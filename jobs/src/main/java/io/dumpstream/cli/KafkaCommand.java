package io.dumpstream.cli;

import io.dumpstream.options.UsageException;
import io.dumpstream.options.Cli;

import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

import io.dumpstream.local.LocalKafka;
import io.dumpstream.local.SaslUsers;
import io.dumpstream.publish.PublisherConfig;

/**
 * {@code kafka}: runs a local single-node broker, or with {@code --voters} one node of a cluster,
 * until Ctrl-C or SIGTERM.
 */
public final class KafkaCommand implements Command {

    @Override
    public String name() {
        return "kafka";
    }

    @Override
    public String summary() {
        return "run a local Kafka broker (KRaft), alone or as one node of a cluster";
    }

    /** The options of kafka. */
    static final class Options {
        @Option(names = "--dir", paramLabel = "DIR", required = true, description = "the broker's data (formatted on"
                + " first use)")
        Path dir;
        @Option(names = "--port", paramLabel = "PORT", description = "client port on HOST (default ${DEFAULT-VALUE})")
        int port = 9092;
        @Option(names = "--host", paramLabel = "HOST", description = "address the client port binds to and advertises"
                + " (default: this node's voter host with --voters, else 127.0.0.1)")
        String host;
        @Option(names = "--node-id", paramLabel = "ID", description = "this node's id, one of the --voters"
                + " (default ${DEFAULT-VALUE})")
        int nodeId = 1;
        @Option(names = "--voters", paramLabel = "ID@HOST:PORT,...", description = {"run as one node of a cluster: the"
            + " controller quorum, every node a broker and a voter, e.g. 1@10.77.0.11:9093,2@10.77.0.12:9093,"
            + "3@10.77.0.13:9093 (this node's entry is its controller port). Give every node the same list. Topics get"
            + " min(3, voters) replicas and min.insync.replicas one less (3 nodes: 3 and 2), the offsets and transaction"
            + " topics too. Default: a single node with its controller on a free port"})
        String voters;
        @Option(names = "--cluster-id", paramLabel = "ID", description = "cluster id new storage is formatted with"
                + " (22 characters of base64, as kafka-storage.sh random-uuid prints); default with --voters: derived"
                + " from the voter list, the same on every node; else random")
        String clusterId;
        @Option(names = "--partitions", paramLabel = "N", description = "partitions of TOPIC, also the default for"
                + " auto-created topics (default ${DEFAULT-VALUE})")
        int partitions = 3;
        @Option(names = "--topic", paramLabel = "TOPIC", description = "created if missing (default ${DEFAULT-VALUE})")
        String topic = PublisherConfig.DEFAULT_TOPIC;
        @Option(names = "--sasl-users", paramLabel = "FILE", description = {"the client port takes SASL_PLAINTEXT with"
            + " SCRAM-SHA-256 or SCRAM-SHA-512 only, for the users of FILE: one user=password a line (# comments; the"
            + " password is the rest of the line, $${env:NAME} in it is the environment variable NAME). Each start creates"
            + " or updates their SCRAM credentials. Broker-internal traffic stays PLAINTEXT on another loopback port."
            + " Clients: --kafka-config FILE with security.protocol=SASL_PLAINTEXT, sasl.mechanism=SCRAM-SHA-256 and"
            + " sasl.jaas.config=...ScramLoginModule ... Single node only (not with --voters)"})
        Path saslUsers;
    }

    @Override
    public String usage() {
        return Cli.usage(name(), String.join("\n",
                "Starts a broker on 127.0.0.1:PORT keeping its data in DIR, creates TOPIC if missing and runs until",
                "Ctrl-C or SIGTERM, then stops cleanly. With --voters, one node of a cluster: start every node with",
                "the same --voters, its own --node-id and --dir; each waits for a majority of the voters."),
                "", new Options(), new Verbosity());
    }

    @Override
    public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Verbosity verbosity = new Verbosity();
        Options o = Cli.parse(new Options(), argv, verbosity);
        verbosity.apply();
        int port = o.port;
        int partitions = o.partitions;
        if (port < 1 || port > 65535) {
            throw new UsageException("--port must be in [1, 65535], got " + port);
        }
        if (partitions < 1) {
            throw new UsageException("--partitions must be >= 1, got " + partitions);
        }
        String topic = o.topic;
        LocalKafka.Builder builder = LocalKafka.builder().port(port).dataDir(o.dir).defaultPartitions(partitions);
        try {
            builder.nodeId(o.nodeId);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--node-id must be >= 0, got " + o.nodeId);
        }
        if (o.host != null) {
            try {
                builder.host(o.host);
            } catch (IllegalArgumentException e) {
                throw new UsageException("--host " + e.getMessage());
            }
        }
        if (o.voters != null) {
            try {
                builder.voters(o.voters);
            } catch (IllegalArgumentException e) {
                throw new UsageException("--voters " + e.getMessage());
            }
            if (LocalKafka.parseVoters(o.voters).stream().noneMatch(v -> v.id() == o.nodeId)) {
                throw new UsageException("--node-id " + o.nodeId + " is not one of --voters " + o.voters);
            }
        } else if (o.clusterId != null) {
            throw new UsageException("--cluster-id needs --voters (a single node formats with a random id)");
        }
        if (o.clusterId != null) {
            try {
                builder.clusterId(o.clusterId);
            } catch (IllegalArgumentException e) {
                throw new UsageException("--cluster-id " + e.getMessage());
            }
        }
        if (o.saslUsers != null) {
            Path users = o.saslUsers;
            if (!Files.isRegularFile(users)) {
                throw new UsageException("--sasl-users " + users + " is not a file");
            }
            if (o.voters != null && LocalKafka.parseVoters(o.voters).size() > 1) {
                throw new UsageException("--sasl-users is supported on a single node only, not with --voters " + o.voters);
            }
            try {
                builder.saslUsers(SaslUsers.load(users, System.getenv()));
            } catch (IllegalArgumentException e) {
                throw new UsageException("--sasl-users " + e.getMessage());
            }
        }
        LocalKafka kafka;
        try {
            kafka = builder.build();
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
        boolean cluster = o.voters != null;
        if (cluster) {
            err.printf("kafka node %d at %s: starting, waiting for a majority of the voters %s%n", kafka.nodeId(),
                    kafka.bootstrapServers(), kafka.voters());
            err.flush();
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            if (!kafka.stop()) {
                err.printf("kafka node %d at %s: no controller quorum approved the controlled shutdown within %d s;"
                        + " exiting without it (the log is recovered on the next start)%n", kafka.nodeId(),
                        kafka.bootstrapServers(), LocalKafka.CLUSTER_SHUTDOWN_WAIT.toSeconds());
                err.flush();
            }
            kafka.close();
            stopped.countDown();
        }, "kafka-shutdown");
        kafka.start();
        Runtime.getRuntime().addShutdownHook(hook);
        kafka.createTopic(topic, partitions);
        if (cluster) {
            out.printf("kafka broker at %s (data %s) started in %d ms; topic %s; node %d of voters %s, cluster id %s,"
                    + " replication factor %d, min.insync.replicas %d; Ctrl-C to stop%n", kafka.bootstrapServers(),
                    kafka.dataDir(), kafka.lastStartupTime().toMillis(), topic, kafka.nodeId(), kafka.voters(),
                    kafka.clusterId(), kafka.replicationFactor(), kafka.minInsyncReplicas());
        } else {
            out.printf("kafka broker at %s (data %s) started in %d ms; topic %s; Ctrl-C to stop%n",
                    kafka.bootstrapServers(), kafka.dataDir(), kafka.lastStartupTime().toMillis(), topic);
        }
        if (kafka.sasl()) {
            out.printf("SASL users %s; client properties: security.protocol=SASL_PLAINTEXT, sasl.mechanism=%s (or %s),"
                    + " sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required"
                    + " username=\"USER\" password=\"...\";%n", kafka.saslUserNames(), LocalKafka.SCRAM_MECHANISMS.get(0),
                    LocalKafka.SCRAM_MECHANISMS.get(1));
            out.printf("broker-internal PLAINTEXT listener (no authentication, loopback only) at %s%n",
                    kafka.internalBootstrapServers());
        }
        out.flush();
        stopped.await();
        return 0;
    }
}
