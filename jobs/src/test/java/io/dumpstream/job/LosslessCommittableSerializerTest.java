package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.flink.api.common.serialization.BulkWriter;
import org.apache.flink.connector.file.sink.FileSinkCommittable;
import org.apache.flink.connector.file.sink.FileSinkCommittableSerializer;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.RecoverableFsDataOutputStream;
import org.apache.flink.core.fs.RecoverableWriter;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.streaming.api.functions.sink.filesystem.BulkBucketWriter;
import org.apache.flink.streaming.api.functions.sink.filesystem.OutputStreamBasedPartFileWriter.OutputStreamBasedPendingFileRecoverable;
import org.apache.flink.streaming.api.functions.sink.filesystem.WriterProperties;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;

/**
 * A pending part in a Hive-escaped partition ('%' in its directory name) keeps its exact path through
 * any number of serializations, and still commits where it was written; Flink's own serializer does not.
 */
class LosslessCommittableSerializerTest {
    @TempDir
    java.nio.file.Path dir;

    private static final String BUCKET = "snapshots/run=%252F..%252Fetc %7Cx/rank=0/stage=a%3Db";

    @Test
    void pendingAndCleanupPathsSurviveRoundTripsAndTheFileCommitsInPlace() throws Exception {
        RecoverableWriter rw = FileSystem.getLocalFileSystem().createRecoverableWriter();
        BulkBucketWriter<Object, String> bw = new BulkBucketWriter<>(rw, (BulkWriter.Factory<Object>) out -> null);
        WriterProperties props = bw.getProperties();
        SimpleVersionedSerializer<FileSinkCommittable> flink = new FileSinkCommittableSerializer(
                props.getPendingFileRecoverableSerializer(), props.getInProgressFileRecoverableSerializer());
        LosslessCommittableSerializer ours = new LosslessCommittableSerializer(flink, bw, rw);

        Path bucket = new Path(new Path(dir.toUri()), BUCKET);
        Path target = new Path(bucket, ".part-0-0.parquet");
        assertTrue(target.getPath().contains("run=%252F..%252Fetc %7Cx"), target.getPath());
        RecoverableFsDataOutputStream s = rw.open(target);
        byte[] content = "row groups".getBytes(StandardCharsets.UTF_8);
        s.write(content);
        RecoverableFsDataOutputStream.Committer committer = s.closeForCommit();
        FileSinkCommittable pending = new FileSinkCommittable(BUCKET,
                new OutputStreamBasedPendingFileRecoverable(committer.getRecoverable(), target, content.length));
        FileSinkCommittable cleanup = new FileSinkCommittable(BUCKET, target);

        // Flink's serializer quotes the '%' once more on every hop
        FileSinkCommittable viaFlink = flink.deserialize(flink.getVersion(), flink.serialize(pending));
        assertNotEquals(target, viaFlink.getPendingFile().getPath());
        assertTrue(viaFlink.getPendingFile().getPath().getPath().contains("run=%25252F"),
                viaFlink.getPendingFile().getPath().getPath());
        assertNotEquals(target, flink.deserialize(flink.getVersion(), flink.serialize(cleanup)).getCompactedFileToCleanup());

        FileSinkCommittable p = pending;
        FileSinkCommittable c = cleanup;
        for (int hop = 0; hop < 3; hop++) {
            p = ours.deserialize(ours.getVersion(), ours.serialize(p));
            c = ours.deserialize(ours.getVersion(), ours.serialize(c));
        }
        assertEquals(BUCKET, p.getBucketId());
        assertEquals(target, p.getPendingFile().getPath());
        assertEquals(content.length, p.getPendingFile().getSize());
        assertEquals(BUCKET, c.getBucketId());
        assertEquals(target, c.getCompactedFileToCleanup());
        assertTrue(!c.hasPendingFile() && !p.hasCompactedFileToCleanup());

        // the rebuilt pending file commits: the part appears under its own (escaped) name
        bw.recoverPendingFile(p.getPendingFile()).commitAfterRecovery();
        java.nio.file.Path onDisk = dir.resolve(BUCKET).resolve(".part-0-0.parquet");
        assertTrue(Files.exists(onDisk), onDisk.toString());
        assertEquals("row groups", Files.readString(onDisk));
        assertEquals(onDisk.toString(), new java.io.File(p.getPendingFile().getPath().toUri()).getPath());
    }
}
