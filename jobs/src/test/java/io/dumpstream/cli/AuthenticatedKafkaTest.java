package io.dumpstream.cli;

import io.dumpstream.options.KafkaClientProperties;
import io.dumpstream.options.UsageException;
import io.dumpstream.options.Cli;
import io.dumpstream.options.KafkaOptions;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.job.IngestConfig;
import io.dumpstream.job.LocalIngest;
import io.dumpstream.local.LocalKafka;
import io.dumpstream.testing.ChildProcesses;
import io.dumpstream.table.DuckDb;
import io.dumpstream.testing.Traffic;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real broker with SASL/SCRAM on its client port: publish, agent and simulate (the ranks' side) and
 * the ingestion job connect with credentials from a {@code --kafka-config} file and, in child JVMs,
 * from the environment through {@code ${env:NAME}}; what they sent lands exactly once in both jobs'
 * tables; a wrong password makes publish fail fast, naming the broker and the mechanism; no password
 * appears in any output or log, with Kafka and Flink logging at INFO in the child JVMs.
 */
class AuthenticatedKafkaTest {
    private static final String TOPIC = "sasl-l1";
    private static final String RANK_PASSWORD = "rank-pw-7f3c91d2e8";
    private static final String INGEST_PASSWORD = "ingest-pw-b4a06e55c1";
    private static final String WRONG_PASSWORD = "wrong-pw-0d9e2a7713";
    private static final List<String> SECRETS = List.of(RANK_PASSWORD, INGEST_PASSWORD, WRONG_PASSWORD);
    private static final Pattern SENT = Pattern.compile(
            "\\{\"run_id\":\"([^\"]+)\",\"rank\":(\\d+),\"launch_id\":(\\d+),\"records\":(\\d+),.*\"dump_id\":\"([^\"]+)\"}");

    @TempDir
    static Path dir;
    private static LocalKafka kafka;

    @BeforeAll
    static void startBroker() throws IOException {
        kafka = LocalKafka.builder().saslUsers(Map.of("rank", RANK_PASSWORD, "ingest", INGEST_PASSWORD)).build()
                .start();
        kafka.createTopic(TOPIC, 2);
        kafka.createTopic(TOPIC + ".dlq", 1);
    }

    @AfterAll
    static void stopBroker() {
        if (kafka != null) {
            kafka.close();
        }
    }

    @Test
    void publisherAgentAndJobAuthenticateFromAFileAndFromTheEnvironmentAndNoPasswordIsPrinted() throws Exception {
        String b = kafka.bootstrapServers();
        Path rankFile = write("rank.properties", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
                + "sasl.jaas.config=" + LocalKafka.scramJaas("rank", RANK_PASSWORD) + "\n");
        Path ingestFile = write("ingest.properties", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
                + "sasl.jaas.config=" + LocalKafka.scramJaas("ingest", INGEST_PASSWORD) + "\n");
        // one file for every child JVM: user and password both come from the environment
        Path envFile = write("env.properties", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
                + "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required"
                + " username=\"${env:DS_KAFKA_USER}\" password=\"${env:DS_KAFKA_PASSWORD}\";\n");
        Path wrongFile = write("wrong.properties", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
                + "sasl.jaas.config=" + LocalKafka.scramJaas("rank", WRONG_PASSWORD) + "\n");
        Path log4j = write("log4j2-info.properties", String.join("\n", "status = warn",
                "appender.err.type = Console", "appender.err.name = err", "appender.err.target = SYSTEM_ERR",
                "appender.err.layout.type = PatternLayout", "appender.err.layout.pattern = %-5level %c - %msg%n",
                "rootLogger.level = info", "rootLogger.appenderRef.err.ref = err", ""));
        Map<String, String> rankEnv = Map.of("DS_KAFKA_USER", "rank", "DS_KAFKA_PASSWORD", RANK_PASSWORD);
        Map<String, String> ingestEnv = Map.of("DS_KAFKA_USER", "ingest", "DS_KAFKA_PASSWORD", INGEST_PASSWORD);
        Path sent = dir.resolve("sent.jsonl");
        for (String run : List.of("pub-file", "pub-env", "agent-file", "agent-env")) {
            InProcess sim = InProcess.run("simulate", "--out", dir.resolve(run).toString(), "--ranks", "2",
                    "--launches", "2", "--records", "4", "--payload-bytes", "4096", "--run-id", run,
                    "--sent", sent.toString());
            assertEquals(0, sim.status, sim.err());
        }
        List<String> ingestArgs = List.of("ingest", "--bootstrap", b, "--topic", TOPIC, "--checkpoint-interval",
                "1s", "--parallelism", "1", "--restart-attempts", "0");

        // the job twice: in a child JVM with its credentials from the environment, and in this JVM from a file
        List<String> envJob = new ArrayList<>(ingestArgs);
        envJob.addAll(List.of("--group", "sasl-env", "--out", dir.resolve("out-env").toString(), "--checkpoints",
                dir.resolve("ck-env").toString(), "--kafka-config", envFile.toString()));
        Child ingest = Child.start(envJob, ingestEnv, dir.resolve("ingest-env"), log4j);
        List<String> fileJob = new ArrayList<>(ingestArgs.subList(1, ingestArgs.size()));
        fileJob.addAll(List.of("--group", "sasl-file", "--out", dir.resolve("out-file").toString(),
                "--checkpoints", dir.resolve("ck-file").toString(), "--kafka-config", ingestFile.toString()));
        try (LocalIngest job = LocalIngest.start(IngestConfig.parse(fileJob.toArray(String[]::new)), new Configuration())) {
            ingest.awaitOutput("ingest: job ", Duration.ofSeconds(90));

            // the ranks' side: publish and agent, each from a file (rank.properties) and from the environment
            List<Child> children = new ArrayList<>();
            children.add(Child.start(List.of("publish", "--bootstrap", b, "--topic", TOPIC, "--dir",
                    dir.resolve("pub-env").toString(), "--kafka-config", envFile.toString()), rankEnv,
                    dir.resolve("publish-env"), log4j));
            children.add(Child.start(List.of("agent", "--spool", dir.resolve("agent-file").toString(), "--bootstrap", b,
                    "--topic", TOPIC, "--poll-ms", "100", "--kafka-config", rankFile.toString()), Map.of(),
                    dir.resolve("agent-file"), log4j));
            children.add(Child.start(List.of("agent", "--spool", dir.resolve("agent-env").toString(), "--bootstrap", b,
                    "--topic", TOPIC, "--poll-ms", "100", "--kafka-config", envFile.toString()), rankEnv,
                    dir.resolve("agent-env"), log4j));
            InProcess publish = InProcess.run("publish", "--bootstrap", b, "--topic", TOPIC, "--dir",
                    dir.resolve("pub-file").toString(), "--kafka-config", rankFile.toString());
            assertEquals(0, publish.status, publish.err());
            InProcess simulate = InProcess.run("simulate", "--bootstrap", b, "--topic", TOPIC, "--ranks", "2",
                    "--launches", "2", "--records", "4", "--payload-bytes", "4096", "--run-id", "sim-file",
                    "--sent", sent.toString(), "--kafka-config", rankFile.toString());
            assertEquals(0, simulate.status, simulate.err());

            // a wrong password: publish fails by itself, quickly, saying why and where
            long t0 = System.nanoTime();
            InProcess wrong = InProcess.run("publish", "--bootstrap", b, "--topic", TOPIC, "--dir",
                    dir.resolve("pub-file").toString(), "--kafka-config", wrongFile.toString());
            double wrongSeconds = (System.nanoTime() - t0) / 1e9;
            System.out.printf("publish with a wrong password: exit %d after %.2f s: %s", wrong.status, wrongSeconds,
                    wrong.err());
            assertEquals(1, wrong.status, wrong.err());
            assertTrue(wrongSeconds < 30, "failed after " + wrongSeconds + " s");
            assertTrue(wrong.err().contains("authentication to Kafka at " + b + " failed (security.protocol"
                    + " SASL_PLAINTEXT, sasl.mechanism SCRAM-SHA-256)"), wrong.err());
            assertTrue(wrong.err().contains("invalid credentials"), wrong.err());

            Child publishEnv = children.get(0);
            boolean ended = publishEnv.process.waitFor(60, TimeUnit.SECONDS);
            assertTrue(ended, "publish (env) ends: " + publishEnv.stderr());
            assertEquals(0, publishEnv.process.exitValue(), publishEnv.stderr());
            for (String spool : List.of("agent-file", "agent-env")) {
                awaitTrue(() -> countIn(dir.resolve(spool).resolve("done"), ".manifest.json") == 4,
                        spool + " published its 4 pairs", Duration.ofSeconds(60), children);
            }

            Expected want = Expected.read(sent);
            assertEquals(20, want.dumps.size(), "5 runs x 2 ranks x 2 launches sent");
            for (String out : List.of("out-env", "out-file")) {
                Path o = dir.resolve(out);
                awaitTrue(() -> Traffic.landedDumps(o) >= want.dumps.size(), out + ": every dump landed",
                        Duration.ofSeconds(120), List.of(ingest));
            }
            job.cancel(Duration.ofSeconds(60));
            ingest.process.destroy(); // SIGTERM: a savepoint, then exit 0
            for (Child c : children.subList(1, children.size())) {
                c.process.destroy();
            }
            assertTrue(ingest.process.waitFor(150, TimeUnit.SECONDS), "ingest (env) stops on SIGTERM");
            assertEquals(0, ingest.process.exitValue(), ingest.stderr());
            for (Child c : children) {
                assertTrue(c.process.waitFor(30, TimeUnit.SECONDS));
            }
            for (String out : List.of("out-env", "out-file")) {
                want.assertLanded(out, dir.resolve(out));
            }

            // what every command printed and logged, Kafka's and Flink's INFO logging included
            List<String> texts = new ArrayList<>(List.of(publish.out(), publish.err(), simulate.out(), simulate.err(),
                    wrong.out(), wrong.err()));
            List<Child> all = new ArrayList<>(children);
            all.add(ingest);
            for (Child c : all) {
                texts.add(Files.readString(c.stdoutFile));
                texts.add(Files.readString(c.stderrFile));
            }
            long bytes = 0;
            for (String text : texts) {
                bytes += text.length();
                for (String secret : SECRETS) {
                    assertFalse(text.contains(secret), "a password was printed:\n" + text);
                }
            }
            String ingestLog = Files.readString(ingest.stderrFile);
            assertTrue(ingestLog.contains("ConsumerConfig values:") && ingestLog.contains("ProducerConfig values:")
                    && ingestLog.contains("sasl.jaas.config = [hidden]"), "Kafka's client config logging ran");
            assertTrue(ingestLog.contains("Kafka client properties {config.providers=env, config.providers.env.class="
                    + "org.apache.kafka.common.config.provider.EnvVarConfigProvider,"
                    + " config.providers.env.param.allowlist.pattern=^(DS_KAFKA_PASSWORD|DS_KAFKA_USER)$,"
                    + " sasl.jaas.config=****, sasl.mechanism=SCRAM-SHA-512, security.protocol=SASL_PLAINTEXT}"),
                    "the job logs its client properties masked, the password's reference resolved by its clients");
            assertTrue(Files.readString(children.get(1).stderrFile).contains("client properties {sasl.jaas.config=****"),
                    "the agent prints its client properties masked");
            System.out.printf("no password in %d outputs (%d chars), ingest log %d lines at INFO%n", texts.size(),
                    bytes, ingestLog.lines().count());
        }
    }

    @Test
    void theJobWithAWrongPasswordFailsWithTheAuthenticationError() throws Exception {
        Path wrong = write("job-wrong.properties", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
                + "sasl.jaas.config=" + LocalKafka.scramJaas("ingest", WRONG_PASSWORD) + "\n");
        IngestConfig c = IngestConfig.parse(new String[] {"--bootstrap", kafka.bootstrapServers(), "--topic", TOPIC,
            "--group", "sasl-wrong", "--out", dir.resolve("out-wrong").toString(), "--checkpoints",
            dir.resolve("ck-wrong").toString(), "--parallelism", "1", "--restart-attempts", "0",
            "--kafka-config", wrong.toString()});
        long t0 = System.nanoTime();
        try (LocalIngest job = LocalIngest.start(c, new Configuration())) {
            awaitTrue(job::ended, "the job fails", Duration.ofSeconds(90), List.of());
            Exception e = assertThrows(Exception.class, () -> job.client().getJobExecutionResult().get());
            String message = KafkaClientProperties.authenticationFailure(e, c.bootstrap, c.kafka);
            System.out.printf("job with a wrong password ended after %.1f s: %s%n", (System.nanoTime() - t0) / 1e9,
                    message);
            assertTrue(message != null && message.startsWith("authentication to Kafka at " + kafka.bootstrapServers()
                    + " failed (security.protocol SASL_PLAINTEXT, sasl.mechanism SCRAM-SHA-256): "), String.valueOf(message));
            assertFalse(message.contains(WRONG_PASSWORD));
        }
    }

    @Test
    void theAgentWithAWrongPasswordKeepsItsPairsAndSaysWhy() throws Exception {
        Path wrong = write("agent-wrong.properties", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
                + "sasl.jaas.config=" + LocalKafka.scramJaas("rank", WRONG_PASSWORD) + "\n");
        Path spool = dir.resolve("agent-wrong");
        InProcess sim = InProcess.run("simulate", "--out", spool.toString(), "--ranks", "1", "--launches", "2",
                "--records", "2", "--payload-bytes", "1024", "--run-id", "agent-wrong");
        assertEquals(0, sim.status, sim.err());
        PublisherOptions a = Cli.parse(new PublisherOptions(), new String[] {"--bootstrap", kafka.bootstrapServers(),
            "--topic", TOPIC, "--kafka-config", wrong.toString()});
        io.dumpstream.publish.SpoolAgent agent = new io.dumpstream.publish.SpoolAgent(spool, a.config(), 100);
        try {
            io.dumpstream.publish.SpoolAgent.Pass pass = agent.runOnce();
            assertEquals(0, pass.published());
            assertEquals(0, pass.failed(), "a refused login is not the pair's fault");
            String message = KafkaClientProperties.authenticationFailure(pass.retryable(), kafka.bootstrapServers(),
                    a.kafka.properties());
            assertTrue(message != null && message.contains("sasl.mechanism SCRAM-SHA-512"), String.valueOf(pass.retryable()));
        } finally {
            agent.close();
        }
        assertEquals(2, countIn(spool, ".manifest.json"), "both pairs stay in the spool for the next attempt");
        assertEquals(0, countIn(spool.resolve("done"), ".manifest.json"));
    }

    @Test
    void theLoaderLeavesEnvReferencesToTheClientsLetsTheCommandLineWinAndNamesWhatIsMissing() throws Exception {
        Path f = write("loader.properties", "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n"
                + "ssl.truststore.password=${env:TS_PW}\nsasl.jaas.config=x password=\"${env:PW}\" ;\n");
        KafkaOptions a = Cli.parse(new KafkaOptions(), new String[] {"--kafka-config", f.toString(),
            "--kafka.sasl.mechanism=SCRAM-SHA-256", "--kafka.client.id=${env:ID}"});
        Properties p = a.properties(Map.of("TS_PW", "ts$1\\x", "PW", "p\"w", "ID", "rank-3"));
        String provider = "org.apache.kafka.common.config.provider.EnvVarConfigProvider";
        assertEquals(Map.of("security.protocol", "SASL_SSL", "sasl.mechanism", "SCRAM-SHA-256",
                "ssl.truststore.password", "${env:TS_PW}", "sasl.jaas.config", "x password=\"${env:PW}\" ;",
                "client.id", "${env:ID}", "config.providers", "env", "config.providers.env.class", provider,
                "config.providers.env.param.allowlist.pattern", "^(ID|PW|TS_PW)$"), Map.copyOf(p));
        assertEquals("{client.id=${env:ID}, config.providers=env, config.providers.env.class=" + provider
                + ", config.providers.env.param.allowlist.pattern=^(ID|PW|TS_PW)$, sasl.jaas.config=****,"
                + " sasl.mechanism=SCRAM-SHA-256, security.protocol=SASL_SSL, ssl.truststore.password=****}",
                KafkaClientProperties.masked(p));
        UsageException e = assertThrows(UsageException.class, () -> a.properties(Map.of("PW", "secret-1", "ID", "r")));
        assertEquals("--kafka-config " + f + ": property ssl.truststore.password refers to ${env:TS_PW} but the"
                + " environment variable TS_PW is not set", e.getMessage());
        UsageException noFile = assertThrows(UsageException.class, () -> Cli.parse(new KafkaOptions(), new String[] {
            "--kafka-config", dir.resolve("absent.properties").toString()}).properties(Map.of()));
        assertTrue(noFile.getMessage().startsWith("--kafka-config " + dir.resolve("absent.properties")
                + " cannot be read"), noFile.getMessage());
        // a JVM that lists the providers Kafka may load must list this one
        String property = "org.apache.kafka.automatic.config.providers";
        System.setProperty(property, "org.apache.kafka.common.config.provider.FileConfigProvider");
        try {
            UsageException refused = assertThrows(UsageException.class, () -> a.properties(Map.of("TS_PW", "1", "PW", "2",
                    "ID", "3")));
            assertEquals("--kafka-config " + f + ": property sasl.jaas.config refers to ${env:NAME}, resolved by Kafka's "
                    + provider + ", but this JVM's system property " + property
                    + "=org.apache.kafka.common.config.provider.FileConfigProvider does not allow it", refused.getMessage());
            System.setProperty(property, "org.apache.kafka.common.config.provider.FileConfigProvider," + provider);
            assertEquals("x password=\"${env:PW}\" ;", a.properties(Map.of("TS_PW", "1", "PW", "2", "ID", "3"))
                    .getProperty("sasl.jaas.config"));
        } finally {
            System.clearProperty(property);
        }
    }

    @Test
    void kafkaCommandTakesItsUsersFromAFileAndUpdatesTheirPasswordsOnEachStart() throws Exception {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        }
        String bootstrap = "127.0.0.1:" + port;
        String alicePw = "alice-pw-3be1f07a";
        String bobOld = "bob-old-pw-91c2";
        String bobNew = "bob-new-pw-5d0e";
        String carolPw = "carol-pw-e62a";
        Path users = write("users.txt", "# SASL users of the local broker\nalice=${env:ALICE_PW}\nbob=" + bobOld
                + "\ncarol=" + carolPw + "\n");
        Path data = dir.resolve("cmd-broker");
        List<String> args = List.of("kafka", "--port", Integer.toString(port), "--dir", data.toString(), "--partitions",
                "1", "--topic", "sasl-cmd", "--sasl-users", users.toString());
        Map<String, String> env = Map.of("ALICE_PW", alicePw);
        Path aliceFile = write("alice.properties", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
                + "sasl.jaas.config=" + LocalKafka.scramJaas("alice", alicePw) + "\n");
        Path bobOldFile = write("bob-old.properties", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
                + "sasl.jaas.config=" + LocalKafka.scramJaas("bob", bobOld) + "\n");
        Path bobNewFile = write("bob-new.properties", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
                + "sasl.jaas.config=" + LocalKafka.scramJaas("bob", bobNew) + "\n");
        Path carolFile = write("carol.properties", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
                + "sasl.jaas.config=" + LocalKafka.scramJaas("carol", carolPw) + "\n");
        String[] dump = {"--manifest", io.dumpstream.testing.Vectors.manifest("multi_chunk").toString(), "--buffer",
            io.dumpstream.testing.Vectors.buffer("multi_chunk").toString()};

        Child first = Child.start(args, env, dir.resolve("kafka-1"), null);
        List<String> texts = new ArrayList<>();
        try {
            first.awaitOutput("broker-internal PLAINTEXT listener", Duration.ofSeconds(60));
            assertTrue(Files.readString(first.stdoutFile).contains("SASL users [alice, bob, carol]; client properties:"
                    + " security.protocol=SASL_PLAINTEXT, sasl.mechanism=SCRAM-SHA-256 (or SCRAM-SHA-512)"),
                    Files.readString(first.stdoutFile));
            texts.add(publishWith(bootstrap, aliceFile, dump, 0));
            texts.add(publishWith(bootstrap, bobOldFile, dump, 0));
            texts.add(publishWith(bootstrap, bobNewFile, dump, 1));
            texts.add(publishWith(bootstrap, carolFile, dump, 0));
        } finally {
            first.process.destroy();
            assertTrue(first.process.waitFor(60, TimeUnit.SECONDS), "the broker stops on SIGTERM");
        }

        // bob's password changes and carol leaves the file: the next start applies both to the kept data directory
        write("users.txt", "alice=${env:ALICE_PW}\nbob=" + bobNew + "\n");
        Child second = Child.start(args, env, dir.resolve("kafka-2"), null);
        try {
            second.awaitOutput("broker-internal PLAINTEXT listener", Duration.ofSeconds(60));
            texts.add(publishWith(bootstrap, bobNewFile, dump, 0));
            texts.add(publishWith(bootstrap, bobOldFile, dump, 1));
            texts.add(publishWith(bootstrap, carolFile, dump, 1));
            Properties alice = KafkaClientProperties.load(aliceFile, new Properties(), Map.of());
            var records = io.dumpstream.testing.TopicReader.readAll(bootstrap, "sasl-cmd", alice);
            // multi_chunk is a manifest and 2 chunks; published four times: alice, bob (old), carol, bob (new)
            assertEquals(12, records.size());
            assertEquals(List.of("demo-run/6/7"),
                    List.copyOf(io.dumpstream.testing.DumpAssembler.assemble(records).keySet()));
        } finally {
            second.process.destroy();
            assertTrue(second.process.waitFor(60, TimeUnit.SECONDS));
        }
        for (Child c : List.of(first, second)) {
            texts.add(Files.readString(c.stdoutFile));
            texts.add(Files.readString(c.stderrFile));
        }
        for (String text : texts) {
            for (String secret : List.of(alicePw, bobOld, bobNew, carolPw)) {
                assertFalse(text.contains(secret), "a password was printed:\n" + text);
            }
        }
    }

    /** publish in this JVM with the client properties of {@code file}; returns its output. */
    private static String publishWith(String bootstrap, Path file, String[] dump, int status) {
        List<String> argv = new ArrayList<>(List.of("publish", "--bootstrap", bootstrap, "--topic", "sasl-cmd",
                "--kafka-config", file.toString()));
        argv.addAll(List.of(dump));
        InProcess p = InProcess.run(argv.toArray(String[]::new));
        assertEquals(status, p.status, file + ": " + p.err());
        if (status != 0) {
            assertTrue(p.err().contains("authentication to Kafka at " + bootstrap + " failed"), p.err());
        }
        return p.out() + p.err();
    }

    private static Path write(String name, String text) throws IOException {
        return Files.writeString(dir.resolve(name), text, StandardCharsets.UTF_8);
    }

    private static long countIn(Path d, String suffix) throws IOException {
        if (!Files.isDirectory(d)) {
            return 0;
        }
        try (Stream<Path> s = Files.list(d)) {
            return s.filter(p -> p.getFileName().toString().endsWith(suffix)).count();
        }
    }

    interface Check {
        boolean ok() throws Exception;
    }

    private static void awaitTrue(Check c, String what, Duration timeout, List<Child> watched) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!c.ok()) {
            for (Child w : watched) {
                if (!w.process.isAlive() && w.process.exitValue() != 0) {
                    throw new AssertionError(what + ": a child exited with " + w.process.exitValue() + ": "
                            + w.stderr());
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + timeout + ": " + what);
            }
            Thread.sleep(200);
        }
    }

    /** The dumps and records of the --sent log: each must land exactly once, COMPLETE. */
    record Expected(List<String> dumps, List<String> records) {
        static Expected read(Path sent) throws IOException {
            List<String> dumps = new ArrayList<>();
            List<String> records = new ArrayList<>();
            for (String line : Files.readAllLines(sent)) {
                Matcher m = SENT.matcher(line);
                assertTrue(m.matches(), line);
                dumps.add(m.group(5) + " COMPLETE");
                for (int i = 0; i < Integer.parseInt(m.group(4)); i++) {
                    records.add(m.group(1) + "/" + m.group(2) + "/" + m.group(3) + "#" + i);
                }
            }
            dumps.sort(null);
            records.sort(null);
            return new Expected(dumps, records);
        }

        void assertLanded(String label, Path out) throws Exception {
            List<String> landed = new ArrayList<>();
            for (Map<String, Object> r : DuckDb.query("SELECT run || '/' || rank || '/' || launch_id || '#' ||"
                    + " record_index AS k FROM read_parquet(" + DuckDb.glob(out, "snapshots/**/*.parquet")
                    + ", hive_partitioning=true, hive_types={'run': VARCHAR, 'rank': INTEGER, 'stage': VARCHAR})")) {
                landed.add((String) r.get("k"));
            }
            landed.sort(null);
            List<String> landedDumps = new ArrayList<>();
            for (Map<String, Object> r : DuckDb.query("SELECT dump_id || ' ' || outcome AS d FROM read_parquet("
                    + DuckDb.glob(out, "dumps/**/*.parquet") + ")")) {
                landedDumps.add((String) r.get("d"));
            }
            landedDumps.sort(null);
            System.out.printf("%s: sent %d records in %d dumps, landed %d records in %d dumps%n", label,
                    records.size(), dumps.size(), landed.size(), landedDumps.size());
            assertEquals(records, landed, label + ": the exact multiset of (run, rank, launch, record_index)");
            assertEquals(dumps, landedDumps, label + ": one COMPLETE dumps row per dump sent");
        }
    }

    /** {@code Main.run} in this JVM with its output captured. */
    record InProcess(int status, ByteArrayOutputStream stdout, ByteArrayOutputStream stderr) {
        static InProcess run(String... argv) {
            ByteArrayOutputStream o = new ByteArrayOutputStream();
            ByteArrayOutputStream e = new ByteArrayOutputStream();
            int s = Main.run(argv, new PrintStream(o, true, StandardCharsets.UTF_8),
                    new PrintStream(e, true, StandardCharsets.UTF_8));
            return new InProcess(s, o, e);
        }

        String out() {
            return stdout.toString(StandardCharsets.UTF_8);
        }

        String err() {
            return stderr.toString(StandardCharsets.UTF_8);
        }
    }

    /** The CLI in a child JVM with extra environment variables and a log4j configuration, output in files. */
    record Child(Process process, Path stdoutFile, Path stderrFile) {
        static Child start(List<String> args, Map<String, String> env, Path base, Path log4j) throws IOException {
            List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                    .toString(), "-Xmx512m"));
            if (log4j != null) {
                cmd.add("-Dlog4j2.configurationFile=" + log4j);
            }
            cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName()));
            cmd.addAll(args);
            Path so = Path.of(base + ".out");
            Path se = Path.of(base + ".err");
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(so.toFile()).redirectError(se.toFile());
            pb.environment().putAll(env);
            return new Child(ChildProcesses.track(pb.start()), so, se);
        }

        void awaitOutput(String text, Duration timeout) throws Exception {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!Files.readString(stdoutFile).contains(text)) {
                if (!process.isAlive() || System.nanoTime() > deadline) {
                    process.destroyForcibly();
                    throw new AssertionError("no '" + text + "' in the output: " + Files.readString(stdoutFile)
                            + stderr());
                }
                Thread.sleep(100);
            }
        }

        String stderr() throws IOException {
            String s = Files.readString(stderrFile);
            return s.length() > 6000 ? s.substring(s.length() - 6000) : s;
        }
    }
}
