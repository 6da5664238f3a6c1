package io.dumpstream.iceberg;

import io.dumpstream.job.CompactingFileSink;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.connector.file.sink.FileSinkCommittable;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.CommittableWithLineage;
import org.apache.flink.streaming.api.functions.sink.filesystem.BucketWriter;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.util.SimpleVersionedListState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.OutputTag;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * With compaction and Iceberg on: the parts a checkpoint's writers closed are in the Iceberg table as soon
 * as that checkpoint completes, not only once merged. Sits between the writers and the compaction
 * coordinator and passes every committable on unchanged; besides, it keeps the parts (pending files,
 * hidden names) of each checkpoint in its state and, when that checkpoint completes, publishes them under
 * their hidden names (what the compactor would do before merging them; doing it twice is a no-op) and
 * hands them to the table's {@link IcebergCommitter} on the side output {@link #PARTS}, which appends them
 * with its next checkpoint. So a part is in exactly one of the two operators' states at any checkpoint, as
 * between the FileSink's committer and the Iceberg committer: restored parts (of a completed checkpoint)
 * are published and handed on again on restore. Hive-layout readers still see merged files only.
 */
public final class PartPublisher extends AbstractStreamOperator<CommittableMessage<FileSinkCommittable>>
        implements OneInputStreamOperator<CommittableMessage<FileSinkCommittable>,
        CommittableMessage<FileSinkCommittable>> {
    private static final long serialVersionUID = 1L;

    /** The published parts, to append. */
    public static final OutputTag<CommittedFile> PARTS = new OutputTag<>("iceberg-parts",
            TypeInformation.of(CommittedFile.class));

    private static final org.slf4j.Logger PARTS_LOG = org.slf4j.LoggerFactory.getLogger(PartPublisher.class);

    private final CompactingFileSink<?> sink;

    private transient BucketWriter<?, String> writer;
    private transient List<FileSinkCommittable> incoming;
    private transient NavigableMap<Long, List<FileSinkCommittable>> pending;
    private transient ListState<FileSinkCommittable> state;

    public PartPublisher(CompactingFileSink<?> sink) {
        this.sink = sink;
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        writer = sink.bucketWriter();
        incoming = new ArrayList<>();
        pending = new TreeMap<>();
        state = new SimpleVersionedListState<>(context.getOperatorStateStore().getListState(
                new ListStateDescriptor<>("iceberg-unpublished-parts", BytePrimitiveArraySerializer.INSTANCE)),
                sink.getCommittableSerializer());
        if (context.isRestored()) {
            // all of a completed checkpoint (the one restored, or one before it whose notification was lost)
            List<FileSinkCommittable> restored = new ArrayList<>();
            state.get().forEach(restored::add);
            publish(restored, true);
        }
    }

    @Override
    public void processElement(StreamRecord<CommittableMessage<FileSinkCommittable>> element) {
        if (element.getValue() instanceof CommittableWithLineage<FileSinkCommittable> c) {
            FileSinkCommittable f = c.getCommittable();
            if (f.hasPendingFile() && f.getPendingFile().getPath() != null
                    && f.getPendingFile().getPath().getName().startsWith(".")) {
                incoming.add(f);
            }
        }
        output.collect(element);
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        if (!incoming.isEmpty()) {
            pending.computeIfAbsent(context.getCheckpointId(), k -> new ArrayList<>()).addAll(incoming);
            incoming = new ArrayList<>();
        }
        List<FileSinkCommittable> all = new ArrayList<>();
        pending.values().forEach(all::addAll);
        state.update(all);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
        super.notifyCheckpointComplete(checkpointId);
        NavigableMap<Long, List<FileSinkCommittable>> done = pending.headMap(checkpointId, true);
        List<FileSinkCommittable> parts = new ArrayList<>();
        for (Map.Entry<Long, List<FileSinkCommittable>> e : done.entrySet()) {
            parts.addAll(e.getValue());
        }
        done.clear();
        publish(parts, false);
    }

    /**
     * Publishes {@code parts} and hands them on. {@code restored}: parts of a restored checkpoint, which may be
     * gone since (a part merged, then deleted by snapshot expiry, when a checkpoint or savepoint older than that
     * expiry is restored; its rows are in the merged file): those are skipped with a warning, as failing would
     * fail every restart from that state and bring nothing back.
     */
    private void publish(List<FileSinkCommittable> parts, boolean restored) throws Exception {
        for (FileSinkCommittable f : parts) {
            org.apache.flink.core.fs.Path published = f.getPendingFile().getPath();
            try {
                writer.recoverPendingFile(f.getPendingFile()).commitAfterRecovery();
            } catch (IOException e) {
                // the compactor publishes its inputs too, in its own thread: on a local disk both may have seen
                // the in-progress file and the second rename fails; published is published
                if (!published.getFileSystem().exists(published)) {
                    if (!restored) {
                        throw e;
                    }
                    skipGone(f, e.toString());
                    continue;
                }
            }
            // (a local file system's commit after recovery does nothing when neither file is there)
            if (restored && !published.getFileSystem().exists(published)) {
                skipGone(f, "no such file");
                continue;
            }
            output.collect(PARTS, new StreamRecord<>(new CommittedFile(f.getBucketId(),
                    f.getPendingFile().getPath().getName(), f.getPendingFile().getSize(), -1, CommittedFile.APPEND)));
        }
    }

    private void skipGone(FileSinkCommittable f, String why) {
        PARTS_LOG.warn("{}: restored part {} of bucket {} is gone (merged, then deleted by snapshot expiry?): not"
                + " appended to the Iceberg table ({})", getOperatorName(), f.getPendingFile().getPath(),
                f.getBucketId(), why);
    }
}
