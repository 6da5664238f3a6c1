package io.dumpstream.decode;

import io.dumpstream.format.Dtype;

import java.lang.invoke.VarHandle;

/**
 * Statistics of CONTRACT section 5 over a payload, decoded per dtype without converting the
 * stored bytes: numel, NaN/inf/zero counts, and min, max, mean and L2 norm over the finite
 * elements in float64 (null when there is none). float16, bfloat16 and the fp8 formats are
 * decoded exactly through lookup tables; integers and bool count as their value.
 */
public final class TensorStats {
    private static final VarHandle F64 = Elements.F64;
    private static final VarHandle F32 = Elements.F32;
    private static final VarHandle I64 = Elements.I64;
    private static final VarHandle I32 = Elements.I32;
    private static final VarHandle I16 = Elements.I16;

    /** float16 bit pattern to its exact value. */
    static final float[] HALF = Elements.HALF;
    /** As HALF, with 0 for infinities and NaNs (the float kernels' zeroed lanes). */
    private static final float[] HALF_FINITE = new float[1 << 16];
    static final double[] E4M3FN = Elements.E4M3FN;
    static final double[] E5M2 = Elements.E5M2;

    static {
        for (int b = 0; b < HALF.length; b++) {
            HALF_FINITE[b] = Float.isFinite(HALF[b]) ? HALF[b] : 0f;
        }
    }

    private TensorStats() {
    }

    /** Computed statistics; min, max, mean and l2Norm are null when no element is finite. */
    public record Stats(long numel, long nanCount, long infCount, long zeroCount,
                        Double min, Double max, Double mean, Double l2Norm) {
    }

    /** Statistics of {@code len} bytes of {@code dtype} elements at {@code off} in {@code b}. */
    public static Stats compute(Dtype dtype, byte[] b, int off, int len) {
        int es = dtype.elementSize();
        if (len % es != 0 || off < 0 || len < 0 || off > b.length - len) {
            throw new IllegalArgumentException("payload of " + len + " bytes at " + off + " in " + b.length
                    + " is not a whole number of " + es + "-byte " + dtype.torchName() + " elements");
        }
        int n = len / es;
        Acc a = new Acc();
        switch (dtype) {
            case FLOAT64 -> float64(b, off, n, a);
            case FLOAT32 -> float32(b, off, n, a);
            case FLOAT16 -> {
                if (n >= HISTOGRAM_MIN) {
                    histogram16(b, off, n, false, a);
                } else {
                    half(b, off, n, a);
                }
            }
            case BFLOAT16 -> {
                if (n >= HISTOGRAM_MIN) {
                    histogram16(b, off, n, true, a);
                } else {
                    bfloat16(b, off, n, a);
                }
            }
            case FLOAT8_E4M3FN -> histogram8(b, off, n, E4M3FN, a);
            case FLOAT8_E5M2 -> histogram8(b, off, n, E5M2, a);
            case INT64 -> int64(b, off, n, a);
            case INT32 -> int32(b, off, n, a);
            case INT16 -> int16(b, off, n, a);
            case INT8 -> histogram8(b, off, n, INT8, a);
            case UINT8, BOOL -> histogram8(b, off, n, UINT8, a);
            default -> throw new IllegalStateException("dtype not handled: " + dtype);
        }
        return a.stats(n);
    }

    /** Value of a byte read as int8 and as uint8, for the 8-bit histograms. */
    private static final double[] INT8 = new double[256];
    private static final double[] UINT8 = new double[256];

    static {
        for (int v = 0; v < 256; v++) {
            INT8[v] = (byte) v;
            UINT8[v] = v;
        }
    }

