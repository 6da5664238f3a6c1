package io.dumpstream.job;

/**
 * What the assembler remembers of a finished dump for the de-duplication retention: the manifest
 * fingerprint, the outcome, whether a re-send could change it, and which records were accepted.
 */
public class DoneMarker {
    public long fingerprint;
    public String outcome;
    /** A re-send may decide more records (a transport failure, or a chunk missing at the timeout). */
    public boolean retryable;
    public long[] acceptedBits;
    public long retentionTimer = -1;
    /** Chunks in the manifest's list, -1 when there was no usable manifest. */
    public int chunkCount = -1;

    public DoneMarker() {
    }
}
