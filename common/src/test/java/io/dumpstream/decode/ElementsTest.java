package io.dumpstream.decode;

import io.dumpstream.format.Dtype;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The shared element decoder: exact values per dtype, from an offset, and the bounds it refuses. */
class ElementsTest {

    private static ByteBuffer le(int bytes) {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static double[] decode(Dtype d, byte[] b, int off, long first, int count) {
        double[] out = new double[count];
        Elements.toDouble(d, b, off, first, count, out);
        return out;
    }

    @Test
    void everyDtypeDecodesExactValues() {
        assertArrayEquals(new double[]{1.5, -0.1, Double.NaN},
                decode(Dtype.FLOAT64, le(24).putDouble(1.5).putDouble(-0.1).putDouble(Double.NaN).array(), 0, 0, 3));
        assertArrayEquals(new double[]{(double) 0.1f, Double.NEGATIVE_INFINITY},
                decode(Dtype.FLOAT32, le(8).putFloat(0.1f).putFloat(Float.NEGATIVE_INFINITY).array(), 0, 0, 2));
        // float16: 0x3C00 = 1, 0xC000 = -2, 0x0001 = 2^-24, 0x7C00 = +inf
        assertArrayEquals(new double[]{1, -2, 0x1p-24, Double.POSITIVE_INFINITY},
                decode(Dtype.FLOAT16, le(8).putShort((short) 0x3C00).putShort((short) 0xC000).putShort((short) 1)
                        .putShort((short) 0x7C00).array(), 0, 0, 4));
        // bfloat16: top half of a float32
        assertArrayEquals(new double[]{1, -0.5},
                decode(Dtype.BFLOAT16, le(4).putShort((short) 0x3F80).putShort((short) 0xBF00).array(), 0, 0, 2));
        assertArrayEquals(new double[]{448, Double.NaN, 0x1p-9},
                decode(Dtype.FLOAT8_E4M3FN, new byte[]{0x7E, 0x7F, 0x01}, 0, 0, 3));
        assertArrayEquals(new double[]{57344, Double.POSITIVE_INFINITY, 0x1p-16},
                decode(Dtype.FLOAT8_E5M2, new byte[]{0x7B, 0x7C, 0x01}, 0, 0, 3));
        assertArrayEquals(new double[]{-3, 1L << 40},
                decode(Dtype.INT64, le(16).putLong(-3).putLong(1L << 40).array(), 0, 0, 2));
        assertArrayEquals(new double[]{Integer.MIN_VALUE, 7}, decode(Dtype.INT32, le(8).putInt(Integer.MIN_VALUE).putInt(7).array(), 0, 0, 2));
        assertArrayEquals(new double[]{-32768, 5}, decode(Dtype.INT16, le(4).putShort((short) -32768).putShort((short) 5).array(), 0, 0, 2));
        assertArrayEquals(new double[]{-1, 127}, decode(Dtype.INT8, new byte[]{-1, 127}, 0, 0, 2));
        assertArrayEquals(new double[]{255, 1}, decode(Dtype.UINT8, new byte[]{-1, 1}, 0, 0, 2));
        assertArrayEquals(new double[]{0, 1}, decode(Dtype.BOOL, new byte[]{0, 1}, 0, 0, 2));
    }

    @Test
    void offsetAndFirstElementSelectTheRange() {
        byte[] b = le(20).putInt(99).putFloat(1f).putFloat(2f).putFloat(3f).putFloat(4f).array();
        assertArrayEquals(new double[]{3, 4}, decode(Dtype.FLOAT32, b, 4, 2, 2));
        assertEquals((1L << 62) + 1, Elements.rawLong(Dtype.INT64, le(8).putLong((1L << 62) + 1).array(), 0, 0));
        assertEquals(200, Elements.rawLong(Dtype.UINT8, new byte[]{(byte) 200}, 0, 0));
    }

    @Test
    void outOfRangeIsRefusedWithTheNumbers() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> decode(Dtype.FLOAT32, new byte[8], 0, 1, 2));
        assertEquals("elements [1, 3) of float32 at byte 0 exceed the 8-byte payload or the 2-element buffer", e.getMessage());
    }

    @Test
    void statisticsAndElementsAgree() {
        byte[] b = le(8).putShort((short) 0x3C00).putShort((short) 0x4000).putShort((short) 0x7E00).putShort((short) 0).array();
        double[] v = decode(Dtype.FLOAT16, b, 0, 0, 4);
        TensorStats.Stats s = TensorStats.compute(Dtype.FLOAT16, b, 0, 8);
        assertEquals(1L, s.nanCount());
        assertEquals((v[0] + v[1] + v[3]) / 3, s.mean());
    }
}
