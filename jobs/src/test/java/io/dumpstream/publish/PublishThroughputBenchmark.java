package io.dumpstream.publish;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import io.dumpstream.local.LocalKafka;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.testing.Manifests256;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Publish throughput to a local broker: 5 rounds of 64 x 16 MiB dumps from files, median MiB/s.
 * Excluded from the default build (tag {@code benchmark}); see the jobs pom for how to run it.
 * The buffers hold bf16-like noise (random low mantissa bytes), which LZ4 barely compresses, as
 * real tensors.
 */
@Tag("benchmark")
class PublishThroughputBenchmark {
    private static final int DUMPS = Integer.getInteger("bench.dumps", 64);
    private static final int ROUNDS = Integer.getInteger("bench.rounds", 5);
    private static final int DUMP_BYTES = 16 * 1024 * 1024;

    @Test
    void publishThroughput() throws Exception {
        Path dir = Files.createTempDirectory("publish-bench-");
        Path bin = dir.resolve("bench.bin");
        byte[] data = new byte[DUMP_BYTES];
        Random rnd = new Random(1);
        for (int i = 0; i < data.length; i += 2) {
            data[i] = (byte) rnd.nextInt();
            data[i + 1] = (byte) (0x3C + rnd.nextInt(8));
        }
        Files.write(bin, data);
        data = null;
        List<Double> rates = new ArrayList<>();
        try (LocalKafka kafka = LocalKafka.startEphemeral()) {
            for (int round = 0; round < ROUNDS; round++) {
                String topic = "bench-" + round;
                kafka.createTopic(topic, 3);
                long bytes = 0;
                long t0 = System.nanoTime();
                try (DumpPublisher p = new DumpPublisher(PublisherConfig.builder(kafka.bootstrapServers())
                        .topic(topic).build())) {
                    for (int i = 0; i < DUMPS; i++) {
                        DumpManifest m = Manifests256.oneRecord("bench", 0, (long) round * DUMPS + i, DUMP_BYTES);
                        bytes += p.publish(m, bin).bytes();
                    }
                }
                double seconds = (System.nanoTime() - t0) / 1e9;
                double rate = bytes / (1024.0 * 1024.0) / seconds;
                rates.add(rate);
                System.out.printf("round %d: %d dumps, %.0f MiB in %.2f s = %.1f MiB/s%n", round, DUMPS,
                        bytes / (1024.0 * 1024.0), seconds, rate);
                try (var admin = kafka.admin()) {
                    admin.deleteTopics(List.of(topic)).all().get();
                }
            }
        } finally {
            Files.deleteIfExists(bin);
            Files.deleteIfExists(dir);
        }
        List<Double> sorted = new ArrayList<>(rates);
        Collections.sort(sorted);
        System.out.printf("publish throughput: median %.1f MiB/s over %d rounds of %d x 16 MiB (min %.1f, max %.1f)%n",
                sorted.get(sorted.size() / 2), ROUNDS, DUMPS, sorted.get(0), sorted.get(sorted.size() - 1));
    }
}
