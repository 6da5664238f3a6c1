package io.dumpstream.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.apache.parquet.bytes.ByteBufferAllocator;
import org.junit.jupiter.api.Test;

class OffHeapPagesTest {
    @Test
    void payloadPagesGoOffHeapAndAreFreedOnReleaseWithoutAPool() {
        OffHeapPages pages = new OffHeapPages(Long.MAX_VALUE, 0);
        long before = OffHeapPages.directBytesInUse();
        ByteBuffer b = pages.allocate(1 << 20);
        assertTrue(b.isDirect());
        assertEquals(1 << 20, b.capacity());
        assertEquals(before + (1 << 20), OffHeapPages.directBytesInUse());
        b.put(0, (byte) 7).put((1 << 20) - 1, (byte) 9);
        assertEquals(9, b.get((1 << 20) - 1));
        pages.release(b);
        assertEquals(before, OffHeapPages.directBytesInUse(), "the page's memory is returned at release, not at a collection");
    }

    @Test
    void smallPagesStayOnTheHeap() {
        OffHeapPages pages = new OffHeapPages(Long.MAX_VALUE);
        ByteBuffer small = pages.allocate(OffHeapPages.MIN_DIRECT_BYTES - 1);
        assertFalse(small.isDirect());
        pages.release(small); // nothing to free: no error
        assertTrue(pages.allocate(OffHeapPages.MIN_DIRECT_BYTES).isDirect());
    }

    @Test
    void directOnlyGivesDirectBuffersOfAnySizeAndPastTheLimitIntoThePool() {
        long used = OffHeapPages.directBytesInUse();
        OffHeapPages pages = new OffHeapPages(used, 1 << 20); // no room under the limit
        ByteBufferAllocator direct = pages.directOnly();
        assertTrue(direct.isDirect());
        ByteBuffer small = direct.allocate(10);
        assertTrue(small.isDirect(), "a compressor's buffer is direct however small");
        assertEquals(0, small.position());
        assertEquals(10, small.limit());
        ByteBuffer large = direct.allocate(64 << 10);
        assertTrue(large.isDirect(), "and past the limit");
        direct.release(large);
        assertEquals(64 << 10, pages.keptBytes(), "released into the pool");
        assertSame(large, direct.allocate(60 << 10), "and reused from it");
        direct.release(small);
    }

    @Test
    void pagesGoToTheHeapRatherThanPastTheLimit() {
        long used = OffHeapPages.directBytesInUse();
        OffHeapPages pages = new OffHeapPages(used + (100 << 10));
        ByteBuffer first = pages.allocate(64 << 10);
        assertTrue(first.isDirect(), "64 KiB fits under the limit");
        ByteBuffer second = pages.allocate(64 << 10);
        assertFalse(second.isDirect(), "another 64 KiB would pass it: heap");
        pages.release(first);
        assertTrue(pages.allocate(64 << 10).isDirect(), "room again after the release");
    }

    @Test
    void aReleasedBufferIsReusedForASizeOfItsClassAsGiven() {
        OffHeapPages pages = new OffHeapPages(Long.MAX_VALUE, 8 << 20);
        ByteBuffer b = pages.allocate(1 << 20);
        b.order(ByteOrder.LITTLE_ENDIAN).position(100);
        long used = OffHeapPages.directBytesInUse();
        pages.release(b);
        assertEquals(1 << 20, pages.keptBytes());
        assertEquals(used, OffHeapPages.directBytesInUse(), "kept, not freed");
        ByteBuffer again = pages.allocate((1 << 20) - 5000);
        assertSame(b, again, "the kept buffer serves a request of its class");
        assertEquals(0, again.position());
        assertEquals((1 << 20) - 5000, again.limit(), "limited to the size asked for");
        assertEquals(ByteOrder.BIG_ENDIAN, again.order());
        assertEquals(0, pages.keptBytes());
        pages.release(again);
        ByteBuffer smaller = pages.allocate(256 << 10);
        assertNotSame(b, smaller, "a buffer four times the size asked for is not handed out");
        assertEquals(256 << 10, smaller.capacity());
        ByteBuffer larger = pages.allocate((1 << 20) + 1);
        assertNotSame(b, larger, "nor one smaller than asked for");
        assertEquals((1 << 20) + (128 << 10), larger.capacity(), "rounded up to an eighth of its power of two");
        pages.freeKept();
        assertEquals(0, pages.keptBytes());
    }

