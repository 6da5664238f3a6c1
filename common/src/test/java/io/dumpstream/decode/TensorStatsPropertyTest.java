package io.dumpstream.decode;

import io.dumpstream.format.Dtype;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The word-at-a-time kernels of {@link TensorStats} against a straightforward element-by-element
 * reference written here from the format definitions (no table or helper of TensorStats used):
 * counts and extrema exactly (signed zeros included, as Math.min/Math.max order them), mean and
 * L2 norm within the relative 1e-9 the vector tests use. Payloads: random bytes, special values
 * (signed zeros, infinities, NaNs with several payloads, subnormals, extreme finite values),
 * records where zeroed non-finite lanes would be the wrong extremum, at many sizes around the
 * word and tail boundaries and at unaligned offsets.
 */
class TensorStatsPropertyTest {
    /** Element counts around every boundary of the kernels: words, tails, the 16-bit histogram threshold. */
    static final int[] SIZES = {TensorStats.HISTOGRAM_MIN - 1, TensorStats.HISTOGRAM_MIN, TensorStats.HISTOGRAM_MIN + 1,
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 255, 256, 257, 1000,
            4095, 4096, 4097, 8191, 8192, 8193, 16383, 16384, 16385, 32767, 32768, 32769, 65535, 65536, 65537,
            100_003};

    /**
     * RELU_LIKE: exact zeros (some negative) among values of one sign, as after a ReLU; LATE_OTHER_SIGN: one
     * sign for the first half, the other for the second (the extremum filter's one-sided bounds, then its switch).
     */
    enum Fill { RANDOM_BYTES, SPECIALS, ONE_SIDED_WITH_NON_FINITE, ZEROS_AND_NON_FINITE, SMALL_POOL, RELU_LIKE, LATE_OTHER_SIGN }

    @Test
    void everyDtypeFillAndBoundarySizeAgreesWithTheReference() {
        Random r = new Random(20261203);
        for (Dtype d : Dtype.values()) {
            for (Fill fill : Fill.values()) {
                for (int n : SIZES) {
                    check(d, fill, n, r.nextInt(8), r.nextLong());
                }
            }
        }
    }

    @Property(tries = 400)
    void randomDtypeFillSizeAndOffsetAgreeWithTheReference(@ForAll("dtypes") Dtype d, @ForAll Fill fill,
                                                          @ForAll @IntRange(min = 0, max = 70_000) int n,
                                                          @ForAll @IntRange(min = 0, max = 15) int off,
                                                          @ForAll long seed) {
        check(d, fill, n, off, seed);
    }

    @Provide
    Arbitrary<Dtype> dtypes() {
        return Arbitraries.of(Dtype.values());
    }

