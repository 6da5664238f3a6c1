package io.dumpstream.compare;

import io.dumpstream.decode.Elements;
import io.dumpstream.format.Dtype;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Float64 metrics of a candidate payload against a baseline payload of the same dtype, decoded by
 * the shared {@link Elements} decoder block by block. Closeness per element is torch.testing's
 * {@code |c - b| <= atol + rtol * |b|} with b the baseline; NaN matches only NaN and an infinity
 * only the same infinity. Integer dtypes with zero tolerance compare their exact values (int64
 * beyond 2^53 included). Equal lengths and equal CRC-32C short-circuit to a byte comparison:
 * when the bytes agree no element is decoded and the metrics follow from the snapshot statistics.
 * Not thread-safe (one instance per operator).
 */
public final class TensorComparator {
    static final int BLOCK = 4096;
    private static final VarHandle F32 = MethodHandles.byteArrayViewVarHandle(float[].class, ByteOrder.LITTLE_ENDIAN);
    private final double[] bs = new double[BLOCK];
    private final double[] cs = new double[BLOCK];

    /**
     * Compares the first {@code n} elements of {@code b} and {@code c} (both of {@code dtype}), read
     * from their payload views ({@link Operand#data} at {@link Operand#dataOffset}).
     */
    public Metrics compare(Dtype dtype, Operand b, Operand c, long n, Tolerance tol) {
        int es = dtype.elementSize();
        long bytes = n * es;
        int bl = b.length();
        int cl = c.length();
        if (bytes > bl || bytes > cl) {
            throw new IllegalArgumentException("cannot compare " + n + " " + dtype.torchName() + " elements: payloads hold "
                    + bl + " and " + cl + " bytes");
        }
        boolean whole = n == b.numel && n == c.numel && bl == cl;
        int span = whole ? bl : (int) bytes;
        boolean bitwise = (!whole || b.payloadCrc32c == c.payloadCrc32c)
                && Arrays.equals(b.data, b.dataOffset, b.dataOffset + span, c.data, c.dataOffset, c.dataOffset + span);
        if (bitwise && whole) {
            return identical(b, n);
        }
        Metrics m = Elements.isInteger(dtype) && tol.exact()
                ? integers(dtype, b.data, b.dataOffset, c.data, c.dataOffset, n)
                : floats(dtype, b.data, b.dataOffset, c.data, c.dataOffset, n, tol.rtol(), tol.atol());
        return bitwise ? new Metrics(m.compared(), true, m.mismatchCount(), m.firstMismatchIndex(), m.maxAbsErr(), m.maxRelErr(),
                m.meanAbsErr(), m.rmse(), m.cosineSimilarity()) : m;
    }

    /** Byte-equal whole payloads: no error; cosine 1 unless the finite norm is 0; nothing is decoded. */
    private static Metrics identical(Operand b, long n) {
        long finite = n - b.nanCount - b.infCount;
        if (finite == 0) {
            return new Metrics(n, true, 0, null, null, null, null, null, null);
        }
        Double cosine = b.l2Norm != null && b.l2Norm > 0 ? 1.0 : null;
        return new Metrics(n, true, 0, null, 0.0, 0.0, 0.0, 0.0, cosine);
    }

    private Metrics integers(Dtype dtype, byte[] b, int bo, byte[] c, int co, long n) {
        Sum a = new Sum();
        integers(dtype, b, bo, c, co, n, 0, a);
        return a.metrics(n, false);
    }

    private void integers(Dtype dtype, byte[] b, int bo, byte[] c, int co, long n, long base, Sum a) {
        for (long first = 0; first < n; first += BLOCK) {
            int count = (int) Math.min(BLOCK, n - first);
            Elements.toDouble(dtype, b, bo, first, count, bs);
            Elements.toDouble(dtype, c, co, first, count, cs);
            for (int i = 0; i < count; i++) {
                double x = bs[i];
                double y = cs[i];
                boolean differ = dtype == Dtype.INT64
                        ? Elements.rawLong(dtype, b, bo, first + i) != Elements.rawLong(dtype, c, co, first + i)
                        : x != y;
                if (differ) {
                    a.mismatch(base + first + i);
                }
                a.finitePair(x, y, Math.abs(y - x));
            }
        }
    }

    /**
     * Compares {@code n} elements of {@code dtype}, {@code b[bo..]} (the baseline) against {@code c[co..]},
     * adding to {@code into}; element {@code i} of the range is element {@code base + i} of the tensor
     * (for the first mismatch index). Ranges must be added in ascending {@code base}. This is how
     * {@code compare --by tensor} compares a reassembled tensor interval by interval.
     */
    public void compareRange(Dtype dtype, Tolerance tol, byte[] b, int bo, byte[] c, int co, long n, long base, Sum into) {
        if (Elements.isInteger(dtype) && tol.exact()) {
            integers(dtype, b, bo, c, co, n, base, into);
        } else {
            floats(dtype, b, bo, c, co, n, tol.rtol(), tol.atol(), base, into);
        }
    }

    /**
     * The float path, the hot loop of the job: the accumulators are locals (registers, not fields)
     * and the relative error skips its division when it cannot raise the maximum. Results are the
     * same bits as {@link Sum#finitePair} in element order: the sums keep their order, and the skip
     * is exact: for a double {@code d}, {@code d / ax > maxRel} (rounded) implies {@code d > maxRel * ax}
     * (real), hence {@code d >= fl(maxRel * ax)} whichever way the product rounds.
     */
    private Metrics floats(Dtype dtype, byte[] b, int bo, byte[] c, int co, long n, double rtol, double atol) {
        Sum s = new Sum();
        floats(dtype, b, bo, c, co, n, rtol, atol, 0, s);
        return s.metrics(n, false);
    }

