package io.dumpstream.publish;

import io.dumpstream.schema.DumpManifest;

/**
 * What one acknowledged publish sent.
 *
 * @param dumpId   the dump id, also the message key
 * @param messages messages sent: one manifest plus {@code chunks}
 * @param bytes    value bytes sent: the encoded manifest plus the buffer
 * @param chunks   chunk messages sent
 * @param manifest the manifest as sent, with chunk_bytes and chunk_crc32c filled in
 * @param defects  what was wrong with the buffer and still published, each starting with the reason
 *                 code the job will record (BUFFER_SIZE_MISMATCH, CHUNKS_MISSING); empty if none
 */
public record PublishResult(String dumpId, int messages, long bytes, int chunks, DumpManifest manifest,
                            java.util.List<String> defects) {
}
