package io.dumpstream.publish;

import java.io.IOException;

/**
 * Kafka did not acknowledge every message of a dump; worth retrying later. Names the dump id and
 * the first message that failed ({@link #chunkIndex()} is -1 for the manifest).
 */
public final class PublishException extends IOException {
    private final String dumpId;
    private final int chunkIndex;

    public PublishException(String dumpId, int chunkIndex, String message, Throwable cause) {
        super("dump " + dumpId + ": " + (chunkIndex < 0 ? "manifest" : "chunk " + chunkIndex) + ": " + message, cause);
        this.dumpId = dumpId;
        this.chunkIndex = chunkIndex;
    }

    public String dumpId() {
        return dumpId;
    }

    /** Index of the first chunk that failed, or -1 when the manifest itself failed. */
    public int chunkIndex() {
        return chunkIndex;
    }
}
