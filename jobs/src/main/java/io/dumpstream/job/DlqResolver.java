package io.dumpstream.job;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.time.Duration;
import java.util.List;
import java.util.Properties;

/**
 * Fills in dead-letter messages whose value the assembler had already decoded and dropped (the
 * chunks of a dump that turned out INCOMPLETE): reads them back from the source topic by offset,
 * so the dead-letter copy is the original message while the assembler never held the whole dump.
 * A message the topic no longer has (retention) goes out with its reference and no value.
 */
public class DlqResolver extends RichFlatMapFunction<L1Message, L1Message> {
    private static final long serialVersionUID = 1L;
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(30);

    private final String bootstrap;
    private final Properties kafka;
    private transient KafkaConsumer<byte[], byte[]> consumer;

    public DlqResolver(String bootstrap, Properties kafka) {
        this.bootstrap = bootstrap;
        this.kafka = kafka;
    }

    @Override
    public void open(OpenContext ctx) {
        // created on first use: most runs never need it
    }

    @Override
    public void flatMap(L1Message m, Collector<L1Message> out) {
        if (!m.refetch) {
            out.collect(m);
            return;
        }
        ConsumerRecord<byte[], byte[]> r = read(new TopicPartition(m.topic, m.partition), m.offset);
        L1Message full;
        if (r == null) {
            full = m.toDlq(m.dlqReason + "; the original at " + m.where() + " is no longer in the topic");
            full.value = null;
        } else {
            full = L1MessageDeserializer.from(r);
            full.dlqReason = m.dlqReason;
        }
        full.refetch = false;
        out.collect(full);
    }

    private ConsumerRecord<byte[], byte[]> read(TopicPartition tp, long offset) {
        if (consumer == null) {
            Properties p = new Properties();
            p.putAll(kafka);
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "1");
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
            p.remove(ConsumerConfig.GROUP_ID_CONFIG);
            consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        }
        consumer.assign(List.of(tp));
        consumer.seek(tp, offset);
        long deadline = System.nanoTime() + READ_TIMEOUT.toNanos();
        try {
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    if (r.offset() == offset) {
                        return r;
                    }
                    if (r.offset() > offset) {
                        return null;
                    }
                }
            }
        } catch (org.apache.kafka.clients.consumer.OffsetOutOfRangeException e) {
            return null;
        }
        return null;
    }

    @Override
    public void close() {
        if (consumer != null) {
            consumer.close(Duration.ofSeconds(5));
        }
    }
}
