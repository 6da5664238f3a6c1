package io.dumpstream.job;

import io.dumpstream.assemble.Outcome;
import io.dumpstream.format.ReasonCode;

import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The assembler's metrics, in the group {@code dumpstream} of its subtask: counters of messages,
 * value bytes, dumps, duplicates, dead letters and records (rejected ones also per reason, dumps
 * also per outcome), gauges of the dumps in assembly and of the bytes their messages hold in state,
 * and the publish-to-commit latency. A dump's rows are committed with the checkpoint after its
 * outcome, so the publish times of the dumps decided since the last checkpoint wait, per checkpoint,
 * until that checkpoint completes and then go into the histogram (milliseconds). The latency
 * bookkeeping is a metric only: it is not restored after a failure.
 */
final class AssemblerMetrics {
    static final String GROUP = "dumpstream";
    /** Latency samples the histogram keeps. */
    static final int LATENCY_WINDOW = 10_000;

    private final Counter messagesIn;
    private final Counter bytesIn;
    private final Counter dumpsIn;
    private final Counter duplicates;
    private final Counter deadLetters;
    private final Counter recordsAccepted;
    private final Counter recordsRejected;
    private final Map<ReasonCode, Counter> rejectedByReason = new EnumMap<>(ReasonCode.class);
    private final Map<Outcome, Counter> dumpsByOutcome = new EnumMap<>(Outcome.class);
    private final Histogram publishToCommit;
    private long inAssembly;
    private long stateBytes;
    /** Publish times of dumps decided since the last checkpoint, then per checkpoint until it completes. */
    private List<Long> decidedSinceSnapshot = new ArrayList<>();
    private final TreeMap<Long, List<Long>> decidedByCheckpoint = new TreeMap<>();

    /** Registers the metrics in {@link #GROUP} under the operator's group. */
    AssemblerMetrics(MetricGroup operator) {
        MetricGroup g = operator.addGroup(GROUP);
        messagesIn = g.counter("messagesIn");
        bytesIn = g.counter("bytesIn");
        dumpsIn = g.counter("dumpsIn");
        duplicates = g.counter("duplicateMessages");
        deadLetters = g.counter("deadLetterMessages");
        recordsAccepted = g.counter("recordsAccepted");
        recordsRejected = g.counter("recordsRejected");
        for (ReasonCode r : ReasonCode.values()) {
            rejectedByReason.put(r, g.addGroup("reason", r.name()).counter("recordsRejected"));
        }
        for (Outcome o : Outcome.values()) {
            dumpsByOutcome.put(o, g.addGroup("outcome", o.name()).counter("dumps"));
        }
        g.gauge("dumpsInAssembly", () -> inAssembly);
        g.gauge("assemblyStateBytes", () -> stateBytes);
        publishToCommit = g.histogram("publishToCommitMillis", new DescriptiveStatisticsHistogram(LATENCY_WINDOW));
    }

    /** A message arrived, whatever it is. */
    void message(L1Message msg) {
        messagesIn.inc();
        bytesIn.inc(msg.valueLength());
    }

    /** A usable manifest started the assembly of a dump. */
    void dumpIn() {
        dumpsIn.inc();
    }

    /** A message that changes nothing: a re-send of one already seen or of a dump already decided. */
    void duplicate() {
        duplicates.inc();
    }

    /** The counter of messages sent to the dead-letter output ({@link DeadLetters} counts them). */
    Counter deadLetters() {
        return deadLetters;
    }

    void recordAccepted() {
        recordsAccepted.inc();
    }

    void recordRejected(ReasonCode reason) {
        recordsRejected.inc();
        rejectedByReason.get(reason).inc();
    }

    void attemptStarted() {
        inAssembly++;
    }

    void attemptCleared() {
        inAssembly = Math.max(0, inAssembly - 1);
    }

    /** Bytes of messages (or assembly buffers) put into state, negative when they leave it. */
    void held(long bytes) {
        stateBytes += bytes;
    }

    /** A dump was decided: counted by outcome; its publish time waits for the next checkpoint. */
    void decided(Outcome outcome, long publishTs) {
        dumpsByOutcome.get(outcome).inc();
        decidedSinceSnapshot.add(publishTs);
    }

    /** The dumps decided since the last checkpoint are committed with this one. */
    void snapshot(long checkpointId) {
        if (!decidedSinceSnapshot.isEmpty()) {
            decidedByCheckpoint.put(checkpointId, decidedSinceSnapshot);
            decidedSinceSnapshot = new ArrayList<>();
        }
    }

    /** Checkpoints up to this one are complete at {@code nowMillis}: their dumps' latencies are recorded. */
    void checkpointComplete(long checkpointId, long nowMillis) {
        Map<Long, List<Long>> done = decidedByCheckpoint.headMap(checkpointId, true);
        for (List<Long> list : done.values()) {
            for (long ts : list) {
                publishToCommit.update(Math.max(0, nowMillis - ts));
            }
        }
        done.clear();
    }
}
