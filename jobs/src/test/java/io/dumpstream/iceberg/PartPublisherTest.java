package io.dumpstream.iceberg;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.job.CompactingFileSink;
import io.dumpstream.job.IngestJob;
import io.dumpstream.table.ParquetWriters;
import io.dumpstream.schema.TensorSnapshot;

import org.apache.flink.connector.file.sink.FileSinkCommittable;
import org.apache.flink.connector.file.sink.compactor.FileCompactStrategy;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessageTypeInfo;
import org.apache.flink.streaming.api.connector.sink2.CommittableWithLineage;
import org.apache.flink.streaming.api.functions.sink.filesystem.BucketWriter;
import org.apache.flink.streaming.api.functions.sink.filesystem.InProgressFileWriter;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * {@link PartPublisher} on real part files of the job's compacting snapshot sink on local disk: a completed
 * checkpoint's hidden parts are published and handed to the Iceberg committer (a visible file is passed on
 * but not appended); on restore, the parts of the restored checkpoint are published and handed on again,
 * and a part that is gone (merged, then deleted by snapshot expiry, as after restoring a savepoint older
 * than that expiry) is skipped with a warning instead of failing every restart.
 */
class PartPublisherTest {
    private static final String BUCKET = "run=r1/rank=0/stage=fwd";

    @TempDir
    Path dir;

    @Test
    void aCompletedCheckpointsHiddenPartsArePublishedAndHandedOn() throws Exception {
        CompactingFileSink<?> sink = sink();
        FileSinkCommittable hidden = part(sink, ".part-a-0");
        FileSinkCommittable visible = part(sink, "part-v-0");
        try (var h = harness(sink)) {
            h.open();
            h.processElement(new StreamRecord<>(new CommittableWithLineage<>(hidden, 1L, 0)));
            h.processElement(new StreamRecord<>(new CommittableWithLineage<>(visible, 1L, 0)));
            assertEquals(2, h.getOutput().size(), "every committable passes on");
            h.snapshot(1L, 1L);
            assertEquals(List.of(), handedOn(h), "nothing before the checkpoint completes");
            assertFalse(Files.exists(bucket().resolve(".part-a-0")));
            h.notifyOfCompletedCheckpoint(1L);
            assertEquals(List.of(".part-a-0"), handedOn(h));
            assertTrue(Files.exists(bucket().resolve(".part-a-0")), "published under its hidden name");
        }
    }

    @Test
    void restoredPartsArePublishedAgainAndOneDeletedByExpiryIsSkipped() throws Exception {
        CompactingFileSink<?> sink = sink();
        FileSinkCommittable kept = part(sink, ".part-a-0");
        FileSinkCommittable gone = part(sink, ".part-b-0");
        OperatorSubtaskState state;
        try (var h = harness(sink)) {
            h.open();
            h.processElement(new StreamRecord<>(new CommittableWithLineage<>(kept, 1L, 0)));
            h.processElement(new StreamRecord<>(new CommittableWithLineage<>(gone, 1L, 0)));
            state = h.snapshot(1L, 1L); // the checkpoint completes; its notification never arrives
        }
        // part b was merged and its file deleted since: neither the in-progress file nor a published one is left
        try (Stream<Path> files = Files.list(bucket())) {
            for (Path f : files.filter(f -> f.getFileName().toString().contains("part-b")).toList()) {
                Files.delete(f);
            }
        }
        try (var h = harness(sink)) {
            h.initializeState(state);
            h.open();
            assertEquals(List.of(".part-a-0"), handedOn(h), "the restored part that is there, and only it");
            assertTrue(Files.exists(bucket().resolve(".part-a-0")));
            assertFalse(Files.exists(bucket().resolve(".part-b-0")));
        }
    }

    private Path bucket() {
        return dir.resolve(BUCKET);
    }

    private CompactingFileSink<?> sink() {
        FileCompactStrategy compact = FileCompactStrategy.Builder.newBuilder().setNumCompactThreads(1)
                .enableCompactionOnCheckpoint(2).build();
        return (CompactingFileSink<?>) IngestJob.fileSink(dir.toString(), TensorSnapshot.class,
                ParquetWriters.Settings.defaults(), 1 << 20, compact, "sink-snapshots");
    }

    /** A part file of the sink (no rows), closed for commit: its committable, as the sink's writer emits it. */
    private FileSinkCommittable part(CompactingFileSink<?> sink, String name) throws Exception {
        BucketWriter<?, String> writer = sink.bucketWriter();
        InProgressFileWriter<?, String> file = writer.openNewInProgressFile(BUCKET,
                new org.apache.flink.core.fs.Path(dir.resolve(BUCKET).resolve(name).toUri()), 0L);
        return new FileSinkCommittable(BUCKET, file.closeForCommit());
    }

    private static List<String> handedOn(
            OneInputStreamOperatorTestHarness<CommittableMessage<FileSinkCommittable>, ?> h) {
        List<String> names = new ArrayList<>();
        var parts = h.getSideOutput(PartPublisher.PARTS);
        if (parts != null) {
            for (StreamRecord<CommittedFile> r : parts) {
                assertEquals(BUCKET, r.getValue().bucket);
                assertEquals(CommittedFile.APPEND, r.getValue().kind);
                names.add(r.getValue().name);
            }
        }
        return names;
    }

    private static OneInputStreamOperatorTestHarness<CommittableMessage<FileSinkCommittable>,
            CommittableMessage<FileSinkCommittable>> harness(CompactingFileSink<?> sink) throws Exception {
        var h = new OneInputStreamOperatorTestHarness<CommittableMessage<FileSinkCommittable>,
                CommittableMessage<FileSinkCommittable>>(new PartPublisher(sink));
        // the committables' own serializer, as the job's graph declares it (the harness would take Kryo)
        h.setup(CommittableMessageTypeInfo.of(sink::getCommittableSerializer)
                .createSerializer(new org.apache.flink.api.common.serialization.SerializerConfigImpl()));
        return h;
    }
}