    @Test
    void zeroedNonFiniteLanesNeverBecomeTheExtremum() {
        // float16: 1.0, 2.0 and NaN, +inf: min must stay 1.0, not the 0 left in the NaN lanes
        byte[] b = shorts(0x3C00, 0x7E00, 0x4000, 0x7C00, 0x3C00, 0x7E00, 0x4000, 0x7C00);
        TensorStats.Stats s = TensorStats.compute(Dtype.FLOAT16, b, 0, b.length);
        assertEquals(1.0, s.min());
        assertEquals(2.0, s.max());
        assertEquals(2, s.nanCount());
        assertEquals(2, s.infCount());
        // bfloat16: -1.0, -0.5 and -inf: max must be -0.5
        b = shorts(0xBF80, 0xFF80, 0xBF00, 0xFF80);
        s = TensorStats.compute(Dtype.BFLOAT16, b, 0, b.length);
        assertEquals(-1.0, s.min());
        assertEquals(-0.5, s.max());
        // float32: only -0.0 and NaN: min = max = -0.0, zero count 2
        ByteBuffer bb = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        bb.putFloat(-0.0f).putFloat(Float.NaN).putFloat(-0.0f).putFloat(Float.NaN);
        s = TensorStats.compute(Dtype.FLOAT32, bb.array(), 0, 16);
        assertEquals(Double.valueOf(-0.0), s.min());
        assertEquals(Double.valueOf(-0.0), s.max());
        assertEquals(2, s.zeroCount());
        // float64: +0.0 and -0.0 together: min -0.0, max +0.0
        bb = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        bb.putDouble(0.0).putDouble(-0.0);
        s = TensorStats.compute(Dtype.FLOAT64, bb.array(), 0, 16);
        assertEquals(Double.valueOf(-0.0), s.min());
        assertEquals(Double.valueOf(0.0), s.max());
        // max -0.0 while min < 0, then a larger value: the extremum filter must still see it
        bb = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        for (float f : new float[]{-0.0f, -1f, -0.5f, -0.0f, -0.25f, -2f, -0.0f, -1f,
                -0.5f, -1f, -3f, -0.0f, 7f, -1f, -1f, -1f}) {
            bb.putFloat(f);
        }
        s = TensorStats.compute(Dtype.FLOAT32, bb.array(), 0, 64);
        assertEquals(-3.0, s.min());
        assertEquals(7.0, s.max());
        b = shorts(0x8000, 0xBC00, 0x8000, 0xB800, 0xC000, 0x8000, 0xB800, 0xBC00, 0x4700, 0xBC00, 0x8000, 0x8000);
        s = TensorStats.compute(Dtype.FLOAT16, b, 0, b.length);
        assertEquals(-2.0, s.min());
        assertEquals(7.0, s.max());
        b = shorts(0x8000, 0xBF80, 0x8000, 0xBF00, 0xC000, 0x8000, 0xBF00, 0xBF80, 0x40E0, 0xBF80, 0x8000, 0x8000);
        s = TensorStats.compute(Dtype.BFLOAT16, b, 0, b.length);
        assertEquals(-2.0, s.min());
        assertEquals(7.0, s.max());
        // nothing finite: statistics over the finite elements are null
        b = shorts(0x7C00, 0xFC00, 0x7C01, 0xFFFF, 0x7E00);
        s = TensorStats.compute(Dtype.FLOAT16, b, 0, b.length);
        assertEquals(3, s.nanCount());
        assertEquals(2, s.infCount());
        assertNull(s.min());
        assertNull(s.mean());
    }

