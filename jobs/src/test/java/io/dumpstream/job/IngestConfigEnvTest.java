package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.dumpstream.options.UsageException;

import org.junit.jupiter.api.Test;

import java.util.Map;

/** {@code --kafka.<prop>=${env:NAME}}: Kafka credentials from the environment (a Kubernetes Secret). */
class IngestConfigEnvTest {
    private static final String[] BASE = {"--bootstrap", "k:9093", "--out", "s3a://b/l1", "--checkpoints", "s3a://b/ck"};

    private static String[] with(String... extra) {
        String[] a = new String[BASE.length + extra.length];
        System.arraycopy(BASE, 0, a, 0, BASE.length);
        System.arraycopy(extra, 0, a, BASE.length, extra.length);
        return a;
    }

    @Test
    void envValuesAreReadFromTheEnvironmentAndOthersPassUnchanged() {
        IngestConfig c = IngestConfig.parse(with("--kafka.sasl.jaas.config=${env:KAFKA_JAAS}",
                "--kafka.security.protocol=SASL_SSL"), Map.of("KAFKA_JAAS", "ScramLoginModule required username=\"u\";"));
        assertEquals("ScramLoginModule required username=\"u\";", c.kafka.getProperty("sasl.jaas.config"));
        assertEquals("SASL_SSL", c.kafka.getProperty("security.protocol"));
        assertEquals(2, c.kafka.size());
    }

    @Test
    void aMissingVariableNamesTheOptionAndTheVariableButNoValue() {
        UsageException e = assertThrows(UsageException.class, () -> IngestConfig.parse(
                with("--kafka.sasl.jaas.config=${env:KAFKA_JAAS}"), Map.of("OTHER", "secret-value")));
        assertEquals("option --kafka.sasl.jaas.config refers to ${env:KAFKA_JAAS} but the environment variable"
                + " KAFKA_JAAS is not set", e.getMessage());
        assertFalse(e.getMessage().contains("secret-value"));
    }
}
