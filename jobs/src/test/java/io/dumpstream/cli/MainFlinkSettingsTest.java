package io.dumpstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

/** Flink settings on the command line: {@code -Dkey=value} and {@code -D key=value}, as Flink's own CLI takes them. */
class MainFlinkSettingsTest {
    @Test
    void flinkSettingsAreTakenOutOfTheArgumentsAsFlinksCliTakesThem() {
        Map<String, String> into = new LinkedHashMap<>();
        String[] rest = Main.flinkSettings(new String[]{"--out", "s3://b/x", "-Ds3.endpoint=http://h:1", "-D",
                "s3.path.style.access=true", "--kafka.x=y", "-Da=1", "-Da=2"}, into);
        assertEquals(java.util.List.of("--out", "s3://b/x", "--kafka.x=y"), java.util.List.of(rest));
        assertEquals(Map.of("s3.endpoint", "http://h:1", "s3.path.style.access", "true", "a", "2"), into);
        assertThrows(io.dumpstream.options.UsageException.class,
                () -> Main.flinkSettings(new String[]{"-Dnovalue"}, new LinkedHashMap<>()));
    }

}
