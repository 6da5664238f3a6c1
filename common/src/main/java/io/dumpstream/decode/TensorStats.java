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

    /** float16 bit pattern to its exact value (the shared tables of {@link Elements}). */
    static final float[] HALF = Elements.HALF;
    static final double[] E4M3FN = Elements.E4M3FN;
    static final double[] E5M2 = Elements.E5M2;

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
        Acc a = new Acc();
        int n = len / es;
        switch (dtype) {
            case FLOAT64:
                for (int i = 0; i < n; i++) {
                    a.add((double) F64.get(b, off + 8 * i));
                }
                break;
            case FLOAT32:
                float32(b, off, n, a);
                break;
            case FLOAT16:
                if (n >= HISTOGRAM_MIN) {
                    histogram16(b, off, n, a, false);
                } else {
                    half(b, off, n, a);
                }
                break;
            case BFLOAT16:
                if (n >= HISTOGRAM_MIN) {
                    histogram16(b, off, n, a, true);
                } else {
                    bfloat16(b, off, n, a);
                }
                break;
            case FLOAT8_E4M3FN:
                for (int i = 0; i < n; i++) {
                    a.add(E4M3FN[b[off + i] & 0xFF]);
                }
                break;
            case FLOAT8_E5M2:
                for (int i = 0; i < n; i++) {
                    a.add(E5M2[b[off + i] & 0xFF]);
                }
                break;
            case INT64:
                for (int i = 0; i < n; i++) {
                    a.addFinite((double) (long) I64.get(b, off + 8 * i));
                }
                break;
            case INT32:
                for (int i = 0; i < n; i++) {
                    a.addFinite((int) I32.get(b, off + 4 * i));
                }
                break;
            case INT16:
                for (int i = 0; i < n; i++) {
                    a.addFinite((short) I16.get(b, off + 2 * i));
                }
                break;
            case INT8:
                for (int i = 0; i < n; i++) {
                    a.addFinite(b[off + i]);
                }
                break;
            case UINT8:
            case BOOL:
                for (int i = 0; i < n; i++) {
                    a.addFinite(b[off + i] & 0xFF);
                }
                break;
            default:
                throw new IllegalStateException("dtype not handled: " + dtype);
        }
        return a.stats(n);
    }

    /** From this many 16-bit elements on, counting bit patterns beats decoding each element. */
    static final int HISTOGRAM_MIN = 65536;
    private static final ThreadLocal<int[]> BINS = ThreadLocal.withInitial(() -> new int[1 << 16]);

    /**
     * 16-bit floats: count each bit pattern (one increment per element, no floating point in the
     * loop), then fold the 65536 bins into the statistics, clearing them for the next call. Sums
     * become count x value: exact in order-independent form.
     */
    private static void histogram16(byte[] b, int off, int n, Acc a, boolean bf16) {
        int[] bins = BINS.get();
        int i = 0;
        for (; i + 1 < n; i += 2) {
            int pair = (int) I32.get(b, off + 2 * i);
            bins[pair & 0xFFFF]++;
            bins[pair >>> 16]++;
        }
        for (; i < n; i++) {
            bins[(short) I16.get(b, off + 2 * i) & 0xFFFF]++;
        }
        for (int bits = 0; bits < bins.length; bits++) {
            int c = bins[bits];
            if (c == 0) {
                continue;
            }
            bins[bits] = 0;
            double v = bf16 ? Float.intBitsToFloat(bits << 16) : HALF[bits];
            if (v != v) {
                a.nan += c;
            } else if (v == Double.POSITIVE_INFINITY || v == Double.NEGATIVE_INFINITY) {
                a.inf += c;
            } else {
                if (v == 0) {
                    a.zero += c;
                }
                a.finite += c;
                a.sum += c * v;
                a.sumSq += c * v * v;
                if (v < a.min) {
                    a.min = v;
                }
                if (v > a.max) {
                    a.max = v;
                }
            }
        }
    }

    /*
     * The three hot float paths below avoid data-dependent branches: a non-finite element adds 0 to
     * the sums and +-inf to the extrema, and is counted apart; two interleaved accumulator sets break
     * the floating-point dependency chains. Results equal the plain loop's up to summation order.
     */
    private static void float32(byte[] b, int off, int n, Acc a) {
        Wide w = new Wide();
        int i = 0;
        for (; i + 1 < n; i += 2) {
            w.lane0((float) F32.get(b, off + 4 * i));
            w.lane1((float) F32.get(b, off + 4 * i + 4));
        }
        for (; i < n; i++) {
            w.lane0((float) F32.get(b, off + 4 * i));
        }
        w.into(a, n);
    }

    private static void half(byte[] b, int off, int n, Acc a) {
        Wide w = new Wide();
        int i = 0;
        for (; i + 1 < n; i += 2) {
            int pair = (int) I32.get(b, off + 2 * i);
            w.lane0(HALF[pair & 0xFFFF]);
            w.lane1(HALF[pair >>> 16]);
        }
        for (; i < n; i++) {
            w.lane0(HALF[(short) I16.get(b, off + 2 * i) & 0xFFFF]);
        }
        w.into(a, n);
    }

    private static void bfloat16(byte[] b, int off, int n, Acc a) {
        Wide w = new Wide();
        int i = 0;
        for (; i + 1 < n; i += 2) {
            int pair = (int) I32.get(b, off + 2 * i);
            w.lane0(Float.intBitsToFloat(pair << 16));
            w.lane1(Float.intBitsToFloat(pair & 0xFFFF0000));
        }
        for (; i < n; i++) {
            w.lane0(Float.intBitsToFloat(((short) I16.get(b, off + 2 * i) & 0xFFFF) << 16));
        }
        w.into(a, n);
    }

    /** Two lanes of branch-free float accumulators. */
    private static final class Wide {
        long finite0, finite1, zero0, zero1, nan0, nan1;
        double sum0, sum1, sq0, sq1;
        float min0 = Float.POSITIVE_INFINITY, min1 = Float.POSITIVE_INFINITY;
        float max0 = Float.NEGATIVE_INFINITY, max1 = Float.NEGATIVE_INFINITY;

        void lane0(float v) {
            boolean fin = Math.abs(v) <= Float.MAX_VALUE; // false for NaN and +-inf
            float x = fin ? v : 0f;
            finite0 += fin ? 1 : 0;
            nan0 += v != v ? 1 : 0;
            zero0 += v == 0f ? 1 : 0;
            sum0 += x;
            sq0 += (double) x * x;
            min0 = (fin ? v : Float.POSITIVE_INFINITY) < min0 ? v : min0;
            max0 = (fin ? v : Float.NEGATIVE_INFINITY) > max0 ? v : max0;
        }

        void lane1(float v) {
            boolean fin = Math.abs(v) <= Float.MAX_VALUE;
            float x = fin ? v : 0f;
            finite1 += fin ? 1 : 0;
            nan1 += v != v ? 1 : 0;
            zero1 += v == 0f ? 1 : 0;
            sum1 += x;
            sq1 += (double) x * x;
            min1 = (fin ? v : Float.POSITIVE_INFINITY) < min1 ? v : min1;
            max1 = (fin ? v : Float.NEGATIVE_INFINITY) > max1 ? v : max1;
        }

        void into(Acc a, long n) {
            long finite = finite0 + finite1;
            a.finite = finite;
            a.nan = nan0 + nan1;
            a.inf = n - finite - a.nan;
            a.zero = zero0 + zero1;
            a.sum = sum0 + sum1;
            a.sumSq = sq0 + sq1;
            a.min = Math.min(min0, min1);
            a.max = Math.max(max0, max1);
        }
    }

    private static final class Acc {
        long nan;
        long inf;
        long zero;
        long finite;
        double sum;
        double sumSq;
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;

        void add(double v) {
            if (v != v) {
                nan++;
            } else if (v == Double.POSITIVE_INFINITY || v == Double.NEGATIVE_INFINITY) {
                inf++;
            } else {
                addFinite(v);
            }
        }

        void addFinite(double v) {
            if (v == 0) {
                zero++;
            }
            finite++;
            sum += v;
            sumSq += v * v;
            if (v < min) {
                min = v;
            }
            if (v > max) {
                max = v;
            }
        }

        Stats stats(long numel) {
            if (finite == 0) {
                return new Stats(numel, nan, inf, zero, null, null, null, null);
            }
            return new Stats(numel, nan, inf, zero, min, max, sum / finite, Math.sqrt(sumSq));
        }
    }

    /** Exact value of an IEEE 754 binary16 bit pattern. */
    static float halfToFloat(int h) {
        return Elements.halfToFloat(h);
    }
}
