package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.assemble.AssemblyState;
import io.dumpstream.iceberg.CommittedFile;
import io.dumpstream.schema.DumpOutcome;
import io.dumpstream.schema.RecordPlan;
import io.dumpstream.schema.RejectedRecord;
import io.dumpstream.schema.TensorSnapshot;

import org.apache.avro.specific.SpecificRecord;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeHint;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.dag.Transformation;
import org.apache.flink.api.java.typeutils.GenericTypeInfo;
import org.apache.flink.api.java.typeutils.PojoTypeInfo;
import org.apache.flink.api.java.typeutils.runtime.PojoSerializer;
import org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.formats.avro.typeutils.AvroSerializer;
import org.apache.flink.formats.avro.typeutils.AvroTypeInfo;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.types.PojoTestUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.reflect.Field;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Every type the ingest job keeps in state or sends between operators is serialized by Flink without
 * Kryo: Kryo's bytes depend on class registration order and field layout, so a savepoint holding them
 * may not restore in the next version of the job. The POJOs pass Flink's own check
 * ({@link PojoTestUtils#assertSerializedAsPojoWithoutKryo}); the Avro rows get Flink's Avro serializer; the
 * generic {@link Routed} rows, as the job declares them, are POJOs whose every field has a serializer with
 * Kryo switched off. The job itself runs with {@code pipeline.generic-types: false}, so a type that
 * would fall back to Kryo fails the job at build time (or, for state, when the operator opens), and
 * with {@code pipeline.auto-generate-uids: false}, so an operator without a uid fails it too.
 */
class NoKryoTest {
    @TempDir
    Path dir;

    /**
     * The POJOs: keyed state (L1Message, AssemblyState, Attempt, DoneMarker), the key, the records between
     * operators, the Iceberg committer's state.
     */
    @Test
    void everyPojoOfStateAndStreamsIsSerializedAsAPojoWithoutKryo() {
        for (Class<?> c : List.of(L1Message.class, DumpKey.class, RecordWork.class, Attempt.class, DoneMarker.class,
                AssemblyState.class, CommittedFile.class)) {
            PojoTestUtils.assertSerializedAsPojoWithoutKryo(c);
        }
    }

    /** The Avro rows (and the plan a RecordWork carries) use Flink's Avro serializer. */
    @Test
    void avroRowsUseTheAvroSerializer() {
        for (Class<? extends SpecificRecord> c : List.of(TensorSnapshot.class, DumpOutcome.class,
                RejectedRecord.class, RecordPlan.class)) {
            TypeInformation<?> t = TypeInformation.of(c);
            assertInstanceOf(AvroTypeInfo.class, t, c.getSimpleName());
            assertInstanceOf(AvroSerializer.class, t.createSerializer(noGenerics()), c.getSimpleName());
        }
    }

    /** The three Routed row types, as the job declares them (the decoder's output and the two side outputs). */
    @Test
    void routedRowsArePojosOfAvroRows() throws Exception {
        List<TypeInformation<?>> routed = List.of(new TypeHint<Routed<TensorSnapshot>>() { }.getTypeInfo(),
                DumpAssembler.REJECTS.getTypeInfo(), DumpAssembler.OUTCOMES.getTypeInfo());
        for (TypeInformation<?> t : routed) {
            assertInstanceOf(PojoTypeInfo.class, t, t.toString());
            TypeSerializer<?> s = t.createSerializer(noGenerics());
            assertInstanceOf(PojoSerializer.class, s, t.toString());
            assertNoKryo(s, t.toString());
        }
        assertInstanceOf(PojoTypeInfo.class, DumpAssembler.DLQ.getTypeInfo());
        // and the check can fail: a raw Routed has a field of unknown type, which only Kryo would take
        TypeInformation<?> raw = TypeInformation.of(Routed.class);
        assertThrows(UnsupportedOperationException.class, () -> raw.createSerializer(noGenerics()),
                "a raw Routed needs Kryo for its row");
    }

    /**
     * The job's configuration refuses Kryo and operators without a uid; its graph (plain and with
     * compaction, each with and without Iceberg tables on a real PostgreSQL catalog) builds under it,
     * every serializer between operators and of every key is free of Kryo, and every operator has a uid
     * of the job's own.
     */
    @Test
    void theJobBuildsWithGenericTypesAndAutomaticUidsOff() throws Exception {
        for (int variant = 0; variant < 4; variant++) {
            int compact = variant % 2 == 0 ? 0 : 2;
            boolean iceberg = variant >= 2;
            IngestConfig c = JobRun.config("127.0.0.1:9", "kryo-check", dir);
            c.compactCheckpoints = compact;
            if (iceberg) {
                c.iceberg = IcebergIngestTest.settings("kryo_check_" + variant, Path.of(c.out));
            }
            Configuration conf = IngestJob.configuration(c);
            assertFalse(conf.get(PipelineOptions.GENERIC_TYPES), "pipeline.generic-types");
            assertFalse(conf.get(PipelineOptions.AUTO_GENERATE_UIDS), "pipeline.auto-generate-uids");
            StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2, conf);
            IngestJob.build(env, c);
            List<Transformation<?>> all = new ArrayList<>();
            collect(env.getTransformations(), all, new HashSet<>());
            for (Transformation<?> t : all) {
                TypeInformation<?> type = t.getOutputType();
                assertFalse(type instanceof GenericTypeInfo, t.getName() + " emits a generic type " + type);
            }
            StreamGraph graph = env.getStreamGraph();
            Set<String> uids = new TreeSet<>();
            for (StreamNode n : graph.getStreamNodes()) {
                String what = "compact=" + compact + " iceberg=" + iceberg + " operator '" + n.getOperatorName()
                        + "'";
                for (TypeSerializer<?> s : n.getTypeSerializersIn()) {
                    assertNoKryo(s, what + " input");
                }
                if (n.getTypeSerializerOut() != null) {
                    assertNoKryo(n.getTypeSerializerOut(), what + " output");
                }
                if (n.getStateKeySerializer() != null) {
                    assertNoKryo(n.getStateKeySerializer(), what + " key");
                }
                assertNotNull(n.getTransformationUID(), what + " has no uid");
                uids.add(n.getTransformationUID());
            }
            assertEquals(graph.getStreamNodes().size(), uids.size(), "uids are distinct: " + uids);
            for (String uid : List.of("kafka-source", "assembler", "decoder", "sink-snapshots", "sink-rejects",
                    "sink-dumps", "dlq-resolve", "sink-dlq")) {
                assertTrue(uids.contains(uid), uid + " in " + uids);
            }
            for (String table : List.of("snapshots", "rejects", "dumps")) {
                // the sink's post-commit operators carry the sink's uid as a prefix
                assertEquals(iceberg, uids.contains("sink-" + table + ": iceberg-commit-" + table),
                        table + "'s Iceberg committer in " + uids);
            }
            assertEquals(iceberg && compact > 0, uids.contains("sink-snapshots: iceberg-commit-snapshots-parts"),
                    "the compacted parts' publisher in " + uids);
            JobGraph job = graph.getJobGraph();
            int vertices = 0;
            for (JobVertex v : job.getVertices()) {
                vertices++;
            }
            assertTrue(vertices > 0);
        }
        // and the setting bites: an operator without a uid stops the job graph
        IngestConfig c = JobRun.config("127.0.0.1:9", "kryo-check", dir);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1,
                IngestJob.configuration(c));
        env.fromData(1, 2, 3).map(x -> x + 1)
                .sinkTo(new org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink<>());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> env.getStreamGraph());
        assertTrue(e.getMessage().contains("no UID"), e.getMessage());
    }

    /**
     * The assembler's state descriptors, created as the operator opens, under a configuration with Kryo
     * off: a manifest, chunks in and out of order, a finished dump's marker, then a snapshot of every state.
     */
    @Test
    void theAssemblerKeepsItsStateWithKryoOff() throws Exception {
        try (var h = DumpAssemblerHarnessTest.harness()) {
            ((SerializerConfigImpl) h.getExecutionConfig().getSerializerConfig()).setGenericTypes(false);
            h.open();
            h.setProcessingTime(0);
            List<L1Message> a = DumpAssemblerHarnessTest.messages(DumpAssemblerHarnessTest.dump(31, 4));
            List<L1Message> b = DumpAssemblerHarnessTest.messages(DumpAssemblerHarnessTest.dump(32, 5));
            List<L1Message> c = DumpAssemblerHarnessTest.messages(DumpAssemblerHarnessTest.dump(33, 3));
            List<L1Message> in = new ArrayList<>(a);
            in.addAll(List.of(b.get(0), b.get(1), b.get(4), c.get(2), c.get(3)));
            for (L1Message m : in) {
                h.processElement(new StreamRecord<>(m));
            }
            assertEquals(8, h.numKeyedStateEntries(), "every kind of state entry is held");
            assertNotNull(h.snapshot(1, 1));
        }
    }

    private static SerializerConfigImpl noGenerics() {
        SerializerConfigImpl s = new SerializerConfigImpl();
        s.setGenericTypes(false);
        return s;
    }

    private static void collect(List<Transformation<?>> from, List<Transformation<?>> into, Set<Integer> seen) {
        for (Transformation<?> t : from) {
            if (seen.add(t.getId())) {
                into.add(t);
                collect(t.getInputs(), into, seen);
            }
        }
    }

    /** {@code s} and every serializer inside it (fields of a POJO, elements of an array) is not Kryo. */
    static void assertNoKryo(TypeSerializer<?> s, String what) throws IllegalAccessException {
        assertNoKryo(s, what, 0);
    }

    private static void assertNoKryo(Object s, String what, int depth) throws IllegalAccessException {
        if (s == null || depth > 8) {
            return;
        }
        assertFalse(s instanceof KryoSerializer, what + ": Kryo serializer " + s);
        if (s instanceof TypeSerializer<?>[] arr) {
            for (TypeSerializer<?> x : arr) {
                assertNoKryo(x, what, depth + 1);
            }
            return;
        }
        if (!(s instanceof TypeSerializer<?>)) {
            return;
        }
        // nested serializers: PojoSerializer.fieldSerializers, array and collection element serializers
        for (Class<?> k = s.getClass(); k != null && k != Object.class; k = k.getSuperclass()) {
            for (Field f : k.getDeclaredFields()) {
                if (java.lang.reflect.Modifier.isStatic(f.getModifiers())) {
                    continue;
                }
                if (TypeSerializer.class.isAssignableFrom(f.getType())
                        || TypeSerializer[].class.isAssignableFrom(f.getType())) {
                    try {
                        f.setAccessible(true);
                    } catch (RuntimeException inaccessible) {
                        continue;
                    }
                    assertNoKryo(f.get(s), what + "." + f.getName(), depth + 1);
                }
            }
        }
    }
}
