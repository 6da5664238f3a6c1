package io.dumpstream.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/** Where committed files may be under an output root. */
public final class TableLayout {
    private TableLayout() {
    }

    /** The only places a committed file may be, per table (CONTRACT section 6). */
    public static final Map<String, java.util.regex.Pattern> LAYOUT = Map.of(
            "snapshots", java.util.regex.Pattern.compile("snapshots/run=[^/]+/rank=[^/]+/stage=[^/]+/(compacted-)?part-[^/]+\\.parquet"),
            "dumps", java.util.regex.Pattern.compile("dumps/run=[^/]+/rank=[^/]+/part-[^/]+\\.parquet"),
            "rejects", java.util.regex.Pattern.compile("rejects/run=[^/]+/rank=[^/]+/part-[^/]+\\.parquet"));

    /** Fails when a visible file under ROOT is not where the contract puts it. */
    public static void assertLayout(Path root) throws Exception {
        try (java.util.stream.Stream<Path> s = Files.walk(root)) {
            for (Path f : s.filter(Files::isRegularFile).toList()) {
                String rel = root.relativize(f).toString().replace('\\', '/');
                if (rel.startsWith("_") || rel.startsWith(".") || rel.contains("/.")) {
                    continue; // state, markers, hidden in-progress files
                }
                String table = rel.substring(0, Math.max(0, rel.indexOf('/')));
                java.util.regex.Pattern p = LAYOUT.get(table);
                if (p == null || !p.matcher(rel).matches()) {
                    throw new AssertionError("file outside the table layout: " + rel);
                }
            }
        }
    }

}
