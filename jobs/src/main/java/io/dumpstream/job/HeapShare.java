package io.dumpstream.job;

/**
 * The share of this JVM's heap one buffer-holding part of a job may take: an eighth. A TaskManager
 * runs several subtasks and operators, each with its own buffers (record slots, sink budgets,
 * decoded pages), so no single one may claim more.
 */
public final class HeapShare {
    private HeapShare() {
    }

    /** An eighth of the maximum heap, in bytes. */
    public static long bytes() {
        return Runtime.getRuntime().maxMemory() / 8;
    }
}