    /*
     * The float kernels read eight bytes at a time and work on the lanes of the long (SWAR): per
     * lane, bit 15 (31, 63) of (magnitude + constant) is set exactly when the magnitude reaches a
     * threshold, so one popcount counts the NaNs, non-finite elements or non-zeros of all lanes.
     * Non-finite lanes then read as 0, so the sums need no branch; that 0 can only spoil min or max
     * when the record has no real zero and all its finite elements lie on one side of it, which
     * Acc.fold detects and exact() recomputes. Four accumulators per sum break the floating-point
     * dependency chains (squares through Math.fma, an intrinsic). A word updates min and max only
     * when one of its lanes is larger in magnitude than a threshold inside [min, max] (one add and
     * one test per word instead of eight comparisons). Min and max compare with '<',
     * which does not order signed zeros: when one comes out as 0 its sign is settled afterwards
     * from the -0.0 elements, as Math.min/Math.max would. Tail elements go through exact().
     */
    private static final long H16 = 0x8000800080008000L;
    private static final long M16 = 0x7FFF7FFF7FFF7FFFL;
    private static final long H32 = 0x8000000080000000L;
    private static final long M32 = 0x7FFFFFFF7FFFFFFFL;

    private static void half(byte[] b, int off, int n, Acc a) {
        long nan = 0, nonFinite = 0, nonZero = 0;
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0, q0 = 0, q1 = 0, q2 = 0, q3 = 0;
        double min = Double.POSITIVE_INFINITY, max = Double.NEGATIVE_INFINITY;
        Filter filter = new Filter();
        long hi = H16, lo = M16, flip = 0, sm = 0;
        int words = n >>> 2;
        for (int w = 0; w < words; w++) {
            long x = (long) I64.get(b, off + 8 * w);
            long mag = x & M16;
            long nf = (mag + 0x0400040004000400L) & H16; // exponent all ones: inf or NaN
            long nz = (mag + M16) & H16;
            nan += Long.bitCount((mag + 0x03FF03FF03FF03FFL) & H16);
            nonFinite += Long.bitCount(nf);
            nonZero += Long.bitCount(nz);
            // a table read beats converting in registers; non-finite patterns read as 0
            double v0 = HALF_FINITE[(int) x & 0xFFFF];
            double v1 = HALF_FINITE[(int) (x >>> 16) & 0xFFFF];
            double v2 = HALF_FINITE[(int) (x >>> 32) & 0xFFFF];
            double v3 = HALF_FINITE[(int) (x >>> 48)];
            s0 += v0;
            s1 += v1;
            s2 += v2;
            s3 += v3;
            q0 = Math.fma(v0, v0, q0);
            q1 = Math.fma(v1, v1, q1);
            q2 = Math.fma(v2, v2, q2);
            q3 = Math.fma(v3, v3, q3);
            if (((((mag + hi) | (lo - mag)) & H16) | ((x ^ flip) & sm)) != 0) { // some lane may lie outside [min, max]
                double pmin = min;
                double pmax = max;
                min = v0 < min ? v0 : min;
                min = v1 < min ? v1 : min;
                min = v2 < min ? v2 : min;
                min = v3 < min ? v3 : min;
                max = v0 > max ? v0 : max;
                max = v1 > max ? v1 : max;
                max = v2 > max ? v2 : max;
                max = v3 > max ? v3 : max;
                if (min != pmin || max != pmax) {
                    filter.set16(min, max, false);
                    hi = filter.hi;
                    lo = filter.lo;
                    flip = filter.flip;
                    sm = filter.sm;
                }
            }
        }
        int done = words << 2;
        double sum = (s0 + s1) + (s2 + s3);
        double sumSq = (q0 + q1) + (q2 + q3);
        if (!a.fold(done, nan, nonFinite, nonZero, sum, sumSq, min, max, Dtype.FLOAT16, b, off)) {
            exact(Dtype.FLOAT16, b, off, 0, done, a);
        }
        exact(Dtype.FLOAT16, b, off, done, n, a);
    }

