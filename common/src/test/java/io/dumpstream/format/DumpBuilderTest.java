package io.dumpstream.format;

import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.schema.RecordPlan;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class DumpBuilderTest {

    static byte[] resource(String name) throws IOException {
        try (InputStream in = DumpBuilderTest.class.getResourceAsStream("/vectors/" + name)) {
            if (in == null) {
                throw new IOException("missing test resource /vectors/" + name);
            }
            return in.readAllBytes();
        }
    }

    /** A builder loaded with the specs of the vector's plans, payloads taken from the vector's slots. */
    static DumpBuilder rebuild(DumpManifest m, byte[] bin) {
        DumpBuilder b = new DumpBuilder(m.getRunId(), m.getRank(), m.getLaunchId())
                .worldSize(m.getWorldSize()).step(m.getStep()).device(m.getDevice()).chunkBytes(m.getChunkBytes());
        for (RecordPlan p : m.getRecords()) {
            int off = (int) p.getPayloadOffset();
            byte[] payload = Arrays.copyOfRange(bin, off, off + (int) p.getPayloadBytes());
            b.add(new DumpBuilder.RecordSpec()
                    .taskId(p.getTaskId()).taskIndex(p.getTaskIndex()).stage(p.getStage())
                    .ownerId(p.getOwnerId()).ownerLabel(p.getOwnerLabel())
                    .coreType(p.getCoreType()).coreId(p.getCoreId())
                    .io(p.getIo()).index(p.getIndex()).parameterPosition(p.getParameterPosition())
                    .tensorName(p.getTensorName()).dtype(p.getDtype())
                    .sourceOffsetBytes(p.getSourceOffsetBytes())
                    .actualShape(p.getActualShape().stream().mapToLong(Long::longValue).toArray())
                    .note(p.getNote()).workerId(p.getWorkerId())
                    .maxPayloadBytes(p.getTruncated() ? p.getPayloadBytes() : null)
                    .payload(payload));
        }
        return b;
    }

    @ParameterizedTest
    @ValueSource(strings = {"all_dtypes", "truncation_and_empty", "multi_chunk"})
    void rebuildingAVectorsPlansGivesItsBytesAndManifest(String name) throws Exception {
        DumpManifest expected = ManifestParser.parseJson(resource(name + ".manifest.json"));
        byte[] bin = resource(name + ".bin");

        DumpBuilder.Dump dump = rebuild(expected, bin).build();

        assertEquals(bin.length, dump.buffer().length);
        assertArrayEquals(bin, dump.buffer(), name + ": buffer differs from the vector");
        assertEquals(expected, dump.manifest(), name + ": manifest differs from the vector");
        assertEquals(expected.getChunkCrc32c(), dump.manifest().getChunkCrc32c());
        // the manifest round-trips through the lead's parser
        assertEquals(expected, ManifestParser.parseJson(ManifestParser.toJson(dump.manifest())));
    }

    @Test
    void truncationAndEmptySlotsFollowTheSeed() throws Exception {
        DumpManifest expected = ManifestParser.parseJson(resource("truncation_and_empty.manifest.json"));
        List<RecordPlan> plans = rebuild(expected, resource("truncation_and_empty.bin")).plans();
        // bfloat16 [64,129] capped at 1000 bytes; empty [0,16] keeps the next offset; int8 [7] capped at 5
        assertEquals(List.of(262208L, 263232L, 263232L, 526400L, 526464L),
                plans.stream().map(RecordPlan::getPayloadOffset).toList());
        assertEquals(List.of(1000L, 0L, 263168L, 5L, 54L), plans.stream().map(RecordPlan::getPayloadBytes).toList());
        assertEquals(List.of(16512L, 0L, 263168L, 7L, 54L), plans.stream().map(RecordPlan::getFullBytes).toList());
        assertEquals(List.of(true, false, false, true, false), plans.stream().map(RecordPlan::getTruncated).toList());
        assertEquals(List.of(64L, 128L, 192L, 256L, 320L), plans.stream().map(RecordPlan::getRecordOffset).toList());
    }

    @Test
    void truncationRoundsDownToWholeElementsAndRejectsLessThanOne() {
        DumpBuilder b = new DumpBuilder("r", 0, 1);
        RecordPlan p = b.add(new DumpBuilder.RecordSpec().dtype("torch.float32").actualShape(10)
                .maxPayloadBytes(10L).payload(new byte[40]));
        assertEquals(8, p.getPayloadBytes());
        assertEquals(40, p.getFullBytes());
        assertEquals("torch.float32", p.getDtype());
        assertThrows(IllegalArgumentException.class, () -> b.add(new DumpBuilder.RecordSpec()
                .dtype("float64").actualShape(2).maxPayloadBytes(7L)));
        assertThrows(IllegalArgumentException.class, () -> b.add(new DumpBuilder.RecordSpec().dtype("complex64")));
        assertThrows(IllegalArgumentException.class, () -> b.add(new DumpBuilder.RecordSpec().io("inout")));
    }

    @Test
    void headerRecordsAndCapturedStatusAreWritten() throws Exception {
        DumpBuilder b = new DumpBuilder("r", 3, 9).chunkBytes(4096);
        byte[] a = new byte[100];
        for (int i = 0; i < a.length; i++) {
            a[i] = (byte) (i + 1);
        }
        b.add(new DumpBuilder.RecordSpec().taskId(7).taskIndex(2).io("input").parameterPosition(4)
                .sourceOffsetBytes(0x1_0000_0010L).dtype("uint8").actualShape(100).payload(a));
        b.add(new DumpBuilder.RecordSpec().taskId(8).io("output").dtype("int16").actualShape(3).workerId(5)
                .captured(false).payload(new byte[] {9, 9, 9, 9, 9, 9}));
        DumpBuilder.Dump d = b.build();
        ByteBuffer buf = ByteBuffer.wrap(d.buffer()).order(ByteOrder.LITTLE_ENDIAN);
        int[] header = new int[8];
        for (int i = 0; i < 8; i++) {
            header[i] = buf.getInt(4 * i);
        }
        // second slot at alignUp(262208 + 100) = 262336, total alignUp(262336 + 6) = 262400
        assertArrayEquals(new int[] {0x4C314450, 2, 1, 2, 64, 64, 262208, 262400}, header);
        assertEquals(262400, d.buffer().length);
        int[] r0 = new int[10];
        int[] r1 = new int[10];
        for (int i = 0; i < 10; i++) {
            r0[i] = buf.getInt(64 + 4 * i);
            r1[i] = buf.getInt(128 + 4 * i);
        }
        assertArrayEquals(new int[] {7, 1, 4, 0x10, 1, 262208, 100, 1, 2, -1}, r0);
        assertArrayEquals(new int[] {8, 2, 0, 0, 0, 262336, 6, 0, 0, 5}, r1);
        assertArrayEquals(a, Arrays.copyOfRange(d.buffer(), 262208, 262308));
        // a record left pending has no payload copied
        assertArrayEquals(new byte[6], Arrays.copyOfRange(d.buffer(), 262336, 262342));
        assertEquals(262400, d.manifest().getBufferBytes());
        assertEquals(65, d.manifest().getChunkCrc32c().size()); // 64 chunks of 4096 + 256 bytes
        CRC32C last = new CRC32C();
        last.update(d.buffer(), 64 * 4096, 256);
        assertEquals(last.getValue(), d.manifest().getChunkCrc32c().get(64));
    }

    @Test
    void streamingToAFileChannelMatchesTheArrayAndItsChunkCrcs(@TempDir Path dir) throws Exception {
        // 8 records of 1 MiB + 100 bytes each, generated lazily; chunks of 1 MiB straddle the slots
        DumpBuilder arrayBuilder = synthetic();
        DumpBuilder.Dump inMemory = arrayBuilder.build();
        Path file = dir.resolve("d.bin");
        DumpManifest streamed;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            streamed = synthetic().writeTo(ch);
        }
        byte[] onDisk = Files.readAllBytes(file);
        assertArrayEquals(inMemory.buffer(), onDisk);
        assertEquals(inMemory.manifest(), streamed);
        assertEquals(DumpBuilder.chunkCrc32c(ByteBuffer.wrap(onDisk), 1 << 20), streamed.getChunkCrc32c());
        assertEquals((onDisk.length + (1 << 20) - 1) / (1 << 20), streamed.getChunkCrc32c().size());
        // each slot is alignUp(1048676) = 1048704 bytes
        assertEquals(262208 + 8L * 1048704, onDisk.length);
    }

    private static DumpBuilder synthetic() {
        DumpBuilder b = new DumpBuilder("big", 0, 1);
        for (int r = 0; r < 8; r++) {
            final int seed = r;
            int n = (1 << 20) + 100;
            b.add(new DumpBuilder.RecordSpec().taskId(r).dtype("uint8").actualShape(n).payload((bytes, out) -> {
                byte[] block = new byte[4096];
                long left = bytes;
                long k = 0;
                while (left > 0) {
                    int len = (int) Math.min(left, block.length);
                    for (int i = 0; i < len; i++) {
                        block[i] = (byte) (k++ * 31 + seed);
                    }
                    out.put(block, 0, len);
                    left -= len;
                }
            }));
        }
        return b;
    }

    @Test
    void aPayloadThatWritesTheWrongLengthFails() {
        DumpBuilder b = new DumpBuilder("r", 0, 1);
        b.add(new DumpBuilder.RecordSpec().dtype("uint8").actualShape(10).payload((bytes, out) -> out.put(new byte[3], 0, 3)));
        assertThrows(IllegalStateException.class, b::build);
        DumpBuilder c = new DumpBuilder("r", 0, 1);
        c.add(new DumpBuilder.RecordSpec().dtype("uint8").actualShape(10).payload(new byte[4]));
        assertThrows(IllegalStateException.class, c::build);
        assertThrows(IllegalStateException.class, () -> new DumpBuilder("r", 0, 1).build());
    }
}
