package io.dumpstream.cli;

import io.dumpstream.options.KafkaClientProperties;
import io.dumpstream.options.UsageException;
import io.dumpstream.options.Cli;

import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

import io.dumpstream.publish.PublisherConfig;
import io.dumpstream.publish.SpoolAgent;

/** {@code agent}: watches a spool directory and publishes every complete pair until SIGTERM. */
public final class AgentCommand implements Command {

    @Override
    public String name() {
        return "agent";
    }

    @Override
    public String summary() {
        return "publish dumps dropped into a spool directory, until stopped";
    }

    /** The options of agent. */
    static final class Options {
        @Option(names = "--spool", paramLabel = "DIR", required = true, description = "the spool directory ranks write to")
        Path spool;
        @Option(names = "--poll-ms", paramLabel = "N", description = "how often DIR is listed (default ${DEFAULT-VALUE})")
        long pollMs = 500;
        @Mixin
        PublisherOptions publisher = new PublisherOptions();
    }

    @Override
    public String usage() {
        return Cli.usage(name(), String.join("\n",
                "Ranks write NAME.bin, then NAME.manifest.json (names starting with '.' or ending .tmp are",
                "ignored). Published pairs move to DIR/done/, invalid ones to DIR/failed/ with NAME.error.txt.",
                "While Kafka is down (or refuses the credentials) pairs stay and are retried with backoff.",
                "Stops cleanly on SIGTERM/Ctrl-C."), "", new Options(), new Verbosity());
    }

    @Override
    public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Verbosity verbosity = new Verbosity();
        Options o = Cli.parse(new Options(), argv, verbosity);
        verbosity.apply();
        Path spool = o.spool;
        if (!Files.isDirectory(spool)) {
            throw new UsageException("--spool " + spool + " is not a directory");
        }
        long pollMs = o.pollMs;
        if (pollMs < 1) {
            throw new UsageException("--poll-ms must be >= 1, got " + pollMs);
        }
        PublisherConfig config = o.publisher.config();
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
        err.println("agent: publishing pairs from " + spool + " to " + config.topic() + " at " + o.publisher.bootstrap()
                + " every " + pollMs + " ms, client properties " + KafkaClientProperties.masked(o.publisher.kafka.properties()));
        try {
            agent.run();
        } finally {
            agent.close();
            finished.countDown();
        }
        return 0;
    }
}
