package io.dumpstream.cli;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

import io.dumpstream.local.LocalKafka;
import io.dumpstream.publish.PublisherConfig;

/** {@code kafka}: runs a local single-node broker until Ctrl-C or SIGTERM. */
public final class KafkaCommand implements Command {
    private static final Set<String> OPTIONS = Set.of("port", "dir", "partitions", "topic");

    @Override
    public String name() {
        return "kafka";
    }

    @Override
    public String summary() {
        return "run a local single-node Kafka broker (KRaft) for development";
    }

    @Override
    public String usage() {
        return String.join("\n",
                "usage: dumpstream kafka --dir DIR [--port 9092] [--partitions 3] [--topic l1dump.v1]",
                "",
                "Starts a broker on 127.0.0.1:PORT keeping its data in DIR (formatted on first use), creates",
                "TOPIC with N partitions if missing (N is also the default for auto-created topics) and runs",
                "until Ctrl-C or SIGTERM, then stops cleanly.");
    }

    @Override
    public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Args a = Args.parse(argv, Set.of());
        a.allowOnly(OPTIONS);
        int port = a.getInt("port", 9092);
        int partitions = a.getInt("partitions", 3);
        if (port < 1 || port > 65535) {
            throw new UsageException("--port must be in [1, 65535], got " + port);
        }
        if (partitions < 1) {
            throw new UsageException("--partitions must be >= 1, got " + partitions);
        }
        String topic = a.get("topic", PublisherConfig.DEFAULT_TOPIC);
        LocalKafka kafka = LocalKafka.builder().port(port).dataDir(Path.of(a.require("dir")))
                .defaultPartitions(partitions).build();
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
        out.flush();
        stopped.await();
        return 0;
    }
}
