package io.dumpstream.job;

import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;

import java.nio.charset.StandardCharsets;

/**
 * The dead-letter copy of a message: the original key, value and headers unchanged, plus
 * {@code l1.dlq.reason} (why) and {@code l1.dlq.source} (topic-partition@offset it came from).
 * Replaying is publishing these messages (without the two l1.dlq headers) to the input topic.
 */
public final class DlqSerializer implements KafkaRecordSerializationSchema<L1Message> {
    private static final long serialVersionUID = 1L;
    public static final String REASON = "l1.dlq.reason";
    public static final String SOURCE = "l1.dlq.source";
    /** Reasons are capped: a header is not the place for a whole message. */
    static final int MAX_REASON_CHARS = 4096;

    private final String topic;

    public DlqSerializer(String topic) {
        this.topic = topic;
    }

    @Override
    public ProducerRecord<byte[], byte[]> serialize(L1Message m, KafkaSinkContext context, Long timestamp) {
        RecordHeaders headers = new RecordHeaders();
        for (int i = 0; i < m.headerKeys.length; i++) {
            headers.add(m.headerKeys[i], m.headerValues[i]);
        }
        String reason = m.dlqReason == null ? "" : m.dlqReason;
        if (reason.length() > MAX_REASON_CHARS) {
            reason = reason.substring(0, MAX_REASON_CHARS);
        }
        headers.add(REASON, reason.getBytes(StandardCharsets.UTF_8));
        headers.add(SOURCE, m.where().getBytes(StandardCharsets.UTF_8));
        return new ProducerRecord<>(topic, null, m.timestamp > 0 ? m.timestamp : null, m.keyBytes, m.value, headers);
    }
}
