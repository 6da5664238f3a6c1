package io.dumpstream.job;

import io.dumpstream.publish.L1Headers;

import org.apache.flink.metrics.Counter;

import java.util.ArrayList;
import java.util.List;

/**
 * The assembler's dead-letter routing: a message it cannot use leaves for the dead-letter output
 * unchanged, with a reason that names it, and is counted. Messages that are not a dump's manifest or
 * chunk get reasons starting {@value #BAD_MESSAGE}, a chunk beyond its manifest's list
 * {@value #CHUNK_INDEX_OUT_OF_RANGE}. Chunks already consumed (decoded and dropped from state) of a
 * dump that failed at its timeout leave as references the dead-letter sink re-reads from Kafka.
 */
final class DeadLetters {
    /** Reason prefix of messages that are not a dump's manifest or chunk. */
    static final String BAD_MESSAGE = "BAD_MESSAGE";
    /** Reason prefix of a chunk whose index is beyond its manifest's chunk list. */
    static final String CHUNK_INDEX_OUT_OF_RANGE = "CHUNK_INDEX_OUT_OF_RANGE";

    private final Counter sent;

    DeadLetters(Counter sent) {
        this.sent = sent;
    }

    /** The dead-letter copy of {@code msg} with its reason, counted; null (and not counted) for no message. */
    L1Message letter(L1Message msg, String reason) {
        if (msg == null) {
            return null;
        }
        sent.inc();
        return msg.toDlq(reason);
    }

    /** References to the chunks an attempt consumed, in consumption order, for the sink to re-read; counted. */
    List<L1Message> refetches(String dumpId, Attempt attempt, String reason) {
        List<L1Message> out = new ArrayList<>(attempt.consumedCount);
        for (int i = 0; i < attempt.consumedCount; i++) {
            L1Message ref = new L1Message();
            ref.key = dumpId;
            ref.topic = attempt.consumedTopic;
            ref.partition = attempt.consumedPartition;
            ref.offset = attempt.consumedOffsets[i];
            ref.refetch = true;
            ref.dlqReason = reason;
            sent.inc();
            out.add(ref);
        }
        return out;
    }

    /** Why {@code msg} is neither a keyed manifest nor a keyed chunk with an index, or null when it is one. */
    static String badMessage(L1Message msg) {
        if (msg.keyBytes == null) {
            return BAD_MESSAGE + ": no key (the dump id) on " + msg.where();
        }
        String kind = msg.kind();
        if (L1Headers.KIND_MANIFEST.equals(kind)) {
            return null;
        }
        if (L1Headers.KIND_CHUNK.equals(kind)) {
            return chunkIndex(msg) >= 0 ? null : BAD_MESSAGE + ": header " + L1Headers.CHUNK_INDEX + " '"
                    + msg.header(L1Headers.CHUNK_INDEX) + "' is not a chunk index, on " + msg.where();
        }
        return BAD_MESSAGE + ": header " + L1Headers.KIND + " '" + kind + "' is neither manifest nor chunk, on "
                + msg.where();
    }

    /** The chunk index header as a number; negative when it is missing, not a decimal int, or negative. */
    static int chunkIndex(L1Message msg) {
        String s = msg.header(L1Headers.CHUNK_INDEX);
        if (s == null) {
            return -1;
        }
        try {
            return Integer.parseInt(s.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    static String outOfRange(L1Message chunk, int index, int chunks) {
        return CHUNK_INDEX_OUT_OF_RANGE + ": chunk " + index + " of dump " + chunk.key + " but its manifest lists "
                + chunks + " chunks, on " + chunk.where();
    }

    /** A chunk that came before its manifest when the dump's early chunks already hold {@code limit} bytes. */
    static String tooEarly(L1Message chunk, int index, long limit) {
        return BAD_MESSAGE + ": chunk " + index + " of dump " + chunk.key + " on " + chunk.where() + ": more than "
                + limit + " bytes of chunks came before its manifest";
    }

    /** A chunk of a dump already rejected and no longer in assembly. */
    static String afterRejection(String dumpId, int index, String outcome) {
        return "late chunk " + index + " of dump " + dumpId + ", already " + outcome;
    }

    /** A chunk of a dump rejected at its head, whose later chunks are drained. */
    static String afterHeadRejection(String dumpId, int index) {
        return "chunk " + index + " of dump " + dumpId + ", which was rejected at its head";
    }
}
