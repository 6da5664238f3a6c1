package io.dumpstream.assemble;

import io.dumpstream.format.ReasonCode;

/** A failed check: its reason code and a message naming the field and the value. */
public record Failure(ReasonCode reason, String detail) {
}
