package io.dumpstream.tensors;

import io.dumpstream.compare.Partition;
import io.dumpstream.job.ProgressReporter;
import io.dumpstream.job.Routed;
import io.dumpstream.manifest.AvroTrust;
import io.dumpstream.schema.ReassembledTensor;
import io.dumpstream.tensor.Disagreement;
import io.dumpstream.tensor.Rejected;
import io.dumpstream.tensor.TensorKey;
import io.dumpstream.tensor.TensorRow;
import io.dumpstream.tensor.TensorRows;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

import java.io.IOException;
import java.util.Locale;

/**
 * The operator that reassembles each group it receives ({@link GroupReassembler}), chained to the
 * source: payloads never leave the subtask that reads them. Emits the tensors table's rows routed
 * to {@code tensors/run=<run>/rank=<r>}, and on {@link #NOTES} a summary per group and a line per
 * disagreement or rejected view (at most {@link #LINES_PER_GROUP} per group; the table has them all).
 * Metrics under {@code dumpstream.tensors}: views, payloadBytes, tensors, groups (the local command's
 * progress line).
 */
public final class ReassembleGroups extends ProcessFunction<Partition, Routed<ReassembledTensor>> {
    public static final OutputTag<TensorNote> NOTES = new OutputTag<>("tensor-notes") { };
    static final int LINES_PER_GROUP = 1000;
    private static final long serialVersionUID = 1L;

    private transient GroupReassembler reassembler;
    private transient Counter views;
    private transient Counter bytes;
    private transient Counter tensors;
    private transient Counter groups;

    @Override
    public void open(OpenContext context) {
        AvroTrust.ensure(); // on a TaskManager of a cluster too
        reassembler = new GroupReassembler();
        MetricGroup m = getRuntimeContext().getMetricGroup().addGroup(ProgressReporter.GROUP).addGroup("tensors");
        views = m.counter("views");
        bytes = m.counter("payloadBytes");
        tensors = m.counter("tensors");
        groups = m.counter("groups");
    }

    @Override
    public void processElement(Partition g, Context ctx, Collector<Routed<ReassembledTensor>> out) throws IOException {
        int rank = TensorGroups.rank(g);
        TensorNote summary = new TensorNote();
        summary.group = g.dir;
        long views0 = reassembler.views;
        long bytes0 = reassembler.payloadBytes;
        long[] seen = {reassembler.views, reassembler.payloadBytes};
        reassembler.reassemble(g, rank, row -> {
            summary.tensors++;
            tensors.inc();
            if (row.coverage() < 1.0) {
                summary.partial++;
            }
            if (!row.disagreements().isEmpty()) {
                summary.disagreeing++;
            }
            for (Disagreement d : row.disagreements()) {
                summary.disagreements++;
                line(ctx, summary, disagreement(row, d));
            }
            for (Rejected r : row.rejected()) {
                summary.rejectedViews++;
                line(ctx, summary, "rejected view (" + r.reason() + "): " + r.message());
            }
            out.collect(new Routed<>(TensorPaths.tensors(row.key().runId(), rank), TensorRows.toAvro(row), 0));
        }, () -> {
            views.inc(reassembler.views - seen[0]);
            bytes.inc(reassembler.payloadBytes - seen[1]);
            seen[0] = reassembler.views;
            seen[1] = reassembler.payloadBytes;
        });
        summary.views = reassembler.views - views0;
        summary.payloadBytes = reassembler.payloadBytes - bytes0;
        groups.inc();
        ctx.output(NOTES, summary);
    }

    private static void line(Context ctx, TensorNote summary, String line) {
        if (summary.disagreements + summary.rejectedViews > LINES_PER_GROUP) {
            summary.linesDropped++;
        } else {
            ctx.output(NOTES, TensorNote.finding(summary.group, line));
        }
    }

    /** One line per disagreement, naming the tensor and both tasks. */
    static String disagreement(TensorRow row, Disagreement d) {
        TensorKey k = row.key();
        return String.format(Locale.ROOT, "disagreement: run '%s' rank %d launch %d phase %s parameter %d ('%s', %s):"
                        + " task %d and task %d differ over bytes [%d, %d): %d element(s), first at byte %d",
                k.runId(), k.rank(), k.launchId(), k.phase(), k.parameterPosition(), row.tensorName(), row.dtype(),
                d.earlierTaskId(), d.laterTaskId(), d.offset(), d.offset() + d.length(), d.differingElements(),
                d.firstDifferenceOffset());
    }

    @Override
    public void close() {
        if (reassembler != null) {
            reassembler.close();
        }
    }
}
