package io.dumpstream.cli;

import io.dumpstream.options.KafkaClientProperties;
import io.dumpstream.options.UsageException;
import io.dumpstream.options.Args;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import io.dumpstream.format.DumpFormatException;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.publish.DumpPublisher;
import io.dumpstream.publish.ManifestFormat;
import io.dumpstream.publish.PublishException;
import io.dumpstream.publish.PublishResult;
import io.dumpstream.publish.PublisherConfig;
import io.dumpstream.publish.SpoolAgent;

/** {@code publish}: sends one dump, or every pair in a directory, to Kafka and waits for the acks. */
public final class PublishCommand implements Command {
    private static final Set<String> OPTIONS =
            Set.of("bootstrap", "topic", "manifest", "buffer", "dir", "manifest-format", "chunk-bytes",
                    Args.KAFKA_CONFIG);
    private static final double MIB = 1024.0 * 1024.0;

    @Override
    public String name() {
        return "publish";
    }

    @Override
    public String summary() {
        return "publish dump buffers and manifests to Kafka";
    }

    @Override
    public String usage() {
        return String.join("\n",
                "usage: dumpstream publish --bootstrap HOST:PORT [--topic l1dump.v1]",
                "           (--manifest M.json --buffer B.bin | --dir DIR)",
                "           [--manifest-format json|avro] [--chunk-bytes N]",
                "           [--kafka-config FILE] [--kafka.<prop>=<value>]...",
                "",
                "  --manifest/--buffer  one dump: its manifest (JSON or Avro) and its buffer file",
                "  --dir                every NAME" + SpoolAgent.MANIFEST_SUFFIX + " + NAME" + SpoolAgent.BUFFER_SUFFIX
                        + " pair in DIR, by name",
                "  --manifest-format    encoding of the manifest message (default json)",
                "  --chunk-bytes        chunk size (default " + PublisherConfig.DEFAULT_CHUNK_BYTES + ")",
                KAFKA_USAGE,
                "",
                "Progress goes to stderr; one line per dump published goes to stdout.");
    }

    /** The Kafka client options of publish, agent and simulate. */
    static final String KAFKA_USAGE = String.join("\n",
            "  --kafka-config FILE  Kafka client properties (security.protocol, sasl.*, ssl.*...), one",
            "                       key=value a line; ${env:NAME} in a value is the environment variable NAME",
            "  --kafka.<prop>       any Kafka producer property, over the file's, e.g.",
            "                       --kafka.security.protocol=SSL; values of keys naming a password, jaas,",
            "                       secret, token or key are never printed");

    /** The publisher settings shared by {@code publish} and {@code agent}. */
    static PublisherConfig publisherConfig(Args a) {
        try {
            PublisherConfig.Builder b = PublisherConfig.builder(a.require("bootstrap"))
                    .topic(a.get("topic", PublisherConfig.DEFAULT_TOPIC))
                    .chunkBytes(a.getInt("chunk-bytes", PublisherConfig.DEFAULT_CHUNK_BYTES))
                    .clientProperties(a.kafkaProperties());
            if (a.has("manifest-format")) {
                b.manifestFormat(ManifestFormat.parse(a.get("manifest-format", "json")));
            }
            return b.build();
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    @Override
    public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Args a = Args.parse(argv, Set.of());
        a.allowOnly(OPTIONS);
        List<Path[]> pairs = new ArrayList<>();
        if (a.has("dir")) {
            if (a.has("manifest") || a.has("buffer")) {
                throw new UsageException("give either --dir or --manifest with --buffer, not both");
            }
            pairs.addAll(pairsIn(Path.of(a.require("dir"))));
        } else {
            pairs.add(new Path[] {Path.of(a.require("manifest")), Path.of(a.require("buffer"))});
        }
        PublisherConfig config = publisherConfig(a);
        err.println("publish: to " + a.require("bootstrap") + " with client properties "
                + KafkaClientProperties.masked(a.kafkaProperties()));
        int failures = 0;
        int dumps = 0;
        long bytes = 0;
        long t0 = System.nanoTime();
        try (DumpPublisher publisher = new DumpPublisher(config)) {
            for (Path[] pair : pairs) {
                try {
                    PublishResult r = publisher.publish(ManifestParser.parseFile(pair[0]), pair[1]);
                    dumps++;
                    bytes += r.bytes();
                    out.printf("%s %s %d chunks %d bytes%n", r.dumpId(), pair[1], r.chunks(), r.bytes());
                    for (String d : r.defects()) {
                        err.println("dumpstream publish: warning: dump " + r.dumpId() + " (" + pair[0]
                                + ") published with a defect, the job will record it: " + d);
                    }
                    double s = Math.max(1e-9, (System.nanoTime() - t0) / 1e9);
                    err.printf("published %d/%d dumps, %.1f MiB, %.1f MiB/s%n", dumps, pairs.size(), bytes / MIB,
                            bytes / MIB / s);
                } catch (DumpFormatException e) {
                    failures++;
                    err.println("dumpstream publish: " + pair[0] + ": " + e);
                } catch (PublishException e) {
                    String auth = KafkaClientProperties.authenticationFailure(e, a.require("bootstrap"),
                            a.kafkaProperties());
                    if (auth == null) {
                        throw e;
                    }
                    err.println("dumpstream publish: " + pair[0] + ": " + auth);
                    return 1;
                }
            }
        }
        if (failures > 0) {
            err.printf("%d of %d dumps not published%n", failures, pairs.size());
            return 1;
        }
        return 0;
    }

    /** NAME.manifest.json + NAME.bin pairs in {@code dir}, sorted by NAME. */
    static List<Path[]> pairsIn(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            throw new UsageException("--dir " + dir + " is not a directory");
        }
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*" + SpoolAgent.MANIFEST_SUFFIX)) {
            for (Path p : ds) {
                String f = p.getFileName().toString();
                if (!f.startsWith(".")) {
                    names.add(f.substring(0, f.length() - SpoolAgent.MANIFEST_SUFFIX.length()));
                }
            }
        }
        names.sort(null);
        List<Path[]> pairs = new ArrayList<>();
        for (String n : names) {
            Path bin = dir.resolve(n + SpoolAgent.BUFFER_SUFFIX);
            if (!Files.isRegularFile(bin)) {
                throw new UsageException("--dir " + dir + ": " + n + SpoolAgent.MANIFEST_SUFFIX + " has no "
                        + n + SpoolAgent.BUFFER_SUFFIX);
            }
            pairs.add(new Path[] {dir.resolve(n + SpoolAgent.MANIFEST_SUFFIX), bin});
        }
        if (pairs.isEmpty()) {
            throw new UsageException("--dir " + dir + " holds no *" + SpoolAgent.MANIFEST_SUFFIX + " files");
        }
        return pairs;
    }
}
