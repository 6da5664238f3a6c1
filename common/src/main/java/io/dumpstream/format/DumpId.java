package io.dumpstream.format;

/**
 * The identity of a dump, (run_id, rank, launch_id), written {@code <run_id>/<rank>/<launch_id>}.
 * The two numeric fields come last, so the string parses from the right whatever run_id holds.
 */
public final class DumpId {
    private DumpId() {
    }

    public static String of(String runId, int rank, long launchId) {
        return runId + "/" + rank + "/" + launchId;
    }
}
