package io.dumpstream.table;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
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
 */
public final class OffHeapPages implements ByteBufferAllocator {
    /** Pages from this size on may go off the heap. */
    public static final int MIN_DIRECT_BYTES = 4096;

    private static final sun.misc.Unsafe UNSAFE = unsafe();
    private static final BufferPoolMXBean DIRECT = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)
            .stream().filter(b -> b.getName().equals("direct")).findFirst()
            .orElseThrow(() -> new ExceptionInInitializerError("no direct buffer pool bean"));

    /** The allocator of every part writer: pages off the heap up to the JVM's maximum less the headroom. */
    public static final OffHeapPages INSTANCE = new OffHeapPages(maxDirectBytes() - headroom(maxDirectBytes()));

    private final long limit;

    /** Off the heap while the JVM's direct memory in use stays at or under {@code limit} bytes. */
    public OffHeapPages(long limit) {
        this.limit = limit;
    }

    /** Direct buffer memory the JVM has in use now (its "direct" buffer pool): pages and everything else. */
    public static long directBytesInUse() {
        return DIRECT.getMemoryUsed();
    }

    @Override
    public ByteBuffer allocate(int size) {
        if (size >= MIN_DIRECT_BYTES && directBytesInUse() + size <= limit) {
            return ByteBuffer.allocateDirect(size);
        }
        return ByteBuffer.allocate(size);
    }

    @Override
    public void release(ByteBuffer b) {
        if (b.isDirect()) {
            UNSAFE.invokeCleaner(b);
        }
    }

    @Override
    public boolean isDirect() {
        return true;
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
