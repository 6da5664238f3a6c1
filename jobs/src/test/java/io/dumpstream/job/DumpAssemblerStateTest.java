package io.dumpstream.job;

import static io.dumpstream.job.DumpAssemblerHarnessTest.accepted;
import static io.dumpstream.job.DumpAssemblerHarnessTest.dump;
import static io.dumpstream.job.DumpAssemblerHarnessTest.harness;
import static io.dumpstream.job.DumpAssemblerHarnessTest.messages;
import static io.dumpstream.job.DumpAssemblerHarnessTest.outcomes;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The assembler's keyed state as a savepoint holds it: {@code assembler-state/v1.snapshot} was written
 * by the assembler of commit 308da46 (before its retention, dead-letter routing and metrics became
 * classes of their own) from {@link #before}, and this assembler restores it and goes on exactly like
 * one that never stopped: same records, outcomes, dead letters, state entries and timers. Regenerate
 * only when the state layout changes on purpose (then restoring old savepoints needs a migration):
 * {@code java -cp <jobs test classpath> io.dumpstream.job.DumpAssemblerStateTest <file>}.
 */
class DumpAssemblerStateTest {
    private static final Path GOLDEN = Path.of("src/test/resources/assembler-state/v1.snapshot");
    private static final long SNAPSHOT_AT = 1_000;

    /** Three dumps of small records: one decided, one mid-assembly, one whose manifest has not come. */
    private static List<List<L1Message>> dumps() throws Exception {
        return List.of(messages(dump(21, 4)), messages(dump(22, 5)), messages(dump(23, 3)));
    }

    /** What comes before the snapshot: dump 21 whole; 22's manifest and chunks 0 and 3; 23's chunks 1 and 2. */
    private static List<L1Message> before(List<List<L1Message>> d) {
        List<L1Message> out = new ArrayList<>(d.get(0));
        out.add(d.get(1).get(0));
        out.add(d.get(1).get(1));
        out.add(d.get(1).get(4));
        out.add(d.get(2).get(2));
        out.add(d.get(2).get(3));
        return out;
    }

    /** What comes after it: every message again (re-sends), in order. */
    private static List<L1Message> after(List<List<L1Message>> d) {
        List<L1Message> out = new ArrayList<>();
        d.forEach(out::addAll);
        return out;
    }

    private record Seen(List<Integer> accepted, List<String> outcomes, List<String> deadLetters, int entries,
                        int timers) {
    }

    private static Seen feed(KeyedOneInputStreamOperatorTestHarness<DumpKey, L1Message, RecordWork> h,
                             List<L1Message> msgs) throws Exception {
        h.setProcessingTime(SNAPSHOT_AT + 500);
        for (L1Message m : msgs) {
            h.processElement(new StreamRecord<>(m));
        }
        List<String> dlq = new ArrayList<>();
        var side = h.getSideOutput(DumpAssembler.DLQ);
        if (side != null) {
            side.forEach(r -> dlq.add(r.getValue().where() + " " + r.getValue().dlqReason));
        }
        return new Seen(accepted(h), outcomes(h), dlq, h.numKeyedStateEntries(), h.numProcessingTimeTimers());
    }

    @Test
    void aSnapshotOfThePreviousAssemblerRestoresAndGoesOnLikeOneThatNeverStopped() throws Exception {
        List<List<L1Message>> d = dumps();
        Seen restored;
        try (var h = harness()) {
            h.initializeState(OperatorSnapshotUtil.readStateHandle(GOLDEN.toString()));
            h.open();
            assertEquals(8, h.numKeyedStateEntries(), "restored: 21's marker; 22's manifest, assembly, attempt and"
                    + " its chunk 3 pending; 23's attempt and its chunks 1 and 2 pending");
            assertEquals(3, h.numProcessingTimeTimers(), "restored: 21's retention, 22's and 23's timeouts");
            restored = feed(h, after(d));
        }
        Seen continuous;
        try (var h = harness()) {
            h.open();
            h.setProcessingTime(0);
            for (L1Message m : before(d)) {
                h.processElement(new StreamRecord<>(m));
            }
            h.snapshot(1, SNAPSHOT_AT);
            h.getOutput().clear();
            for (var tag : List.of(DumpAssembler.OUTCOMES, DumpAssembler.DLQ, DumpAssembler.REJECTS)) {
                if (h.getSideOutput(tag) != null) {
                    h.getSideOutput(tag).clear();
                }
            }
            continuous = feed(h, after(d));
        }
        assertEquals(continuous, restored);
        // and what that is: 22 and 23 finish, every message of 21 again is a duplicate
        assertEquals(List.of("harness/1/22=COMPLETE", "harness/1/23=COMPLETE"), restored.outcomes());
        assertEquals(List.of(0, 0, 1, 1, 2, 2, 3, 4), restored.accepted(), "22's five records and 23's three");
        assertEquals(3, restored.entries(), "the three markers");
        assertEquals(3, restored.timers(), "their retention timers");
        assertEquals(List.of(), restored.deadLetters());
    }

    /** Writes the golden snapshot (see the class comment). */
    public static void main(String[] args) throws Exception {
        try (var h = harness()) {
            h.open();
            h.setProcessingTime(0);
            for (L1Message m : before(dumps())) {
                h.processElement(new StreamRecord<>(m));
            }
            OperatorSubtaskState s = h.snapshot(1, SNAPSHOT_AT);
            OperatorSnapshotUtil.writeStateHandle(s, args[0]);
        }
    }
}
