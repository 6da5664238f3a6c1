package io.dumpstream.table;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.TreeMap;
import org.apache.parquet.bytes.ByteBufferAllocator;

/**
 * Memory for the compressed pages a part file holds until its row group is written: off the Java
 * heap where the JVM has room, each page's buffer freed the moment the part writer releases it. A
 * part buffers its row group's pages until the part closes (for small partitions, the next
 * checkpoint), so on the heap those pages were the live set every young collection copied again
 * until promoted: in the 1 MiB-dump benchmark the collector cost about as much CPU per MiB as the
 * statistics. Off the heap the collector never sees them; the sink's budget ({@code SinkBudget})
 * bounds them as before.
 *
 * <p>Pages under {@link #MIN_DIRECT_BYTES} (the small columns' pages, tens of bytes each) stay on
 * the heap: an off-heap allocation is a {@code malloc}, which only pays for payload-sized pages. A
 * page goes to the heap too when the JVM's direct memory in use would pass {@code limit} with it
 * (by default the JVM's direct-memory maximum less {@link #headroom}): the JDK answers a direct
 * allocation over its maximum with a full collection, up to half a second of retries and then an
 * {@code OutOfMemoryError}, so pages never go near it, and a TaskManager given no task off-heap
 * memory writes its pages on the heap as before instead of failing. A page buffer is freed by
 * {@link #release}; one a discarded part never releases is freed when its buffer object is
 * collected (the JDK's cleaner), so a failed part does not leak.
 *
 * <p>Released buffers are kept for reuse, up to {@code poolBytes} in all (by default an eighth of
 * the limit): {@code ByteBuffer.allocateDirect} zeroes every buffer it makes, and the {@code malloc}
 * behind it takes pages the C library gave back to the kernel when the last parts were freed, so
 * every buffer was zeroed and page-faulted in anew. For 1 MiB dumps the deferred parts' payload
 * copies cost a quarter of the writer thread's CPU that way, for 64 MiB dumps a page buffer per
 * page (and the compressor's, per job) 15%: more than their statistics. The kept buffers are never
 * more than what the writers held at once before they released them (the sink's budget bounds
 * that), and a checkpoint that closes every part gives them back for the next interval's parts.
 * Buffers are made in capacity classes
 * (eight per power of two, {@link #capacityFor}) and a request takes a kept buffer of its own class
 * or the one above, so a buffer has at most about a quarter more capacity than was asked for; its
 * limit is the size asked for. A reused buffer is not zeroed: callers write before they read, as
 * with every parquet-java allocator. The kept buffers count as direct memory in use, and they are
 * freed when a page would otherwise go to the heap for want of room under the limit, and when they
 * have not been asked for in {@link #KEEP_NANOS} (looked over at a release, at most every quarter
 * of that: a TaskManager whose jobs moved on to other page sizes does not hold the old ones).
 */
public final class OffHeapPages implements ByteBufferAllocator {
    /** Pages from this size on may go off the heap. */
    public static final int MIN_DIRECT_BYTES = 4096;

