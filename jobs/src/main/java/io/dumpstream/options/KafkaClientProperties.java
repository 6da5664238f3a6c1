package io.dumpstream.options;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Kafka client properties of every command that talks to Kafka (publish, agent, simulate,
 * ingest): a {@code --kafka-config FILE} Java properties file, overridden by
 * {@code --kafka.<prop>=<value>} options, with {@code ${env:NAME}} in any value replaced by the
 * environment variable NAME, so that a password need be neither on the command line nor in a file.
 *
 * <p>{@link #masked} is the only form in which client properties are ever printed or logged.
 */
public final class KafkaClientProperties {
    /** Keys whose value is never shown: any key containing one of these words. */
    static final String[] SECRET_WORDS = {"password", "jaas", "secret", "token", "key"};
    static final String MASK = "****";
    private static final Pattern ENV = Pattern.compile("\\$\\{env:([A-Za-z_][A-Za-z0-9_]*)}");

    private KafkaClientProperties() {
    }

    /**
     * The merged client properties: the file's (when {@code file} is not null), then
     * {@code overrides} over them, each value with its {@code ${env:NAME}} references expanded from
     * {@code env}.
     *
     * @throws UsageException the file is unreadable, or a value names a variable that is not set;
     *                        the message names the file or option, the key and the variable, never the value
     */
    public static Properties load(Path file, Properties overrides, Map<String, String> env) {
        Properties merged = new Properties();
        if (file != null) {
            Properties fromFile = new Properties();
            try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                fromFile.load(r);
            } catch (IOException | IllegalArgumentException e) {
                throw new UsageException("--kafka-config " + file + " cannot be read as a properties file: " + e);
            }
            for (String k : fromFile.stringPropertyNames()) {
                merged.setProperty(k.trim(), expand(fromFile.getProperty(k).trim(), env,
                        "--kafka-config " + file + ": property " + k.trim()));
            }
        }
        for (String k : overrides.stringPropertyNames()) {
            merged.setProperty(k, expand(overrides.getProperty(k), env, "option --kafka." + k));
        }
        return merged;
    }

    /** Replaces every {@code ${env:NAME}} in {@code value}; {@code where} names the value in errors. */
    public static String expand(String value, Map<String, String> env, String where) {
        Matcher m = ENV.matcher(value);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String v = env.get(m.group(1));
            if (v == null) {
                throw new UsageException(where + " refers to ${env:" + m.group(1)
                        + "} but the environment variable " + m.group(1) + " is not set");
            }
            m.appendReplacement(out, Matcher.quoteReplacement(v));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** True for keys whose value must never be printed. */
    public static boolean isSecret(String key) {
        String k = key.toLowerCase(Locale.ROOT);
        for (String w : SECRET_WORDS) {
            if (k.contains(w)) {
                return true;
            }
        }
        return false;
    }

    /** The properties as {@code {k=v, ...}} sorted by key, the values of secret keys replaced by {@value #MASK}. */
    public static String masked(Properties p) {
        Map<String, String> m = new TreeMap<>();
        for (String k : p.stringPropertyNames()) {
            m.put(k, isSecret(k) ? MASK : p.getProperty(k));
        }
        return m.toString();
    }

    /**
     * For a failure whose cause is Kafka refusing the client's credentials (or its TLS handshake):
     * a message naming the bootstrap servers, the protocol and the mechanism; otherwise null.
     */
    public static String authenticationFailure(Throwable e, String bootstrap, Properties p) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof org.apache.kafka.common.errors.AuthenticationException) {
                return "authentication to Kafka at " + bootstrap + " failed (" + describeSecurity(p) + "): "
                        + t.getMessage();
            }
        }
        return null;
    }

    /** {@code security.protocol} and {@code sasl.mechanism} as Kafka would default them, for messages. */
    public static String describeSecurity(Properties p) {
        String protocol = p.getProperty("security.protocol", "PLAINTEXT");
        String s = "security.protocol " + protocol;
        if (protocol.toUpperCase(Locale.ROOT).startsWith("SASL")) {
            s += ", sasl.mechanism " + p.getProperty("sasl.mechanism", "GSSAPI");
        }
        return s;
    }
}
