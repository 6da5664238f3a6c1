package io.dumpstream.job;

import org.apache.flink.connector.file.sink.FileSinkCommittable;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.RecoverableWriter;
import org.apache.flink.core.io.SimpleVersionedSerialization;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.streaming.api.functions.sink.filesystem.BucketWriter;
import org.apache.flink.streaming.api.functions.sink.filesystem.InProgressFileWriter.PendingFileRecoverable;
import org.apache.flink.streaming.api.functions.sink.filesystem.OutputStreamBasedPartFileWriter.OutputStreamBasedPendingFileRecoverable;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;

/**
 * Flink's {@code FileSinkCommittable} serializer, with the two paths it loses kept exactly.
 *
 * <p>Flink 2.2 writes a pending file's path and a compacted file to clean up as
 * {@code path.toUri().toString()} (the URI's quoted form) and reads them with {@code new Path(String)},
 * which takes the string for an unquoted path and quotes its '%' again: each hop adds one level of
 * escaping to any path holding '%' (every Hive-escaped partition name does). The commit itself is
 * unaffected (the file system's commit recoverable keeps its own paths), but the compactor uses those
 * two paths to read its inputs, to place its output next to them and to delete them.
 *
 * <p>Here Flink's bytes are kept as they are, followed by the two paths as URIs, read back with
 * {@code new Path(URI)} (no re-quoting); a deserialized committable gets them back. The pending
 * file is rebuilt from its commit recoverable, taken from the bytes of Flink's pending-file serializer
 * (version 2: magic, has-path, path, size, versioned commit recoverable); another version fails loudly.
 */
public final class LosslessCommittableSerializer implements SimpleVersionedSerializer<FileSinkCommittable> {
    private static final int MAGIC = 0x44534c31; // "DSL1"
    private static final int PENDING_VERSION = 2;

    private final SimpleVersionedSerializer<FileSinkCommittable> flink;
    private final SimpleVersionedSerializer<PendingFileRecoverable> pending;
    private final SimpleVersionedSerializer<RecoverableWriter.CommitRecoverable> commit;

    /** @param writer the file system's recoverable writer the sink's bucket writer wraps */
    public LosslessCommittableSerializer(SimpleVersionedSerializer<FileSinkCommittable> flink,
                                         BucketWriter<?, String> bucketWriter, RecoverableWriter writer)
            throws IOException {
        this.flink = flink;
        this.pending = bucketWriter.getProperties().getPendingFileRecoverableSerializer();
        this.commit = writer.getCommitRecoverableSerializer();
        if (pending.getVersion() != PENDING_VERSION) {
            throw new IOException("Flink's pending file serializer is at version " + pending.getVersion()
                    + ", LosslessCommittableSerializer reads version " + PENDING_VERSION);
        }
    }

    @Override
    public int getVersion() {
        return 1;
    }

    @Override
    public byte[] serialize(FileSinkCommittable c) throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(256);
        out.writeInt(MAGIC);
        SimpleVersionedSerialization.writeVersionAndSerialize(flink, c, out);
        writePath(out, c.hasPendingFile() ? c.getPendingFile().getPath() : null);
        writePath(out, c.hasCompactedFileToCleanup() ? c.getCompactedFileToCleanup() : null);
        return out.getCopyOfBuffer();
    }

    @Override
    public FileSinkCommittable deserialize(int version, byte[] bytes) throws IOException {
        if (version != 1) {
            throw new IOException("unknown committable version " + version);
        }
        DataInputDeserializer in = new DataInputDeserializer(bytes);
        int magic = in.readInt();
        if (magic != MAGIC) {
            throw new IOException(String.format("not a dumpstream committable: magic %08X", magic));
        }
        FileSinkCommittable c = SimpleVersionedSerialization.readVersionAndDeSerialize(flink, in);
        Path pendingPath = readPath(in);
        Path cleanup = readPath(in);
        if (cleanup != null) {
            return cleanup.equals(c.getCompactedFileToCleanup()) ? c : new FileSinkCommittable(c.getBucketId(), cleanup);
        }
        if (pendingPath != null && !pendingPath.equals(c.getPendingFile().getPath())) {
            return new FileSinkCommittable(c.getBucketId(), withPath(c.getPendingFile(), pendingPath));
        }
        return c;
    }

    /** {@code p} with {@code path}: its commit recoverable and size from Flink's own bytes of it. */
    private PendingFileRecoverable withPath(PendingFileRecoverable p, Path path) throws IOException {
        DataInputDeserializer in = new DataInputDeserializer(pending.serialize(p));
        in.readInt(); // magic
        if (in.readBoolean()) {
            in.readUTF();
        }
        long size = in.readLong();
        RecoverableWriter.CommitRecoverable recoverable = SimpleVersionedSerialization.readVersionAndDeSerialize(commit, in);
        if (size != p.getSize() || in.available() != 0) {
            throw new IOException("unexpected layout of Flink's pending file " + p.getPath() + " (size " + size
                    + ", expected " + p.getSize() + ", " + in.available() + " bytes left)");
        }
        return new OutputStreamBasedPendingFileRecoverable(recoverable, path, size);
    }

    private static void writePath(DataOutputSerializer out, Path p) throws IOException {
        out.writeBoolean(p != null);
        if (p != null) {
            out.writeUTF(p.toUri().toString());
        }
    }

    private static Path readPath(DataInputDeserializer in) throws IOException {
        if (!in.readBoolean()) {
            return null;
        }
        String s = in.readUTF();
        try {
            return new Path(new URI(s));
        } catch (URISyntaxException e) {
            throw new IOException("corrupt path in a committable: '" + s + "'", e);
        }
    }
}