    private static void bfloat16(byte[] b, int off, int n, Acc a) {
        long nan = 0, nonFinite = 0, nonZero = 0;
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0, q0 = 0, q1 = 0, q2 = 0, q3 = 0;
        double min = Double.POSITIVE_INFINITY, max = Double.NEGATIVE_INFINITY;
        Filter filter = new Filter();
        long hi = H16, lo = M16, flip = 0, sm = 0;
        int words = n >>> 2;
        for (int w = 0; w < words; w++) {
            long x = (long) I64.get(b, off + 8 * w);
            long mag = x & M16;
            long nf = (mag + 0x0080008000800080L) & H16;
            long nz = (mag + M16) & H16;
            nan += Long.bitCount((mag + 0x007F007F007F007FL) & H16);
            nonFinite += Long.bitCount(nf);
            nonZero += Long.bitCount(nz);
            long f = x & ~((nf >>> 15) * 0xFFFF);
            // a bfloat16 is the high half of a binary32
            double v0 = Float.intBitsToFloat((int) f << 16);
            double v1 = Float.intBitsToFloat((int) f & 0xFFFF0000);
            double v2 = Float.intBitsToFloat((int) (f >>> 16) & 0xFFFF0000);
            double v3 = Float.intBitsToFloat((int) (f >>> 32) & 0xFFFF0000);
            s0 += v0;
            s1 += v1;
            s2 += v2;
            s3 += v3;
            q0 = Math.fma(v0, v0, q0);
            q1 = Math.fma(v1, v1, q1);
            q2 = Math.fma(v2, v2, q2);
            q3 = Math.fma(v3, v3, q3);
            if (((((mag + hi) | (lo - mag)) & H16) | ((x ^ flip) & sm)) != 0) { // some lane may lie outside [min, max]
                double pmin = min;
                double pmax = max;
                min = v0 < min ? v0 : min;
                min = v1 < min ? v1 : min;
                min = v2 < min ? v2 : min;
                min = v3 < min ? v3 : min;
                max = v0 > max ? v0 : max;
                max = v1 > max ? v1 : max;
                max = v2 > max ? v2 : max;
                max = v3 > max ? v3 : max;
                if (min != pmin || max != pmax) {
                    filter.set16(min, max, true);
                    hi = filter.hi;
                    lo = filter.lo;
                    flip = filter.flip;
                    sm = filter.sm;
                }
            }
        }
        int done = words << 2;
        double sum = (s0 + s1) + (s2 + s3);
        double sumSq = (q0 + q1) + (q2 + q3);
        if (!a.fold(done, nan, nonFinite, nonZero, sum, sumSq, min, max, Dtype.BFLOAT16, b, off)) {
            exact(Dtype.BFLOAT16, b, off, 0, done, a);
        }
        exact(Dtype.BFLOAT16, b, off, done, n, a);
    }

    private static void float32(byte[] b, int off, int n, Acc a) {
        long nan = 0, nonFinite = 0, nonZero = 0;
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0, q0 = 0, q1 = 0, q2 = 0, q3 = 0;
        double min = Double.POSITIVE_INFINITY, max = Double.NEGATIVE_INFINITY;
        Filter filter = new Filter();
        long hi = H32, lo = M32, flip = 0, sm = 0;
        int pairs = n >>> 2 << 1; // two longs per step
        for (int w = 0; w < pairs; w += 2) {
            long x = (long) I64.get(b, off + 8 * w);
            long y = (long) I64.get(b, off + 8 * w + 8);
            long mx = x & M32;
            long my = y & M32;
            long nfx = (mx + 0x0080000000800000L) & H32;
            long nfy = (my + 0x0080000000800000L) & H32;
            long nzx = (mx + M32) & H32;
            long nzy = (my + M32) & H32;
            nan += Long.bitCount((mx + 0x007FFFFF007FFFFFL) & H32) + Long.bitCount((my + 0x007FFFFF007FFFFFL) & H32);
            nonFinite += Long.bitCount(nfx) + Long.bitCount(nfy);
            nonZero += Long.bitCount(nzx) + Long.bitCount(nzy);
            long fx = x & ~((nfx >>> 31) * 0xFFFFFFFFL);
            long fy = y & ~((nfy >>> 31) * 0xFFFFFFFFL);
            double v0 = Float.intBitsToFloat((int) fx);
            double v1 = Float.intBitsToFloat((int) (fx >>> 32));
            double v2 = Float.intBitsToFloat((int) fy);
            double v3 = Float.intBitsToFloat((int) (fy >>> 32));
            s0 += v0;
            s1 += v1;
            s2 += v2;
            s3 += v3;
            q0 = Math.fma(v0, v0, q0);
            q1 = Math.fma(v1, v1, q1);
            q2 = Math.fma(v2, v2, q2);
            q3 = Math.fma(v3, v3, q3);
            if (((((mx + hi) | (lo - mx) | (my + hi) | (lo - my)) & H32) | (((x ^ flip) | (y ^ flip)) & sm)) != 0) {
                double pmin = min;
                double pmax = max;
                min = v0 < min ? v0 : min;
                min = v1 < min ? v1 : min;
                min = v2 < min ? v2 : min;
                min = v3 < min ? v3 : min;
                max = v0 > max ? v0 : max;
                max = v1 > max ? v1 : max;
                max = v2 > max ? v2 : max;
                max = v3 > max ? v3 : max;
                if (min != pmin || max != pmax) {
                    filter.set32(min, max);
                    hi = filter.hi;
                    lo = filter.lo;
                    flip = filter.flip;
                    sm = filter.sm;
                }
            }
        }
        int done = pairs << 1;
        double sum = (s0 + s1) + (s2 + s3);
        double sumSq = (q0 + q1) + (q2 + q3);
        if (!a.fold(done, nan, nonFinite, nonZero, sum, sumSq, min, max, Dtype.FLOAT32, b, off)) {
            exact(Dtype.FLOAT32, b, off, 0, done, a);
        }
        exact(Dtype.FLOAT32, b, off, done, n, a);
    }

