package io.dumpstream.decode;

import io.dumpstream.assemble.AssemblyOutput;
import io.dumpstream.assemble.AssemblyState;
import io.dumpstream.assemble.DumpAssembly;
import io.dumpstream.assemble.Failure;
import io.dumpstream.assemble.Outcome;
import io.dumpstream.format.DumpFormatException;
import io.dumpstream.format.ReasonCode;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.table.TableWriter;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Instant;

/**
 * The offline driver: reads a buffer file chunk by chunk (chunk_bytes at a time, never whole) into
 * a {@link DumpAssembly} and writes the rows it decides into a {@link TableWriter}.
 */
public final class OfflineDecoder {
    private final TableWriter writer;
    private final Clock clock;

    /** What one dump came to. */
    public record Summary(String dumpId, Outcome outcome, String reason, int records, int accepted, int rejected,
                          long bytes) {
        @Override
        public String toString() {
            return dumpId + ": " + outcome + (reason == null ? "" : " (" + reason + ")") + ", " + accepted
                    + " accepted, " + rejected + " rejected of " + records + " records";
        }
    }

    public OfflineDecoder(TableWriter writer, Clock clock) {
        this.writer = writer;
        this.clock = clock;
    }

    /**
     * Decodes one pair. Input that breaks the contract becomes rows (rejects and a dump outcome);
     * only unreadable files raise an {@link IOException} naming the file.
     */
    public Summary decode(Path manifestFile, Path bufferFile) throws IOException {
        byte[] manifestBytes = readManifest(manifestFile);
        Instant now = clock.instant();
        DumpManifest m;
        try {
            m = ManifestParser.parse(manifestBytes);
        } catch (DumpFormatException e) {
            String id = manifestFile.getFileName().toString();
            writer.write(Rows.manifestReject(id, e.reason(), manifestFile + ": " + e.getMessage(), manifestBytes, now),
                    null, null);
            writer.write(Rows.unusableOutcome(id, e.reason(), now), null, null);
            return new Summary(id, Outcome.REJECTED, e.reason().name(), 0, 0, 1, 0);
        }
        Sink sink = new Sink(m, now);
        DumpAssembly a = new DumpAssembly(m, new AssemblyState());
        try (FileChannel ch = FileChannel.open(bufferFile, StandardOpenOption.READ)) {
            long fileBytes = ch.size();
            ByteBuffer buf = ByteBuffer.allocate(m.getChunkBytes());
            while (!a.finished()) {
                int index = a.nextChunk();
                long start = Manifests.chunkStart(m, index);
                int want = Manifests.chunkLength(m, index);
                buf.clear().limit(want);
                while (buf.hasRemaining()) {
                    if (ch.read(buf, start + buf.position()) < 0) {
                        break;
                    }
                }
                buf.flip();
                Failure known = null;
                if (buf.remaining() < want) {
                    known = new Failure(ReasonCode.BUFFER_SIZE_MISMATCH, bufferFile + ": file has " + fileBytes
                            + " bytes, the manifest's buffer_bytes is " + m.getBufferBytes() + "; chunk " + index
                            + " has " + buf.remaining() + " of its " + want + " bytes");
                } else if (index == a.chunkCount() - 1 && fileBytes > m.getBufferBytes()) {
                    known = new Failure(ReasonCode.BUFFER_SIZE_MISMATCH, bufferFile + ": file has " + fileBytes
                            + " bytes, more than the manifest's buffer_bytes " + m.getBufferBytes());
                }
                a.consume(buf, known, sink);
            }
        } catch (IOException e) {
            throw new IOException("cannot read buffer file " + bufferFile + ": " + e.getMessage(), e);
        }
        if (sink.error != null) {
            throw sink.error;
        }
        return sink.summary;
    }

    private static byte[] readManifest(Path file) throws IOException {
        try {
            long size = Files.size(file);
            if (size > ManifestParser.MAX_MANIFEST_BYTES) {
                // keep only the start: the parse will reject it for its size without reading it all
                try (FileChannel ch = FileChannel.open(file)) {
                    ByteBuffer b = ByteBuffer.allocate(ManifestParser.MAX_MANIFEST_BYTES + 1);
                    while (b.hasRemaining() && ch.read(b) >= 0) {
                        // fill
                    }
                    return b.array();
                }
            }
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new IOException("cannot read manifest file " + file + ": " + e.getMessage(), e);
        }
    }

    private final class Sink implements AssemblyOutput {
        private final DumpManifest m;
        private final Instant now;
        IOException error;
        Summary summary;

        Sink(DumpManifest m, Instant now) {
            this.m = m;
            this.now = now;
        }

        @Override
        public void accepted(int index, byte[] payload) {
            if (error != null) {
                return;
            }
            try {
                writer.write(Rows.snapshot(m, index, payload, now), m.getRunId(), m.getRank(),
                        m.getRecords().get(index).getStage());
            } catch (IOException e) {
                error = e;
            }
        }

        @Override
        public void rejected(int index, ReasonCode reason, String detail, byte[] rawEntry, byte[] payload,
                             boolean capped) {
            if (error != null) {
                return;
            }
            try {
                writer.write(Rows.reject(m, index, reason, detail, rawEntry, payload, capped, now), m.getRunId(),
                        m.getRank());
            } catch (IOException e) {
                error = e;
            }
        }

        @Override
        public void finished(Outcome outcome, ReasonCode reason, int accepted, int rejected) {
            summary = new Summary(Manifests.dumpId(m), outcome, reason == null ? null : reason.name(),
                    m.getRecords().size(), accepted, rejected, m.getBufferBytes());
            if (error != null) {
                return;
            }
            try {
                writer.write(Rows.outcome(m, outcome, reason, accepted, rejected, now), m.getRunId(), m.getRank());
            } catch (IOException e) {
                error = e;
            }
        }
    }
}
