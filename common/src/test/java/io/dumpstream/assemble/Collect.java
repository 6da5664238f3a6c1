package io.dumpstream.assemble;

import io.dumpstream.format.ReasonCode;

import java.util.Map;
import java.util.TreeMap;

/** An {@link AssemblyOutput} that keeps what it is told, for assertions. */
final class Collect implements AssemblyOutput {
    final Map<Integer, byte[]> accepted = new TreeMap<>();
    final Map<Integer, ReasonCode> rejected = new TreeMap<>();
    final Map<Integer, String> details = new TreeMap<>();
    Outcome outcome;
    ReasonCode reason;
    int finishedCalls;

    @Override
    public void accepted(int index, byte[] payload) {
        if (accepted.put(index, payload) != null || rejected.containsKey(index)) {
            throw new AssertionError("record " + index + " decided twice");
        }
    }

    @Override
    public void rejected(int index, ReasonCode reason, String detail, byte[] rawEntry, byte[] payload, boolean capped) {
        if (rejected.put(index, reason) != null || accepted.containsKey(index)) {
            throw new AssertionError("record " + index + " decided twice");
        }
        details.put(index, detail);
    }

    @Override
    public void finished(Outcome outcome, ReasonCode reason, int accepted, int rejected) {
        finishedCalls++;
        this.outcome = outcome;
        this.reason = reason;
        if (accepted != this.accepted.size() || rejected != this.rejected.size()) {
            throw new AssertionError("finished counts " + accepted + "/" + rejected + " differ from the records seen");
        }
    }
}
