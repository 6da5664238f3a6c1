package io.dumpstream.job;

import io.dumpstream.schema.RecordPlan;

/** An accepted record on its way from the assembler to a decoder: its plan, its dump's identity and its payload. */
public class RecordWork {
    public String dumpId;
    public String runId;
    public int rank;
    public long launchId;
    public Long step;
    public int recordIndex;
    public RecordPlan plan;
    public byte[] payload;
    /** Escaped snapshots partition path: the bucket the snapshot sink writes the row to. */
    public String bucket;

    public RecordWork() {
    }
}
