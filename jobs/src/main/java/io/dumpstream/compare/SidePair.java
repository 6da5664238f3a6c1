package io.dumpstream.compare;

/** A baseline side and a candidate side sharing a key (either may be null: missing), with the duplicate-key note. */
public record SidePair(Operand baseline, Operand candidate, String note) {
}
