package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.options.UsageException;

import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.InstantiationUtil;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;

/**
 * {@code --kafka.<prop>=${env:NAME}}: Kafka credentials from the environment (a Kubernetes Secret), resolved by each
 * Kafka client where it runs, never carried in the job.
 */
class IngestConfigEnvTest {
    private static final String[] BASE = {"--bootstrap", "k:9093", "--out", "s3a://b/l1", "--checkpoints", "s3a://b/ck"};
    private static final String SECRET = "ScramLoginModule required username=\"u\" password=\"pw-5e1d0c7a93\";";

    private static String[] with(String... extra) {
        String[] a = new String[BASE.length + extra.length];
        System.arraycopy(BASE, 0, a, 0, BASE.length);
        System.arraycopy(extra, 0, a, BASE.length, extra.length);
        return a;
    }

    @Test
    void envReferencesStayAndKafkasEnvProviderResolvesThemInTheClient() {
        IngestConfig c = IngestConfig.parse(with("--kafka.sasl.jaas.config=${env:KAFKA_JAAS}",
                "--kafka.security.protocol=SASL_SSL"), Map.of("KAFKA_JAAS", SECRET));
        Properties expected = new Properties();
        expected.putAll(Map.of("sasl.jaas.config", "${env:KAFKA_JAAS}", "security.protocol", "SASL_SSL",
                "config.providers", "env",
                "config.providers.env.class", "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
                "config.providers.env.param.allowlist.pattern", "^(KAFKA_JAAS)$"));
        assertEquals(expected, c.kafka);
    }

    @Test
    void theSecretIsNeitherInTheSerializedConfigNorInTheJobGraph(@TempDir Path tmp) throws Exception {
        IngestConfig c = IngestConfig.parse(new String[] {"--bootstrap", "k:9093", "--out", tmp.resolve("out").toString(),
            "--checkpoints", tmp.resolve("ck").toString(), "--kafka.sasl.jaas.config=${env:KAFKA_JAAS}",
                "--kafka.security.protocol=SASL_PLAINTEXT", "--kafka.sasl.mechanism=SCRAM-SHA-512", "--parallelism", "1"},
                Map.of("KAFKA_JAAS", SECRET));
        String config = new String(InstantiationUtil.serializeObject(c), StandardCharsets.ISO_8859_1);
        assertFalse(config.contains("pw-5e1d0c7a93"), "the serialized IngestConfig holds the password");
        assertTrue(config.contains("${env:KAFKA_JAAS}"), "it holds the reference");

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(IngestJob.configuration(c));
        IngestJob.build(env, c);
        JobGraph graph = env.getStreamGraph().getJobGraph();
        String bytes = new String(InstantiationUtil.serializeObject(graph), StandardCharsets.ISO_8859_1);
        assertFalse(bytes.contains("pw-5e1d0c7a93"), "the job graph (the Kafka source's and sink's properties) holds"
                + " the password");
        assertTrue(bytes.contains("${env:KAFKA_JAAS}"), "the job graph carries the reference to the client");
    }

    @Test
    void theRewrittenReferenceIsKafkasOwnSyntax() {
        // a variable this JVM has: Kafka's client config resolves it through the provider configured here
        String name = System.getenv().containsKey("HOME") ? "HOME" : System.getenv().keySet().iterator().next();
        IngestConfig c = IngestConfig.parse(with("--kafka.client.id=x-${env:" + name + "}-y"), System.getenv());
        Properties p = new Properties();
        p.putAll(c.kafka);
        p.put("bootstrap.servers", c.bootstrap);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        assertEquals("x-" + System.getenv(name) + "-y", new ConsumerConfig(p).getString("client.id"));
    }

    @Test
    void aMissingVariableNamesTheOptionAndTheVariableButNoValue() {
        UsageException e = assertThrows(UsageException.class, () -> IngestConfig.parse(
                with("--kafka.sasl.jaas.config=${env:KAFKA_JAAS}"), Map.of("OTHER", "secret-value")));
        assertEquals("option --kafka.sasl.jaas.config refers to ${env:KAFKA_JAAS} but the environment variable"
                + " KAFKA_JAAS is not set", e.getMessage());
        assertFalse(e.getMessage().contains("secret-value"));
    }

    @Test
    void aConflictingProviderIsNamed() {
        UsageException e = assertThrows(UsageException.class, () -> IngestConfig.parse(
                with("--kafka.sasl.jaas.config=${env:KAFKA_JAAS}", "--kafka.config.providers.env.class=com.example.Vault"),
                Map.of("KAFKA_JAAS", SECRET)));
        assertEquals("option --kafka.sasl.jaas.config refers to ${env:NAME}, resolved by the config provider 'env', but"
                + " config.providers.env.class is com.example.Vault, not"
                + " org.apache.kafka.common.config.provider.EnvVarConfigProvider", e.getMessage());
    }
}
