package io.dumpstream.cli;

import io.dumpstream.format.L1Layout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A 1 GiB dump (64 records of 16 MiB) decodes in a child JVM capped at -Xmx160m: the buffer is read
 * chunk by chunk and memory holds one record, never the dump.
 */
class LargeDumpSmallHeapTest {
    static final int RECORDS = 64;
    static final int RECORD_BYTES = 16 * 1024 * 1024;
    static final int CHUNK = 1024 * 1024;

    @Test
    void oneGibDumpDecodesWithASmallHeap(@TempDir Path dir) throws Exception {
        long total = L1Layout.PAYLOAD_BASE + (long) RECORDS * RECORD_BYTES;
        Path bin = dir.resolve("big.bin");
        byte[] head = new byte[L1Layout.PAYLOAD_BASE];
        ByteBuffer h = ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN);
        h.putInt(0, (int) L1Layout.MAGIC).putInt(4, 2).putInt(8, 1).putInt(12, RECORDS).putInt(16, 64)
                .putInt(20, 64).putInt(24, L1Layout.PAYLOAD_BASE).putInt(28, (int) total);
        StringBuilder recs = new StringBuilder();
        for (int i = 0; i < RECORDS; i++) {
            long off = L1Layout.PAYLOAD_BASE + (long) i * RECORD_BYTES;
            int e = 64 + 64 * i;
            h.putInt(e, i).putInt(e + 4, 2).putInt(e + 8, 0).putInt(e + 20, (int) off).putInt(e + 24, RECORD_BYTES)
                    .putInt(e + 28, 1).putInt(e + 32, 0).putInt(e + 36, -1);
            recs.append(i == 0 ? "" : ",").append("{\"task_id\":").append(i).append(",\"task_index\":0,\"stage\":\"big.layer")
                    .append(i % 4).append("\",\"owner_id\":null,\"owner_label\":\"\",\"core_type\":\"AIV\",\"core_id\":0,")
                    .append("\"io\":\"output\",\"index\":0,\"phase\":\"after\",\"parameter_position\":0,\"tensor_name\":\"t\",")
                    .append("\"dtype\":\"float32\",\"source_offset_bytes\":0,\"actual_shape\":[4096,1024],\"payload_offset\":")
                    .append(off).append(",\"payload_bytes\":").append(RECORD_BYTES).append(",\"full_bytes\":").append(RECORD_BYTES)
                    .append(",\"truncated\":false,\"note\":\"\",\"record_offset\":").append(e).append(",\"worker_id\":4294967295}");
        }
        try (RandomAccessFile f = new RandomAccessFile(bin.toFile(), "rw")) {
            f.setLength(total); // sparse: payloads are zeros
            f.write(head);
        }
        List<String> crcs = new ArrayList<>();
        byte[] zeros = new byte[CHUNK];
        for (long off = 0; off < total; off += CHUNK) {
            CRC32C c = new CRC32C();
            int len = (int) Math.min(CHUNK, total - off);
            if (off < head.length) {
                int fromHead = (int) Math.min(len, head.length - off);
                c.update(head, (int) off, fromHead);
                c.update(zeros, 0, len - fromHead);
            } else {
                c.update(zeros, 0, len);
            }
            crcs.add(String.valueOf(c.getValue()));
        }
        String manifest = "{\"manifest_version\":1,\"run_id\":\"big\",\"rank\":0,\"launch_id\":1,\"format_version\":2,"
                + "\"buffer_bytes\":" + total + ",\"chunk_bytes\":" + CHUNK + ",\"chunk_crc32c\":[" + String.join(",", crcs)
                + "],\"records\":[" + recs + "]}";
        Path m = dir.resolve("big.manifest.json");
        Files.writeString(m, manifest, StandardCharsets.UTF_8);

        Path out = dir.resolve("out");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx160m",
                "-cp", System.getProperty("java.class.path"), Main.class.getName(), "decode", "--manifest", m.toString(),
                "--buffer", bin.toString(), "--out", out.toString())
                .redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(5, TimeUnit.MINUTES), "decode finished");
        assertEquals(0, p.exitValue(), log);
        assertTrue(log.contains("big/0/1: COMPLETE, 64 accepted, 0 rejected of 64 records"), log);
        try (var files = Files.walk(out.resolve("snapshots"))) {
            assertEquals(4, files.filter(f -> f.toString().endsWith(".parquet")).map(Path::getParent).distinct().count());
        }
    }
}
