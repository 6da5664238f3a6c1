package io.dumpstream.testing;

import java.util.ArrayList;
import java.util.List;

import io.dumpstream.format.L1Layout;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.schema.RecordPlan;

/** Valid-shaped manifests for generated buffers of any size: one float32 record at the first slot. */
public final class Manifests256 {
    private Manifests256() {
    }

    public static DumpManifest oneRecord(String runId, int rank, long launchId, long bufferBytes) {
        int chunkBytes = 1024 * 1024;
        List<Long> crcs = new ArrayList<>();
        for (long i = 0; i < Manifests.chunkCount(bufferBytes, chunkBytes); i++) {
            crcs.add(0L); // placeholders: the publisher computes the real ones
        }
        RecordPlan r = RecordPlan.newBuilder().setTaskId(1).setTaskIndex(0).setStage("generated")
                .setOwnerLabel("").setCoreType("AIV").setCoreId(0).setIo("output").setIndex(0).setPhase("after")
                .setParameterPosition(0).setTensorName("t").setDtype("float32").setSourceOffsetBytes(0)
                .setActualShape(List.of(256L)).setPayloadOffset(L1Layout.PAYLOAD_BASE).setPayloadBytes(1024)
                .setFullBytes(1024).setTruncated(false).setNote("").setRecordOffset(L1Layout.RECORDS_OFFSET)
                .setWorkerId(0xFFFFFFFFL).build();
        return DumpManifest.newBuilder().setManifestVersion(1).setRunId(runId).setRank(rank).setLaunchId(launchId)
                .setFormatVersion(L1Layout.VERSION).setBufferBytes(bufferBytes).setChunkBytes(chunkBytes)
                .setChunkCrc32c(crcs).setRecords(List.of(r)).build();
    }
}
