package io.dumpstream.cli;

import io.dumpstream.options.KafkaClientProperties;
import io.dumpstream.options.UsageException;
import io.dumpstream.options.Args;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

import io.dumpstream.publish.PublisherConfig;
import io.dumpstream.publish.SpoolAgent;

/** {@code agent}: watches a spool directory and publishes every complete pair until SIGTERM. */
public final class AgentCommand implements Command {
    private static final Set<String> OPTIONS =
            Set.of("spool", "bootstrap", "topic", "poll-ms", "manifest-format", "chunk-bytes", Args.KAFKA_CONFIG);

    @Override
    public String name() {
        return "agent";
    }

    @Override
    public String summary() {
        return "publish dumps dropped into a spool directory, until stopped";
    }

    @Override
    public String usage() {
        return String.join("\n",
                "usage: dumpstream agent --spool DIR --bootstrap HOST:PORT [--topic l1dump.v1] [--poll-ms 500]",
                "           [--manifest-format json|avro] [--chunk-bytes N]",
                "           [--kafka-config FILE] [--kafka.<prop>=<value>]...",
                "",
                "Ranks write NAME.bin, then NAME.manifest.json (names starting with '.' or ending .tmp are",
                "ignored). Published pairs move to DIR/done/, invalid ones to DIR/failed/ with NAME.error.txt.",
                "While Kafka is down (or refuses the credentials) pairs stay and are retried with backoff.",
                "Stops cleanly on SIGTERM/Ctrl-C.",
                "",
                PublishCommand.KAFKA_USAGE);
    }

    @Override
    public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Args a = Args.parse(argv, Set.of());
        a.allowOnly(OPTIONS);
        Path spool = Path.of(a.require("spool"));
        if (!Files.isDirectory(spool)) {
            throw new UsageException("--spool " + spool + " is not a directory");
        }
        long pollMs = a.getLong("poll-ms", 500);
        if (pollMs < 1) {
            throw new UsageException("--poll-ms must be >= 1, got " + pollMs);
        }
        PublisherConfig config = PublishCommand.publisherConfig(a);
        SpoolAgent agent = new SpoolAgent(spool, config, pollMs);
        CountDownLatch finished = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            agent.stop();
            try {
                finished.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "agent-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        err.println("agent: publishing pairs from " + spool + " to " + config.topic() + " at " + a.require("bootstrap")
                + " every " + pollMs + " ms, client properties " + KafkaClientProperties.masked(a.kafkaProperties()));
        try {
            agent.run();
        } finally {
            agent.close();
            finished.countDown();
        }
        return 0;
    }
}
