package io.dumpstream.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;

import io.dumpstream.assemble.AssemblyOutput;
import io.dumpstream.assemble.AssemblyState;
import io.dumpstream.assemble.DumpAssembly;
import io.dumpstream.assemble.Outcome;
import io.dumpstream.decode.TensorStats;
import io.dumpstream.format.DumpFormatException;
import io.dumpstream.format.Dtype;
import io.dumpstream.format.ReasonCode;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.schema.RecordPlan;

import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.Set;

/**
 * Jazzer fuzz tests of the manifest parser and of the codec (chunk checks, header and record
 * validation, statistics). In a plain {@code mvn verify} they replay the committed seed corpus
 * under {@code src/test/resources/io/dumpstream/fuzz/CodecFuzzTestInputs/}; with
 * {@code JAZZER_FUZZ=1} one of them is fuzzed for its {@code maxDuration} (see .ci/run). The only
 * throwable allowed is the domain error, {@link DumpFormatException}; anything else is a finding.
 */
class CodecFuzzTest {

    /** Any bytes as a manifest (JSON, or Avro single-object when they start with C3 01). */
    @FuzzTest(maxDuration = "30s")
    void manifestParser(byte[] input) {
        DumpManifest m;
        try {
            m = ManifestParser.parse(input);
        } catch (DumpFormatException e) {
            assertEquals(ReasonCode.MANIFEST_INVALID, e.reason());
            assertNotNull(e.getMessage());
            return;
        }
        // a manifest the parser accepts is internally consistent and serializes back
        assertEquals(Manifests.chunkCount(m.getBufferBytes(), m.getChunkBytes()), m.getChunkCrc32c().size());
        ManifestParser.toJson(m);
    }

    /**
     * A manifest from the input, then a buffer from the rest of it, fed as chunks (some missing,
     * some short) through the assembly: every record is decided exactly once, the outcome comes
     * once, and accepted payloads have their statistics computed.
     */
    @FuzzTest(maxDuration = "30s")
    void assembly(FuzzedDataProvider data) {
        int manifestLength = data.consumeInt(0, 1 << 16);
        byte[] manifestBytes = data.consumeBytes(manifestLength);
        DumpManifest m;
        try {
            m = ManifestParser.parse(manifestBytes);
        } catch (DumpFormatException e) {
            return;
        }
        long missingMask = data.consumeLong();
        byte[] rest = data.consumeRemainingAsBytes();
        Check out = new Check(m);
        DumpAssembly a = new DumpAssembly(m, new AssemblyState(), 1 << 20, 4096);
        int fed = 0;
        while (!a.finished()) {
            int i = a.nextChunk();
            long start = Manifests.chunkStart(m, i);
            if (start >= rest.length || ((missingMask >>> (i & 63)) & 1) == 1 && ++fed % 3 == 0) {
                a.consume(null, out);
                continue;
            }
            int len = (int) Math.min(Manifests.chunkLength(m, i), rest.length - start);
            a.consume(ByteBuffer.wrap(rest, (int) start, len), out);
        }
        assertEquals(1, out.finished);
        assertEquals(m.getRecords().size(), out.decided.size());
    }

    private static final class Check implements AssemblyOutput {
        final DumpManifest m;
        final Set<Integer> decided = new HashSet<>();
        int finished;

        Check(DumpManifest m) {
            this.m = m;
        }

        @Override
        public void accepted(int index, byte[] payload) {
            if (!decided.add(index)) {
                throw new AssertionError("record " + index + " decided twice");
            }
            RecordPlan r = m.getRecords().get(index);
            assertEquals(r.getPayloadBytes(), payload.length);
            TensorStats.compute(Dtype.fromName(r.getDtype()), payload, 0, payload.length);
        }

        @Override
        public void rejected(int index, ReasonCode reason, String detail, byte[] rawEntry, byte[] payload,
                             boolean capped) {
            if (!decided.add(index)) {
                throw new AssertionError("record " + index + " decided twice");
            }
            assertNotNull(reason);
            assertNotNull(detail);
        }

        @Override
        public void finished(Outcome outcome, ReasonCode reason, int accepted, int rejected) {
            finished++;
            assertEquals(decided.size(), accepted + rejected);
        }
    }
}
