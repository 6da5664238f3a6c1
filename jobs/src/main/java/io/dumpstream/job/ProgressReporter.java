package io.dumpstream.job;

import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A Flink metric reporter for jobs run in this JVM (the local {@code ingest} and {@code demo}
 * commands): it keeps the job's own {@code dumpstream.*} metrics of every subtask so that the
 * command can print a progress line from them. Counters are summed over subtasks and stay
 * monotonic across restarts (a removed counter's last value is kept).
 *
 * <p>Enabled with {@code metrics.reporter.progress.factory.class} = this class (see
 * {@link #enable(org.apache.flink.configuration.Configuration)}).
 */
public final class ProgressReporter implements MetricReporter, MetricReporterFactory {
    public static final String GROUP = "dumpstream";

    private static final Map<String, List<Counter>> COUNTERS = new ConcurrentHashMap<>();
    private static final Map<String, Long> RETIRED = new ConcurrentHashMap<>();
    private static final Map<String, List<Gauge<?>>> GAUGES = new ConcurrentHashMap<>();
    private static final Map<String, List<Histogram>> HISTOGRAMS = new ConcurrentHashMap<>();

    /** Adds this reporter to a job configuration. */
    public static void enable(org.apache.flink.configuration.Configuration conf) {
        conf.setString("metrics.reporter.progress.factory.class", ProgressReporter.class.getName());
    }

    @Override
    public MetricReporter createMetricReporter(Properties properties) {
        return new ProgressReporter();
    }

    @Override
    public void open(MetricConfig config) {
    }

    @Override
    public void close() {
    }

    /** The metric's name below the {@code dumpstream} group, e.g. {@code reason.CHUNKS_MISSING.recordsRejected}; null for other metrics. */
    static String key(String metricName, MetricGroup group) {
        String[] scope = group.getScopeComponents();
        for (int i = 0; i < scope.length; i++) {
            if (scope[i].equals(GROUP)) {
                StringBuilder b = new StringBuilder();
                for (int j = i + 1; j < scope.length; j++) {
                    b.append(scope[j]).append('.');
                }
                return b.append(metricName).toString();
            }
        }
        return null;
    }

    @Override
    public void notifyOfAddedMetric(Metric metric, String metricName, MetricGroup group) {
        String key = key(metricName, group);
        if (key == null) {
            return;
        }
        if (metric instanceof Counter c) {
            COUNTERS.computeIfAbsent(key, k -> new CopyOnWriteArrayList<>()).add(c);
        } else if (metric instanceof Gauge<?> g) {
            GAUGES.computeIfAbsent(key, k -> new CopyOnWriteArrayList<>()).add(g);
        } else if (metric instanceof Histogram h) {
            HISTOGRAMS.computeIfAbsent(key, k -> new CopyOnWriteArrayList<>()).add(h);
        }
    }

    @Override
    public void notifyOfRemovedMetric(Metric metric, String metricName, MetricGroup group) {
        String key = key(metricName, group);
        if (key == null) {
            return;
        }
        if (metric instanceof Counter c) {
            List<Counter> list = COUNTERS.get(key);
            if (list != null && list.remove(c)) {
                RETIRED.merge(key, c.getCount(), Long::sum);
            }
        } else if (metric instanceof Gauge<?> g) {
            List<Gauge<?>> list = GAUGES.get(key);
            if (list != null) {
                list.remove(g);
            }
        } else if (metric instanceof Histogram h) {
            List<Histogram> list = HISTOGRAMS.get(key);
            if (list != null) {
                list.remove(h);
            }
        }
    }

    /** Forgets the counts of jobs that have ended (a new job in the same JVM then counts from zero). */
    public static void forgetRetired() {
        RETIRED.clear();
    }

    /** The sum over subtasks (live and retired) of counter {@code key}. */
    public static long count(String key) {
        long n = RETIRED.getOrDefault(key, 0L);
        for (Counter c : COUNTERS.getOrDefault(key, List.of())) {
            n += c.getCount();
        }
        return n;
    }

    /** The sum over live subtasks of numeric gauge {@code key}. */
    public static long gauge(String key) {
        long n = 0;
        for (Gauge<?> g : GAUGES.getOrDefault(key, List.of())) {
            if (g.getValue() instanceof Number v) {
                n += v.longValue();
            }
        }
        return n;
    }

    /** The largest median over live subtasks of histogram {@code key}, or NaN when none has values. */
    public static double median(String key) {
        double m = Double.NaN;
        for (Histogram h : HISTOGRAMS.getOrDefault(key, List.of())) {
            if (h.getCount() > 0) {
                double v = h.getStatistics().getQuantile(0.5);
                m = Double.isNaN(m) ? v : Math.max(m, v);
            }
        }
        return m;
    }

    /** Quantile {@code q} of histogram {@code key} over the values of every live subtask, or NaN when empty. */
    public static double quantile(String key, double q) {
        java.util.List<Long> all = new java.util.ArrayList<>();
        for (Histogram h : HISTOGRAMS.getOrDefault(key, List.of())) {
            for (long v : h.getStatistics().getValues()) {
                all.add(v);
            }
        }
        if (all.isEmpty()) {
            return Double.NaN;
        }
        all.sort(null);
        return all.get((int) Math.min(all.size() - 1, Math.round(q * (all.size() - 1))));
    }

    /** Values recorded by histogram {@code key} over live subtasks. */
    public static long histogramCount(String key) {
        long n = 0;
        for (Histogram h : HISTOGRAMS.getOrDefault(key, List.of())) {
            n += h.getCount();
        }
        return n;
    }

    /** Counter keys seen so far (for the summary of rejects by reason). */
    public static java.util.Set<String> counterKeys() {
        java.util.Set<String> keys = new java.util.TreeSet<>(COUNTERS.keySet());
        keys.addAll(RETIRED.keySet());
        return keys;
    }
}
