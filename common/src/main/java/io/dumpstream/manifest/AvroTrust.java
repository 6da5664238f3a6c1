package io.dumpstream.manifest;

import io.dumpstream.schema.DumpManifest;
import io.dumpstream.schema.DumpOutcome;
import io.dumpstream.schema.FirstDivergence;
import io.dumpstream.schema.RecordPlan;
import io.dumpstream.schema.RejectedRecord;
import io.dumpstream.schema.TensorComparison;
import io.dumpstream.schema.TensorSnapshot;
import org.apache.avro.util.ClassSecurityValidator;

/**
 * Avro 1.12 refuses to instantiate generated classes reflectively (deep copies, builders copying a
 * record) unless their package is trusted. This trusts exactly our generated classes, once.
 */
public final class AvroTrust {
    private static boolean done;

    private AvroTrust() {
    }

    public static synchronized void ensure() {
        if (done) {
            return;
        }
        ClassSecurityValidator.setGlobal(ClassSecurityValidator.composite(ClassSecurityValidator.getGlobal(),
                ClassSecurityValidator.builder().add(DumpManifest.class).add(RecordPlan.class)
                        .add(TensorSnapshot.class).add(DumpOutcome.class).add(RejectedRecord.class)
                        .add(TensorComparison.class).add(FirstDivergence.class).build()));
        done = true;
    }
}
