package io.dumpstream.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code deploy/k8s/render.sh} on its own (no jar needed, so a unit test): the output is the template
 * with each parameter put in as it is, whatever it holds ({@code &}, {@code \}, {@code /},
 * {@code ${...}}), and a bad NAMESPACE, IMAGE, S3_ENDPOINT or TOPIC stops it with one line naming it.
 */
class RenderScriptTest {
    private static final Path K8S = ClusterScript.REPO.resolve("deploy/k8s");
    private static final Pattern PARAM = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)\\}");

    private record Run(int exit, String out, String err) {
    }

    private static Run run(Path dir, String... params) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("bash", dir.resolve("render.sh").toString()));
        cmd.addAll(List.of(params));
        Process p = new ProcessBuilder(cmd).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Run(p.waitFor(), out, err);
    }

    /** The expected output: params.env with the overrides, put into the template in one pass. */
    private static String expected(Map<String, String> overrides) throws Exception {
        Map<String, String> values = new LinkedHashMap<>();
        for (String line : Files.readAllLines(K8S.resolve("params.env"))) {
            if (!line.isEmpty() && !line.startsWith("#")) {
                values.put(line.substring(0, line.indexOf('=')), line.substring(line.indexOf('=') + 1));
            }
        }
        values.putAll(overrides);
        String template = Files.readString(K8S.resolve("flinkdeployment.yaml")).stripTrailing();
        Matcher m = PARAM.matcher(template);
        StringBuilder b = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(b, Matcher.quoteReplacement(values.get(m.group(1))));
        }
        m.appendTail(b);
        return b.append('\n').toString();
    }

    @Test
    void theDefaultsFillEveryParameter() throws Exception {
        Run r = run(K8S);
        assertEquals(new Run(0, expected(Map.of()), ""), r);
    }

    @Test
    void valuesWithAmpersandBackslashSlashAndDollarBraceLandAsTheyAre() throws Exception {
        String bucket = "s3a://a&b\\c/d&&e${NAME}";
        String bootstrap = "kafka-0&1:9093,k\\2:9093";
        Run r = run(K8S, "BUCKET=" + bucket, "KAFKA_BOOTSTRAP=" + bootstrap);
        assertEquals(new Run(0, expected(Map.of("BUCKET", bucket, "KAFKA_BOOTSTRAP", bootstrap)), ""), r);

        JsonNode d = new YAMLMapper().readTree(r.out());
        assertEquals("s3a://a&b\\c/d&&e${NAME}/checkpoints",
                d.at("/spec/flinkConfiguration/execution.checkpointing.dir").asText());
        assertEquals("s3a://a&b\\c/d&&e${NAME}/ha", d.at("/spec/flinkConfiguration/high-availability.storageDir")
                .asText());
        List<String> args = new ArrayList<>();
        d.at("/spec/job/args").forEach(a -> args.add(a.asText()));
        assertEquals(List.of("--bootstrap", "kafka-0&1:9093,k\\2:9093", "--topic", "l1dump.v1",
                "--out", "s3a://a&b\\c/d&&e${NAME}/l1", "--checkpoints", "s3a://a&b\\c/d&&e${NAME}/checkpoints"),
                args.subList(0, 8));
        assertEquals("dumpstream-ingest", d.at("/metadata/name").asText(), "a value is never scanned again");
    }

    @Test
    void goodValuesOfTheCheckedParametersPass() throws Exception {
        String image = "registry.example.com:5000/team/dumpstream-flink-job:0.2.0@sha256:" + "0a".repeat(32);
        Map<String, String> values = Map.of("NAMESPACE", "l1-prod", "IMAGE", image,
                "S3_ENDPOINT", "http://10.0.0.5:7480", "TOPIC", "l1dump.v2_x-y");
        List<String> params = new ArrayList<>();
        values.forEach((k, v) -> params.add(k + "=" + v));
        Run r = run(K8S, params.toArray(String[]::new));
        assertEquals(new Run(0, expected(values), ""), r);
        JsonNode d = new YAMLMapper().readTree(r.out());
        assertEquals("l1-prod", d.at("/metadata/namespace").asText());
        assertEquals(image, d.at("/spec/image").asText());
        assertEquals("http://10.0.0.5:7480", d.at("/spec/flinkConfiguration/s3.endpoint").asText());
        assertEquals("l1dump.v2_x-y", d.at("/spec/job/args/3").asText());
    }

    @Test
    void badValuesStopWithOneLineNamingTheParameter() throws Exception {
        Map<String, String> cases = new LinkedHashMap<>();
        String namespace = "a Kubernetes namespace (lowercase letters, digits, -; at most 63)";
        cases.put("NAMESPACE=Prod", "NAMESPACE must be " + namespace + ", got 'Prod'");
        cases.put("NAMESPACE=" + "n".repeat(64), "NAMESPACE must be " + namespace + ", got '" + "n".repeat(64) + "'");
        cases.put("NAMESPACE=a&b", "NAMESPACE must be " + namespace + ", got 'a&b'");
        String image = "an image reference such as registry.example.com:5000/dumpstream-flink-job:0.1.0";
        cases.put("IMAGE=img:1 --privileged", "IMAGE must be " + image + ", got 'img:1 --privileged'");
        cases.put("IMAGE=Img:1", "IMAGE must be " + image + ", got 'Img:1'");
        cases.put("IMAGE=img:1\\", "IMAGE must be " + image + ", got 'img:1\\'");
        cases.put("IMAGE=", "IMAGE must be " + image + ", got ''");
        String endpoint = "an http:// or https:// URL of a host (and port), such as https://s3.amazonaws.com"
                + " or http://10.0.0.5:7480";
        cases.put("S3_ENDPOINT=s3.amazonaws.com", "S3_ENDPOINT must be " + endpoint + ", got 's3.amazonaws.com'");
        cases.put("S3_PATH_STYLE=yes", "S3_PATH_STYLE must be true or false, got 'yes'");
        cases.put("S3_ENDPOINT=https://s3/x&y", "S3_ENDPOINT must be " + endpoint + ", got 'https://s3/x&y'");
        cases.put("S3_ENDPOINT=ftp://s3:21", "S3_ENDPOINT must be " + endpoint + ", got 'ftp://s3:21'");
        String topic = "a Kafka topic name (letters, digits, ., _, -; at most 249)";
        cases.put("TOPIC=l1 dump", "TOPIC must be " + topic + ", got 'l1 dump'");
        cases.put("TOPIC=l1/dump", "TOPIC must be " + topic + ", got 'l1/dump'");
        cases.put("TOPIC=", "TOPIC must be " + topic + ", got ''");
        cases.put("TOPIC=" + "t".repeat(250), "TOPIC must be " + topic + ", got '" + "t".repeat(250) + "'");
        cases.put("TOPIC=..", "TOPIC must be a Kafka topic name other than '.' or '..', got '..'");
        cases.put("TOPIC=.", "TOPIC must be a Kafka topic name other than '.' or '..', got '.'");
        for (Map.Entry<String, String> c : cases.entrySet()) {
            assertEquals(new Run(2, "", "render.sh: " + c.getValue() + "\n"), run(K8S, c.getKey()), c.getKey());
        }
    }

    @Test
    void aTemplateParameterWithoutAValueIsNamed(@TempDir Path dir) throws Exception {
        Files.copy(K8S.resolve("render.sh"), dir.resolve("render.sh"));
        Files.copy(K8S.resolve("params.env"), dir.resolve("params.env"));
        Files.writeString(dir.resolve("flinkdeployment.yaml"),
                "name: ${NAME}\nsecret: ${env:KEEP}\nbroken: ${\nother: ${NOT_A_PARAM}\n");
        assertEquals(new Run(2, "", "render.sh: unfilled parameter ${NOT_A_PARAM}\n"), run(dir));
        Files.writeString(dir.resolve("flinkdeployment.yaml"), "name: ${NAME}\nsecret: ${env:KEEP}\nbroken: ${\n");
        assertEquals(new Run(0, "name: dumpstream-ingest\nsecret: ${env:KEEP}\nbroken: ${\n", ""), run(dir));
    }
}
