package io.dumpstream.job;

import java.io.Serializable;
import java.time.Duration;

/** What the assembler needs of the job's configuration. */
public record AssemblerSettings(Duration assemblyTimeout, Duration dedupRetention, long maxRecordBytes,
                                int rejectPayloadCap) implements Serializable {
    public AssemblerSettings {
        if (assemblyTimeout.isNegative() || assemblyTimeout.isZero()) {
            throw new IllegalArgumentException("assembly timeout must be positive, got " + assemblyTimeout);
        }
        if (dedupRetention.isNegative()) {
            throw new IllegalArgumentException("de-duplication retention must be >= 0, got " + dedupRetention);
        }
    }
}
