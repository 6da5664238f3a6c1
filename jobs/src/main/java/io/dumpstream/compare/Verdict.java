package io.dumpstream.compare;

/** The outcome of one key. */
public enum Verdict {
    PASS, FAIL, SHAPE_MISMATCH, DTYPE_MISMATCH, MISSING_BASELINE, MISSING_CANDIDATE
}
