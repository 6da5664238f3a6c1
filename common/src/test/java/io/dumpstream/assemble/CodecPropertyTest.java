package io.dumpstream.assemble;

import io.dumpstream.format.DumpFormatException;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.schema.DumpManifest;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

import java.nio.ByteBuffer;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Random byte flips and truncations of a valid dump and its manifest never raise anything but the
 * domain error, and every record still ends accepted or rejected exactly once.
 */
class CodecPropertyTest {
    static final String BASE = "truncation_and_empty";

    @Property(tries = 300)
    void flippedBufferBytesAreAlwaysAccountedFor(@ForAll @IntRange(min = 0, max = 526527) int at,
                                                 @ForAll @IntRange(min = 1, max = 255) int mask,
                                                 @ForAll boolean recomputeCrc) throws Exception {
        byte[] buf = Dumps.buffer(BASE);
        DumpManifest m = Dumps.rechunk(Dumps.manifest(BASE), buf, 65536);
        buf[at] ^= (byte) mask;
        if (recomputeCrc) {
            m = Dumps.rechunk(m, buf, 65536); // the defect must then be caught by the format checks
        }
        Collect c = Dumps.run(m, buf);
        assertEquals(5, c.accepted.size() + c.rejected.size());
        if (!recomputeCrc) {
            assertTrue(c.accepted.size() < 5 || at >= 526528, "a flip under a CRC is always caught");
        }
    }

    @Property(tries = 200)
    void truncatedBuffersAreAlwaysAccountedFor(@ForAll @IntRange(min = 0, max = 526527) int length) throws Exception {
        byte[] full = Dumps.buffer(BASE);
        DumpManifest m = Dumps.rechunk(Dumps.manifest(BASE), full, 65536);
        byte[] buf = Arrays.copyOf(full, length);
        Collect c = new Collect();
        DumpAssembly a = new DumpAssembly(m, new AssemblyState());
        while (!a.finished()) {
            int i = a.nextChunk();
            long start = (long) i * 65536;
            int len = (int) Math.max(0, Math.min(65536, buf.length - start));
            a.consume(len == 0 ? null : ByteBuffer.wrap(buf, (int) start, len), c);
        }
        assertEquals(5, c.accepted.size() + c.rejected.size());
        assertTrue(c.rejected.size() > 0);
    }

    @Property(tries = 500)
    void mutatedManifestsOnlyRaiseTheDomainError(@ForAll @IntRange(min = 0, max = 100_000) int seed,
                                                 @ForAll boolean avro) throws Exception {
        DumpManifest m = Dumps.manifest(BASE);
        byte[] bytes = avro ? ManifestParser.toAvro(m) : ManifestParser.toJson(m);
        java.util.Random r = new java.util.Random(seed);
        int flips = 1 + r.nextInt(4);
        for (int k = 0; k < flips; k++) {
            bytes[r.nextInt(bytes.length)] ^= (byte) (1 + r.nextInt(255));
        }
        if (r.nextBoolean()) {
            bytes = Arrays.copyOf(bytes, r.nextInt(bytes.length + 1));
        }
        try {
            DumpManifest parsed = ManifestParser.parse(bytes);
            byte[] buf = Dumps.buffer(BASE);
            Collect c = Dumps.run(Dumps.rechunk(parsed, buf, 65536), buf);
            assertEquals(parsed.getRecords().size(), c.accepted.size() + c.rejected.size());
        } catch (DumpFormatException expected) {
            assertEquals(io.dumpstream.format.ReasonCode.MANIFEST_INVALID, expected.reason());
        }
    }
}
