package io.dumpstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.publish.DumpPublisher;
import io.dumpstream.publish.PublisherConfig;
import io.dumpstream.testing.ChildProcesses;
import io.dumpstream.testing.DumpAssembler;
import io.dumpstream.testing.TopicReader;
import io.dumpstream.testing.Vectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KafkaCommandTest {

    @Test
    void brokerProcessStopsCleanlyOnSigtermAndComesBackWithItsData(@TempDir Path dir, @TempDir Path logs) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        String bootstrap = "127.0.0.1:" + port;
        Process first = startBroker(port, dir, logs.resolve("first.out"));
        try (DumpPublisher p = new DumpPublisher(PublisherConfig.builder(bootstrap).build())) {
            p.publish(ManifestParser.parseJson(Files.readAllBytes(Vectors.manifest("multi_chunk"))),
                    Vectors.buffer("multi_chunk"));
        }
        first.destroy(); // SIGTERM
        assertTrue(first.waitFor(60, TimeUnit.SECONDS), "broker stopped on SIGTERM");
        assertTrue(Files.exists(dir.resolve("kraft-logs/meta.properties")));

        Process second = startBroker(port, dir, logs.resolve("second.out"));
        try {
            var records = TopicReader.readAll(bootstrap, PublisherConfig.DEFAULT_TOPIC);
            assertEquals(3, records.size());
            assertEquals(List.of("demo-run/6/7"), List.copyOf(DumpAssembler.assemble(records).keySet()));
        } finally {
            second.destroy();
            assertTrue(second.waitFor(60, TimeUnit.SECONDS));
        }
    }

    private static Process startBroker(int port, Path dir, Path out) throws Exception {
        Process p = ChildProcesses.track(new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx512m",
                "-cp", System.getProperty("java.class.path"), "io.dumpstream.cli.Main", "kafka", "--port",
                Integer.toString(port), "--dir", dir.toString(), "--partitions", "3")
                .redirectError(ProcessBuilder.Redirect.DISCARD).redirectOutput(out.toFile()).start());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String line = null;
        while (line == null && p.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(100);
            // log lines go to stdout too; the command's own line is the one to wait for
            line = Files.readAllLines(out).stream().filter(l -> l.startsWith("kafka broker at ")).findFirst()
                    .orElse(null);
        }
        assertTrue(line != null && line.startsWith("kafka broker at 127.0.0.1:" + port + " (data " + dir + ") started in "),
                String.valueOf(line));
        assertTrue(line.endsWith(" ms; topic l1dump.v1; Ctrl-C to stop"), line);
        return p;
    }
}