    @Test
    void theKeptBuffersAreBoundedAndABufferReleasedTwiceIsKeptOnce() {
        OffHeapPages pages = new OffHeapPages(Long.MAX_VALUE, 1 << 20);
        ByteBuffer a = pages.allocate(512 << 10);
        ByteBuffer b = pages.allocate(512 << 10);
        ByteBuffer c = pages.allocate(512 << 10);
        pages.release(a);
        pages.release(a);
        assertEquals(512 << 10, pages.keptBytes(), "released twice, kept once");
        pages.release(b);
        long used = OffHeapPages.directBytesInUse();
        pages.release(c);
        assertEquals(1 << 20, pages.keptBytes(), "no more than the pool's bytes");
        assertEquals(used - (512 << 10), OffHeapPages.directBytesInUse(), "the one over the bound is freed now");
        ByteBuffer x = pages.allocate(512 << 10);
        ByteBuffer y = pages.allocate(512 << 10);
        assertNotSame(x, y);
        assertTrue((x == a || x == b) && (y == a || y == b));
        pages.release(x);
        pages.release(y);
        pages.freeKept();
    }

    @Test
    void keptBuffersAreFreedBeforeAPageGoesToTheHeap() {
        long used = OffHeapPages.directBytesInUse();
        OffHeapPages pages = new OffHeapPages(used + (200 << 10), 1 << 20);
        ByteBuffer a = pages.allocate(64 << 10);
        ByteBuffer b = pages.allocate(64 << 10);
        pages.release(a);
        pages.release(b);
        assertEquals(128 << 10, pages.keptBytes());
        ByteBuffer big = pages.allocate(128 << 10);
        assertTrue(big.isDirect(), "room made by freeing the kept buffers");
        assertEquals(0, pages.keptBytes());
        pages.release(big);
        pages.freeKept();
    }

    @Test
    void aCompressorsBufferIsDirectWhateverTheLimit() {
        OffHeapPages pages = new OffHeapPages(0, 1 << 20);
        ByteBuffer b = pages.direct(100_000);
        assertTrue(b.isDirect());
        assertEquals(100_000, b.limit());
        assertEquals(OffHeapPages.capacityFor(100_000), b.capacity());
        assertFalse(pages.allocate(100_000).isDirect(), "a page over the limit still goes to the heap");
        pages.release(b);
        pages.freeKept();
    }

    @Test
    void aBufferNotAskedForAgainIsFreedAfterTheKeepingTime() {
        OffHeapPages pages = new OffHeapPages(Long.MAX_VALUE, 8 << 20);
        ByteBuffer old = pages.allocate(256 << 10);
        long released = System.nanoTime();
        pages.release(old, released);
        ByteBuffer recent = pages.allocate(512 << 10);
        long used = OffHeapPages.directBytesInUse();
        pages.expire(released + OffHeapPages.KEEP_NANOS / 2);
        assertEquals(256 << 10, pages.keptBytes(), "not yet");
        pages.release(recent, released + OffHeapPages.KEEP_NANOS / 2);
        pages.expire(released + OffHeapPages.KEEP_NANOS + 1_000_000_000L);
        assertEquals(512 << 10, pages.keptBytes(), "the old one freed, the recent one kept");
        assertEquals(used - (256 << 10), OffHeapPages.directBytesInUse(), "the old one's memory returned");
        assertSame(recent, pages.allocate(512 << 10));
        pages.freeKept();
    }

    @Test
    void capacityClassesAreEighthsOfAPowerOfTwo() {
        assertEquals(4096, OffHeapPages.capacityFor(1));
        assertEquals(64 << 10, OffHeapPages.capacityFor(64 << 10));
        assertEquals(48 << 10, OffHeapPages.capacityFor((48 << 10) - 1));
        assertEquals((4 << 20) + (512 << 10), OffHeapPages.capacityFor((4 << 20) + 1));
        assertEquals(Integer.MAX_VALUE - 8, OffHeapPages.capacityFor(Integer.MAX_VALUE - 8));
    }

    @Test
    void headroomLeavesAtLeastFlinksFrameworkOffHeap() {
        assertEquals(128L << 20, OffHeapPages.headroom(512L << 20));
        assertEquals(1L << 30, OffHeapPages.headroom(8L << 30));
        assertTrue(OffHeapPages.maxDirectBytes() > 0);
    }
}
