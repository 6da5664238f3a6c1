package io.dumpstream.table;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/** The position is the count of bytes passed on; closing flushes and leaves the owner's stream open. */
class CountingPositionStreamTest {

    @Test
    void positionCountsTheBytesPassedOnAndCloseOnlyFlushes() throws IOException {
        Owned owned = new Owned();
        CountingPositionStream s = new CountingPositionStream(owned);
        assertEquals(0, s.getPos());
        s.write(7);
        s.write(new byte[]{1, 2, 3, 4, 5}, 1, 3);
        s.write(new byte[0], 0, 0);
        assertEquals(4, s.getPos());
        s.close();
        assertArrayEquals(new byte[]{7, 2, 3, 4}, owned.toByteArray());
        assertEquals(1, owned.flushes);
        assertEquals(0, owned.closes);
        owned.write(9); // still the owner's to use and close
        assertEquals(5, owned.size());
    }

    private static final class Owned extends ByteArrayOutputStream {
        int flushes;
        int closes;

        @Override
        public void flush() {
            flushes++;
        }

        @Override
        public void close() {
            closes++;
        }
    }
}
