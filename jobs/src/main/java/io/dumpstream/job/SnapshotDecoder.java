package io.dumpstream.job;

import io.dumpstream.decode.Rows;
import io.dumpstream.schema.TensorSnapshot;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;

import java.time.Instant;

/** Decodes one accepted record into its snapshot row: statistics, CRC and every column of the plan. */
public class SnapshotDecoder extends RichMapFunction<RecordWork, Routed<TensorSnapshot>> {
    private static final long serialVersionUID = 1L;

    private transient Counter recordsDecoded;
    private transient Counter payloadBytes;

    @Override
    public void open(OpenContext ctx) {
        MetricGroup g = getRuntimeContext().getMetricGroup().addGroup("dumpstream");
        recordsDecoded = g.counter("recordsDecoded");
        payloadBytes = g.counter("payloadBytesDecoded");
    }

    @Override
    public Routed<TensorSnapshot> map(RecordWork w) {
        TensorSnapshot row = Rows.snapshot(w.dumpId, w.runId, w.launchId, w.step, w.plan, w.recordIndex, w.payload,
                Instant.now());
        recordsDecoded.inc();
        payloadBytes.inc(w.payload.length);
        return new Routed<>(w.bucket, row, w.payload.length);
    }
}
