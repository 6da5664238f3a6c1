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
 * group is a chain or a pool. The JVM's own threads (garbage collector, JIT compilers, VM thread),
 * which the thread bean does not list, are read from {@code /proc/self/task} on Linux. Threads are
 * also sampled every 50 ms, so a thread that ended between the snapshots (a task thread of a job
 * stopped with a savepoint) counts up to its last sample; what the process spent beyond the groups is
 * the rest.
 */
final class ThreadCpu implements AutoCloseable {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final Map<Long, Long> start = new HashMap<>();
    private final long processStart;
    /** The group of the JVM's JIT compiler threads in {@link #since()}. */
    static final String JIT = "(JVM: JIT compilers)";
    private final Map<String, Long> vmStart = vmThreads();
    /** Last CPU time and name seen per thread by the sampler. */
    private final Map<Long, long[]> seen = new java.util.concurrent.ConcurrentHashMap<>();
    private final Map<Long, String> names = new java.util.concurrent.ConcurrentHashMap<>();
    private final Thread sampler;

    ThreadCpu() {
        processStart = IngestThroughputBenchmark.processCpuNanos();
        for (long id : THREADS.getAllThreadIds()) {
            start.put(id, Math.max(0, THREADS.getThreadCpuTime(id)));
        }
        sampler = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                sample();
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "thread-cpu-sampler");
        sampler.setDaemon(true);
        sampler.start();
    }

    private void sample() {
        for (long id : THREADS.getAllThreadIds()) {
            long cpu = THREADS.getThreadCpuTime(id);
            if (cpu < 0) {
                continue;
            }
            long[] last = seen.get(id);
            if (last == null) {
                ThreadInfo info = THREADS.getThreadInfo(id);
                if (info == null) {
                    continue;
                }
                names.put(id, info.getThreadName());
                seen.put(id, new long[] {cpu});
            } else {
                last[0] = cpu;
            }
        }
    }

    @Override
    public void close() {
        sampler.interrupt();
    }

    /** Nanoseconds of CPU per group since construction, plus "(rest of the process)". */
    Map<String, Long> since() {
        long process = IngestThroughputBenchmark.processCpuNanos() - processStart;
        Map<String, Long> groups = new TreeMap<>();
        long sum = 0;
        java.util.Set<Long> live = new java.util.HashSet<>();
        for (long id : THREADS.getAllThreadIds()) {
            long now = THREADS.getThreadCpuTime(id);
            ThreadInfo info = THREADS.getThreadInfo(id);
            if (now < 0 || info == null) {
                continue;
            }
            live.add(id);
            long d = now - start.getOrDefault(id, 0L);
            groups.merge(group(info.getThreadName()), d, Long::sum);
            sum += d;
        }
        for (Map.Entry<Long, long[]> e : seen.entrySet()) {
            if (!live.contains(e.getKey())) {
                long d = e.getValue()[0] - start.getOrDefault(e.getKey(), 0L);
                groups.merge(group(names.get(e.getKey())) + " (ended)", d, Long::sum);
                sum += d;
            }
        }
        for (Map.Entry<String, Long> e : vmThreads().entrySet()) {
            long d = e.getValue() - vmStart.getOrDefault(e.getKey(), 0L);
            groups.merge(e.getKey(), d, Long::sum);
            sum += d;
        }
        groups.put("(rest of the process: ended threads, others)", Math.max(0, process - sum));
        return groups;
    }

    /** CPU nanoseconds of the JVM's own threads by kind, from /proc/self/task (empty elsewhere). */
    private static Map<String, Long> vmThreads() {
        Map<String, Long> kinds = new HashMap<>();
        java.io.File[] tasks = new java.io.File("/proc/self/task").listFiles();
        if (tasks == null) {
            return kinds;
        }
        long nanosPerTick = 10_000_000L; // USER_HZ is 100 on Linux
        for (java.io.File t : tasks) {
            try {
                String stat = java.nio.file.Files.readString(t.toPath().resolve("stat"));
                int open = stat.indexOf('(');
                int close = stat.lastIndexOf(')');
                String comm = stat.substring(open + 1, close);
                String kind = comm.startsWith("GC Thread") || comm.startsWith("G1 ") ? "(JVM: garbage collector)"
                        : comm.startsWith("C1 Compiler") || comm.startsWith("C2 Compiler") ? JIT
                        : comm.startsWith("VM Thread") ? "(JVM: VM thread)" : null;
                if (kind == null) {
                    continue;
                }
                String[] f = stat.substring(close + 2).split(" ");
                long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime
                kinds.merge(kind, ticks * nanosPerTick, Long::sum);
            } catch (java.io.IOException | RuntimeException e) {
                // a thread that ended while being read
            }
        }
        return kinds;
    }

    static String group(String name) {
        String g = name.replaceAll(" -> .*", "");
        g = g.replaceAll("\\(\\d+/\\d+\\)#\\d+", "");
        g = g.replaceAll("[-_ ]?\\d+", "");
        return g.length() > 60 ? g.substring(0, 60) : g.trim();
    }
}
