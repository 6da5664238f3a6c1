package io.dumpstream.job;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A Flink metric reporter for a benchmark in this JVM: it keeps the JobManager's checkpoint gauges of the
 * running job ({@code numberOfCompletedCheckpoints}, {@code lastCheckpointDuration}) so that the benchmark can
 * cut its measurement windows at checkpoint completions. One job at a time.
 */
public final class CheckpointWatch implements MetricReporter, MetricReporterFactory {
    private static final Map<String, Gauge<?>> GAUGES = new ConcurrentHashMap<>();

    /** {@code conf} with this reporter added. */
    static Configuration enable(Configuration conf) {
        conf.setString("metrics.reporter.checkpoints.factory.class", CheckpointWatch.class.getName());
        return conf;
    }

    /** Forgets the gauges of the job before. */
    static void reset() {
        GAUGES.clear();
    }

    /** Checkpoints completed by the running job so far (0 before its first, or before it registered). */
    static long completed() {
        return value("numberOfCompletedCheckpoints");
    }

    /** The last completed checkpoint's duration in milliseconds. */
    static long lastDurationMillis() {
        return value("lastCheckpointDuration");
    }

    private static long value(String name) {
        Gauge<?> g = GAUGES.get(name);
        return g != null && g.getValue() instanceof Number n ? n.longValue() : 0;
    }

    @Override
    public MetricReporter createMetricReporter(java.util.Properties properties) {
        return new CheckpointWatch();
    }

    @Override
    public void open(MetricConfig config) {
    }

    @Override
    public void close() {
    }

    @Override
    public void notifyOfAddedMetric(Metric metric, String metricName, MetricGroup group) {
        if (metric instanceof Gauge<?> g
                && (metricName.equals("numberOfCompletedCheckpoints") || metricName.equals("lastCheckpointDuration"))) {
            GAUGES.put(metricName, g);
        }
    }

    @Override
    public void notifyOfRemovedMetric(Metric metric, String metricName, MetricGroup group) {
        GAUGES.remove(metricName, metric);
    }
}
