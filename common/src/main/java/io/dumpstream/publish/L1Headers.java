package io.dumpstream.publish;

import java.nio.charset.StandardCharsets;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/** Kafka header names and values of CONTRACT section 3; numeric values are ASCII decimal. */
public final class L1Headers {
    /** {@code manifest} or {@code chunk}. */
    public static final String KIND = "l1.kind";
    public static final String CHUNK_INDEX = "l1.chunk.index";
    public static final String CHUNK_OFFSET = "l1.chunk.offset";
    /** CRC-32C of the chunk value as an unsigned decimal. */
    public static final String CHUNK_CRC32C = "l1.chunk.crc32c";
    /** Epoch milliseconds when publishing of the dump started; on every message of the dump. */
    public static final String PUBLISH_TS = "l1.publish.ts";

    public static final String KIND_MANIFEST = "manifest";
    public static final String KIND_CHUNK = "chunk";

    private L1Headers() {
    }

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    static byte[] decimal(long v) {
        return ascii(Long.toString(v));
    }

    /** The last value of header {@code name} as a string, or null when absent. */
    public static String text(Headers headers, String name) {
        Header h = headers.lastHeader(name);
        return h == null || h.value() == null ? null : new String(h.value(), StandardCharsets.US_ASCII);
    }
}
