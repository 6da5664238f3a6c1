package io.dumpstream.job;

import java.util.Map;

/** ingest's command line in the IngestConfig tests: a test's base options with more after them. */
final class IngestArgs {
    private IngestArgs() {
    }

    /** {@link IngestConfig#parse(String[], Map, Object...)} of {@code base} then {@code extra}, with no environment. */
    static IngestConfig parse(String[] base, String... extra) {
        String[] a = new String[base.length + extra.length];
        System.arraycopy(base, 0, a, 0, base.length);
        System.arraycopy(extra, 0, a, base.length, extra.length);
        return IngestConfig.parse(a, Map.of());
    }
}