    static byte[] shorts(int... v) {
        ByteBuffer bb = ByteBuffer.allocate(2 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        for (int x : v) {
            bb.putShort((short) x);
        }
        return bb.array();
    }

    static void check(Dtype d, Fill fill, int n, int off, long seed) {
        int es = d.elementSize();
        byte[] buf = new byte[off + n * es + 5];
        Random r = new Random(seed);
        r.nextBytes(buf); // bytes around the payload must not matter
        fill(d, fill, buf, off, n, r);
        TensorStats.Stats got = TensorStats.compute(d, buf, off, n * es);
        Ref want = reference(d, buf, off, n);
        String at = d + " " + fill + " n=" + n + " off=" + off + " seed=" + seed;
        assertEquals(n, got.numel(), at);
        assertEquals(want.nan, got.nanCount(), at + " nan");
        assertEquals(want.inf, got.infCount(), at + " inf");
        assertEquals(want.zero, got.zeroCount(), at + " zero");
        if (want.finite == 0) {
            assertNull(got.min(), at);
            assertNull(got.max(), at);
            assertNull(got.mean(), at);
            assertNull(got.l2Norm(), at);
            return;
        }
        assertEquals(Double.valueOf(want.min), got.min(), at + " min"); // Double.equals: -0.0 != 0.0
        assertEquals(Double.valueOf(want.max), got.max(), at + " max");
        double mean = want.sum / want.finite;
        if (Double.isFinite(want.sumAbs)) { // beyond that the sum overflows in an order-dependent way
            double scale = Math.max(Math.abs(mean), want.sumAbs / want.finite);
            assertEquals(mean, got.mean(), scale * 1e-9, at + " mean");
        }
        double l2 = Math.sqrt(want.sumSq);
        assertEquals(l2, got.l2Norm(), l2 * 1e-9, at + " l2");
    }

    static void fill(Dtype d, Fill fill, byte[] b, int off, int n, Random r) {
        int es = d.elementSize();
        long[] specials = specials(d);
        long[] pool = new long[1 + r.nextInt(6)];
        for (int i = 0; i < pool.length; i++) {
            pool[i] = r.nextLong();
        }
        boolean negative = r.nextBoolean();
        for (int i = 0; i < n; i++) {
            long bits = switch (fill) {
                case RANDOM_BYTES -> r.nextLong();
                case SPECIALS -> r.nextInt(3) == 0 ? r.nextLong() : specials[r.nextInt(specials.length)];
                case ONE_SIDED_WITH_NON_FINITE -> r.nextInt(5) == 0 ? nonFinite(d, r) : oneSided(d, r, negative);
                case ZEROS_AND_NON_FINITE -> r.nextBoolean() ? nonFinite(d, r) : signedZero(d, r.nextBoolean());
                case SMALL_POOL -> pool[r.nextInt(pool.length)];
                case RELU_LIKE -> r.nextInt(3) == 0 ? signedZero(d, r.nextInt(8) == 0)
                        : r.nextInt(200) == 0 ? nonFinite(d, r) : oneSided(d, r, negative);
                case LATE_OTHER_SIGN -> oneSided(d, r, i >= n / 2 != negative);
            };
            for (int k = 0; k < es; k++) {
                b[off + i * es + k] = (byte) (bits >>> (8 * k));
            }
        }
    }

    /** Bit patterns of special values per dtype (only the low elementSize bytes are used). */
    static long[] specials(Dtype d) {
        return switch (d) {
            case FLOAT64 -> new long[]{0, 1L << 63, 0x7FF0000000000000L, 0xFFF0000000000000L, 0x7FF8000000000000L,
                    0x7FF0000000000001L, 0xFFFFFFFFFFFFFFFFL, 1, 0x000FFFFFFFFFFFFFL, 0x0010000000000000L,
                    0x7FEFFFFFFFFFFFFFL, 0xFFEFFFFFFFFFFFFFL, Double.doubleToLongBits(1.0), Double.doubleToLongBits(-2.5)};
            case FLOAT32 -> new long[]{0, 0x80000000L, 0x7F800000L, 0xFF800000L, 0x7FC00000L, 0x7F800001L, 0xFFFFFFFFL,
                    1, 0x007FFFFFL, 0x00800000L, 0x7F7FFFFFL, 0xFF7FFFFFL, 0x3F800000L, 0xC0200000L};
            case FLOAT16 -> new long[]{0, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFFFF, 0xFE00, 1, 0x8001, 0x03FF,
                    0x0400, 0x7BFF, 0xFBFF, 0x3C00, 0xC100};
            case BFLOAT16 -> new long[]{0, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0x7F81, 0xFFFF, 1, 0x8001, 0x007F, 0x0080,
                    0x7F7F, 0xFF7F, 0x3F80, 0xC020};
            case FLOAT8_E4M3FN -> new long[]{0, 0x80, 0x7F, 0xFF, 0x7E, 0xFE, 1, 0x81, 0x07, 0x08, 0x38};
            case FLOAT8_E5M2 -> new long[]{0, 0x80, 0x7C, 0xFC, 0x7D, 0x7E, 0xFF, 0x7B, 0xFB, 1, 0x83, 0x04, 0x3C};
            case INT64 -> new long[]{0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE};
            case INT32 -> new long[]{0, 1, -1, Integer.MIN_VALUE, Integer.MAX_VALUE};
            case INT16 -> new long[]{0, 1, -1, Short.MIN_VALUE, Short.MAX_VALUE};
            case INT8, UINT8, BOOL -> new long[]{0, 1, 0x7F, 0x80, 0xFF};
        };
    }

    static long nonFinite(Dtype d, Random r) {
        long sign = r.nextBoolean() ? -1L : 0;
        return switch (d) {
            case FLOAT64 -> 0x7FF0000000000000L | r.nextLong() & 0x000FFFFFFFFFFFFFL | sign << 63;
            case FLOAT32 -> 0x7F800000L | r.nextInt(1 << 23) | (sign & 0x80000000L);
            case FLOAT16 -> 0x7C00 | r.nextInt(1 << 10) | (sign & 0x8000);
            case BFLOAT16 -> 0x7F80 | r.nextInt(1 << 7) | (sign & 0x8000);
            case FLOAT8_E4M3FN -> 0x7F | (sign & 0x80);
            case FLOAT8_E5M2 -> 0x7C | r.nextInt(4) | (sign & 0x80);
            default -> r.nextLong(); // integers have no non-finite value
        };
    }

    /** A finite, non-zero element of one sign. */
    static long oneSided(Dtype d, Random r, boolean negative) {
        long v = switch (d) {
            case FLOAT64 -> 1 + (r.nextLong() & 0x7FEFFFFFFFFFFFFEL);
            case FLOAT32 -> 1 + r.nextInt(0x7F7FFFFF);
            case FLOAT16 -> 1 + r.nextInt(0x7BFF);
            case BFLOAT16 -> 1 + r.nextInt(0x7F7F);
            case FLOAT8_E4M3FN -> 1 + r.nextInt(0x7E);
            case FLOAT8_E5M2 -> 1 + r.nextInt(0x7B);
            default -> 1 + r.nextInt(100);
        };
        if (!negative) {
            return v;
        }
        return switch (d) {
            case FLOAT64 -> v | 1L << 63;
            case FLOAT32 -> v | 0x80000000L;
            case FLOAT16, BFLOAT16 -> v | 0x8000;
            case FLOAT8_E4M3FN, FLOAT8_E5M2 -> v | 0x80;
            default -> -v;
        };
    }

    static long signedZero(Dtype d, boolean negative) {
        if (!negative) {
            return 0;
        }
        return switch (d) {
            case FLOAT64 -> 1L << 63;
            case FLOAT32 -> 0x80000000L;
            case FLOAT16, BFLOAT16 -> 0x8000;
            case FLOAT8_E4M3FN, FLOAT8_E5M2 -> 0x80;
            default -> 0;
        };
    }

    /** The plain reference: one element at a time, in order. */
    static final class Ref {
        long nan, inf, zero, finite;
        double sum, sumAbs, sumSq;
        double min = Double.POSITIVE_INFINITY, max = Double.NEGATIVE_INFINITY;
    }

    static Ref reference(Dtype d, byte[] b, int off, int n) {
        Ref ref = new Ref();
        ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < n; i++) {
            int p = off + i * d.elementSize();
            double v = switch (d) {
                case FLOAT64 -> bb.getDouble(p);
                case FLOAT32 -> bb.getFloat(p);
                case FLOAT16 -> minifloat(bb.getShort(p) & 0xFFFF, 5, 10, true);
                case BFLOAT16 -> Float.intBitsToFloat((bb.getShort(p) & 0xFFFF) << 16);
                case FLOAT8_E4M3FN -> e4m3fn(b[p] & 0xFF);
                case FLOAT8_E5M2 -> minifloat(b[p] & 0xFF, 5, 2, true);
                case INT64 -> bb.getLong(p);
                case INT32 -> bb.getInt(p);
                case INT16 -> bb.getShort(p);
                case INT8 -> b[p];
                case UINT8, BOOL -> b[p] & 0xFF;
            };
            if (Double.isNaN(v)) {
                ref.nan++;
            } else if (Double.isInfinite(v)) {
                ref.inf++;
            } else {
                ref.finite++;
                ref.zero += v == 0 ? 1 : 0;
                ref.sum += v;
                ref.sumAbs += Math.abs(v);
                ref.sumSq += v * v;
                ref.min = Math.min(ref.min, v);
                ref.max = Math.max(ref.max, v);
            }
        }
        return ref;
    }

    /** IEEE-style binary format with the given exponent and mantissa widths (all-ones exponent: inf/NaN). */
    static double minifloat(int bits, int expBits, int mantBits, boolean ieee) {
        int bias = (1 << (expBits - 1)) - 1;
        int mant = bits & ((1 << mantBits) - 1);
        int exp = (bits >>> mantBits) & ((1 << expBits) - 1);
        boolean negative = (bits >>> (mantBits + expBits) & 1) == 1;
        double v;
        if (ieee && exp == (1 << expBits) - 1) {
            v = mant == 0 ? Double.POSITIVE_INFINITY : Double.NaN;
        } else if (exp == 0) {
            v = Math.scalb((double) mant, 1 - bias - mantBits);
        } else {
            v = Math.scalb((double) ((1 << mantBits) | mant), exp - bias - mantBits);
        }
        return negative ? -v : v;
    }

    /** float8_e4m3fn: no infinities, S.1111.111 is NaN, everything else as in IEEE with bias 7. */
    static double e4m3fn(int bits) {
        if ((bits & 0x7F) == 0x7F) {
            return Double.NaN;
        }
        return minifloat(bits, 4, 3, false);
    }
}
