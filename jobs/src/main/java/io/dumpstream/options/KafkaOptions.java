package io.dumpstream.options;

import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;

/**
 * The Kafka client options of the commands that talk to Kafka (publish, agent, simulate, ingest), a picocli mixin:
 * {@code --kafka-config FILE} and {@code --kafka.<prop>=<value>} over it ({@link Cli} collects the latter).
 */
public final class KafkaOptions {
    @Option(names = "--kafka-config", paramLabel = "FILE", description = "Kafka client properties (security.protocol,"
            + " sasl.*, ssl.*, ...), one key=value a line; $${env:NAME} in a value is the environment variable NAME, read"
            + " by each Kafka client where it runs (Kafka's EnvVarConfigProvider): the secret is never in the command's or"
            + " the job's configuration")
    Path config;

    /** Filled by {@link Cli#parse} from the {@code --kafka.<prop>=<value>} arguments; declared here for the help. */
    @Option(names = "--kafka.<prop>", paramLabel = "<value>", description = "any Kafka client property, over the"
            + " file's, e.g. --kafka.security.protocol=SSL; values of keys naming a password, jaas, secret, token or key"
            + " are never printed")
    Properties overrides = new Properties();

    /** The merged client properties, {@code ${env:NAME}} references checked against {@code env} (this process's). */
    public Properties properties(Map<String, String> env) {
        return KafkaClientProperties.load(config, overrides, env);
    }

    /** {@link #properties(Map)} against this process's environment. */
    public Properties properties() {
        return properties(System.getenv());
    }
}
