package io.dumpstream.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/** Flink settings of a CLI process: config.yaml under -D, the plugins folder, credentials masked in messages. */
class FlinkSettingsTest {
    @TempDir
    Path dir;

    @Test
    void dynamicSettingsOverrideConfigYaml() throws Exception {
        Files.writeString(dir.resolve("config.yaml"), String.join("\n",
                "s3.endpoint: http://from-yaml:7480",
                "s3.path.style.access: true",
                "parallelism.default: 3", ""));
        Configuration c = FlinkSettings.load(dir.toString(), Map.of("s3.endpoint", "http://from-cli:9000"));
        assertEquals("http://from-cli:9000", c.getString("s3.endpoint", null));
        assertEquals("true", c.getString("s3.path.style.access", null));
        assertEquals("3", c.getString("parallelism.default", null));
        assertEquals("http://from-cli:9000", StorageCheck.endpoint(c));

        Configuration none = FlinkSettings.load(null, Map.of("a.b", "c"));
        assertEquals(Map.of("a.b", "c"), none.toMap());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> FlinkSettings.load(dir.resolve("missing").toString(), Map.of()));
        assertEquals("FLINK_CONF_DIR=" + dir.resolve("missing") + ": no such directory", e.getMessage());
    }

    @Test
    void pluginsFolderFromTheEnvironmentOrBesideTheClasses() throws Exception {
        assertEquals(dir, FlinkSettings.pluginsFolder(dir.toString()));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> FlinkSettings.pluginsFolder(dir.resolve("nope").toString()));
        assertEquals("FLINK_PLUGINS_DIR=" + dir.resolve("nope") + ": no such directory", e.getMessage());
        // the build copies the S3 plugin beside the classes (jobs/target/plugins), as beside the jar
        Path beside = FlinkSettings.pluginsFolder(null);
        assertTrue(beside != null && Files.isDirectory(beside.resolve("s3-fs-hadoop")), String.valueOf(beside));
        try (var s = Files.list(beside.resolve("s3-fs-hadoop"))) {
            assertTrue(s.anyMatch(p -> p.getFileName().toString().startsWith("flink-s3-fs-hadoop-")));
        }
    }

    @Test
    void credentialsInSettingsAreMaskedInMessages() {
        Configuration c = new Configuration();
        c.setString("s3.secret-key", "topsecret123");
        c.setString("s3.access-key", "AKIAEXAMPLE");
        assertEquals("denied for **** with ****", StorageCheck.mask("denied for AKIAEXAMPLE with topsecret123", c));
        assertNull(StorageCheck.endpoint(new Configuration()));
    }
}
