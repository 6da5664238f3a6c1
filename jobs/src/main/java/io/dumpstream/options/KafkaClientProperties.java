package io.dumpstream.options;

import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.provider.EnvVarConfigProvider;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Kafka client properties of every command that talks to Kafka (publish, agent, simulate,
 * ingest): a {@code --kafka-config FILE} Java properties file, overridden by
 * {@code --kafka.<prop>=<value>} options. {@code ${env:NAME}} in a value stays as it is and is resolved
 * by each Kafka client where it runs, by Kafka's own {@link EnvVarConfigProvider} (configured here under
 * the alias {@code env}, limited to the names referenced), so a password is neither on the command line,
 * nor in a file, nor in the configuration of a submitted job.
 *
 * <p>{@link #masked} is the only form in which client properties are ever printed or logged.
 */
public final class KafkaClientProperties {
    /** Keys whose value is never shown: any key containing one of these words. */
    static final String[] SECRET_WORDS = {"password", "jaas", "secret", "token", "key"};
    static final String MASK = "****";
    private static final Pattern ENV = Pattern.compile("\\$\\{env:([A-Za-z_][A-Za-z0-9_]*)}");
    /** The provider alias: Kafka reads {@code ${env:NAME}} as provider {@code env}, no path, key NAME. */
    static final String ENV_ALIAS = "env";
    static final String PROVIDERS = AbstractConfig.CONFIG_PROVIDERS_CONFIG;
    static final String ENV_PROVIDER_CLASS = PROVIDERS + "." + ENV_ALIAS + ".class";
    static final String ENV_PROVIDER_PATTERN = PROVIDERS + "." + ENV_ALIAS + ".param.allowlist.pattern";

    private KafkaClientProperties() {
    }

    /**
     * The merged client properties: the file's (when {@code file} is not null), then {@code overrides} over them;
     * when a value refers to {@code ${env:NAME}}, the {@code env} config provider that resolves it in the client.
     *
     * @param env the environment of this process, where each referenced variable must be set: the clients this
     *            process starts read it, and a job submitted from here is meant to run with the same variables
     * @throws UsageException the file is unreadable, a value names a variable that is not set, or this JVM does
     *                        not allow the provider; the message names the file or option, the key and the variable,
     *                        never the value
     */
    public static Properties load(Path file, Properties overrides, Map<String, String> env) {
        Properties merged = new Properties();
        Map<String, String> where = new java.util.LinkedHashMap<>(); // the file's keys, then the options', each sorted
        if (file != null) {
            Properties fromFile = new Properties();
            try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                fromFile.load(r);
            } catch (IOException | IllegalArgumentException e) {
                throw new UsageException("--kafka-config " + file + " cannot be read as a properties file: " + e);
            }
            for (String k : new TreeSet<>(fromFile.stringPropertyNames())) {
                merged.setProperty(k.trim(), fromFile.getProperty(k).trim());
                where.put(k.trim(), "--kafka-config " + file + ": property " + k.trim());
            }
        }
        for (String k : new TreeSet<>(overrides.stringPropertyNames())) {
            merged.setProperty(k, overrides.getProperty(k));
            where.put(k, "option --kafka." + k);
        }
        Set<String> names = new TreeSet<>();
        String firstUse = null;
        for (Map.Entry<String, String> e : where.entrySet()) {
            for (String name : references(merged.getProperty(e.getKey()))) {
                if (env.get(name) == null) {
                    throw new UsageException(e.getValue() + " refers to ${env:" + name
                            + "} but the environment variable " + name + " is not set");
                }
                names.add(name);
                firstUse = firstUse == null ? e.getValue() : firstUse;
            }
        }
        if (!names.isEmpty()) {
            resolveInTheClient(merged, names, firstUse);
        }
        return merged;
    }

    /** The variable names of the {@code ${env:NAME}} references in {@code value}. */
    static List<String> references(String value) {
        List<String> names = new ArrayList<>();
        Matcher m = ENV.matcher(value);
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }

    /**
     * Adds Kafka's {@link EnvVarConfigProvider} as {@code config.providers=env} (beside any providers configured),
     * allowed to read only the variables {@code names}.
     */
    private static void resolveInTheClient(Properties p, Set<String> names, String where) {
        String configured = p.getProperty(ENV_PROVIDER_CLASS);
        if (configured != null && !configured.trim().equals(EnvVarConfigProvider.class.getName())) {
            throw new UsageException(where + " refers to ${env:NAME}, resolved by the config provider 'env', but "
                    + ENV_PROVIDER_CLASS + " is " + configured + ", not " + EnvVarConfigProvider.class.getName());
        }
        String allowed = System.getProperty(AbstractConfig.AUTOMATIC_CONFIG_PROVIDERS_PROPERTY);
        if (allowed != null && Arrays.stream(allowed.split(",")).map(String::trim)
                .noneMatch(EnvVarConfigProvider.class.getName()::equals)) {
            throw new UsageException(where + " refers to ${env:NAME}, resolved by Kafka's "
                    + EnvVarConfigProvider.class.getName() + ", but this JVM's system property "
                    + AbstractConfig.AUTOMATIC_CONFIG_PROVIDERS_PROPERTY + "=" + allowed + " does not allow it");
        }
        Set<String> providers = new LinkedHashSet<>();
        for (String a : p.getProperty(PROVIDERS, "").split(",")) {
            if (!a.isBlank()) {
                providers.add(a.trim());
            }
        }
        providers.add(ENV_ALIAS);
        p.setProperty(PROVIDERS, String.join(",", providers));
        p.setProperty(ENV_PROVIDER_CLASS, EnvVarConfigProvider.class.getName());
        p.setProperty(ENV_PROVIDER_PATTERN, "^(" + String.join("|", names) + ")$");
    }

    /**
     * Replaces every {@code ${env:NAME}} in {@code value}; {@code where} names the value in errors. For the local
     * broker's users file, read where the broker runs; client properties keep theirs ({@link #load}).
     */
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
