package io.dumpstream.cli;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.config.Configurator;

import picocli.CommandLine.Option;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code --verbose}, a picocli mixin of every command: the frameworks' logging back on stderr. Without it
 * (log4j2.properties) Flink, Kafka, Hadoop and Parquet log only errors, and a command prints its own lines.
 */
final class Verbosity {
    /** The loggers log4j2.properties quiets; {@code --verbose} sets them to INFO. */
    static final String[] FRAMEWORKS = {"org.apache.flink", "org.apache.kafka", "org.apache.hadoop", "org.apache.parquet",
        "kafka", "org.apache.zookeeper"};

    @Option(names = "--verbose", description = "the frameworks' own logging (Flink, Kafka, Hadoop, Parquet) at INFO on"
            + " stderr; without it they log only errors")
    boolean verbose;

    /**
     * With {@code --verbose}, the frameworks' loggers at INFO; without, the logging configuration stays as loaded
     * (the command line's log4j2.properties, or the one {@code -Dlog4j2.configurationFile} names).
     */
    void apply() {
        if (verbose) {
            Map<String, Level> levels = new LinkedHashMap<>();
            for (String f : FRAMEWORKS) {
                levels.put(f, Level.INFO);
            }
            Configurator.setLevel(levels);
        }
    }
}
