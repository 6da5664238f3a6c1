package io.dumpstream.decode;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.dumpstream.table.DuckDb;
import io.dumpstream.table.TableWriter;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every public golden vector decoded offline and read back from Parquet by DuckDB: every field of
 * its expected decode checked, plus the partition values against the manifest's strings.
 */
class VectorDecodeTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final Clock CLOCK = Clock.fixed(Instant.parse("2026-12-02T00:00:00Z"), ZoneOffset.UTC);

    static Path vectors() throws URISyntaxException {
        return Path.of(VectorDecodeTest.class.getResource("/vectors/all_dtypes.bin").toURI()).getParent();
    }

    static Stream<String> names() throws Exception {
        try (Stream<Path> s = Files.list(vectors())) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".expected.json"))
                    .map(n -> n.substring(0, n.length() - ".expected.json".length())).sorted()
                    .collect(Collectors.toList()).stream();
        }
    }

    static OfflineDecoder.Summary decode(String name, Path root) throws Exception {
        try (TableWriter w = new TableWriter(root, TableWriter.Options.defaults())) {
            return new OfflineDecoder(w, CLOCK).decode(vectors().resolve(name + ".manifest.json"),
                    vectors().resolve(name + ".bin"));
        }
    }

    @ParameterizedTest
    @MethodSource("names")
    void landedTablesEqualTheExpectedDecode(String name, @TempDir Path root) throws Exception {
        JsonNode manifest = JSON.readTree(vectors().resolve(name + ".manifest.json").toFile());
        JsonNode expected = JSON.readTree(vectors().resolve(name + ".expected.json").toFile());
        OfflineDecoder.Summary summary = decode(name, root);
        int records = manifest.get("records").size();

        try (DuckDb db = DuckDb.open()) {
            List<Map<String, Object>> snaps = rows(db, root, "snapshots", "SELECT *, array_to_string(stored_shape, ',') AS ss, "
                    + "array_to_string(shape, ',') AS sh FROM read_parquet(" + DuckDb.glob(root, "snapshots/**/*.parquet")
                    + ", hive_partitioning=true, hive_types={'run': VARCHAR, 'rank': INTEGER, 'stage': VARCHAR}) "
                    + "ORDER BY record_index");
            List<Map<String, Object>> rejects = rows(db, root, "rejects", "SELECT * FROM read_parquet(" + DuckDb.glob(root, "rejects/**/*.parquet")
                    + ", hive_partitioning=true, hive_types={'run': VARCHAR, 'rank': INTEGER}) ORDER BY record_index");
            List<Map<String, Object>> dumps = rows(db, root, "dumps", "SELECT * FROM read_parquet(" + DuckDb.glob(root, "dumps/**/*.parquet")
                    + ", hive_partitioning=true, hive_types={'run': VARCHAR, 'rank': INTEGER})");

            Map<Integer, Map<String, Object>> snapByIndex = new TreeMap<>();
            snaps.forEach(r -> snapByIndex.put(((Number) r.get("record_index")).intValue(), r));
            Map<Integer, String> rejectByIndex = new TreeMap<>();
            rejects.forEach(r -> rejectByIndex.put(((Number) r.get("record_index")).intValue(), (String) r.get("reason")));

            assertEquals(1, dumps.size(), "one dump row");
            Map<String, Object> dump = dumps.get(0);
            assertEquals(manifest.get("run_id").asText(), dump.get("run"));
            assertEquals(manifest.get("rank").asInt(), ((Number) dump.get("rank")).intValue());
            assertEquals(manifest.get("run_id").asText() + "/" + manifest.get("rank").asInt() + "/"
                    + manifest.get("launch_id").asLong(), dump.get("dump_id"));

            assertEquals(expected.get("accepted").asInt(), snaps.size(), "accepted");
            assertEquals(expected.get("rejected").asInt(), rejects.size(), "rejected");
            assertEquals(expected.get("accepted").asInt(), ((Number) dump.get("accepted")).intValue());
            assertEquals(expected.get("rejected").asInt(), ((Number) dump.get("rejected")).intValue());
            assertEquals(records, ((Number) dump.get("records")).intValue());
            JsonNode dumpReject = expected.get("dump_reject");
            String wantOutcome = !dumpReject.isNull() ? "REJECTED"
                    : expected.get("rejected").asInt() > 0 ? "PARTIAL" : "COMPLETE";
            assertEquals(wantOutcome, dump.get("outcome"));
            assertEquals(dumpReject.isNull() ? null : dumpReject.asText(), dump.get("reason"));
            assertEquals(wantOutcome, summary.outcome().name());

            for (JsonNode e : expected.get("records")) {
                int i = e.get("record").asInt();
                JsonNode plan = manifest.get("records").get(i);
                if (!e.get("accepted").asBoolean()) {
                    assertEquals(e.get("reason").asText(), rejectByIndex.get(i), name + " record " + i);
                    continue;
                }
                Map<String, Object> row = snapByIndex.get(i);
                assertNotNull(row, name + " record " + i + " landed");
                String at = name + " record " + i + " ";
                assertEquals(manifest.get("run_id").asText(), row.get("run"), at + "run partition");
                assertEquals(manifest.get("rank").asInt(), ((Number) row.get("rank")).intValue(), at + "rank partition");
                assertEquals(plan.get("stage").asText(), row.get("stage"), at + "stage partition");
                assertEquals(plan.get("stage").asText(), row.get("stage_name"), at + "stage_name");
                assertEquals(e.get("dtype").asText(), row.get("dtype"), at + "dtype");
                assertEquals(join(e.get("stored_shape")), row.get("ss"), at + "stored_shape");
                assertEquals(join(plan.get("actual_shape")), row.get("sh"), at + "shape");
                assertEquals(e.get("truncated").asBoolean(), row.get("truncated"), at + "truncated");
                assertEquals(e.get("payload_bytes").asLong(), ((Number) row.get("payload_bytes")).longValue(), at);
                byte[] data = (byte[]) row.get("data");
                assertEquals(e.get("payload_sha256").asText(),
                        HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data)), at + "sha256");
                assertEquals(plan.get("task_id").asLong(), ((Number) row.get("task_id")).longValue(), at + "task_id");
                assertEquals(plan.get("tensor_name").asText(), row.get("tensor_name"), at + "tensor_name");
                assertEquals(plan.get("io").asText(), row.get("io"), at + "io");
                assertEquals(plan.get("index").asInt(), ((Number) row.get("port_index")).intValue(), at + "port_index");
                long worker = plan.get("worker_id").asLong();
                assertEquals(worker == 0xFFFFFFFFL ? null : worker,
                        row.get("worker_id") == null ? null : ((Number) row.get("worker_id")).longValue(), at + "worker_id");
                JsonNode owner = plan.get("owner_id");
                assertEquals(owner == null || owner.isNull() ? null : owner.asLong(),
                        row.get("owner_id") == null ? null : ((Number) row.get("owner_id")).longValue(), at + "owner_id");
                JsonNode st = e.get("stats");
                for (String k : List.of("numel", "nan_count", "inf_count", "zero_count")) {
                    assertEquals(st.get(k).asLong(), ((Number) row.get(k)).longValue(), at + k);
                }
                for (String k : List.of("min", "max", "mean", "l2_norm")) {
                    JsonNode want = st.get(k);
                    Object got = row.get(k);
                    if (want.isNull()) {
                        assertNull(got, at + k);
                    } else {
                        assertNotNull(got, at + k);
                        double w = want.asDouble();
                        double g = ((Number) got).doubleValue();
                        assertTrue(Math.abs(g - w) <= 1e-9 * Math.max(1e-300, Math.abs(w)) || g == w,
                                at + k + ": want " + w + " got " + g);
                    }
                }
            }
        }
    }

    /** The query's rows, or none when the table has no file (DuckDB fails on an empty glob). */
    static List<Map<String, Object>> rows(DuckDb db, Path root, String table, String sql) throws Exception {
        if (!Files.exists(root.resolve(table))) {
            return List.of();
        }
        try (Stream<Path> files = Files.walk(root.resolve(table))) {
            if (files.noneMatch(p -> p.toString().endsWith(".parquet") && !p.getFileName().toString().startsWith("."))) {
                return List.of();
            }
        }
        return db.rows(sql);
    }

    private static String join(JsonNode array) {
        List<String> parts = new ArrayList<>();
        array.forEach(n -> parts.add(n.asText()));
        return String.join(",", parts);
    }

}
