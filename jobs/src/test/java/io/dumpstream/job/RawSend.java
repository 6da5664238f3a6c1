package io.dumpstream.job;

import io.dumpstream.publish.L1Headers;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.zip.CRC32C;

/**
 * A plain producer that sends a dump's messages exactly as a test arranges them (any order,
 * duplicates, gaps, buffers of the wrong length), which the real publisher refuses to do.
 */
final class RawSend implements AutoCloseable {
    private final KafkaProducer<byte[], byte[]> producer;
    private final String topic;

    RawSend(String bootstrap, String topic) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(20 << 20));
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        this.producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
        this.topic = topic;
    }

    /** One message of a dump: the manifest (index -1) or chunk {@code index}. */
    record Msg(String key, int index, byte[] value, long offset) {
    }

    /** The manifest then every chunk of {@code buffer} at {@code chunkBytes}, in order. */
    static List<Msg> messages(String key, byte[] manifest, byte[] buffer, int chunkBytes) {
        List<Msg> out = new ArrayList<>();
        out.add(new Msg(key, -1, manifest, -1));
        for (int i = 0; (long) i * chunkBytes < buffer.length; i++) {
            int from = i * chunkBytes;
            out.add(new Msg(key, i, Arrays.copyOfRange(buffer, from, Math.min(buffer.length, from + chunkBytes)),
                    from));
        }
        return out;
    }

    void send(Msg m) {
        producer.send(new ProducerRecord<>(topic, null, m.key().getBytes(StandardCharsets.UTF_8), m.value(),
                headers(m, System.currentTimeMillis())));
    }

    /** The headers the rank-side publisher sets on {@code m}, published at {@code publishTs}. */
    static RecordHeaders headers(Msg m, long publishTs) {
        RecordHeaders h = new RecordHeaders();
        if (m.index() < 0) {
            h.add(L1Headers.KIND, L1Headers.KIND_MANIFEST.getBytes(StandardCharsets.US_ASCII));
        } else {
            CRC32C crc = new CRC32C();
            crc.update(m.value());
            h.add(L1Headers.KIND, L1Headers.KIND_CHUNK.getBytes(StandardCharsets.US_ASCII));
            h.add(L1Headers.CHUNK_INDEX, Integer.toString(m.index()).getBytes(StandardCharsets.US_ASCII));
            h.add(L1Headers.CHUNK_OFFSET, Long.toString(m.offset()).getBytes(StandardCharsets.US_ASCII));
            h.add(L1Headers.CHUNK_CRC32C, Long.toString(crc.getValue()).getBytes(StandardCharsets.US_ASCII));
        }
        h.add(L1Headers.PUBLISH_TS, Long.toString(publishTs).getBytes(StandardCharsets.US_ASCII));
        return h;
    }

    void sendAll(List<Msg> messages) {
        messages.forEach(this::send);
        producer.flush();
    }

    /** A message with arbitrary key and headers (null key allowed), for hostile-input tests. */
    void sendRaw(byte[] key, byte[] value, String... headers) {
        RecordHeaders h = new RecordHeaders();
        for (int i = 0; i + 1 < headers.length; i += 2) {
            h.add(headers[i], headers[i + 1].getBytes(StandardCharsets.US_ASCII));
        }
        producer.send(new ProducerRecord<>(topic, null, key, value, h));
        producer.flush();
    }

    @Override
    public void close() {
        producer.close();
    }
}
