package io.dumpstream.table;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Thrift's compact protocol, written into a growable byte array: the few constructs a Parquet
 * footer, page header and page index use (structs, i16/i32/i64, binary, booleans, lists). Parquet's
 * own thrift classes build an object graph and a protocol per header; {@link SmallPartEncoder}
 * writes its structs field by field here instead (2026-12-07: those cost 13% more CPU per small part,
 * BENCHMARKS.md issue 34), with the field ids of parquet-format-structures'
 * generated classes. Field ids are given in increasing order within a struct (as the generated
 * writers do), {@link #beginStruct()} and {@link #endStruct()} keep the
 * last field id of enclosing structs.
 */
final class ThriftCompact {
    static final byte TRUE = 1;
    static final byte FALSE = 2;
    static final byte I16 = 4;
    static final byte I32 = 5;
    static final byte I64 = 6;
    static final byte BINARY = 8;
    static final byte LIST = 9;
    static final byte STRUCT = 12;

    private byte[] buf = new byte[1024];
    private int size;
    private short[] lastIds = new short[8];
    private int depth;
    private short lastId;

    void reset() {
        size = 0;
        depth = 0;
        lastId = 0;
    }

    int size() {
        return size;
    }

    byte[] array() {
        return buf;
    }

    private void ensure(int n) {
        if (size + n > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + n));
        }
    }

    void raw(byte[] bytes) {
        ensure(bytes.length);
        System.arraycopy(bytes, 0, buf, size, bytes.length);
        size += bytes.length;
    }

    void rawByte(int b) {
        ensure(1);
        buf[size++] = (byte) b;
    }

    private void field(int id, byte type) {
        int delta = id - lastId;
        if (delta > 0 && delta <= 15) {
            rawByte(delta << 4 | type);
        } else {
            rawByte(type);
            varint(zigzag(id));
        }
        lastId = (short) id;
    }

    /** Goes on in the current struct after field {@code id}, written by {@link #raw} from elsewhere. */
    void resume(int id) {
        lastId = (short) id;
    }

    /** Starts a struct nested in a list or at the top (field ids start from 0 again). */
    void beginStruct() {
        if (depth == lastIds.length) {
            lastIds = Arrays.copyOf(lastIds, depth * 2);
        }
        lastIds[depth++] = lastId;
        lastId = 0;
    }

    /** Starts struct field {@code id}. */
    void beginStruct(int id) {
        field(id, STRUCT);
        beginStruct();
    }

    void endStruct() {
        rawByte(0);
        lastId = lastIds[--depth];
    }

    void i16(int id, int v) {
        field(id, I16);
        varint(zigzag(v));
    }

    void i32(int id, int v) {
        field(id, I32);
        varint(zigzag(v));
    }

    void i64(int id, long v) {
        field(id, I64);
        varint(zigzag(v));
    }

    void bool(int id, boolean v) {
        field(id, v ? TRUE : FALSE);
    }

    void binary(int id, byte[] v) {
        field(id, BINARY);
        binaryValue(v);
    }

    /** Starts list field {@code id} of {@code n} elements of {@code type} (elements follow). */
    void list(int id, byte type, int n) {
        field(id, LIST);
        listHeader(type, n);
    }

    void listHeader(byte type, int n) {
        if (n < 15) {
            rawByte(n << 4 | type);
        } else {
            rawByte(0xF0 | type);
            varint(n);
        }
    }

    /** An i32, i64 or i16 list element. */
    void intValue(long v) {
        varint(zigzag(v));
    }

    void boolValue(boolean v) {
        rawByte(v ? TRUE : FALSE);
    }

    void binaryValue(byte[] v) {
        varint(v.length);
        raw(v);
    }

    void binaryValue(ByteBuffer v) {
        int n = v.remaining();
        varint(n);
        ensure(n);
        v.duplicate().get(buf, size, n);
        size += n;
    }

    private static long zigzag(long v) {
        return (v << 1) ^ (v >> 63);
    }

    void varint(long v) {
        ensure(10);
        while ((v & ~0x7FL) != 0) {
            buf[size++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        buf[size++] = (byte) v;
    }
}
