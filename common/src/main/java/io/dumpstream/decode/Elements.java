package io.dumpstream.decode;

import io.dumpstream.format.Dtype;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Exact decoding of stored little-endian elements to float64, per dtype: the one element decoder
 * shared by the statistics ({@link TensorStats}) and the run-against-run comparison. float16,
 * bfloat16 and the fp8 formats go through lookup tables of their exact values; integers and bool
 * become their numeric value (int64 beyond 2^53 rounds, which is why {@link #rawLong} exists).
 */
public final class Elements {
    static final VarHandle F64 = MethodHandles.byteArrayViewVarHandle(double[].class, ByteOrder.LITTLE_ENDIAN);
    static final VarHandle F32 = MethodHandles.byteArrayViewVarHandle(float[].class, ByteOrder.LITTLE_ENDIAN);
    static final VarHandle I64 = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    static final VarHandle I32 = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    static final VarHandle I16 = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);

    /** float16 bit pattern to its exact value. */
    static final float[] HALF = new float[1 << 16];
    /** float8_e4m3fn byte to its exact value. */
    static final double[] E4M3FN = new double[256];
    /** float8_e5m2 byte to its exact value. */
    static final double[] E5M2 = new double[256];

    static {
        for (int b = 0; b < HALF.length; b++) {
            HALF[b] = halfToFloat(b);
        }
        for (int b = 0; b < 256; b++) {
            E4M3FN[b] = e4m3fn(b);
            E5M2[b] = HALF[b << 8]; // e5m2 is the top byte of a float16
        }
    }

    private Elements() {
    }

    /** Whether the dtype holds integers (bool included): compared exactly by default. */
    public static boolean isInteger(Dtype dtype) {
        return switch (dtype) {
            case INT64, INT32, INT16, INT8, UINT8, BOOL -> true;
            default -> false;
        };
    }

    /**
     * Decodes elements {@code [first, first + count)} of the payload starting at {@code off} in
     * {@code b} into {@code dst[0, count)}. The caller checks the bounds once per payload; this
     * method only asserts them so the hot loop stays free of checks the VarHandles repeat anyway.
     */
    public static void toDouble(Dtype dtype, byte[] b, int off, long first, int count, double[] dst) {
        int es = dtype.elementSize();
        long start = off + first * es;
        if (first < 0 || count < 0 || count > dst.length || start < 0 || start + (long) count * es > b.length) {
            throw new IllegalArgumentException("elements [" + first + ", " + (first + count) + ") of " + dtype.torchName()
                    + " at byte " + off + " exceed the " + b.length + "-byte payload or the " + dst.length + "-element buffer");
        }
        int p = (int) start;
        switch (dtype) {
            case FLOAT64 -> {
                for (int i = 0; i < count; i++) {
                    dst[i] = (double) F64.get(b, p + 8 * i);
                }
            }
            case FLOAT32 -> {
                for (int i = 0; i < count; i++) {
                    dst[i] = (float) F32.get(b, p + 4 * i);
                }
            }
            case FLOAT16 -> {
                for (int i = 0; i < count; i++) {
                    dst[i] = HALF[(short) I16.get(b, p + 2 * i) & 0xFFFF];
                }
            }
            case BFLOAT16 -> {
                for (int i = 0; i < count; i++) {
                    dst[i] = Float.intBitsToFloat(((short) I16.get(b, p + 2 * i) & 0xFFFF) << 16);
                }
            }
            case FLOAT8_E4M3FN -> {
                for (int i = 0; i < count; i++) {
                    dst[i] = E4M3FN[b[p + i] & 0xFF];
                }
            }
            case FLOAT8_E5M2 -> {
                for (int i = 0; i < count; i++) {
                    dst[i] = E5M2[b[p + i] & 0xFF];
                }
            }
            case INT64 -> {
                for (int i = 0; i < count; i++) {
                    dst[i] = (double) (long) I64.get(b, p + 8 * i);
                }
            }
            case INT32 -> {
                for (int i = 0; i < count; i++) {
                    dst[i] = (int) I32.get(b, p + 4 * i);
                }
            }
            case INT16 -> {
                for (int i = 0; i < count; i++) {
                    dst[i] = (short) I16.get(b, p + 2 * i);
                }
            }
            case INT8 -> {
                for (int i = 0; i < count; i++) {
                    dst[i] = b[p + i];
                }
            }
            case UINT8, BOOL -> {
                for (int i = 0; i < count; i++) {
                    dst[i] = b[p + i] & 0xFF;
                }
            }
            default -> throw new IllegalStateException("dtype not handled: " + dtype);
        }
    }

    /** Element {@code index} of an integer payload as its exact signed value (uint8 and bool unsigned). */
    public static long rawLong(Dtype dtype, byte[] b, int off, long index) {
        int p = Math.toIntExact(off + index * dtype.elementSize());
        return switch (dtype) {
            case INT64 -> (long) I64.get(b, p);
            case INT32 -> (int) I32.get(b, p);
            case INT16 -> (short) I16.get(b, p);
            case INT8 -> b[p];
            case UINT8, BOOL -> b[p] & 0xFF;
            default -> throw new IllegalArgumentException(dtype.torchName() + " is not an integer dtype");
        };
    }

    /** Exact value of an IEEE 754 binary16 bit pattern. */
    public static float halfToFloat(int h) {
        int sign = (h >>> 15) & 1;
        int exp = (h >>> 10) & 0x1F;
        int mant = h & 0x3FF;
        float v;
        if (exp == 0x1F) {
            v = mant == 0 ? Float.POSITIVE_INFINITY : Float.NaN;
        } else if (exp == 0) {
            v = mant * 0x1p-24f; // subnormal: mant x 2^-24
        } else {
            v = Float.intBitsToFloat((exp - 15 + 127) << 23 | mant << 13);
        }
        return sign == 1 ? -v : v;
    }

    /** Exact value of a float8_e4m3fn byte: bias 7, no infinities, S.1111.111 is NaN. */
    public static double e4m3fn(int b) {
        int sign = (b >>> 7) & 1;
        int exp = (b >>> 3) & 0xF;
        int mant = b & 0x7;
        double v;
        if (exp == 0xF && mant == 0x7) {
            v = Double.NaN;
        } else if (exp == 0) {
            v = mant * 0x1p-9; // subnormal: mant/8 x 2^-6
        } else {
            v = (1 + mant / 8.0) * Math.pow(2, exp - 7);
        }
        return sign == 1 ? -v : v;
    }
}