    private static void float64(byte[] b, int off, int n, Acc a) {
        long nan = 0, nonFinite = 0, nonZero = 0;
        double s0 = 0, s1 = 0, q0 = 0, q1 = 0;
        double min = Double.POSITIVE_INFINITY, max = Double.NEGATIVE_INFINITY;
        int done = n & ~1;
        for (int i = 0; i < done; i += 2) {
            long x = (long) I64.get(b, off + 8 * i);
            long y = (long) I64.get(b, off + 8 * i + 8);
            long mx = x & Long.MAX_VALUE;
            long my = y & Long.MAX_VALUE;
            long finx = (mx - 0x7FF0000000000000L) >> 63; // all ones when finite
            long finy = (my - 0x7FF0000000000000L) >> 63;
            long zx = (mx - 1) >>> 63;
            long zy = (my - 1) >>> 63;
            nan += (0x7FF0000000000000L - mx >>> 63) + (0x7FF0000000000000L - my >>> 63);
            nonFinite += (~finx >>> 63) + (~finy >>> 63);
            nonZero += (zx ^ 1) + (zy ^ 1);
            double v0 = Double.longBitsToDouble(x & finx);
            double v1 = Double.longBitsToDouble(y & finy);
            s0 += v0;
            s1 += v1;
            q0 = Math.fma(v0, v0, q0);
            q1 = Math.fma(v1, v1, q1);
            min = v0 < min ? v0 : min;
            min = v1 < min ? v1 : min;
            max = v0 > max ? v0 : max;
            max = v1 > max ? v1 : max;
        }
        if (!a.fold(done, nan, nonFinite, nonZero, s0 + s1, q0 + q1, min, max, Dtype.FLOAT64, b, off)) {
            exact(Dtype.FLOAT64, b, off, 0, done, a);
        }
        exact(Dtype.FLOAT64, b, off, done, n, a);
    }

    /** From this many 16-bit elements on, counting bit patterns beats decoding each element. */
    static final int HISTOGRAM_MIN = 65536;
    private static final ThreadLocal<int[]> BINS = ThreadLocal.withInitial(() -> new int[1 << 16]);

    /**
     * 16-bit floats in large records: count each bit pattern (one increment per element, no
     * floating point in the loop), then fold the 65536 bins into the statistics as count x value
     * (exact, order-free), clearing them for the next call.
     */
    private static void histogram16(byte[] b, int off, int n, boolean bf16, Acc a) {
        int[] bins = BINS.get();
        int words = n >>> 2;
        for (int w = 0; w < words; w++) {
            long x = (long) I64.get(b, off + 8 * w);
            bins[(int) x & 0xFFFF]++;
            bins[(int) (x >>> 16) & 0xFFFF]++;
            bins[(int) (x >>> 32) & 0xFFFF]++;
            bins[(int) (x >>> 48)]++;
        }
        for (int i = words << 2; i < n; i++) {
            bins[(short) I16.get(b, off + 2 * i) & 0xFFFF]++;
        }
        for (int bits = 0; bits < bins.length; bits++) {
            int c = bins[bits];
            if (c != 0) {
                bins[bits] = 0;
                a.add(bf16 ? Float.intBitsToFloat(bits << 16) : HALF[bits], c);
            }
        }
    }

