package io.dumpstream.table;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.schema.DumpOutcome;
import io.dumpstream.schema.RejectedRecord;
import io.dumpstream.schema.TensorSnapshot;
import java.nio.ByteBuffer;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.avro.Schema;
import org.apache.avro.specific.SpecificRecord;

/** Test rows of the three tables, built with the generated builders, and an exact comparison against DuckDB rows. */
public final class TableRows {

    /** Run ids and stage names that try to leave the root or break the partition syntax. */
    static final List<String> HOSTILE = List.of(
            "..",
            ".",
            "../../etc/evil",
            "/abs",
            "a\\b",
            "a/b=c",
            "%2F..%2F",
            "ctl\u0001\t\n\r\u001f\u007f end",
            "nul\u0000byte",
            "x".repeat(150) + "/" + "y".repeat(149),
            "ünïcødé",
            "sp ace;semi}brace~tilde",
            "quote\"hash#pct%apos'star*colon:eq=q?brace{sq[]caret^");

    static final Instant AT = Instant.parse("2026-12-01T10:15:30.123Z");

    private TableRows() {}

    public static byte[] bytes(int length, long seed) {
        byte[] data = new byte[length];
        new Random(seed).nextBytes(data);
        return data;
    }

    public static TensorSnapshot snapshot(int index, String runId, String stage, byte[] data, boolean nulls) {
        return TensorSnapshot.newBuilder()
                .setDumpId(runId + "/3/" + (1000 + index))
                .setRunId(runId)
                .setStageName(stage)
                .setLaunchId(1000L + index)
                .setStep(nulls ? null : 77L + index)
                .setRecordIndex(index)
                .setTaskId(0xFFFF_FFFFL - index)
                .setTaskIndex(index * 2L)
                .setOwnerId(nulls ? null : (long) -index)
                .setOwnerLabel("expert")
                .setCoreType(index % 2 == 0 ? "AIC" : "AIV")
                .setCoreId(index % 24)
                .setWorkerId(nulls ? null : 5L)
                .setIo("output")
                .setPortIndex(index % 3)
                .setPhase("after")
                .setParameterPosition(4)
                .setTensorName("t" + index + "_ü")
                .setNote(nulls ? "" : "note " + index)
                .setDtype("bfloat16")
                .setShape(List.of(2L, (long) data.length / 4))
                .setStoredShape(List.of((long) data.length / 2))
                .setTruncated(index % 2 == 1)
                .setFullBytes(data.length * 2L)
                .setPayloadBytes(data.length)
                .setSourceOffsetBytes(1L << 40)
                .setData(ByteBuffer.wrap(data))
                .setNumel(data.length / 2L)
                .setNanCount(1)
                .setInfCount(2)
                .setZeroCount(3)
                .setMin(nulls ? null : -0.0)
                .setMax(nulls ? null : Double.MAX_VALUE)
                .setMean(nulls ? null : 1.0 / 3)
                .setL2Norm(nulls ? null : Double.MIN_VALUE)
                .setPayloadCrc32c(0xDEADBEEFL)
                .setIngestedAt(AT.plusMillis(index))
                .build();
    }

    static DumpOutcome dump(int index, String runId, boolean nulls) {
        return DumpOutcome.newBuilder()
                .setDumpId("d" + index)
                .setRunId(nulls ? null : runId)
                .setLaunchId(nulls ? -1 : index)
                .setStep(nulls ? null : (long) index)
                .setRecords(10)
                .setAccepted(nulls ? 0 : 9)
                .setRejected(nulls ? 10 : 1)
                .setBufferBytes(262208L + index)
                .setOutcome(nulls ? "REJECTED" : "PARTIAL")
                .setReason(nulls ? "MANIFEST_INVALID" : null)
                .setCompletedAt(AT.plusSeconds(index))
                .build();
    }

    static RejectedRecord reject(int index, String runId, boolean nulls) {
        return RejectedRecord.newBuilder()
                .setDumpId("key-" + index)
                .setRunId(nulls ? null : runId)
                .setLaunchId(nulls ? null : (long) index)
                .setRecordIndex(nulls ? null : index)
                .setTaskId(nulls ? null : 9L)
                .setStageName(nulls ? null : "stage/" + index)
                .setIo(nulls ? null : "input")
                .setPortIndex(nulls ? null : 1)
                .setTensorName(nulls ? null : "x")
                .setReason(nulls ? "MANIFEST_INVALID" : "SIZE_MISMATCH")
                .setDetail("full_bytes=12 expected 16")
                .setRawRecord(nulls ? null : ByteBuffer.wrap(bytes(64, index)))
                .setPayload(nulls ? null : ByteBuffer.wrap(bytes(1000, index)))
                .setPayloadTruncated(!nulls)
                .setManifest(nulls ? "{not json" : null)
                .setRejectedAt(AT)
                .build();
    }

    /** Every field of {@code expected} equals the same-named column of {@code actual}. */
    static void assertSameValues(SpecificRecord expected, Map<String, Object> actual) {
        for (Schema.Field field : expected.getSchema().getFields()) {
            Object want = expected.get(field.pos());
            Object got = actual.get(field.name());
            String where = field.name() + " of " + actual.get("dump_id");
            assertTrue(actual.containsKey(field.name()), "missing column " + field.name());
            if (want instanceof ByteBuffer buffer) {
                assertArrayEquals(toArray(buffer), (byte[]) got, where);
            } else if (want instanceof Instant instant) {
                assertEquals(instant, toInstant(got), where);
            } else if (want instanceof List<?> list) {
                assertEquals(new ArrayList<>(list), got, where);
            } else if (want instanceof Double d && got instanceof Double g) {
                assertEquals(Double.doubleToRawLongBits(d), Double.doubleToRawLongBits(g), where + ": " + d + " vs " + g);
            } else {
                assertEquals(want, got, where);
            }
        }
    }

    static byte[] toArray(ByteBuffer buffer) {
        ByteBuffer copy = buffer.duplicate();
        byte[] bytes = new byte[copy.remaining()];
        copy.get(bytes);
        return bytes;
    }

    static Instant toInstant(Object value) {
        if (value instanceof OffsetDateTime odt) {
            return odt.toInstant();
        }
        if (value instanceof ZonedDateTime zdt) {
            return zdt.toInstant();
        }
        if (value instanceof Timestamp ts) {
            return ts.toInstant();
        }
        throw new AssertionError("not a timestamp: " + (value == null ? null : value.getClass()) + " " + value);
    }
}