    private static final sun.misc.Unsafe UNSAFE = unsafe();
    private static final BufferPoolMXBean DIRECT = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)
            .stream().filter(b -> b.getName().equals("direct")).findFirst()
            .orElseThrow(() -> new ExceptionInInitializerError("no direct buffer pool bean"));

    /** How long a kept buffer waits to be asked for again before it is freed: six 10 s checkpoint intervals. */
    static final long KEEP_NANOS = 60_000_000_000L;
    /** Kept buffers at most, whatever their size. */
    static final int POOL_BUFFERS = 1 << 14;

    /** The allocator of every part writer: pages off the heap up to the JVM's maximum less the headroom. */
    public static final OffHeapPages INSTANCE = new OffHeapPages(maxDirectBytes() - headroom(maxDirectBytes()));

    /**
     * As {@link #INSTANCE} but keeping nothing for reuse: every page a new buffer (the part writer's
     * allocator when {@link PartWriter#PAGE_POOL} is {@code false}, for an A/B of the pool).
     */
    public static final OffHeapPages UNPOOLED = new OffHeapPages(INSTANCE.limit, 0);

    private final long limit;
    private final long poolBytes;
    /** Kept buffers by capacity; guarded by itself. */
    private final TreeMap<Integer, ArrayDeque<ByteBuffer>> kept = new TreeMap<>();
    /** The kept buffers by identity (a buffer's own hash is of its content), with when each was released. */
    private final IdentityHashMap<ByteBuffer, Long> keptSet = new IdentityHashMap<>();
    private long keptBytes;
    /** When the kept buffers were last looked over for ones kept too long ({@link #expire}). */
    private long lastExpiry = System.nanoTime();

    /** Off the heap while the JVM's direct memory in use stays at or under {@code limit} bytes. */
    public OffHeapPages(long limit) {
        this(limit, Math.max(0, limit) / 8);
    }

    /** As {@link #OffHeapPages(long)}, keeping released buffers of up to {@code poolBytes} in all (0: none). */
    public OffHeapPages(long limit, long poolBytes) {
        this.limit = limit;
        this.poolBytes = poolBytes;
    }

    /** Direct buffer memory the JVM has in use now (its "direct" buffer pool): pages and everything else. */
    public static long directBytesInUse() {
        return DIRECT.getMemoryUsed();
    }

    @Override
    public ByteBuffer allocate(int size) {
        if (size < MIN_DIRECT_BYTES) {
            return ByteBuffer.allocate(size);
        }
        ByteBuffer b = take(size);
        if (b != null) {
            return b;
        }
        int capacity = capacityFor(size);
        if (directBytesInUse() + capacity > limit) {
            freeKept(); // kept buffers before pages on the heap
            if (directBytesInUse() + capacity > limit) {
                return ByteBuffer.allocate(size);
            }
        }
        return newDirect(size);
    }

    /**
     * A direct buffer of at least {@code size} bytes whatever the limit (a compressor's working
     * buffers, which must be direct), position 0 and limit {@code size}; give it back by {@link #release}.
     */
    public ByteBuffer direct(int size) {
        ByteBuffer b = take(size);
        return b != null ? b : newDirect(size);
    }

    /** A new direct buffer of {@code size}'s capacity class, limited to {@code size}. */
    private static ByteBuffer newDirect(int size) {
        return ByteBuffer.allocateDirect(capacityFor(size)).limit(size);
    }

    /**
     * Gives a buffer from {@link #allocate} or {@link #direct} back: kept for reuse while the pool
     * has room, else freed now. The caller no longer uses it, nor any slice of it.
     */
    @Override
    public void release(ByteBuffer b) {
        release(b, System.nanoTime());
    }

    /** {@link #release(ByteBuffer)} at {@code now} (of {@code System.nanoTime}). */
    void release(ByteBuffer b, long now) {
        if (!b.isDirect()) {
            return;
        }
        int capacity = b.capacity();
        if (poolBytes > 0) {
            synchronized (kept) {
                if (keptSet.containsKey(b)) {
                    return; // released twice: kept once
                }
                if (now - lastExpiry > KEEP_NANOS / 4) {
                    expire(now);
                }
                if (keptBytes + capacity <= poolBytes && keptSet.size() < POOL_BUFFERS) {
                    keptSet.put(b, now);
                    kept.computeIfAbsent(capacity, c -> new ArrayDeque<>()).push(b);
                    keptBytes += capacity;
                    return;
                }
            }
        }
        UNSAFE.invokeCleaner(b);
    }

    /** Bytes of the released buffers kept for reuse now. */
    public long keptBytes() {
        synchronized (kept) {
            return keptBytes;
        }
    }

    /** A kept buffer of {@code size}'s capacity class or the next one up, ready for use, or null. */
    private ByteBuffer take(int size) {
        if (poolBytes == 0) {
            return null;
        }
        int capacity = capacityFor(size);
        int most = capacityFor(capacity + 1);
        synchronized (kept) {
            Map.Entry<Integer, ArrayDeque<ByteBuffer>> e = kept.ceilingEntry(capacity);
            if (e == null || e.getKey() > most) {
                return null;
            }
            ByteBuffer b = e.getValue().pop();
            keptSet.remove(b);
            if (e.getValue().isEmpty()) {
                kept.remove(e.getKey());
            }
            keptBytes -= b.capacity();
            return b.clear().limit(size).order(ByteOrder.BIG_ENDIAN);
        }
    }

    /**
     * Frees the kept buffers released more than {@link #KEEP_NANOS} before {@code now}; each class's
     * buffers are reused last released first, so its oldest are at the far end.
     */
    void expire(long now) {
        synchronized (kept) {
            lastExpiry = now;
            var classes = kept.values().iterator();
            while (classes.hasNext()) {
                ArrayDeque<ByteBuffer> same = classes.next();
                while (!same.isEmpty() && now - keptSet.get(same.peekLast()) > KEEP_NANOS) {
                    ByteBuffer b = same.pollLast();
                    keptSet.remove(b);
                    keptBytes -= b.capacity();
                    UNSAFE.invokeCleaner(b);
                }
                if (same.isEmpty()) {
                    classes.remove();
                }
            }
        }
    }

    /** Frees every kept buffer. */
    void freeKept() {
        synchronized (kept) {
            for (ArrayDeque<ByteBuffer> same : kept.values()) {
                for (ByteBuffer b : same) {
                    UNSAFE.invokeCleaner(b);
                }
            }
            kept.clear();
            keptSet.clear();
            keptBytes = 0;
        }
    }

    /**
     * The capacity a buffer for {@code size} bytes is made with: {@code size} rounded up to an eighth
     * of the power of two below it (at least 4 KiB), so that pages of about one size share a class.
     */
    static int capacityFor(int size) {
        int step = Math.max(4096, Integer.highestOneBit(Math.max(1, size)) >>> 3);
        long capacity = ((long) size + step - 1) / step * step;
        return (int) Math.min(Integer.MAX_VALUE - 8, capacity);
    }

    @Override
    public boolean isDirect() {
        return true;
    }

    /**
     * This memory as an allocator of direct buffers only, whatever their size and the limit
     * ({@link #direct}): for a compressor's working buffers, which must be direct.
     */
    public ByteBufferAllocator directOnly() {
        OffHeapPages memory = this;
        return new ByteBufferAllocator() {
            @Override
            public ByteBuffer allocate(int size) {
                return memory.direct(size);
            }

            @Override
            public void release(ByteBuffer b) {
                memory.release(b);
            }

            @Override
            public boolean isDirect() {
                return true;
            }
        };
    }

    /** The direct memory the JDK allows ({@code -XX:MaxDirectMemorySize}, by default the heap's maximum). */
    static long maxDirectBytes() {
        HotSpotDiagnosticMXBean hs = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        long set = Long.parseLong(hs.getVMOption("MaxDirectMemorySize").getValue());
        return set > 0 ? set : Runtime.getRuntime().maxMemory();
    }

    /**
     * What pages leave to everything else that allocates direct memory (network buffers not yet
     * taken, Kafka clients, ZSTD's buffers): an eighth of the maximum, at least 128 MiB (Flink's
     * framework off-heap default).
     */
    static long headroom(long maxDirect) {
        return Math.max(128L << 20, maxDirect / 8);
    }

    private static sun.misc.Unsafe unsafe() {
        try {
            Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            return (sun.misc.Unsafe) f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