    /**
     * The extremum filter of the float kernels: per lane, bit 15 (31) of {@code (magnitude + hi) |
     * (lo - magnitude)} or of {@code (x ^ flip) & sm} is set when the lane may lie outside [min, max];
     * a lane with none set lies inside, so a word of such lanes skips the eight comparisons. Bit
     * patterns of one sign order like their magnitudes, so the bounds are patterns: while min <= 0 <= max
     * (strictly), every magnitude up to the smaller of |min| and |max| lies inside; while every value
     * seen is >= 0 (min may be a zero: activations after a ReLU, probabilities), a lane is inside unless its
     * sign is set or its magnitude is above max's or below min's; while every value is <= 0, the same
     * mirrored. Before the first value every lane passes. {@code hi} adds (T_MAX - t) per lane, which
     * carries into bit 15 (31) exactly for magnitudes above t; {@code lo} is (HIGH + l - 1) per lane,
     * from which a magnitude below l leaves bit 15 (31) set, without a borrow across lanes (or all ones
     * below the high bit: never). Recomputed only when min or max change.
     */
    private static final class Filter {
        long hi;
        long lo;
        long flip;
        long sm;

        void set16(double min, double max, boolean bf16) {
            set(min, max, magnitude16(Math.abs(min), bf16), magnitude16(Math.abs(max), bf16),
                    0x7FFF, 0x0001000100010001L, H16, M16);
        }

        void set32(double min, double max) {
            set(min, max, magnitude32(min), magnitude32(max), 0x7FFFFFFFL, 0x0000000100000001L, H32, M32);
        }

        /**
         * The bounds for lanes whose magnitudes are at most {@code top} ({@code rep}: one per lane,
         * {@code high}: every lane's high bit, {@code never}: a lower bound no magnitude is below), from
         * min and max and their magnitudes' patterns.
         */
        private void set(double min, double max, long minMag, long maxMag, long top, long rep, long high, long never) {
            lo = never;
            flip = 0;
            sm = 0;
            if (!(min <= max)) {
                hi = high; // no value yet: every lane passes
            } else if (min >= 0 || max <= 0) {
                // one sign so far: outside above the far end's magnitude, below the near end's, or of the other sign
                boolean nonNegative = min >= 0;
                long upper = nonNegative ? maxMag : minMag;
                long lower = nonNegative ? minMag : maxMag;
                hi = (top - upper) * rep;
                if (lower > 0) {
                    lo = (top + lower) * rep; // (HIGH + lower - 1) = top + lower
                }
                flip = nonNegative ? 0 : high;
                sm = high;
            } else {
                hi = (top - Math.min(minMag, maxMag)) * rep;
            }
        }
    }

    /** The 16-bit pattern of a non-negative value that is exactly a float16 (bfloat16) value. */
    private static int magnitude16(double v, boolean bf16) {
        int bits = Float.floatToRawIntBits((float) v);
        if (bf16) {
            return bits >>> 16;
        }
        int e = bits >>> 23;
        return e < 113 ? (int) ((float) v * 0x1p24f) : (e - 112) << 10 | (bits >>> 13 & 0x3FF);
    }

    /** The 32-bit pattern of |v| (v a float32 value). */
    private static long magnitude32(double v) {
        return Float.floatToRawIntBits((float) Math.abs(v)) & 0x7FFFFFFFL;
    }

