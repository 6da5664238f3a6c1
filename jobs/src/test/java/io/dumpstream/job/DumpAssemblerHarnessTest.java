package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dumpstream.format.DumpBuilder;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.publish.L1Headers;
import io.dumpstream.schema.DumpManifest;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.Collectors;

/** The assembler alone in Flink's keyed operator harness: outputs, state and timers after every outcome. */
class DumpAssemblerHarnessTest {
    private static final AssemblerSettings SETTINGS =
            new AssemblerSettings(Duration.ofSeconds(60), Duration.ofSeconds(600), 1 << 20, 1024);

    static KeyedOneInputStreamOperatorTestHarness<DumpKey, L1Message, RecordWork> harness() throws Exception {
        KeyedOneInputStreamOperatorTestHarness<DumpKey, L1Message, RecordWork> h =
                new KeyedOneInputStreamOperatorTestHarness<>(new KeyedProcessOperator<>(new DumpAssembler(SETTINGS)),
                        m -> DumpKey.of(m.key, 128), TypeInformation.of(DumpKey.class));
        h.setup();
        return h;
    }

    static DumpBuilder.Dump dump(long launch, int records) throws java.io.IOException {
        DumpBuilder b = new DumpBuilder("harness", 1, launch).chunkBytes(4096);
        for (int i = 0; i < records; i++) {
            byte[] p = new byte[6000 + 100 * i];
            new Random(i).nextBytes(p);
            b.add(new DumpBuilder.RecordSpec().taskId(i).stage("st" + (i % 3)).tensorName("t" + i).dtype("uint8")
                    .actualShape(p.length).payload(p));
        }
        return b.build();
    }

    static List<L1Message> messages(DumpBuilder.Dump d) {
        DumpManifest m = d.manifest();
        List<L1Message> out = new ArrayList<>();
        for (RawSend.Msg r : RawSend.messages(Manifests.dumpId(m), ManifestParser.toJson(m), d.buffer(),
                m.getChunkBytes())) {
            L1Message x = new L1Message();
            x.key = r.key();
            x.keyBytes = r.key().getBytes(StandardCharsets.UTF_8);
            x.value = r.value();
            x.headerKeys = r.index() < 0 ? new String[]{L1Headers.KIND}
                    : new String[]{L1Headers.KIND, L1Headers.CHUNK_INDEX};
            x.headerValues = r.index() < 0 ? new byte[][]{L1Headers.KIND_MANIFEST.getBytes(StandardCharsets.US_ASCII)}
                    : new byte[][]{L1Headers.KIND_CHUNK.getBytes(StandardCharsets.US_ASCII),
                            Integer.toString(r.index()).getBytes(StandardCharsets.US_ASCII)};
            x.topic = "t";
            x.offset = out.size();
            out.add(x);
        }
        return out;
    }

    static List<Integer> accepted(KeyedOneInputStreamOperatorTestHarness<DumpKey, L1Message, RecordWork> h) {
        return h.extractOutputValues().stream().map(w -> w.recordIndex).sorted().collect(Collectors.toList());
    }

    static List<String> outcomes(KeyedOneInputStreamOperatorTestHarness<DumpKey, L1Message, RecordWork> h) {
        List<String> o = new ArrayList<>();
        var side = h.getSideOutput(DumpAssembler.OUTCOMES);
        if (side != null) {
            side.forEach(r -> o.add(r.getValue().row.getDumpId() + "=" + r.getValue().row.getOutcome()));
        }
        return o;
    }

    @Test
    void shuffledDuplicatedInterleavedDumpsCompleteAndLeaveOnlyTheDedupMarkerThenNothing() throws Exception {
        DumpBuilder.Dump a = dump(1, 9);
        DumpBuilder.Dump b = dump(2, 5);
        List<L1Message> all = new ArrayList<>(messages(a));
        all.addAll(messages(b));
        all.addAll(messages(a).subList(3, 20)); // duplicates
        Collections.shuffle(all, new Random(3));
        try (var h = harness()) {
            h.open();
            h.setProcessingTime(1000);
            for (L1Message m : all) {
                h.processElement(new StreamRecord<>(m));
            }
            assertEquals(14, h.extractOutputValues().size());
            List<String> o = outcomes(h);
            o.sort(null);
            assertEquals(List.of("harness/1/1=COMPLETE", "harness/1/2=COMPLETE"), o);
            // only the two de-duplication markers remain, each with its retention timer
            assertEquals(2, h.numKeyedStateEntries());
            assertEquals(2, h.numProcessingTimeTimers());
            // a whole re-send within the retention writes nothing
            for (L1Message m : messages(a)) {
                h.processElement(new StreamRecord<>(m));
            }
            assertEquals(14, h.extractOutputValues().size());
            assertEquals(2, outcomes(h).size());
            h.setProcessingTime(1000 + SETTINGS.dedupRetention().toMillis() + 1);
            assertEquals(0, h.numKeyedStateEntries());
            assertEquals(0, h.numProcessingTimeTimers());
        }
    }

