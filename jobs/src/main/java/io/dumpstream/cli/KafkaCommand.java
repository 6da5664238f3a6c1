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

/** {@code kafka}: runs a local single-node broker until Ctrl-C or SIGTERM. */
public final class KafkaCommand implements Command {

    @Override
    public String name() {
        return "kafka";
    }

    @Override
    public String summary() {
        return "run a local single-node Kafka broker (KRaft) for development";
    }

    /** The options of kafka. */
    static final class Options {
        @Option(names = "--dir", paramLabel = "DIR", required = true, description = "the broker's data (formatted on"
                + " first use)")
        Path dir;
        @Option(names = "--port", paramLabel = "PORT", description = "client port on 127.0.0.1 (default ${DEFAULT-VALUE})")
        int port = 9092;
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
            + " sasl.jaas.config=...ScramLoginModule ..."})
        Path saslUsers;
    }

    @Override
    public String usage() {
        return Cli.usage(name(), String.join("\n",
                "Starts a broker on 127.0.0.1:PORT keeping its data in DIR, creates TOPIC if missing and runs until",
                "Ctrl-C or SIGTERM, then stops cleanly."), "", new Options(), new Verbosity());
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
        if (o.saslUsers != null) {
            Path users = o.saslUsers;
            if (!Files.isRegularFile(users)) {
                throw new UsageException("--sasl-users " + users + " is not a file");
            }
            try {
                builder.saslUsers(SaslUsers.load(users, System.getenv()));
            } catch (IllegalArgumentException e) {
                throw new UsageException("--sasl-users " + e.getMessage());
            }
        }
        LocalKafka kafka = builder.build();
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            kafka.close();
            stopped.countDown();
        }, "kafka-shutdown");
        kafka.start();
        Runtime.getRuntime().addShutdownHook(hook);
        kafka.createTopic(topic, partitions);
        out.printf("kafka broker at %s (data %s) started in %d ms; topic %s; Ctrl-C to stop%n",
                kafka.bootstrapServers(), kafka.dataDir(), kafka.lastStartupTime().toMillis(), topic);
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
