package io.dumpstream.tensor;

/**
 * Two views that overlap and differ there: the overlap {@code [offset, offset + length)} of the view of
 * task {@code laterTaskId} with the bytes that {@code earlierTaskId} covered first, the number of
 * elements that differ in it and the byte offset in the tensor of the first one.
 */
public record Disagreement(long earlierTaskId, long laterTaskId, long offset, long length,
                           long differingElements, long firstDifferenceOffset) {
}
