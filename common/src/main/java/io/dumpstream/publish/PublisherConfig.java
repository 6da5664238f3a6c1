package io.dumpstream.publish;

import java.util.Objects;
import java.util.Properties;

import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.manifest.ManifestValidator;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Settings of a {@link DumpPublisher}, checked once by {@link Builder#build()}. Any Kafka client
 * property (TLS, SASL, timeouts...) passes through, except the ones the contract fixes: idempotence
 * on and acks=all.
 */
public final class PublisherConfig {
    public static final String DEFAULT_TOPIC = "l1dump.v1";
    /** 1 MiB minus 16 KiB, so a chunk and its record overhead stay under a 1 MiB message limit. */
    public static final int DEFAULT_CHUNK_BYTES = 1024 * 1024 - 16 * 1024;
    /** Largest chunk: it must fit {@link #MAX_REQUEST_BYTES} with room for headers. */
    public static final int MAX_CHUNK_BYTES = 16 * 1024 * 1024;
    /** Producer max.request.size: the largest manifest plus 1 MiB of headroom. */
    public static final int MAX_REQUEST_BYTES = ManifestParser.MAX_MANIFEST_BYTES + 1024 * 1024;
    public static final int DEFAULT_IN_FLIGHT_CHUNKS = 4;

    private final String topic;
    private final int chunkBytes;
    private final ManifestFormat manifestFormat;
    private final int inFlightChunks;
    private final Properties producerProperties;

    private PublisherConfig(Builder b) {
        this.topic = b.topic;
        this.chunkBytes = b.chunkBytes;
        this.manifestFormat = b.manifestFormat;
        this.inFlightChunks = b.inFlightChunks;
        this.producerProperties = b.producerProperties();
    }

    public static Builder builder(String bootstrapServers) {
        return new Builder(bootstrapServers);
    }

    public String topic() {
        return topic;
    }

    public int chunkBytes() {
        return chunkBytes;
    }

    public ManifestFormat manifestFormat() {
        return manifestFormat;
    }

    /** Chunk buffers in the pool: the most chunks read but not yet acknowledged. */
    public int inFlightChunks() {
        return inFlightChunks;
    }

    /** The complete producer configuration; a copy. */
    public Properties producerProperties() {
        Properties p = new Properties();
        p.putAll(producerProperties);
        return p;
    }

    /** Builder with defaults for everything but the bootstrap servers. */
    public static final class Builder {
        private final String bootstrapServers;
        private String topic = DEFAULT_TOPIC;
        private int chunkBytes = DEFAULT_CHUNK_BYTES;
        private ManifestFormat manifestFormat = ManifestFormat.JSON;
        private int inFlightChunks = DEFAULT_IN_FLIGHT_CHUNKS;
        private final Properties client = new Properties();

        private Builder(String bootstrapServers) {
            this.bootstrapServers = bootstrapServers;
        }

        public Builder topic(String topic) {
            this.topic = topic;
            return this;
        }

        public Builder chunkBytes(int chunkBytes) {
            this.chunkBytes = chunkBytes;
            return this;
        }

        public Builder manifestFormat(ManifestFormat format) {
            this.manifestFormat = Objects.requireNonNull(format, "manifest format");
            return this;
        }

        public Builder inFlightChunks(int n) {
            this.inFlightChunks = n;
            return this;
        }

        /** Kafka producer properties, applied over the defaults. */
        public Builder clientProperties(Properties props) {
            client.putAll(props);
            return this;
        }

        public Builder clientProperty(String name, String value) {
            client.setProperty(name, value);
            return this;
        }

        /** Checks every setting and names the first bad one. */
        public PublisherConfig build() {
            if (bootstrapServers == null || bootstrapServers.isBlank()) {
                throw new IllegalArgumentException("bootstrap servers must be set, got '" + bootstrapServers + "'");
            }
            if (topic == null || topic.isBlank()) {
                throw new IllegalArgumentException("topic must be set, got '" + topic + "'");
            }
            if (chunkBytes < ManifestValidator.MIN_CHUNK_BYTES || chunkBytes > MAX_CHUNK_BYTES) {
                throw new IllegalArgumentException("chunk bytes must be in [" + ManifestValidator.MIN_CHUNK_BYTES
                        + ", " + MAX_CHUNK_BYTES + "], got " + chunkBytes);
            }
            if (inFlightChunks < 1 || inFlightChunks > 64) {
                throw new IllegalArgumentException("in-flight chunks must be in [1, 64], got " + inFlightChunks);
            }
            requireIfSet(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
            requireIfSet(ProducerConfig.ACKS_CONFIG, "all", "-1");
            for (String fixed : new String[] {ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                    ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ProducerConfig.TRANSACTIONAL_ID_CONFIG}) {
                if (client.containsKey(fixed)) {
                    throw new IllegalArgumentException("client property " + fixed + " cannot be set for the publisher");
                }
            }
            return new PublisherConfig(this);
        }

        private void requireIfSet(String name, String... allowed) {
            Object v = client.get(name);
            if (v == null) {
                return;
            }
            for (String a : allowed) {
                if (a.equalsIgnoreCase(v.toString().trim())) {
                    return;
                }
            }
            throw new IllegalArgumentException("client property " + name + " must be " + allowed[0]
                    + " (the contract requires it), got '" + v + "'");
        }

        private Properties producerProperties() {
            Properties p = new Properties();
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
            p.put(ProducerConfig.ACKS_CONFIG, "all");
            p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
            p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(MAX_REQUEST_BYTES));
            p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
            p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
            p.putAll(client);
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            return p;
        }
    }
}
