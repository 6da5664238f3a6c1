package io.dumpstream.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class OffHeapPagesTest {
    @Test
    void payloadPagesGoOffHeapAndAreFreedOnRelease() {
        OffHeapPages pages = new OffHeapPages(Long.MAX_VALUE);
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
    void headroomLeavesAtLeastFlinksFrameworkOffHeap() {
        assertEquals(128L << 20, OffHeapPages.headroom(512L << 20));
        assertEquals(1L << 30, OffHeapPages.headroom(8L << 30));
        assertTrue(OffHeapPages.maxDirectBytes() > 0);
    }
}
