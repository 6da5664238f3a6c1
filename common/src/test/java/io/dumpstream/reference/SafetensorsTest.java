package io.dumpstream.reference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.format.Dtype;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SafetensorsTest {
    @TempDir
    Path dir;

    private Path write(String header, byte[] data) throws IOException {
        byte[] h = header.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(h.length).array());
        out.write(h);
        out.write(data);
        Path f = Files.createTempFile(dir, "t", ".safetensors");
        Files.write(f, out.toByteArray());
        return f;
    }

    @Test
    void readsTensorsMetadataAndBytes() throws IOException {
        byte[] data = new byte[4 * 6 + 2 * 3];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) i;
        }
        Path f = write("{\"__metadata__\":{\"format\":\"pt\"},"
                + "\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
                + "\"b\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[24,30]}}", data);
        try (Safetensors s = Safetensors.open(f)) {
            assertEquals(2, s.entries().size());
            assertEquals("pt", s.metadata().get("format"));
            Safetensors.Entry a = s.entry("a");
            assertEquals(Dtype.FLOAT32, a.dtype());
            assertArrayEquals(new long[] {2, 3}, a.shape());
            assertEquals(6, a.numel());
            Safetensors.Entry b = s.entry("b");
            assertEquals(Dtype.BFLOAT16, b.dtype());
            byte[] bb = s.readAll(b);
            assertArrayEquals(new byte[] {24, 25, 26, 27, 28, 29}, bb);
            ByteBuffer part = ByteBuffer.allocate(4);
            s.read(a, 8, part);
            assertArrayEquals(new byte[] {8, 9, 10, 11}, part.array());
            assertThrows(IllegalArgumentException.class, () -> s.read(a, 22, ByteBuffer.allocate(4)));
        }
    }

    @Test
    void scalarAndEmptyTensors() throws IOException {
        Path f = write("{\"s\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[0,8]},"
                + "\"e\":{\"dtype\":\"F16\",\"shape\":[0,4],\"data_offsets\":[8,8]}}", new byte[8]);
        try (Safetensors s = Safetensors.open(f)) {
            assertEquals(1, s.entry("s").numel());
            assertEquals(0, s.entry("e").bytes());
        }
    }

    private void rejects(String header, int dataBytes, String field, String valueFragment) throws IOException {
        Path f = write(header, new byte[dataBytes]);
        SafetensorsException e = assertThrows(SafetensorsException.class, () -> Safetensors.open(f).close());
        assertEquals(field, e.field(), e.getMessage());
        assertTrue(e.getMessage().startsWith(f.toString()), e.getMessage());
        assertTrue(e.getMessage().contains(valueFragment), e.getMessage());
    }

    @Test
    void hostileHeadersNameFieldAndValue() throws IOException {
        rejects("{\"a\":{\"dtype\":\"F4\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1, "'a'.dtype", "'F4'");
        rejects("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 8, "'a'.data_offsets", "needs 8");
        rejects("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 8, "'a'.data_offsets", "[4, 0]");
        rejects("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", 8, "'a'.data_offsets", "8-byte data section");
        rejects("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 8, "'a'.shape", "[-1]");
        rejects("{\"a\":{\"dtype\":\"F64\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}", 8,
                "'a'.shape", "overflows");
        rejects("{\"a\":{\"dtype\":\"F64\",\"shape\":[1152921504606846976,8],\"data_offsets\":[0,8]}}", 8,
                "'a'.shape", "overflows");
        rejects("{\"a\":{\"dtype\":\"F32\",\"shape\":[99999999999999999999],\"data_offsets\":[0,4]}}", 8,
                "'a'.shape", "99999999999999999999");
        rejects("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                + "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "'b'.data_offsets", "overlaps 'a'");
        rejects("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                + "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "tensor name", "'a'");
        rejects("{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, "'a'", "data_offsets");
        rejects("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", 8, "'a'.data_offsets", "more than 2");
        rejects("{\"a\":[1]}", 0, "'a'", "not a JSON object");
        rejects("[1,2]", 0, "header", "not a JSON object");
        rejects("{\"a\":", 0, "header", "invalid JSON");
        rejects("{\"__metadata__\":{\"k\":1}}", 0, "__metadata__.k", "not a string");
        rejects("\u0000\u0000\u0000{", 0, "header", "JSON");
    }

    @Test
    void headerLengthCheckedBeforeAllocating() throws IOException {
        for (long len : new long[] {-1L, Long.MAX_VALUE, Safetensors.MAX_HEADER_BYTES + 1, 1L << 40, 1000}) {
            Path f = Files.createTempFile(dir, "h", ".safetensors");
            Files.write(f, ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(len).array());
            SafetensorsException e = assertThrows(SafetensorsException.class, () -> Safetensors.open(f).close());
            assertEquals("header length", e.field());
        }
        Path tiny = Files.createTempFile(dir, "tiny", ".safetensors");
        Files.write(tiny, new byte[3]);
        assertEquals("header length",
                assertThrows(SafetensorsException.class, () -> Safetensors.open(tiny).close()).field());
    }

    /** Random mutations of a valid file: every outcome is either a valid parse or a SafetensorsException. */
    @Test
    void mutatedFilesNeverCrash() throws IOException {
        String header = "{\"__metadata__\":{\"format\":\"pt\"},"
                + "\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
                + "\"b\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[24,30]}}";
        Path base = write(header, new byte[30]);
        byte[] good = Files.readAllBytes(base);
        Random r = new Random(17);
        int parsed = 0;
        int rejected = 0;
        for (int i = 0; i < 3000; i++) {
            byte[] m = good.clone();
            int flips = 1 + r.nextInt(4);
            for (int k = 0; k < flips; k++) {
                m[r.nextInt(m.length)] = (byte) r.nextInt(256);
            }
            Path f = dir.resolve("m.safetensors");
            Files.write(f, m);
            try (Safetensors s = Safetensors.open(f)) {
                for (Safetensors.Entry e : s.entries()) {
                    assertEquals(e.bytes(), s.readAll(e).length);
                }
                parsed++;
            } catch (SafetensorsException e) {
                rejected++;
            }
        }
        assertTrue(parsed > 0 && rejected > 0, parsed + " parsed, " + rejected + " rejected");
    }
}
