package io.dumpstream.compare;

import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/** Wire form of {@link PartitionSplit}s (enumerator to readers) and of the enumerator's pending splits. */
public final class PartitionSplitSerializer {
    static final int VERSION = 1;

    private PartitionSplitSerializer() {
    }

    /** One split. */
    public static SimpleVersionedSerializer<PartitionSplit> splits() {
        return new SimpleVersionedSerializer<>() {
            @Override
            public int getVersion() {
                return VERSION;
            }

            @Override
            public byte[] serialize(PartitionSplit s) throws IOException {
                DataOutputSerializer out = new DataOutputSerializer(256);
                write(out, s);
                return out.getCopyOfBuffer();
            }

            @Override
            public PartitionSplit deserialize(int version, byte[] bytes) throws IOException {
                check(version);
                return read(new DataInputDeserializer(bytes));
            }
        };
    }

    /** The enumerator's splits not handed out yet. */
    public static SimpleVersionedSerializer<Collection<PartitionSplit>> pending() {
        return new SimpleVersionedSerializer<>() {
            @Override
            public int getVersion() {
                return VERSION;
            }

            @Override
            public byte[] serialize(Collection<PartitionSplit> splits) throws IOException {
                DataOutputSerializer out = new DataOutputSerializer(1024);
                out.writeInt(splits.size());
                for (PartitionSplit s : splits) {
                    write(out, s);
                }
                return out.getCopyOfBuffer();
            }

            @Override
            public Collection<PartitionSplit> deserialize(int version, byte[] bytes) throws IOException {
                check(version);
                DataInputDeserializer in = new DataInputDeserializer(bytes);
                int n = in.readInt();
                if (n < 0 || n > bytes.length) {
                    throw new IOException("pending partition splits: count " + n + " in " + bytes.length + " bytes");
                }
                List<PartitionSplit> splits = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    splits.add(read(in));
                }
                return splits;
            }
        };
    }

    private static void check(int version) throws IOException {
        if (version != VERSION) {
            throw new IOException("partition split version " + version + ", expected " + VERSION);
        }
    }

    static void write(DataOutputView out, PartitionSplit s) throws IOException {
        Partition p = s.partition();
        out.writeUTF(s.splitId());
        out.writeUTF(p.dir);
        out.writeInt(p.paths.length);
        for (int i = 0; i < p.paths.length; i++) {
            out.writeUTF(p.paths[i]);
            out.writeLong(p.lengths[i]);
        }
    }

    static PartitionSplit read(DataInputView in) throws IOException {
        String id = in.readUTF();
        String dir = in.readUTF();
        int n = in.readInt();
        if (n < 0 || n > 1 << 24) {
            throw new IOException("partition split " + id + ": file count " + n);
        }
        String[] paths = new String[n];
        long[] lengths = new long[n];
        for (int i = 0; i < n; i++) {
            paths[i] = in.readUTF();
            lengths[i] = in.readLong();
        }
        return new PartitionSplit(id, new Partition(dir, paths, lengths));
    }
}
