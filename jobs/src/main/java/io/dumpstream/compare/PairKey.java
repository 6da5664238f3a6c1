package io.dumpstream.compare;

import java.io.Serializable;

/**
 * Which columns pair a baseline row with a candidate row: rank, launch_id (or step with
 * {@code alignByStep}), stage, task_index, owner_id, io, port_index, tensor_name and worker_id
 * (dropped with {@code ignorePlacement}). The key is a string of length-prefixed parts, so no
 * value can run into the next one whatever characters it holds.
 */
public record PairKey(boolean alignByStep, boolean ignorePlacement) implements Serializable {

    public String of(Operand o) {
        StringBuilder k = new StringBuilder(96);
        part(k, Integer.toString(o.rank));
        part(k, alignByStep ? (o.step == null ? "-" : "s" + o.step) : Long.toString(o.launchId));
        part(k, o.stage);
        part(k, Long.toString(o.taskIndex));
        part(k, o.ownerId == null ? "-" : o.ownerId.toString());
        part(k, o.io);
        part(k, Integer.toString(o.portIndex));
        part(k, o.tensorName);
        if (!ignorePlacement) {
            part(k, o.workerId == null ? "-" : o.workerId.toString());
        }
        return k.toString();
    }

    private static void part(StringBuilder k, String v) {
        k.append(v.length()).append(':').append(v).append('|');
    }
}
