package io.dumpstream.tensor;

/**
 * Covered bytes {@code [offset, offset + length)} of a tensor, held at {@code bytes[off, off + length)}
 * of the view of task {@code taskId} that first covered them. The array belongs to the view: copy what
 * must outlive the callback.
 */
public record Interval(long offset, byte[] bytes, int off, int length, long taskId) {
    public long end() {
        return offset + length;
    }
}
