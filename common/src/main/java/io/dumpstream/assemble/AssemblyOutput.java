package io.dumpstream.assemble;

import io.dumpstream.format.ReasonCode;

/** Receives what a dump's assembly decides, record by record, as soon as it is decided. */
public interface AssemblyOutput {

    /** Record {@code index} passed every check; {@code payload} holds exactly its payload bytes. */
    void accepted(int index, byte[] payload);

    /**
     * Record {@code index} is rejected.
     *
     * @param rawEntry  its 64-byte record-table entry, when the table was verified, else null
     * @param payload   its payload bytes, capped, when they could be read, else null
     * @param capped    whether {@code payload} is shorter than the slot
     */
    void rejected(int index, ReasonCode reason, String detail, byte[] rawEntry, byte[] payload, boolean capped);

    /** The dump ended: every record was accepted or rejected. */
    void finished(Outcome outcome, ReasonCode reason, int accepted, int rejected);
}
