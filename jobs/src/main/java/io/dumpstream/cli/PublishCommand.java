package io.dumpstream.cli;

import io.dumpstream.options.KafkaClientProperties;
import io.dumpstream.options.UsageException;
import io.dumpstream.options.Cli;

import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import io.dumpstream.format.DumpFormatException;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.publish.DumpPublisher;
import io.dumpstream.publish.PublishException;
import io.dumpstream.publish.PublishResult;
import io.dumpstream.publish.PublisherConfig;
import io.dumpstream.publish.SpoolAgent;

/** {@code publish}: sends one dump, or every pair in a directory, to Kafka and waits for the acks. */
public final class PublishCommand implements Command {
    private static final double MIB = 1024.0 * 1024.0;

    @Override
    public String name() {
        return "publish";
    }

    @Override
    public String summary() {
        return "publish dump buffers and manifests to Kafka";
    }

    /** The options of publish. */
    static final class Options {
        @Mixin
        PublisherOptions publisher = new PublisherOptions();
        @Option(names = "--manifest", paramLabel = "M.json", description = "one dump: its manifest (JSON or Avro)")
        Path manifest;
        @Option(names = "--buffer", paramLabel = "B.bin", description = "... and its buffer file")
        Path buffer;
        @Option(names = "--dir", paramLabel = "DIR", description = "every NAME" + SpoolAgent.MANIFEST_SUFFIX + " + NAME"
                + SpoolAgent.BUFFER_SUFFIX + " pair in DIR, by name")
        Path dir;
    }

    @Override
    public String usage() {
        return Cli.usage(name(), "Sends one dump (--manifest with --buffer) or every pair of --dir to Kafka and waits for"
                + " the acks.", "Progress goes to stderr; one line per dump published goes to stdout.", new Options(),
                new Verbosity());
    }

    @Override
    public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Verbosity verbosity = new Verbosity();
        Options o = Cli.parse(new Options(), argv, verbosity);
        verbosity.apply();
        String bootstrap = o.publisher.bootstrap();
        List<Path[]> pairs = new ArrayList<>();
        if (o.dir != null) {
            if (o.manifest != null || o.buffer != null) {
                throw new UsageException("give either --dir or --manifest with --buffer, not both");
            }
            pairs.addAll(pairsIn(o.dir));
        } else {
            if (o.manifest == null || o.buffer == null) {
                throw new UsageException("missing required option " + (o.manifest == null ? "--manifest" : "--buffer")
                        + " (or --dir)");
            }
            pairs.add(new Path[] {o.manifest, o.buffer});
        }
        PublisherConfig config = o.publisher.config();
        Properties clientProperties = o.publisher.kafka.properties();
        err.println("publish: to " + bootstrap + " with client properties "
                + KafkaClientProperties.masked(clientProperties));
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
                    String auth = KafkaClientProperties.authenticationFailure(e, bootstrap, clientProperties);
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
