package io.dumpstream.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The cluster jar on its own (a class loader with nothing but the jar and the JDK): what the jobs
 * read at start-up on a cluster, beyond Flink's own classes, is inside it. A YAML tolerance file
 * given to {@code flink run ... CompareJob --tolerances t.yaml} parses with the jar's relocated
 * Jackson YAML and SnakeYAML.
 */
class ClusterJarIT {
    private static final Path JAR = Path.of(System.getProperty("dumpstream.cluster.jar",
            "target/dumpstream-flink-job.jar"));

    @Test
    void yamlTolerancesParseWithTheClassesInsideTheClusterJar() throws Exception {
        assertTrue(Files.isRegularFile(JAR), "the cluster jar is built before the integration tests: " + JAR);
        try (URLClassLoader jar = new URLClassLoader(new URL[] {JAR.toUri().toURL()},
                ClassLoader.getPlatformClassLoader())) {
            Class<?> tolerances = jar.loadClass("io.dumpstream.compare.Tolerances");
            Method parse = tolerances.getMethod("parseYaml", String.class, String.class);
            Object parsed = parse.invoke(null, "t.yaml", String.join("\n",
                    "- stage: \"attn.*\"",
                    "  dtype: bfloat16",
                    "  rtol: 0.05",
                    "  atol: 0.001",
                    ""));
            String rules = tolerances.getMethod("rules").invoke(parsed).toString();
            assertEquals("[Rule[stagePattern=attn.*, dtype=bfloat16, rtol=0.05, atol=0.001, source=t.yaml:rule 1]]", rules);
            // the YAML classes come from the jar, relocated, not from anywhere else
            Class<?> yaml = jar.loadClass("io.dumpstream.shaded.com.fasterxml.jackson.dataformat.yaml.YAMLFactory");
            assertEquals(jar, yaml.getClassLoader());
        }
    }

    /** With --iceberg-catalog the job's committer, Iceberg, its JDBC catalog and the PostgreSQL driver load from the jar. */
    @Test
    void theIcebergCommitLoadsFromTheClusterJar() throws Exception {
        try (URLClassLoader jar = new URLClassLoader(new URL[] {JAR.toUri().toURL()},
                ClassLoader.getPlatformClassLoader())) {
            for (String c : List.of("io.dumpstream.iceberg.IcebergTables", "org.apache.iceberg.jdbc.JdbcCatalog",
                    "org.apache.iceberg.parquet.ParquetUtil", "org.postgresql.Driver")) {
                // not initialised: their loggers are SLF4J's, which a cluster's lib/ provides
                assertEquals(jar, Class.forName(c, false, jar).getClassLoader(), c);
            }
            Object location = jar.loadClass("io.dumpstream.iceberg.IcebergTables").getMethod("location", String.class)
                    .invoke(null, "/lake/out/");
            assertEquals("file:/lake/out", location);
        }
    }
}