    /*
     * Integers: counts, sums and sums of squares in long arithmetic where they cannot overflow
     * (exact, order-free), extrema as integers; a record holds fewer than 2^31 elements.
     */
    private static void int16(byte[] b, int off, int n, Acc a) {
        long nonZero = 0, sum = 0, sq = 0;
        int min = Integer.MAX_VALUE, max = Integer.MIN_VALUE;
        int words = n >>> 2;
        for (int w = 0; w < words; w++) {
            long x = (long) I64.get(b, off + 8 * w);
            nonZero += Long.bitCount(((x & M16) + M16 | x) & H16);
            int v0 = (short) x;
            int v1 = (short) (x >>> 16);
            int v2 = (short) (x >>> 32);
            int v3 = (short) (x >>> 48);
            sum += (v0 + v1) + (v2 + v3);
            sq += ((long) (v0 * v0) + v1 * v1) + ((long) (v2 * v2) + v3 * v3);
            min = Math.min(Math.min(v0, v1), Math.min(Math.min(v2, v3), min));
            max = Math.max(Math.max(v0, v1), Math.max(Math.max(v2, v3), max));
        }
        int done = words << 2;
        a.foldInteger(done, done - nonZero, sum, sq, min, max);
        exact(Dtype.INT16, b, off, done, n, a);
    }

    private static void int32(byte[] b, int off, int n, Acc a) {
        long nonZero = 0, sum0 = 0, sum1 = 0;
        double q0 = 0, q1 = 0;
        int min = Integer.MAX_VALUE, max = Integer.MIN_VALUE;
        int words = n >>> 1;
        for (int w = 0; w < words; w++) {
            long x = (long) I64.get(b, off + 8 * w);
            nonZero += Long.bitCount(((x & M32) + M32 | x) & H32);
            int v0 = (int) x;
            int v1 = (int) (x >>> 32);
            sum0 += v0;
            sum1 += v1;
            q0 += (double) ((long) v0 * v0);
            q1 += (double) ((long) v1 * v1);
            min = Math.min(Math.min(v0, v1), min);
            max = Math.max(Math.max(v0, v1), max);
        }
        int done = words << 1;
        a.foldInteger(done, done - nonZero, sum0 + sum1, q0 + q1, min, max);
        exact(Dtype.INT32, b, off, done, n, a);
    }

    private static void int64(byte[] b, int off, int n, Acc a) {
        long zero = 0;
        double s0 = 0, s1 = 0, q0 = 0, q1 = 0;
        long min = Long.MAX_VALUE, max = Long.MIN_VALUE;
        int done = n & ~1;
        for (int i = 0; i < done; i += 2) {
            long x = (long) I64.get(b, off + 8 * i);
            long y = (long) I64.get(b, off + 8 * i + 8);
            zero += (x == 0 ? 1 : 0) + (y == 0 ? 1 : 0);
            double v0 = x;
            double v1 = y;
            s0 += v0;
            s1 += v1;
            q0 = Math.fma(v0, v0, q0);
            q1 = Math.fma(v1, v1, q1);
            min = Math.min(Math.min(x, y), min);
            max = Math.max(Math.max(x, y), max);
        }
        a.foldInteger(done, zero, s0 + s1, q0 + q1, min, max);
        exact(Dtype.INT64, b, off, done, n, a);
    }

    /**
     * 8-bit types: count each byte value in eight interleaved tables (so that runs of one value
     * do not serialise on one counter), then fold the 256 values into the statistics as
     * count x value, which is exact for these magnitudes and independent of element order.
     */
    private static void histogram8(byte[] b, int off, int n, double[] value, Acc a) {
        int[] bins = new int[8 * 256];
        int words = n >>> 3;
        for (int w = 0; w < words; w++) {
            long x = (long) I64.get(b, off + 8 * w);
            bins[(int) x & 0xFF]++;
            bins[256 | (int) (x >>> 8) & 0xFF]++;
            bins[512 | (int) (x >>> 16) & 0xFF]++;
            bins[768 | (int) (x >>> 24) & 0xFF]++;
            bins[1024 | (int) (x >>> 32) & 0xFF]++;
            bins[1280 | (int) (x >>> 40) & 0xFF]++;
            bins[1536 | (int) (x >>> 48) & 0xFF]++;
            bins[1792 | (int) (x >>> 56)]++;
        }
        for (int i = words << 3; i < n; i++) {
            bins[b[off + i] & 0xFF]++;
        }
        for (int v = 0; v < 256; v++) {
            long c = 0;
            for (int t = 0; t < 8; t++) {
                c += bins[t << 8 | v];
            }
            if (c != 0) {
                a.add(value[v], c);
            }
        }
    }

