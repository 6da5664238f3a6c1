package io.dumpstream.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.dumpstream.reference.Safetensors;
import io.dumpstream.reference.SafetensorsException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Jazzer fuzz test of the safetensors reader: any bytes as a file either parse, with every
 * tensor readable in full, or fail with {@link SafetensorsException}; anything else is a finding.
 * In a plain {@code mvn verify} it replays its (empty) corpus; {@code JAZZER_FUZZ=1} fuzzes it.
 */
class SafetensorsFuzzTest {

    @FuzzTest(maxDuration = "30s")
    void safetensors(byte[] input) throws IOException {
        Path f = Files.createTempFile("fuzz", ".safetensors");
        try {
            Files.write(f, input);
            try (Safetensors s = Safetensors.open(f)) {
                for (Safetensors.Entry e : s.entries()) {
                    if (e.bytes() < (1 << 20)) {
                        assertEquals(e.bytes(), s.readAll(e).length);
                    }
                }
            } catch (SafetensorsException e) {
                assertNotNull(e.field());
            }
        } finally {
            Files.deleteIfExists(f);
        }
    }
}
