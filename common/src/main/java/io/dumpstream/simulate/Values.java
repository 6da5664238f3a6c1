package io.dumpstream.simulate;

import io.dumpstream.format.DumpBuilder;
import io.dumpstream.format.Dtype;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;

/** The value distribution of one synthetic tensor and its element encoders. */
final class Values {
    enum Shape { GAUSS, RELU, PROBS, IDS, MASK }

    final Shape shape;
    final double mean;
    final double sigma;
    /** Share of elements forced to exact zero (padding); ReLU adds its own. */
    final double zeroRate;
    /** Share of elements replaced by NaN, +inf or -inf (floats only). */
    final double nonFiniteRate;

    private Values(Shape shape, double mean, double sigma, double zeroRate, double nonFiniteRate) {
        this.shape = shape;
        this.mean = mean;
        this.sigma = sigma;
        this.zeroRate = zeroRate;
        this.nonFiniteRate = nonFiniteRate;
    }

    static Values pick(SplittableRandom r, SyntheticRanks.Kind kind, boolean output, Dtype dt, double nonFiniteShare) {
        double zeros = r.nextInt(5) == 0 ? 0.01 + 0.09 * r.nextDouble() : 0.0;
        boolean isFloat = isFloat(dt);
        double nonFinite = isFloat && r.nextDouble() < nonFiniteShare ? 0.0005 + 0.002 * r.nextDouble() : 0.0;
        double activation = Math.exp(Math.log(0.1) + r.nextDouble() * Math.log(100)); // 0.1 .. 10
        if (dt == Dtype.BOOL) {
            return new Values(Shape.MASK, 0.7, 0, 0, 0);
        }
        if (!isFloat && (dt == Dtype.INT32 || dt == Dtype.INT64 || dt == Dtype.UINT8)) {
            double bound = kind == SyntheticRanks.Kind.ROUTER ? 64 : dt == Dtype.UINT8 ? 256 : 50000;
            return new Values(Shape.IDS, 0, bound, zeros, 0);
        }
        double intScale = dt == Dtype.INT8 ? 30 : dt == Dtype.INT16 ? 1000 : 1;
        Values v;
        switch (kind) {
            case ACT:
                v = output ? new Values(Shape.RELU, 0, activation, zeros, nonFinite)
                        : new Values(Shape.GAUSS, 0, activation, zeros, nonFinite);
                break;
            case SOFTMAX:
                v = output ? new Values(Shape.PROBS, 0, 0.05, zeros, nonFinite)
                        : new Values(Shape.GAUSS, 0, 3, zeros, nonFinite);
                break;
            case NORM:
                v = new Values(Shape.GAUSS, output ? 0 : 0.1 * r.nextGaussian(), output ? 1 : activation, zeros, nonFinite);
                break;
            case LOGITS:
                v = new Values(Shape.GAUSS, -2, 4, zeros, nonFinite);
                break;
            default:
                v = new Values(Shape.GAUSS, 0, r.nextInt(3) == 0 ? 0.02 : activation, zeros, nonFinite);
        }
        return intScale == 1 ? v : new Values(v.shape, v.mean * intScale, v.sigma * intScale, v.zeroRate, 0);
    }

    static boolean isFloat(Dtype dt) {
        switch (dt) {
            case FLOAT64: case FLOAT32: case FLOAT16: case BFLOAT16: case FLOAT8_E4M3FN: case FLOAT8_E5M2:
                return true;
            default:
                return false;
        }
    }

    double next(SplittableRandom r) {
        if (nonFiniteRate > 0 && r.nextDouble() < nonFiniteRate) {
            int k = r.nextInt(3);
            return k == 0 ? Double.NaN : k == 1 ? Double.POSITIVE_INFINITY : Double.NEGATIVE_INFINITY;
        }
        if (zeroRate > 0 && r.nextDouble() < zeroRate) {
            return 0.0;
        }
        switch (shape) {
            case MASK:
                return r.nextDouble() < mean ? 1 : 0;
            case IDS:
                return r.nextInt((int) sigma);
            case PROBS:
                return Math.abs(r.nextGaussian()) * sigma * r.nextDouble();
            case RELU:
                return Math.max(0.0, mean + sigma * r.nextGaussian());
            default:
                return mean + sigma * r.nextGaussian();
        }
    }

    /** Lazily writes the tensor's little-endian element bytes, the same for a given seed. */
    static final class Generator implements DumpBuilder.Payload {
        private final Values values;
        private final Dtype dtype;
        private final long seed;

        Generator(Values values, Dtype dtype, long seed) {
            this.values = values;
            this.dtype = dtype;
            this.seed = seed;
        }

        @Override
        public void copy(long bytes, DumpBuilder.Sink out) throws IOException {
            SplittableRandom r = new SplittableRandom(seed);
            ByteBuffer block = ByteBuffer.allocate(64 * 1024).order(ByteOrder.LITTLE_ENDIAN);
            long left = bytes / dtype.elementSize();
            while (left > 0) {
                block.clear();
                int n = (int) Math.min(left, block.capacity() / dtype.elementSize());
                for (int i = 0; i < n; i++) {
                    encode(values.next(r), block);
                }
                block.flip();
                out.put(block);
                left -= n;
            }
        }