    /** Number of -0.0 among the first {@code n} elements: only asked when min or max came out as a zero. */
    private static long negativeZeros(Dtype d, byte[] b, int off, long n) {
        long c = 0;
        for (int i = 0; i < n; i++) {
            c += switch (d) {
                case FLOAT64 -> (long) I64.get(b, off + 8 * i) == Long.MIN_VALUE ? 1 : 0;
                case FLOAT32 -> (int) I32.get(b, off + 4 * i) == Integer.MIN_VALUE ? 1 : 0;
                case FLOAT16, BFLOAT16 -> (short) I16.get(b, off + 2 * i) == Short.MIN_VALUE ? 1 : 0;
                default -> throw new IllegalStateException("no signed zero in " + d);
            };
        }
        return c;
    }

    /** Element by element over elements [from, to): tails, and records the fast kernels hand back. */
    private static void exact(Dtype d, byte[] b, int off, int from, int to, Acc a) {
        for (int i = from; i < to; i++) {
            double v = switch (d) {
                case FLOAT64 -> (double) F64.get(b, off + 8 * i);
                case FLOAT32 -> (float) F32.get(b, off + 4 * i);
                case FLOAT16 -> HALF[(short) I16.get(b, off + 2 * i) & 0xFFFF];
                case BFLOAT16 -> Float.intBitsToFloat(((short) I16.get(b, off + 2 * i) & 0xFFFF) << 16);
                case INT64 -> (double) (long) I64.get(b, off + 8 * i);
                case INT32 -> (int) I32.get(b, off + 4 * i);
                case INT16 -> (short) I16.get(b, off + 2 * i);
                default -> throw new IllegalStateException("no element path for " + d);
            };
            a.add(v, 1);
        }
    }

    /** Running statistics; min and max follow Math.min/Math.max, so -0.0 is below 0.0. */
    private static final class Acc {
        long nan;
        long inf;
        long zero;
        long finite;
        double sum;
        double sumSq;
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;

        /** Adds {@code count} elements of value {@code v}. */
        void add(double v, long count) {
            if (v != v) {
                nan += count;
            } else if (v == Double.POSITIVE_INFINITY || v == Double.NEGATIVE_INFINITY) {
                inf += count;
            } else {
                if (v == 0) {
                    zero += count;
                }
                finite += count;
                sum += count * v;
                sumSq += count * v * v;
                min = Math.min(min, v);
                max = Math.max(max, v);
            }
        }

        /**
         * Adds the result of a float kernel over {@code count} elements whose non-finite lanes were
         * zeroed; false (and nothing added) when that zero may have become min or max, in which
         * case the caller recomputes those elements exactly.
         */
        boolean fold(long count, long nanCount, long nonFinite, long nonZero, double s, double q, double lo, double hi,
                     Dtype d, byte[] b, int off) {
            long fin = count - nonFinite;
            long zeros = count - nonZero;
            if (fin == 0) {
                lo = Double.POSITIVE_INFINITY;
                hi = Double.NEGATIVE_INFINITY;
            } else if (zeros == 0 && nonFinite > 0 && (lo == 0 || hi == 0)) {
                return false;
            } else if (lo == 0 || hi == 0) {
                long negZero = negativeZeros(d, b, off, count);
                if (lo == 0) {
                    lo = negZero > 0 ? -0.0 : 0.0;
                }
                if (hi == 0) {
                    hi = zeros > negZero ? 0.0 : -0.0;
                }
            }
            nan += nanCount;
            inf += nonFinite - nanCount;
            zero += zeros;
            finite += fin;
            sum += s;
            sumSq += q;
            min = Math.min(min, lo);
            max = Math.max(max, hi);
            return true;
        }

        /** Adds the result of an integer kernel over {@code count} elements (all finite). */
        void foldInteger(long count, long zeros, double s, double q, double lo, double hi) {
            zero += zeros;
            finite += count;
            sum += s;
            sumSq += q;
            if (count > 0) {
                min = Math.min(min, lo);
                max = Math.max(max, hi);
            }
        }

        Stats stats(long numel) {
            if (finite == 0) {
                return new Stats(numel, nan, inf, zero, null, null, null, null);
            }
            return new Stats(numel, nan, inf, zero, min, max, sum / finite, Math.sqrt(sumSq));
        }
    }
}
