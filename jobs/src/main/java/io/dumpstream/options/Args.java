package io.dumpstream.options;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * Parses {@code --name value}, {@code --name=value} and bare {@code --flag} options once, so each
 * command reads typed values and reports unknown or malformed options by name.
 * Options starting with {@code --kafka.} are collected as Kafka client properties, merged over
 * the file of {@code --kafka-config} by {@link KafkaClientProperties}.
 */
public final class Args {
    private final Map<String, String> options = new LinkedHashMap<>();
    private final Map<String, List<String>> repeated = new LinkedHashMap<>();
    private final Properties kafka = new Properties();
    private final List<String> positional = new ArrayList<>();

    private Args() {
    }

    /**
     * @param flags names (without dashes) of options that take no value
     */
    public static Args parse(String[] argv, java.util.Set<String> flags) {
        Args a = new Args();
        for (int i = 0; i < argv.length; i++) {
            String arg = argv[i];
            if (!arg.startsWith("--")) {
                a.positional.add(arg);
                continue;
            }
            String body = arg.substring(2);
            String name;
            String value;
            int eq = body.indexOf('=');
            if (eq >= 0) {
                name = body.substring(0, eq);
                value = body.substring(eq + 1);
            } else if (flags.contains(body)) {
                name = body;
                value = "true";
            } else {
                name = body;
                if (i + 1 >= argv.length) {
                    throw new UsageException("option --" + name + " needs a value");
                }
                value = argv[++i];
            }
            if (name.startsWith("kafka.")) {
                a.kafka.setProperty(name.substring("kafka.".length()), value);
            } else {
                a.options.put(name, value);
                a.repeated.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
            }
        }
        return a;
    }

    public boolean has(String name) {
        return options.containsKey(name);
    }

    public String get(String name, String def) {
        return options.getOrDefault(name, def);
    }

    public String require(String name) {
        String v = options.get(name);
        if (v == null) {
            throw new UsageException("missing required option --" + name);
        }
        return v;
    }

    public List<String> all(String name) {
        return repeated.getOrDefault(name, Collections.emptyList());
    }

    public long getLong(String name, long def) {
        String v = options.get(name);
        if (v == null) {
            return def;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new UsageException("option --" + name + " must be an integer, got '" + v + "'");
        }
    }

    public int getInt(String name, int def) {
        long v = getLong(name, def);
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw new UsageException("option --" + name + " is out of range: " + v);
        }
        return (int) v;
    }

    public double getDouble(String name, double def) {
        String v = options.get(name);
        if (v == null) {
            return def;
        }
        try {
            return Double.parseDouble(v.trim());
        } catch (NumberFormatException e) {
            throw new UsageException("option --" + name + " must be a number, got '" + v + "'");
        }
    }

    public boolean flag(String name) {
        return Boolean.parseBoolean(options.getOrDefault(name, "false"));
    }

    /** The option naming a Kafka client properties file; commands that talk to Kafka allow it. */
    public static final String KAFKA_CONFIG = "kafka-config";

    /**
     * Kafka client properties: the {@code --kafka-config} file's, then {@code --kafka.<name>=<value>}
     * over them, {@code ${env:NAME}} expanded from this process's environment.
     */
    public Properties kafkaProperties() {
        return kafkaProperties(System.getenv());
    }

    /** {@link #kafkaProperties()} with {@code ${env:NAME}} taken from {@code env}. */
    public Properties kafkaProperties(Map<String, String> env) {
        String file = options.get(KAFKA_CONFIG);
        return KafkaClientProperties.load(file == null ? null : java.nio.file.Path.of(file), kafka, env);
    }

    public List<String> positional() {
        return Collections.unmodifiableList(positional);
    }

    /** Fails on any option not in {@code known}, naming it. */
    public void allowOnly(java.util.Set<String> known) {
        for (String name : options.keySet()) {
            if (!known.contains(name) && !name.equals("help")) {
                throw new UsageException("unknown option --" + name);
            }
        }
    }
}
