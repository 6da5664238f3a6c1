package io.dumpstream.compare;

/**
 * Element-wise comparison of two payloads of one dtype over their first {@code compared} stored
 * elements. The error metrics cover the elements finite on both sides and are null when there
 * is none; cosine is also null when a norm is 0. The mismatch count and index cover every element.
 */
public record Metrics(long compared, boolean bitwiseEqual, long mismatchCount, Long firstMismatchIndex,
                      Double maxAbsErr, Double maxRelErr, Double meanAbsErr, Double rmse, Double cosineSimilarity) {
}