        private void encode(double v, ByteBuffer b) {
            switch (dtype) {
                case FLOAT64: b.putDouble(v); break;
                case FLOAT32: b.putFloat((float) v); break;
                case FLOAT16: b.putShort(toHalf((float) v)); break;
                case BFLOAT16: b.putShort(toBfloat16((float) v)); break;
                case FLOAT8_E4M3FN: b.put(Fp8.E4M3FN.encode(v)); break;
                case FLOAT8_E5M2: b.put(Fp8.E5M2.encode(v)); break;
                case INT64: b.putLong(clamp(v, Long.MIN_VALUE, Long.MAX_VALUE)); break;
                case INT32: b.putInt((int) clamp(v, Integer.MIN_VALUE, Integer.MAX_VALUE)); break;
                case INT16: b.putShort((short) clamp(v, Short.MIN_VALUE, Short.MAX_VALUE)); break;
                case INT8: b.put((byte) clamp(v, -128, 127)); break;
                case UINT8: b.put((byte) clamp(v, 0, 255)); break;
                case BOOL: b.put((byte) (v != 0 ? 1 : 0)); break;
                default: throw new IllegalStateException("dtype " + dtype);
            }
        }
    }

    static long clamp(double v, long lo, long hi) {
        long x = Math.round(v);
        return Math.max(lo, Math.min(hi, x));
    }

    /** IEEE binary16, rounding to nearest even. */
    static short toHalf(float f) {
        int bits = Float.floatToRawIntBits(f);
        int sign = (bits >>> 16) & 0x8000;
        int abs = bits & 0x7FFFFFFF;
        if (abs >= 0x7F800000) {
            return (short) (sign | 0x7C00 | (abs > 0x7F800000 ? 0x200 : 0));
        }
        int exp = (abs >>> 23) - 127 + 15;
        if (exp <= 0) {
            // subnormal half: units of 2^-24, exact in double, rint rounds half to even
            int m = (int) Math.rint(Math.abs((double) f) * 16777216.0);
            return (short) (sign | m); // m == 0x400 is the smallest normal, encoded the same way
        }
        int mant = abs & 0x7FFFFF;
        int m = mant >>> 13;
        int rem = mant & 0x1FFF;
        if (rem > 0x1000 || (rem == 0x1000 && (m & 1) == 1)) {
            m++;
            if (m == 0x400) {
                m = 0;
                exp++;
            }
        }
        if (exp >= 31) {
            return (short) (sign | 0x7C00);
        }
        return (short) (sign | (exp << 10) | m);
    }

    /** bfloat16, rounding to nearest even; NaN stays a quiet NaN. */
    static short toBfloat16(float f) {
        int bits = Float.floatToRawIntBits(f);
        if (Float.isNaN(f)) {
            return (short) ((bits >>> 16) | 0x40);
        }
        return (short) ((bits + 0x7FFF + ((bits >>> 16) & 1)) >>> 16);
    }

    /** The two float8 formats, encoded by nearest representable value. */
    enum Fp8 {
        E4M3FN(4, 3, 7, false), E5M2(5, 2, 15, true);

        private final double[] magnitudes; // finite non-negative values by code 0..max
        private final int maxCode;
        private final boolean hasInf;
        private final int expBits;
        private final int mantBits;

        Fp8(int expBits, int mantBits, int bias, boolean hasInf) {
            this.expBits = expBits;
            this.mantBits = mantBits;
            this.hasInf = hasInf;
            int max = hasInf ? ((1 << expBits) - 1) << mantBits : 0x7E; // e5m2: below inf; e4m3fn: 0x7F is NaN
            this.maxCode = max - (hasInf ? 1 : 0);
            magnitudes = new double[maxCode + 1];
            for (int c = 0; c <= maxCode; c++) {
                int e = c >>> mantBits;
                int m = c & ((1 << mantBits) - 1);
                magnitudes[c] = e == 0
                        ? m / (double) (1 << mantBits) * Math.pow(2, 1 - bias)
                        : (1 + m / (double) (1 << mantBits)) * Math.pow(2, e - bias);
            }
        }

        byte encode(double v) {
            if (Double.isNaN(v)) {
                return (byte) 0x7F;
            }
            int sign = (Double.doubleToRawLongBits(v) < 0) ? 0x80 : 0;
            double a = Math.abs(v);
            if (Double.isInfinite(a)) {
                return (byte) (hasInf ? sign | (((1 << expBits) - 1) << mantBits) : 0x7F);
            }
            if (a >= magnitudes[maxCode]) {
                return (byte) (sign | maxCode); // saturate
            }
            int lo = 0;
            int hi = maxCode;
            while (hi - lo > 1) {
                int mid = (lo + hi) >>> 1;
                if (magnitudes[mid] <= a) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            double dl = a - magnitudes[lo];
            double dh = magnitudes[hi] - a;
            int code = dl < dh || (dl == dh && (lo & 1) == 0) ? lo : hi;
            return (byte) (sign | code);
        }
    }
}
