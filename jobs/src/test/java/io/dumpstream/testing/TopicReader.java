package io.dumpstream.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/** Reads a topic raw, from the beginning to the end offsets seen at the start, with a plain consumer. */
public final class TopicReader {
    private TopicReader() {
    }

    /** Every record of {@code topic}, partition by partition, each in offset order. */
    public static List<ConsumerRecord<byte[], byte[]>> readAll(String bootstrap, String topic) {
        return readAll(bootstrap, topic, new Properties());
    }

    /** {@link #readAll(String, String)} with extra client properties (SASL, TLS). */
    public static List<ConsumerRecord<byte[], byte[]>> readAll(String bootstrap, String topic, Properties client) {
        List<ConsumerRecord<byte[], byte[]>> all = new ArrayList<>();
        forEach(bootstrap, topic, client, all::add);
        return all;
    }

    /** Streams every record of {@code topic} to {@code sink} without keeping them. */
    public static void forEach(String bootstrap, String topic, Consumer<ConsumerRecord<byte[], byte[]>> sink) {
        forEach(bootstrap, topic, new Properties(), sink);
    }

    /** {@link #forEach(String, String, Consumer)} with extra client properties (SASL, TLS). */
    public static void forEach(String bootstrap, String topic, Properties client,
                               Consumer<ConsumerRecord<byte[], byte[]>> sink) {
        Properties c = new Properties();
        c.putAll(client);
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        c.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, Integer.toString(20 * 1024 * 1024));
        try (KafkaConsumer<byte[], byte[]> consumer =
                     new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (PartitionInfo p : consumer.partitionsFor(topic, Duration.ofSeconds(30))) {
                tps.add(new TopicPartition(topic, p.partition()));
            }
            tps.sort((a, b) -> Integer.compare(a.partition(), b.partition()));
            Map<TopicPartition, Long> end = new HashMap<>(consumer.endOffsets(tps));
            for (TopicPartition tp : tps) {
                consumer.assign(List.of(tp));
                consumer.seekToBeginning(List.of(tp));
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (consumer.position(tp) < end.get(tp)) {
                    if (System.nanoTime() > deadline) {
                        throw new AssertionError("could not read " + tp + " to offset " + end.get(tp));
                    }
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                        if (r.offset() < end.get(tp)) {
                            sink.accept(r);
                        }
                    }
                }
            }
        }
    }
}
