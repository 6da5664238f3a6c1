package io.dumpstream.tensor;

import io.dumpstream.decode.TensorStats;
import io.dumpstream.format.Dtype;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReassemblerTest {
    private static final TensorKey KEY = new TensorKey("run", 3, 7L, "after", 1);

    private static View.Placement worker(long w) {
        return new View.Placement("AIV", (int) w, null, "expert", w);
    }

    private static View view(long task, Dtype d, long offset, long full, byte[] tensor, int stored) {
        byte[] p = Arrays.copyOfRange(tensor, (int) offset, (int) offset + stored);
        return new View(task, task, worker(task), "x", d, offset, full, p);
    }

    /** float32 values 0..n-1 (small integers: every sum in the statistics is exact). */
    private static byte[] float32s(int n) {
        ByteBuffer b = ByteBuffer.allocate(n * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < n; i++) {
            b.putFloat(i - 5f);
        }
        return b.array();
    }

    @Test
    void broadcastWorkersCoverOnceAndAgree() {
        byte[] t = float32s(64);
        ByteArrayOutputStream walked = new ByteArrayOutputStream();
        Reassembler r = new Reassembler(KEY, iv -> walked.write(iv.bytes(), iv.off(), iv.length()));
        for (long w = 0; w < 4; w++) {
            assertTrue(r.add(view(10 + w, Dtype.FLOAT32, 0, 256, t, 256)));
        }
        TensorRow row = r.finish();
        assertEquals(256, row.extentBytes());
        assertEquals(64, row.extentElements());
        assertEquals(256, row.coveredBytes());
        assertEquals(1.0, row.coverage());
        assertEquals(0, row.gapCount());
        assertEquals(3, row.overlapCount());
        assertEquals(768, row.overlapBytes());
        assertTrue(row.overlapsAgree());
        assertEquals(List.of(), row.disagreements());
        assertEquals(TensorStats.compute(Dtype.FLOAT32, t, 0, t.length), row.stats());
        assertEquals(64, row.stats().numel());
        assertEquals(4, row.views().size());
        assertEquals(worker(12), row.views().get(2).placement());
        assertArrayEquals(t, walked.toByteArray());
    }

    @Test
    void truncatedViewsAndGapsLowerCoverage() {
        byte[] t = float32s(64);
        Reassembler r = new Reassembler(KEY);
        r.add(view(1, Dtype.FLOAT32, 0, 64, t, 32));     // truncated: covers [0,32) of [0,64)
        r.add(view(2, Dtype.FLOAT32, 64, 64, t, 64));    // [64,128)
        r.add(view(3, Dtype.FLOAT32, 192, 64, t, 64));   // [192,256); gap [128,192)
        TensorRow row = r.finish();
        assertEquals(256, row.extentBytes());
        assertEquals(160, row.coveredBytes());
        assertEquals(40, row.coveredElements());
        assertEquals(160.0 / 256, row.coverage());
        assertEquals(2, row.gapCount());
        assertEquals(96, row.gapBytes());
        assertEquals(0, row.overlapCount());
        byte[] coveredModel = new byte[160];
        System.arraycopy(t, 0, coveredModel, 0, 32);
        System.arraycopy(t, 64, coveredModel, 32, 64);
        System.arraycopy(t, 192, coveredModel, 96, 64);
        assertEquals(TensorStats.compute(Dtype.FLOAT32, coveredModel, 0, 160), row.stats());
    }

    @Test
    void disagreeingOverlapNamesBothTasks() {
        byte[] t = float32s(32);
        byte[] other = t.clone();
        other[40] ^= 1;                                   // element 10
        other[44 + 3] ^= (byte) 0x80;                     // element 11, sign
        Reassembler r = new Reassembler(KEY);
        r.add(view(5, Dtype.FLOAT32, 0, 64, t, 64));
        r.add(new View(6, 0, worker(6), "x", Dtype.FLOAT32, 32, 64, Arrays.copyOfRange(other, 32, 96)));
        TensorRow row = r.finish();
        assertFalse(row.overlapsAgree());
        assertEquals(List.of(new Disagreement(5, 6, 32, 32, 2, 40)), row.disagreements());
        assertEquals(1, row.overlapCount());
        assertEquals(96, row.coveredBytes());
        // the first view's bytes win the overlap in the statistics
        assertEquals(TensorStats.compute(Dtype.FLOAT32, t, 0, 96), row.stats());
    }

    @Test
    void everyDtypeMatchesOnePassOverTheCoveredBytes() {
        Random rnd = new Random(17);
        for (Dtype d : Dtype.values()) {
            int es = d.elementSize();
            byte[] t = new byte[1024 * es];
            for (int i = 0; i < t.length; i++) {
                t[i] = (byte) (d.name().startsWith("FLOAT") ? rnd.nextInt(4) : rnd.nextInt());
            }
            Reassembler r = new Reassembler(KEY);
            r.add(view(1, d, 0, 512L * es, t, 512 * es));
            r.add(view(2, d, 0, 512L * es, t, 512 * es));               // broadcast copy
            r.add(view(3, d, 256L * es, 768L * es, t, 768 * es));       // overlaps half of the first
            TensorRow row = r.finish();
            assertEquals(d.torchName(), row.dtype());
            assertEquals(1024, row.extentElements(), d.name());
            assertEquals(1.0, row.coverage(), d.name());
            assertTrue(row.overlapsAgree(), d.name());
            assertEquals(2, row.overlapCount(), d.name());
            TensorStats.Stats model = TensorStats.compute(d, t, 0, t.length);
            TensorStats.Stats got = row.stats();
            assertEquals(model.numel(), got.numel(), d.name());
            assertEquals(model.nanCount(), got.nanCount(), d.name());
            assertEquals(model.infCount(), got.infCount(), d.name());
            assertEquals(model.zeroCount(), got.zeroCount(), d.name());
            assertEquals(model.min(), got.min(), d.name());
            assertEquals(model.max(), got.max(), d.name());
            if (model.mean() == null) {
                assertEquals(null, got.mean(), d.name());
            } else {
                assertEquals(model.mean(), got.mean(), Math.abs(model.mean()) * 1e-12, d.name());
                assertEquals(model.l2Norm(), got.l2Norm(), model.l2Norm() * 1e-12, d.name());
            }
        }
    }

    @Test
    void badViewsAreRejectedWithReasonCodes() {
        byte[] t = float32s(32);
        Reassembler r = new Reassembler(KEY);
        assertTrue(r.add(view(1, Dtype.FLOAT32, 64, 64, t, 64)));
        assertFalse(r.add(view(2, Dtype.FLOAT32, 0, 64, t, 64)));                   // before 64
        assertFalse(r.add(new View(3, 0, worker(3), "x", Dtype.INT32, 128, 64, new byte[0])));                    // dtype differs
        assertFalse(r.add(new View(4, 0, worker(4), "x", Dtype.FLOAT32, 130, 64, new byte[0])));                  // not whole elements
        assertFalse(r.add(new View(5, 0, worker(5), "x", Dtype.FLOAT32, 128, 4, new byte[8])));  // stored > full
        assertFalse(r.add(new View(6, 0, worker(6), "x", Dtype.FLOAT32, Long.MAX_VALUE - 3, 8, new byte[0])));
        assertFalse(r.add(new View(7, 0, worker(7), "x", null, 128, 4, new byte[4])));
        TensorRow row = r.finish();
        assertEquals(List.of(Rejected.OUT_OF_ORDER, Rejected.DTYPE_MISMATCH, Rejected.MISALIGNED,
                        Rejected.BAD_EXTENT, Rejected.BAD_EXTENT, Rejected.UNKNOWN_DTYPE),
                row.rejected().stream().map(Rejected::reason).toList());
        assertEquals(7, row.views().size());
        assertEquals(128, row.extentBytes());
        assertEquals(64, row.coveredBytes());
        assertEquals(1, row.gapCount());
        assertEquals(64, row.gapBytes());
    }
}
