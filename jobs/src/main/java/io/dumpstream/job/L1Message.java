package io.dumpstream.job;

import io.dumpstream.publish.L1Headers;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * One Kafka message of the L1 topic as it was received: key, value and every header, unchanged, so
 * that it can be re-published to the dead-letter topic byte for byte, plus where it came from.
 * A Flink POJO (public fields, no-arg constructor).
 */
public class L1Message {
    /** The key as UTF-8 text (the dump id), or "" when the message had no key. */
    public String key = "";
    /** The original key bytes, null when absent. */
    public byte[] keyBytes;
    /** The original value, null when absent. */
    public byte[] value;
    public String[] headerKeys = new String[0];
    public byte[][] headerValues = new byte[0][];
    public String topic;
    public int partition;
    public long offset;
    public long timestamp;
    /** Why the message goes to the dead-letter topic; set only on that path. */
    public String dlqReason;
    /** On the dead-letter path: the value was dropped after decoding; read it back from topic/partition/offset. */
    public boolean refetch;

    public L1Message() {
    }

    /** The last value of header {@code name} as ASCII text, or null. */
    public String header(String name) {
        for (int i = headerKeys.length - 1; i >= 0; i--) {
            if (name.equals(headerKeys[i])) {
                byte[] v = headerValues[i];
                return v == null ? null : new String(v, StandardCharsets.US_ASCII);
            }
        }
        return null;
    }

    public String kind() {
        return header(L1Headers.KIND);
    }

    public int valueLength() {
        return value == null ? 0 : value.length;
    }

    /** The epoch-millisecond publish time of the dump, else the Kafka timestamp. */
    public long publishTs() {
        String ts = header(L1Headers.PUBLISH_TS);
        if (ts != null) {
            try {
                return Long.parseLong(ts.trim());
            } catch (NumberFormatException e) {
                // fall back to the broker's timestamp
            }
        }
        return timestamp;
    }

    /** Where the message came from, for details and logs. */
    public String where() {
        return topic + "-" + partition + "@" + offset;
    }

    /** A copy bound for the dead-letter topic with the reason attached. */
    public L1Message toDlq(String reason) {
        L1Message m = new L1Message();
        m.key = key;
        m.keyBytes = keyBytes;
        m.value = value;
        m.headerKeys = headerKeys;
        m.headerValues = headerValues;
        m.topic = topic;
        m.partition = partition;
        m.offset = offset;
        m.timestamp = timestamp;
        m.dlqReason = reason;
        return m;
    }

    @Override
    public String toString() {
        return "L1Message{" + where() + " key=" + key + " kind=" + kind() + " headers=" + Arrays.toString(headerKeys)
                + " bytes=" + valueLength() + "}";
    }
}
