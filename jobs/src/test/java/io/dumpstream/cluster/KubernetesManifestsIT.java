package io.dumpstream.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.job.IngestConfig;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code deploy/k8s/}: the rendered FlinkDeployment parses, sets what the operator and the job need
 * (application mode, s3a:// checkpoints and HA, the S3 plugin enabled on every pod, S3 and Kafka
 * credentials from Secrets, Prometheus), its
 * arguments parse as the job's own options, and the image, the Dockerfile and the built jar agree.
 * An integration test because it reads the cluster jar the build has just packaged.
 */
class KubernetesManifestsIT {
    private static final Path K8S = ClusterScript.REPO.resolve("deploy/k8s");
    private static final YAMLMapper YAML = new YAMLMapper();

    private static JsonNode render(String... params) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("bash", K8S.resolve("render.sh").toString()));
        cmd.addAll(List.of(params));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), "render.sh " + String.join(" ", params) + ": " + out);
        return YAML.readTree(out);
    }

    private static String renderFails(String... params) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("bash", K8S.resolve("render.sh").toString()));
        cmd.addAll(List.of(params));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertEquals(2, p.waitFor(), "render.sh " + String.join(" ", params) + " must fail: " + out);
        return out.trim();
    }

    private static String text(JsonNode n, String pointer) {
        JsonNode v = n.at(pointer);
        assertTrue(v.isValueNode() && !v.asText().isBlank(), pointer + " is set, got " + v);
        return v.asText();
    }

    @Test
    void theDefaultDeploymentHasEverythingTheOperatorAndTheJobNeed() throws Exception {
        JsonNode d = render();
        assertEquals("flink.apache.org/v1beta1", text(d, "/apiVersion"));
        assertEquals("FlinkDeployment", text(d, "/kind"));
        assertEquals("dumpstream-ingest", text(d, "/metadata/name"));
        String flinkVersion = System.getProperty("dumpstream.flink.version", "2.2.0");
        String[] v = flinkVersion.split("\\.");
        assertEquals("v" + v[0] + "_" + v[1], text(d, "/spec/flinkVersion"), "the operator's version of the build's Flink");

        // application mode: a job with the jar inside the image
        assertEquals("io.dumpstream.job.IngestJob", text(d, "/spec/job/entryClass"));
        assertEquals("last-state", text(d, "/spec/job/upgradeMode"));
        assertEquals(4, d.at("/spec/job/parallelism").asInt());
        assertTrue(d.at("/spec/job/parallelism").isInt(), "parallelism is a number");
        assertEquals("2", text(d, "/spec/flinkConfiguration/taskmanager.numberOfTaskSlots"));
        assertEquals("4096m", text(d, "/spec/taskManager/resource/memory"));
        assertEquals(2, d.at("/spec/taskManager/resource/cpu").asInt());
        assertEquals("2048m", text(d, "/spec/jobManager/resource/memory"));

        // checkpoints, savepoints, HA on object storage
        Map<String, String> conf = YAML.convertValue(d.at("/spec/flinkConfiguration"),
                YAML.getTypeFactory().constructMapType(Map.class, String.class, String.class));
        assertEquals("s3a://dumpstream/checkpoints", conf.get("execution.checkpointing.dir"));
        assertEquals("s3a://dumpstream/savepoints", conf.get("execution.checkpointing.savepoint-dir"));
        assertEquals("kubernetes", conf.get("high-availability.type"));
        assertEquals("s3a://dumpstream/ha", conf.get("high-availability.storageDir"));
        assertEquals("org.apache.flink.metrics.prometheus.PrometheusReporterFactory",
                conf.get("metrics.reporter.prom.factory.class"));

        // the container: metrics port, secrets through the environment
        JsonNode container = d.at("/spec/podTemplate/spec/containers/0");
        assertEquals("flink-main-container", text(container, "/name"));
        assertEquals(conf.get("metrics.reporter.prom.port"), text(container, "/ports/0/containerPort"));
        assertEquals("metrics", text(container, "/ports/0/name"));
        Map<String, String> secretRefs = new java.util.TreeMap<>();
        Map<String, String> values = new java.util.TreeMap<>();
        for (JsonNode e : container.path("env")) {
            if (e.has("value")) {
                values.put(e.path("name").asText(), e.path("value").asText());
                continue;
            }
            JsonNode ref = e.at("/valueFrom/secretKeyRef");
            assertTrue(ref.isObject(), "env " + e.path("name").asText() + " comes from a Secret");
            secretRefs.put(e.path("name").asText(), ref.path("name").asText() + "/" + ref.path("key").asText());
        }
        assertEquals(Map.of("KAFKA_SASL_JAAS_CONFIG", "dumpstream-kafka/sasl.jaas.config",
                "AWS_ACCESS_KEY_ID", "dumpstream-s3/access-key", "AWS_SECRET_ACCESS_KEY", "dumpstream-s3/secret-key"),
                secretRefs);
        // the S3 file system of the build's Flink version as a plugin: the image's entrypoint links
        // opt/<jar> into plugins/ on the JobManager and the TaskManagers (the pod template is theirs both)
        assertEquals(Map.of("ENABLE_BUILT_IN_PLUGINS", "flink-s3-fs-hadoop-" + flinkVersion + ".jar"), values,
                "the only plain environment value enables the S3 plugin");
        assertTrue(d.at("/spec/jobManager/podTemplate").isMissingNode()
                && d.at("/spec/taskManager/podTemplate").isMissingNode(),
                "no JobManager or TaskManager pod template replaces the shared one");
        assertEquals("https://s3.amazonaws.com", conf.get("s3.endpoint"));
        assertEquals("true", conf.get("s3.path.style.access"));
        assertEquals(List.of(), conf.keySet().stream()
                .filter(k -> k.contains("access-key") || k.contains("secret") || k.contains("access.key")).toList(),
                "no credential in flinkConfiguration (they come from the Secret)");

        // the arguments are the job's own options, the secret read from the environment the Secret fills
        List<String> args = new ArrayList<>();
        d.at("/spec/job/args").forEach(a -> args.add(a.asText()));
        IngestConfig c = IngestConfig.parse(args.toArray(String[]::new),
                Map.of("KAFKA_SASL_JAAS_CONFIG", "from-the-secret"));
        assertEquals("kafka-bootstrap.kafka:9093", c.bootstrap);
        assertEquals("s3a://dumpstream/l1", c.out);
        assertEquals(conf.get("execution.checkpointing.dir"), c.checkpoints, "--checkpoints and the operator agree");
        assertEquals(4, c.parallelism, "--parallelism and spec.job.parallelism agree");
        assertEquals(java.time.Duration.ofSeconds(30), c.checkpointInterval);
        // the Secret's value stays in the pods' environment: each Kafka client resolves the reference
        assertEquals("${env:KAFKA_SASL_JAAS_CONFIG}", c.kafka.getProperty("sasl.jaas.config"));
        assertEquals("env", c.kafka.getProperty("config.providers"));
        assertEquals("SASL_SSL", c.kafka.getProperty("security.protocol"));
    }

    @Test
    void theImageTheDockerfileAndTheBuiltJarAgree() throws Exception {
        JsonNode d = render();
        String jarName = ClusterScript.JAR.getFileName().toString();
        assertTrue(Files.isRegularFile(ClusterScript.JAR), "the build made " + ClusterScript.JAR);
        String jarUri = text(d, "/spec/job/jarURI");
        assertEquals("local:///opt/flink/usrlib/" + jarName, jarUri, "the deployment runs the jar the build names");

        String dockerfile = Files.readString(K8S.resolve("Dockerfile"));
        Matcher from = Pattern.compile("(?m)^FROM (\\S+)$").matcher(dockerfile);
        assertTrue(from.find(), "a FROM line");
        String flinkVersion = System.getProperty("dumpstream.flink.version", "2.2.0");
        assertTrue(from.group(1).startsWith("flink:" + flinkVersion + "-"),
                "the official Flink image of the build's version " + flinkVersion + ", got " + from.group(1));
        Matcher copy = Pattern.compile("(?m)^COPY (?:--\\S+ )*(\\S+) (\\S+)$").matcher(dockerfile);
        assertTrue(copy.find(), "a COPY line");
        Path source = ClusterScript.REPO.resolve(copy.group(1));
        assertEquals(ClusterScript.JAR.toAbsolutePath().normalize(), source.toAbsolutePath().normalize(),
                "the Dockerfile copies the built cluster jar");
        assertEquals(jarUri.substring("local://".length()), copy.group(2), "to where the deployment runs it");

        try (JarFile jar = new JarFile(ClusterScript.JAR.toFile())) {
            assertEquals(text(d, "/spec/job/entryClass"), jar.getManifest().getMainAttributes().getValue("Main-Class"),
                    "the jar's main class is the deployment's entry class");
            assertTrue(jar.getEntry("io/dumpstream/job/IngestJob.class") != null, "the job is in the jar");
            assertTrue(jar.getEntry("org/apache/flink/connector/kafka/source/KafkaSource.class") != null,
                    "the Kafka connector is in the jar");
            assertTrue(jar.getEntry("org/apache/flink/streaming/api/environment/StreamExecutionEnvironment.class") == null,
                    "Flink itself is provided by the cluster, not in the jar");
            assertTrue(jar.getEntry("io/dumpstream/shaded/com/fasterxml/jackson/databind/ObjectMapper.class") != null
                    && jar.getEntry("com/fasterxml/jackson/databind/ObjectMapper.class") == null,
                    "Jackson is relocated");
        }
        assertFalse(dockerfile.lines().filter(l -> !l.startsWith("#")).anyMatch(l -> l.contains("plugins/")),
                "the image does not copy the S3 plugin itself (the deployment enables it: two copies would clash)");
        String image = text(d, "/spec/image");
        assertTrue(dockerfile.contains("-t " + image + " "), "the Dockerfile's build line tags the image " + image);
    }

    @Test
    void parametersOverrideTheDefaultsAndBadValuesAreNamed() throws Exception {
        JsonNode d = render("PARALLELISM=12", "TM_MEMORY=8g", "TASK_SLOTS=4", "BUCKET=s3a://lake/l1-prod",
                "S3_ENDPOINT=http://rgw.storage.svc:7480", "S3_PATH_STYLE=false");
        assertEquals("http://rgw.storage.svc:7480", text(d, "/spec/flinkConfiguration/s3.endpoint"));
        assertEquals("false", text(d, "/spec/flinkConfiguration/s3.path.style.access"));
        assertEquals(12, d.at("/spec/job/parallelism").asInt());
        assertEquals("8g", text(d, "/spec/taskManager/resource/memory"));
        assertEquals("4", text(d, "/spec/flinkConfiguration/taskmanager.numberOfTaskSlots"));
        assertEquals("s3a://lake/l1-prod/ha", text(d, "/spec/flinkConfiguration/high-availability.storageDir"));
        List<String> args = new ArrayList<>();
        d.at("/spec/job/args").forEach(a -> args.add(a.asText()));
        IngestConfig c = IngestConfig.parse(args.toArray(String[]::new), Map.of("KAFKA_SASL_JAAS_CONFIG", "x"));
        assertEquals(12, c.parallelism);
        assertEquals("s3a://lake/l1-prod/checkpoints", c.checkpoints);

        assertEquals("render.sh: PARALLELISM must be a positive integer, got 'many'", renderFails("PARALLELISM=many"));
        assertEquals("render.sh: BUCKET must be an s3a:// URI without a trailing /, got '/tmp/x'",
                renderFails("BUCKET=/tmp/x"));
        assertTrue(renderFails("PARALELISM=4").startsWith("render.sh: unknown parameter 'PARALELISM'"));
    }
}
