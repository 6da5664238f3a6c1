package io.dumpstream.job;

import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataOutputStream;
import java.io.FileNotFoundException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which retained checkpoint or savepoint a restart resumes from (CI once restored a discarded one). */
class LatestRetainedTest {
    @TempDir
    Path root;

    private Path metadata(String dir, long checkpointId, long mtimeMillis) throws Exception {
        Path d = Files.createDirectories(root.resolve(dir));
        Path m = d.resolve("_metadata");
        try (OutputStream out = Files.newOutputStream(m)) {
            Checkpoints.storeCheckpointMetadata(new CheckpointMetadata(checkpointId, List.of(), List.of()),
                    new DataOutputStream(out));
        }
        Files.setLastModifiedTime(m, FileTime.fromMillis(mtimeMillis));
        return d;
    }

    @Test
    void theSavepointOfAStopWinsOverACheckpointThatCompletedAfterItWithALowerId() throws Exception {
        metadata("aaaa/chk-1", 1, 1_000);
        Path late = metadata("aaaa/chk-2", 2, 9_000); // pending at the stop, completed after the savepoint
        Path savepoint = metadata("savepoints/savepoint-aaaa-1", 3, 5_000);
        Files.createDirectories(root.resolve("aaaa/chk-4")); // in progress: no _metadata yet
        Files.createDirectories(root.resolve("aaaa/shared"));
        String uri = root.toUri().toString();
        assertEquals(savepoint.toString(), uriPath(LocalIngest.latestRetained(uri)));
        // once the savepoint is known to be gone, the next by id is chk-2
        assertEquals(late.toString(), uriPath(LocalIngest.latestRetained(uri,
                Set.of(LocalIngest.latestRetained(uri)))));
    }

    @Test
    void aRestoredJobCountsOnSoItsCheckpointsWinAndEqualIdsFallBackToWriteTime() throws Exception {
        metadata("savepoints/savepoint-aaaa-1", 3, 5_000);
        Path next = metadata("bbbb/chk-4", 4, 6_000);
        String uri = root.toUri().toString();
        assertEquals(next.toString(), uriPath(LocalIngest.latestRetained(uri)));
        Path newer = metadata("cccc/chk-4", 4, 7_000);
        assertEquals(newer.toString(), uriPath(LocalIngest.latestRetained(uri)));
    }

    @Test
    void garbledMetadataAndAnEmptyRootAreSkipped() throws Exception {
        assertNull(LocalIngest.latestRetained(root.resolve("none").toUri().toString()));
        Path d = Files.createDirectories(root.resolve("aaaa/chk-7"));
        Files.write(d.resolve("_metadata"), new byte[] {1, 2, 3});
        assertNull(LocalIngest.latestRetained(root.toUri().toString()));
    }

    @Test
    void aSubmissionThatFailsOnTheChosenPathIsRecognisedAndOthersAreNot() {
        String from = "file:/tmp/ck/aaaa/chk-2";
        Exception vanished = new CompletionException(new RuntimeException("restore",
                new FileNotFoundException("File file:/tmp/ck/aaaa/chk-2/_metadata does not exist")));
        assertTrue(LocalIngest.vanishedBelow(vanished, from));
        assertFalse(LocalIngest.vanishedBelow(new FileNotFoundException("/tmp/other/_metadata"), from));
        assertFalse(LocalIngest.vanishedBelow(new IllegalStateException("/tmp/ck/aaaa/chk-2"), from));
    }

    private static String uriPath(String s) {
        return s == null ? null : new org.apache.flink.core.fs.Path(s).toUri().getPath();
    }
}
