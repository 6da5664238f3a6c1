package io.dumpstream.local;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Random;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalKafkaTest {

    @Test
    void servesLargeTransactionalMessagesAndKeepsDataAcrossRestartOnSamePort(@TempDir Path dir) throws Exception {
        byte[] big = new byte[16 * 1024 * 1024 + 4096];
        new Random(7).nextBytes(big);
        try (LocalKafka kafka = LocalKafka.builder().dataDir(dir).build().start()) {
            assertTrue(Files.exists(dir.resolve("kraft-logs/meta.properties")));
            kafka.createTopic("t", 3);
            try (KafkaProducer<byte[], byte[]> p = transactionalProducer(kafka.bootstrapServers())) {
                p.initTransactions();
                p.beginTransaction();
                p.send(new ProducerRecord<>("t", 1, new byte[] {1}, big));
                p.commitTransaction();
                p.beginTransaction();
                p.send(new ProducerRecord<>("t", 1, new byte[] {2}, new byte[] {42}));
                p.abortTransaction();
            }
            assertEquals(List.of(1), keysCommitted(kafka.bootstrapServers(), big));

            int port = kafka.port();
            kafka.stop();
            assertFalse(kafka.isRunning());
            kafka.start();
            assertEquals(port, kafka.port());
            assertEquals(List.of(1), keysCommitted(kafka.bootstrapServers(), big));
        }
        assertTrue(Files.exists(dir.resolve("kraft-logs/meta.properties")), "a given data dir is kept");
    }

    private static List<Integer> keysCommitted(String bootstrap, byte[] expectedBig) {
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        List<Integer> keys = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer =
                     new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            TopicPartition tp = new TopicPartition("t", 1);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.currentTimeMillis() + 20_000;
            while (System.currentTimeMillis() < deadline) {
                long end = consumer.endOffsets(List.of(tp)).get(tp);
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    keys.add((int) r.key()[0]);
                    assertArrayEquals(expectedBig, r.value());
                }
                if (consumer.position(tp) >= end) {
                    break;
                }
            }
        }
        return keys;
    }

    private static KafkaProducer<byte[], byte[]> transactionalProducer(String bootstrap) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "local-kafka-test");
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(17 * 1024 * 1024));
        return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    }
}
