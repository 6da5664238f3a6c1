package io.dumpstream.decode;

import io.dumpstream.format.Dtype;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Statistics against an independent element-by-element reference, on both sides of the histogram threshold. */
class TensorStatsTest {

    static double[] reference(Dtype d, byte[] b) {
        long nan = 0, inf = 0, zero = 0, fin = 0;
        double sum = 0, sq = 0, min = Double.POSITIVE_INFINITY, max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i + 1 < b.length; i += 2) {
            int bits = (b[i] & 0xFF) | (b[i + 1] & 0xFF) << 8;
            double v = d == Dtype.BFLOAT16 ? Float.intBitsToFloat(bits << 16) : Elements.halfToFloat(bits);
            if (Double.isNaN(v)) {
                nan++;
            } else if (Double.isInfinite(v)) {
                inf++;
            } else {
                fin++;
                zero += v == 0 ? 1 : 0;
                sum += v;
                sq += v * v;
                min = Math.min(min, v);
                max = Math.max(max, v);
            }
        }
        return new double[]{nan, inf, zero, min, max, sum / fin, Math.sqrt(sq)};
    }

    @Test
    void sixteenBitPathsAgreeWithTheReference() {
        Random r = new Random(7);
        for (Dtype d : new Dtype[]{Dtype.FLOAT16, Dtype.BFLOAT16}) {
            for (int n : new int[]{1, 1001, 32767, 32768, TensorStats.HISTOGRAM_MIN - 1, TensorStats.HISTOGRAM_MIN, 300_001}) {
                byte[] b = new byte[2 * n];
                r.nextBytes(b);
                double[] want = reference(d, b);
                TensorStats.Stats got = TensorStats.compute(d, b, 0, b.length);
                String at = d + " n=" + n;
                assertEquals(n, got.numel(), at);
                assertEquals((long) want[0], got.nanCount(), at);
                assertEquals((long) want[1], got.infCount(), at);
                assertEquals((long) want[2], got.zeroCount(), at);
                if (got.min() != null) {
                    assertEquals(want[3], got.min(), 0, at);
                    assertEquals(want[4], got.max(), 0, at);
                    assertEquals(want[5], got.mean(), Math.abs(want[5]) * 1e-9 + 1e-300, at);
                    assertEquals(want[6], got.l2Norm(), want[6] * 1e-9, at);
                }
            }
        }
    }

    @Test
    void fp8DecodesExactly() {
        assertEquals(448.0, TensorStats.E4M3FN[0x7E]);
        assertEquals(Double.NaN, TensorStats.E4M3FN[0x7F]);
        assertEquals(0x1p-9, TensorStats.E4M3FN[0x01]);
        assertEquals(-0.0, TensorStats.E4M3FN[0x80]);
        assertEquals(57344.0, TensorStats.E5M2[0x7B]);
        assertEquals(Double.POSITIVE_INFINITY, TensorStats.E5M2[0x7C]);
        assertEquals(0x1p-16, TensorStats.E5M2[0x01]);
    }
}
