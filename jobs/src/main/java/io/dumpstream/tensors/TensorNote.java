package io.dumpstream.tensors;

/**
 * What the tensors job tells its client (collected, small): per group one summary ({@link #line}
 * null, the counts set) and one note per finding (a disagreement or a rejected view) with its line.
 * A Flink POJO.
 */
public class TensorNote {
    /** The group, {@code run=<run>/rank=<r>}. */
    public String group;
    /** A finding's line for the user; null for a group summary. */
    public String line;
    public long tensors;
    public long views;
    public long payloadBytes;
    /** Tensors with coverage below 1. */
    public long partial;
    /** Tensors with overlaps that disagree, and the disagreements. */
    public long disagreeing;
    public long disagreements;
    public long rejectedViews;
    /** Findings of the group not sent as lines (beyond the per-group limit). */
    public long linesDropped;

    public TensorNote() {
    }

    static TensorNote finding(String group, String line) {
        TensorNote n = new TensorNote();
        n.group = group;
        n.line = line;
        return n;
    }
}
