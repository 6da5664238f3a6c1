package io.dumpstream.job;

import io.dumpstream.local.LocalKafka;

import java.util.Locale;
import java.util.Properties;

/**
 * What reading the backlog costs a plain {@code KafkaConsumer} loop (no work on the values) with the
 * floor's fetch settings, with the job's ({@code IngestJob}: 4 MiB per partition fetch, 8 MiB per
 * fetch, 4 records per poll, chosen to bound the source's memory) and with larger fetches under the
 * job's poll size, in turn round after round on one local broker: process CPU per MiB of values
 * (broker threads included), as the floor counts it.
 *
 * <pre>
 * CP=jobs/target/test-classes:jobs/target/classes:common/target/classes:schemas/target/classes:$(cat jobs/target/cp.txt)
 * java -XX:+UseParallelGC -Xmx2g -cp $CP io.dumpstream.job.ConsumeBench 6 49152    # rounds, record bytes (1 MiB dumps)
 * </pre>
 */
public final class ConsumeBench {
    private ConsumeBench() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        long recordBytes = Long.parseLong(args[1]);
        try (LocalKafka kafka = LocalKafka.startEphemeral()) {
            kafka.createTopic("consume-bench", 2);
            IngestThroughputBenchmark.Backlog b = IngestThroughputBenchmark.publish(kafka, "consume-bench",
                    new IngestThroughputBenchmark.Shape(recordBytes + " B records", 16, recordBytes), 7, 256L << 20, 0);
            for (int round = 0; round < rounds; round++) {
                for (String settings : new String[] {"floor", "job", "job-poll-large-fetch"}) {
                    System.out.printf(Locale.ROOT, "round %d %s: %.2f ms/MiB%n", round, settings,
                            consume(kafka, "consume-bench", b.messages(), settings));
                }
            }
        }
    }

    private static double consume(LocalKafka kafka, String topic, long messages, String settings) {
        Properties p = new Properties(); // "floor": the loop's own settings, as the floor reads
        if (settings.equals("job")) {
            p.put("max.partition.fetch.bytes", Integer.toString(4 << 20));
            p.put("fetch.max.bytes", Integer.toString(8 << 20));
            p.put("max.poll.records", "4");
        } else if (!settings.equals("floor")) {
            p.put("max.partition.fetch.bytes", Integer.toString(16 << 20));
            p.put("fetch.max.bytes", Integer.toString(32 << 20));
            p.put("max.poll.records", "4");
        }
        return IngestThroughputBenchmark.consumeAll(kafka, topic, messages, p, v -> { })[1];
    }
}
