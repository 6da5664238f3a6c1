package io.dumpstream.manifest;

import io.dumpstream.format.DumpId;
import io.dumpstream.schema.DumpManifest;

/** Derived facts of a manifest: the dump id and the chunk ranges. */
public final class Manifests {
    private Manifests() {
    }

    public static String dumpId(DumpManifest m) {
        return DumpId.of(m.getRunId(), m.getRank(), m.getLaunchId());
    }

    /** Number of chunks a buffer of {@code bufferBytes} splits into at {@code chunkBytes}. */
    public static long chunkCount(long bufferBytes, int chunkBytes) {
        return bufferBytes <= 0 ? 0 : (bufferBytes - 1) / chunkBytes + 1;
    }

    /** First byte of chunk {@code index}. */
    public static long chunkStart(DumpManifest m, int index) {
        return (long) index * m.getChunkBytes();
    }

    /** Length chunk {@code index} must have: chunk_bytes, or less for the last one. */
    public static int chunkLength(DumpManifest m, int index) {
        long start = chunkStart(m, index);
        return (int) Math.min(m.getChunkBytes(), m.getBufferBytes() - start);
    }
}