    private void floats(Dtype dtype, byte[] b, int bo, byte[] c, int co, long n, double rtol, double atol, long base, Sum into) {
        long finite = 0;
        long mismatches = 0;
        long firstMismatch = -1;
        double maxAbs = 0;
        double maxRel = 0;
        double sumAbs = 0;
        double sumSq = 0;
        double dot = 0;
        double nb = 0;
        double nc = 0;
        double[] xs = bs;
        double[] ys = cs;
        // float32 is read in place (no staging block); the condition is loop-invariant, so the JIT
        // compiles the loop twice (unswitching) rather than testing it per element
        boolean f32 = dtype == Dtype.FLOAT32;
        for (long first = 0; first < n; first += BLOCK) {
            int count = (int) Math.min(BLOCK, n - first);
            int bp = (int) (bo + 4 * first);
            int cp = (int) (co + 4 * first);
            if (!f32) {
                Elements.toDouble(dtype, b, bo, first, count, xs);
                Elements.toDouble(dtype, c, co, first, count, ys);
            }
            for (int i = 0; i < count; i++) {
                double x = f32 ? (float) F32.get(b, bp + 4 * i) : xs[i];
                double y = f32 ? (float) F32.get(c, cp + 4 * i) : ys[i];
                double d = Math.abs(y - x);
                double ax = Math.abs(x);
                // a finite difference within the bound: both values are finite (an infinite baseline
                // makes the bound infinite, so d must be checked for finiteness too)
                if (!(d <= atol + rtol * ax && d <= Double.MAX_VALUE)) {
                    if (ax <= Double.MAX_VALUE && Math.abs(y) <= Double.MAX_VALUE) {
                        if (mismatches++ == 0) {
                            firstMismatch = first + i;
                        }
                    } else {
                        if (!(x != x && y != y) && !(x == y)) {
                            if (mismatches++ == 0) { // NaN vs not NaN, or a differing infinity
                                firstMismatch = first + i;
                            }
                        }
                        continue; // not a finite pair: no error terms
                    }
                }
                finite++;
                if (d > maxAbs) {
                    maxAbs = d;
                }
                if (d >= maxRel * ax && d > 0) {
                    double rel = d / ax; // infinity when only the baseline is 0
                    if (rel > maxRel) {
                        maxRel = rel;
                    }
                }
                sumAbs += d;
                sumSq += d * d;
                dot += x * y;
                nb += x * x;
                nc += y * y;
            }
        }
        into.merge(finite, mismatches, mismatches == 0 ? -1 : base + firstMismatch, maxAbs, maxRel, sumAbs, sumSq, dot, nb, nc);
    }

    /**
     * Running metrics of one pair over one or more element ranges: counts add, maxima fold, sums add
     * (range by range, so a tensor compared in intervals may differ from one pass in the last bits of
     * the sums). A single range gives exactly the bits of a one-pass comparison.
     */
    public static final class Sum {
        long finite;
        long mismatches;
        long firstMismatch = -1;
        double maxAbs;
        double maxRel;
        double sumAbs;
        double sumSq;
        double dot;
        double nb;
        double nc;
        private boolean empty = true;

        /** Mismatching elements so far. */
        public long mismatches() {
            return mismatches;
        }

        void mismatch(long index) {
            if (mismatches++ == 0) {
                firstMismatch = index;
            }
        }

        void finitePair(double x, double y, double d) {
            empty = false;
            finite++;
            if (d > maxAbs) {
                maxAbs = d;
            }
            if (d > 0) {
                double rel = d / Math.abs(x); // infinity when only the baseline is 0
                if (rel > maxRel) {
                    maxRel = rel;
                }
            }
            sumAbs += d;
            sumSq += d * d;
            dot += x * y;
            nb += x * x;
            nc += y * y;
        }

        void merge(long fin, long mis, long firstMis, double mAbs, double mRel, double sAbs, double sSq, double d, double b2,
                   double c2) {
            if (mismatches == 0 && mis > 0) {
                firstMismatch = firstMis;
            }
            mismatches += mis;
            finite += fin;
            if (empty) { // assignment keeps a single range's bits (-0.0 included)
                maxAbs = mAbs;
                maxRel = mRel;
                sumAbs = sAbs;
                sumSq = sSq;
                dot = d;
                nb = b2;
                nc = c2;
                empty = false;
                return;
            }
            maxAbs = Math.max(maxAbs, mAbs);
            maxRel = Math.max(maxRel, mRel);
            sumAbs += sAbs;
            sumSq += sSq;
            dot += d;
            nb += b2;
            nc += c2;
        }

        /** The metrics over the {@code n} elements compared. */
        public Metrics metrics(long n, boolean bitwise) {
            Long first = mismatches == 0 ? null : firstMismatch;
            if (finite == 0) {
                return new Metrics(n, bitwise, mismatches, first, null, null, null, null, null);
            }
            Double cosine = nb == 0 || nc == 0 ? null : dot / (Math.sqrt(nb) * Math.sqrt(nc));
            return new Metrics(n, bitwise, mismatches, first, maxAbs, maxRel, sumAbs / finite, Math.sqrt(sumSq / finite),
                    cosine);
        }
    }
}
