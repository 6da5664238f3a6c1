package io.dumpstream.assemble;

/** A dump's outcome (CONTRACT section 6, table dumps), the first that applies. */
public enum Outcome {
    REJECTED, INCOMPLETE, PARTIAL, COMPLETE
}
