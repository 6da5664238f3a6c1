package io.dumpstream.job;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * CPU time per group of threads between two snapshots, to say which stage of a benchmark spends
 * the CPU: threads are grouped by name with subtask indices and numbers dropped (Flink names a
 * task thread after its chain, e.g. "decode records and statistics -> write snapshots ..."), so a
 * group is a chain or a pool. Threads that ended between the snapshots are missed; what the
 * process spent beyond the groups (garbage collection, JIT compilers) is reported as the rest.
 */
final class ThreadCpu {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final Map<Long, Long> start = new HashMap<>();
    private final long processStart;

    ThreadCpu() {
        processStart = IngestThroughputBenchmark.processCpuNanos();
        for (long id : THREADS.getAllThreadIds()) {
            start.put(id, Math.max(0, THREADS.getThreadCpuTime(id)));
        }
    }

    /** Nanoseconds of CPU per group since construction, plus "(rest of the process)". */
    Map<String, Long> since() {
        long process = IngestThroughputBenchmark.processCpuNanos() - processStart;
        Map<String, Long> groups = new TreeMap<>();
        long sum = 0;
        for (long id : THREADS.getAllThreadIds()) {
            long now = THREADS.getThreadCpuTime(id);
            ThreadInfo info = THREADS.getThreadInfo(id);
            if (now < 0 || info == null) {
                continue;
            }
            long d = now - start.getOrDefault(id, 0L);
            groups.merge(group(info.getThreadName()), d, Long::sum);
            sum += d;
        }
        groups.put("(rest of the process: GC, JIT, ended threads)", Math.max(0, process - sum));
        return groups;
    }

    static String group(String name) {
        String g = name.replaceAll(" -> .*", "");
        g = g.replaceAll("\\(\\d+/\\d+\\)#\\d+", "");
        g = g.replaceAll("[-_ ]?\\d+", "");
        return g.length() > 60 ? g.substring(0, 60) : g.trim();
    }
}
