package io.dumpstream.cli;

import io.dumpstream.options.KafkaOptions;
import io.dumpstream.options.UsageException;
import io.dumpstream.publish.ManifestFormat;
import io.dumpstream.publish.PublisherConfig;

import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** The publisher options of publish, agent and simulate, a picocli mixin. */
final class PublisherOptions {
    @Option(names = "--bootstrap", paramLabel = "HOST:PORT", description = "Kafka bootstrap servers")
    String bootstrap;
    @Option(names = "--topic", paramLabel = "TOPIC", description = "default ${DEFAULT-VALUE}")
    String topic = PublisherConfig.DEFAULT_TOPIC;
    @Option(names = "--manifest-format", paramLabel = "json|avro", description = "encoding of the manifest message"
            + " (default json)")
    String manifestFormat;
    @Option(names = "--chunk-bytes", paramLabel = "N", description = "chunk size (default "
            + PublisherConfig.DEFAULT_CHUNK_BYTES + ")")
    Integer chunkBytes;
    @Mixin
    KafkaOptions kafka = new KafkaOptions();

    /** The bootstrap servers, which publish and agent require. */
    String bootstrap() {
        if (bootstrap == null) {
            throw new UsageException("missing required option --bootstrap");
        }
        return bootstrap;
    }

    /** The checked publisher settings; every error names the option and the value. */
    PublisherConfig config() {
        try {
            PublisherConfig.Builder b = PublisherConfig.builder(bootstrap())
                    .topic(topic)
                    .chunkBytes(chunkBytes == null ? PublisherConfig.DEFAULT_CHUNK_BYTES : chunkBytes)
                    .clientProperties(kafka.properties());
            if (manifestFormat != null) {
                b.manifestFormat(ManifestFormat.parse(manifestFormat));
            }
            return b.build();
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }
}
