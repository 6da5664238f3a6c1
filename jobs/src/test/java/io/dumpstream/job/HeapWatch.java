package io.dumpstream.job;

import com.sun.management.GarbageCollectionNotificationInfo;
import io.dumpstream.table.OffHeapPages;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

/**
 * Peak heap in use right after a garbage collection, over a window: the live set plus what the
 * collection did not get to (old-generation garbage after a young collection), so an upper bound of
 * what the job keeps reachable, independent of -Xmx and of how lazily the collector runs. Young
 * and mixed collections both count. For benchmarks: the MiniCluster's TaskManager is this JVM.
 */
final class HeapWatch implements AutoCloseable {
    private final AtomicLong peak = new AtomicLong();
    private final AtomicLong collections = new AtomicLong();
    private final List<NotificationEmitter> emitters = new ArrayList<>();
    private final NotificationListener listener = this::onGc;
    private final List<String> heapPools = new ArrayList<>();

    private final AtomicLong peakLive = new AtomicLong();
    private final AtomicLong peakDirect = new AtomicLong();
    private final Thread probe;

    /**
     * @param probeMillis if positive, a thread also forces a full collection at this period and
     *                    records the heap in use right after it: the live set, without the
     *                    old-generation garbage a young collection leaves (G1 collects the old
     *                    generation only past its occupancy threshold, about 45% of -Xmx). The
     *                    pauses slow the job, so the benchmark probes one untimed round only.
     */
    HeapWatch(long probeMillis) {
        if (probeMillis > 0) {
            probe = new Thread(() -> {
                try {
                    while (!Thread.currentThread().isInterrupted()) {
                        Thread.sleep(probeMillis);
                        peakLive.accumulateAndGet(liveNow(), Math::max);
                        peakDirect.accumulateAndGet(OffHeapPages.directBytesInUse(), Math::max);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "heap-probe");
            probe.setDaemon(true);
            probe.start();
        } else {
            probe = null;
        }
        ManagementFactory.getMemoryPoolMXBeans().stream().filter(p -> p.getType() == MemoryType.HEAP)
                .forEach(p -> heapPools.add(p.getName()));
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc instanceof NotificationEmitter e) {
                e.addNotificationListener(listener, null, null);
                emitters.add(e);
            }
        }
    }

    private void onGc(Notification n, Object handback) {
        if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(n.getType())) {
            return;
        }
        GarbageCollectionNotificationInfo info = GarbageCollectionNotificationInfo.from((CompositeData) n.getUserData());
        long used = 0;
        for (var e : info.getGcInfo().getMemoryUsageAfterGc().entrySet()) {
            if (heapPools.contains(e.getKey())) {
                MemoryUsage u = e.getValue();
                used += u.getUsed();
            }
        }
        collections.incrementAndGet();
        peak.accumulateAndGet(used, Math::max);
    }

    /** Largest heap in use after a collection since this watch started (0 if none ran). */
    long peakAfterGcBytes() {
        return peak.get();
    }

    /** Largest heap in use right after a probe's full collection (0 without a probe). */
    long peakLiveBytes() {
        return peakLive.get();
    }

    /**
     * Largest direct (off-heap) memory in use at a probe (0 without a probe): the part writers' pages
     * ({@code OffHeapPages}), Flink's network buffers, the Kafka clients' and ZSTD's buffers.
     */
    long peakDirectBytes() {
        return peakDirect.get();
    }

    long collections() {
        return collections.get();
    }

    /** Heap in use after a full collection now: the baseline the job adds to. */
    static long liveNow() {
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    @Override
    public void close() throws Exception {
        if (probe != null) {
            probe.interrupt();
            probe.join();
        }
        for (NotificationEmitter e : emitters) {
            e.removeNotificationListener(listener);
        }
    }
}
