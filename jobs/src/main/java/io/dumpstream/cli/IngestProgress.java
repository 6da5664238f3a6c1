package io.dumpstream.cli;

import io.dumpstream.assemble.Outcome;
import io.dumpstream.job.ProgressReporter;

import java.util.Locale;

/** The progress line of the local job, from its own Flink metrics ({@link ProgressReporter}). */
final class IngestProgress {
    private static final double MIB = 1024.0 * 1024.0;
    private final long t0 = System.nanoTime();
    private long lastBytes;
    private long lastTime = t0;

    String line() {
        long now = System.nanoTime();
        long bytes = ProgressReporter.count("bytesIn");
        double rate = (bytes - lastBytes) / MIB / Math.max(1e-9, (now - lastTime) / 1e9);
        lastBytes = bytes;
        lastTime = now;
        StringBuilder outcomes = new StringBuilder();
        long dumps = 0;
        for (Outcome o : Outcome.values()) {
            long n = ProgressReporter.count("outcome." + o.name() + ".dumps");
            dumps += n;
            if (n > 0) {
                outcomes.append(outcomes.length() == 0 ? "" : ", ").append(o.name()).append(' ').append(n);
            }
        }
        double p50 = ProgressReporter.median("publishToCommitMillis");
        long secs = (now - t0) / 1_000_000_000L;
        return String.format(Locale.ROOT,
                "ingest %02d:%02d:%02d  messages %d, %.1f MiB in (%.1f MiB/s)  dumps done %d%s  records %d accepted,"
                        + " %d rejected  in assembly %d (%.1f MiB state)  dead letters %d  publish->commit p50 %s",
                secs / 3600, secs / 60 % 60, secs % 60, ProgressReporter.count("messagesIn"), bytes / MIB, rate,
                dumps, outcomes.length() == 0 ? "" : " (" + outcomes + ")",
                ProgressReporter.count("recordsAccepted"), ProgressReporter.count("recordsRejected"),
                ProgressReporter.gauge("dumpsInAssembly"), ProgressReporter.gauge("assemblyStateBytes") / MIB,
                ProgressReporter.count("deadLetterMessages"),
                Double.isNaN(p50) ? "-" : String.format(Locale.ROOT, "%.0f ms", p50));
    }
}
