package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dumpstream.assemble.Outcome;
import io.dumpstream.format.ReasonCode;

import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/** The assembler's metrics by the names a reporter sees, with exact values after each kind of event. */
class AssemblerMetricsTest {

    /** A metric group that keeps what is registered in it, by dotted name (a group key and value both count). */
    private static final class Registry extends UnregisteredMetricsGroup {
        private final Map<String, Metric> metrics;
        private final String prefix;

        Registry() {
            this(new TreeMap<>(), "");
        }

        private Registry(Map<String, Metric> metrics, String prefix) {
            this.metrics = metrics;
            this.prefix = prefix;
        }

        private <M extends Metric> M keep(String name, M metric) {
            metrics.put(prefix + name, metric);
            return metric;
        }

        @Override
        public <C extends Counter> C counter(String name, C counter) {
            return keep(name, counter);
        }

        @Override
        public Counter counter(String name) {
            return keep(name, new org.apache.flink.metrics.SimpleCounter());
        }

        @Override
        public <T, G extends Gauge<T>> G gauge(String name, G gauge) {
            return keep(name, gauge);
        }

        @Override
        public <H extends Histogram> H histogram(String name, H histogram) {
            return keep(name, histogram);
        }

        @Override
        public MetricGroup addGroup(String name) {
            return new Registry(metrics, prefix + name + ".");
        }

        @Override
        public MetricGroup addGroup(String key, String value) {
            return new Registry(metrics, prefix + key + "." + value + ".");
        }

        long count(String name) {
            return ((Counter) metrics.get("dumpstream." + name)).getCount();
        }

        /** The counters that are not 0, by name without the group. */
        Map<String, Long> nonZeroCounts() {
            Map<String, Long> out = new TreeMap<>();
            metrics.forEach((name, m) -> {
                if (m instanceof Counter c && c.getCount() != 0) {
                    out.put(name.substring("dumpstream.".length()), c.getCount());
                }
            });
            return out;
        }

        Object gauge(String name) {
            return ((Gauge<?>) metrics.get("dumpstream." + name)).getValue();
        }

        long[] latencies() {
            long[] v = ((Histogram) metrics.get("dumpstream.publishToCommitMillis")).getStatistics().getValues();
            Arrays.sort(v);
            return v;
        }
    }

    private static L1Message withValue(int bytes) {
        L1Message m = new L1Message();
        m.value = bytes < 0 ? null : new byte[bytes];
        return m;
    }

    @Test
    void theMetricsAreRegisteredUnderTheNamesReportersAndTheProgressLineRead() {
        Registry r = new Registry();
        new AssemblerMetrics(r);
        TreeSet<String> expected = new TreeSet<>();
        for (String n : new String[]{"messagesIn", "bytesIn", "dumpsIn", "duplicateMessages", "deadLetterMessages",
                "recordsAccepted", "recordsRejected", "dumpsInAssembly", "assemblyStateBytes", "publishToCommitMillis"}) {
            expected.add("dumpstream." + n);
        }
        for (ReasonCode c : ReasonCode.values()) {
            expected.add("dumpstream.reason." + c.name() + ".recordsRejected");
        }
        for (Outcome o : Outcome.values()) {
            expected.add("dumpstream.outcome." + o.name() + ".dumps");
        }
        assertEquals(expected, r.metrics.keySet());
    }

    @Test
    void countersAndGaugesFollowTheEvents() {
        Registry r = new Registry();
        AssemblerMetrics m = new AssemblerMetrics(r);
        m.message(withValue(10));
        m.message(withValue(4096));
        m.message(withValue(-1));
        m.dumpIn();
        m.duplicate();
        m.duplicate();
        m.deadLetters().inc(3);
        m.recordAccepted();
        m.recordRejected(ReasonCode.CHUNK_CRC_MISMATCH);
        m.recordRejected(ReasonCode.CHUNK_CRC_MISMATCH);
        m.recordRejected(ReasonCode.CHUNKS_MISSING);
        m.decided(Outcome.PARTIAL, 0);
        assertEquals(Map.of("messagesIn", 3L, "bytesIn", 4106L, "dumpsIn", 1L, "duplicateMessages", 2L,
                "deadLetterMessages", 3L, "recordsAccepted", 1L, "recordsRejected", 3L,
                "reason.CHUNK_CRC_MISMATCH.recordsRejected", 2L, "reason.CHUNKS_MISSING.recordsRejected", 1L,
                "outcome.PARTIAL.dumps", 1L), r.nonZeroCounts(), "every other counter is 0");

        m.attemptStarted();
        m.attemptStarted();
        m.held(5000);
        m.held(-1200);
        assertEquals(2L, r.gauge("dumpsInAssembly"));
        assertEquals(3800L, r.gauge("assemblyStateBytes"));
        m.attemptCleared();
        m.attemptCleared();
        m.attemptCleared();
        assertEquals(0L, r.gauge("dumpsInAssembly"), "never below zero");
    }

    @Test
    void aDumpsLatencyIsRecordedWhenTheCheckpointAfterItsOutcomeCompletes() {
        Registry r = new Registry();
        AssemblerMetrics m = new AssemblerMetrics(r);
        m.snapshot(1); // nothing decided: nothing waits
        m.decided(Outcome.COMPLETE, 1_000);
        m.decided(Outcome.REJECTED, 2_000);
        m.snapshot(2);
        m.decided(Outcome.COMPLETE, 3_000);
        m.snapshot(3);
        m.decided(Outcome.INCOMPLETE, 50_000); // after checkpoint 3: waits for the next one
        m.checkpointComplete(1, 9_000);
        assertArrayEquals(new long[0], r.latencies());
        m.checkpointComplete(2, 10_000);
        assertArrayEquals(new long[]{8_000, 9_000}, r.latencies());
        m.checkpointComplete(2, 20_000);
        assertArrayEquals(new long[]{8_000, 9_000}, r.latencies(), "recorded once");
        // a later checkpoint completes the ones before it too; a publish time ahead of the clock counts 0
        m.snapshot(4);
        m.checkpointComplete(4, 11_000);
        assertArrayEquals(new long[]{0, 8_000, 8_000, 9_000}, r.latencies());
        assertEquals(1, r.count("outcome.INCOMPLETE.dumps"));
    }
}