    @Test
    void stateSurvivesACheckpointMidDumpAndTheTimeoutClearsEverything() throws Exception {
        DumpBuilder.Dump a = dump(7, 9);
        List<L1Message> msgs = messages(a);
        OperatorSubtaskState snapshot;
        List<Integer> before;
        try (var h = harness()) {
            h.open();
            h.setProcessingTime(0);
            // the manifest last, and chunk 40 held back: everything after it waits in state
            for (int i = 1; i < msgs.size(); i++) {
                if (i != 41) {
                    h.processElement(new StreamRecord<>(msgs.get(i)));
                }
            }
            h.processElement(new StreamRecord<>(msgs.get(0)));
            before = accepted(h);
            snapshot = h.snapshot(1, 10);
        }
        try (var h = harness()) {
            h.initializeState(snapshot);
            h.open();
            h.setProcessingTime(20);
            // after the restore the dump finishes from state alone
            h.processElement(new StreamRecord<>(msgs.get(41)));
            List<Integer> all = new ArrayList<>(before);
            all.addAll(accepted(h));
            all.sort(null);
            assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7, 8), all);
            assertEquals(List.of("harness/1/7=COMPLETE"), outcomes(h));
            assertEquals(1, h.numKeyedStateEntries());
        }
        try (var h = harness()) {
            h.open();
            h.setProcessingTime(0);
            for (int i = 0; i < 30; i++) {
                h.processElement(new StreamRecord<>(msgs.get(i)));
            }
            h.processElement(new StreamRecord<>(msgs.get(35)));
            h.setProcessingTime(SETTINGS.assemblyTimeout().toMillis());
            assertEquals(List.of("harness/1/7=INCOMPLETE"), outcomes(h));
            assertEquals(1, h.numKeyedStateEntries(), "only the de-duplication marker");
            assertEquals(1, h.numProcessingTimeTimers(), "only its retention timer");
            // the dead-letter path: the manifest, the head chunks 0..28 (kept until the header is decided,
            // which it never was) and chunk 35 (held out of order), each the original message
            var dlq = new ArrayList<L1Message>();
            h.getSideOutput(DumpAssembler.DLQ).forEach(r -> dlq.add(r.getValue()));
            assertEquals(31, dlq.size());
            assertEquals(0, dlq.stream().filter(m -> m.refetch).count());
            for (L1Message m : dlq) {
                assertArrayEquals(msgs.get((int) m.offset).value, m.value, "message " + m.offset);
            }
            h.setProcessingTime(SETTINGS.assemblyTimeout().toMillis() + SETTINGS.dedupRetention().toMillis());
            assertEquals(0, h.numKeyedStateEntries());
            assertEquals(0, h.numProcessingTimeTimers());
        }
    }

    @Test
    void aRestoreAfterMoreThanTheTimeoutGivesTheDumpAFullTimeoutToBeReplayed() throws Exception {
        DumpBuilder.Dump a = dump(8, 9);
        List<L1Message> msgs = messages(a);
        OperatorSubtaskState snapshot;
        try (var h = harness()) {
            h.open();
            h.setProcessingTime(0);
            for (int i = 0; i < 30; i++) {
                h.processElement(new StreamRecord<>(msgs.get(i)));
            }
            snapshot = h.snapshot(1, 10);
        }
        long restart = 5 * SETTINGS.assemblyTimeout().toMillis(); // down far longer than the timeout
        try (var h = harness()) {
            h.initializeState(snapshot);
            h.open();
            h.setProcessingTime(restart); // the overdue timer fires now: it must wait for the replay
            assertEquals(List.of(), outcomes(h));
            assertEquals(1, h.numProcessingTimeTimers(), "the timeout, moved to a full timeout after the restart");
            for (int i = 30; i < msgs.size(); i++) { // the source replays the rest
                h.processElement(new StreamRecord<>(msgs.get(i)));
            }
            assertEquals(List.of("harness/1/8=COMPLETE"), outcomes(h));
        }
        try (var h = harness()) {
            h.initializeState(snapshot);
            h.open();
            h.setProcessingTime(restart);
            h.setProcessingTime(restart + SETTINGS.assemblyTimeout().toMillis() - 1);
            assertEquals(List.of(), outcomes(h));
            h.setProcessingTime(restart + SETTINGS.assemblyTimeout().toMillis());
            assertEquals(List.of("harness/1/8=INCOMPLETE"), outcomes(h), "nothing replayed: incomplete a timeout later");
        }
    }
}
