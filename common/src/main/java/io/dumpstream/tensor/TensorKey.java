package io.dumpstream.tensor;

/** One tensor of a launch: a row of the {@code tensors} table. */
public record TensorKey(String runId, int rank, long launchId, String phase, int parameterPosition) {
}
