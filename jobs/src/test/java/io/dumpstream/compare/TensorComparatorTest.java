package io.dumpstream.compare;

import io.dumpstream.format.Dtype;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Edge cases of the element-wise comparison that the end-to-end runs do not reach. */
class TensorComparatorTest {
    final TensorComparator cmp = new TensorComparator();

    static Operand op(Dtype d, byte[] data) {
        Operand o = new Operand();
        o.dtype = d.torchName();
        o.data = data;
        o.numel = data.length / d.elementSize();
        CRC32C crc = new CRC32C();
        crc.update(data);
        o.payloadCrc32c = crc.getValue();
        return o;
    }

    static byte[] f64(double... v) {
        ByteBuffer b = ByteBuffer.allocate(8 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        for (double x : v) {
            b.putDouble(x);
        }
        return b.array();
    }

    static byte[] i64(long... v) {
        ByteBuffer b = ByteBuffer.allocate(8 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        for (long x : v) {
            b.putLong(x);
        }
        return b.array();
    }

    Metrics run(Dtype d, byte[] b, byte[] c) {
        return cmp.compare(d, op(d, b), op(d, c), b.length / d.elementSize(), Tolerances.defaultFor(d));
    }

    @Test
    void infinitiesMatchOnlyTheSameInfinity() {
        double inf = Double.POSITIVE_INFINITY;
        Metrics m = run(Dtype.FLOAT64, f64(inf, -inf, inf, 1), f64(inf, inf, 1, 1));
        assertEquals(2, m.mismatchCount());
        assertEquals(1L, m.firstMismatchIndex());
        assertEquals(0.0, m.maxAbsErr(), "only the finite pair counts in the errors");
    }

    @Test
    void int64BeyondTwoToThe53IsExact() {
        long big = (1L << 60) + 1;
        Metrics m = run(Dtype.INT64, i64(big, 5), i64(big + 1, 5));
        assertEquals(1, m.mismatchCount(), "double rounding would hide this");
        assertEquals(0L, m.firstMismatchIndex());
    }

    @Test
    void zeroNormCosineIsNullAndRelativeErrorInfinite() {
        Metrics m = run(Dtype.FLOAT64, f64(0, 0), f64(0, 1));
        assertNull(m.cosineSimilarity());
        assertEquals(Double.POSITIVE_INFINITY, m.maxRelErr());
        assertEquals(1.0, m.maxAbsErr());
        Metrics same = run(Dtype.FLOAT64, f64(0, 0), f64(0, 0));
        assertTrue(same.bitwiseEqual());
        assertEquals(0, same.mismatchCount());
    }

    @Test
    void fp8DefaultsAreTorchTesting() {
        // e4m3fn 0x38 = 1.0, 0x39 = 1.125: |d| = 0.125 <= 2^-6 + 0.125 * 1 -> close
        Metrics close = run(Dtype.FLOAT8_E4M3FN, new byte[]{0x38}, new byte[]{0x39});
        assertEquals(0, close.mismatchCount());
        // 0x3A = 1.25: 0.25 > 0.140625 -> mismatch
        Metrics far = run(Dtype.FLOAT8_E4M3FN, new byte[]{0x38}, new byte[]{0x3A});
        assertEquals(1, far.mismatchCount());
        assertEquals(0.25, far.maxAbsErr());
        assertEquals(new Tolerance(0.25, 0x1p-14, "default"), Tolerances.defaultFor(Dtype.FLOAT8_E5M2));
        assertEquals(new Tolerance(1.3e-6, 1e-5, "default"), Tolerances.defaultFor(Dtype.FLOAT32));
        assertEquals(new Tolerance(0, 0, "default"), Tolerances.defaultFor(Dtype.BOOL));
    }

    @Test
    void pairKeyOptions() {
        Operand a = op(Dtype.FLOAT64, f64(1));
        a.rank = 0; a.launchId = 1; a.step = 10L; a.stage = "s|1:"; a.io = "input"; a.tensorName = "x"; a.workerId = 3L;
        Operand b = op(Dtype.FLOAT64, f64(1));
        b.rank = 0; b.launchId = 2; b.step = 10L; b.stage = "s|1:"; b.io = "input"; b.tensorName = "x"; b.workerId = 4L;
        assertTrue(!new PairKey(false, false).of(a).equals(new PairKey(false, false).of(b)));
        assertTrue(!new PairKey(true, false).of(a).equals(new PairKey(true, false).of(b)), "workers differ");
        assertEquals(new PairKey(true, true).of(a), new PairKey(true, true).of(b));
    }
}
