package io.dumpstream.compare;

import static io.dumpstream.compare.TensorCompareTest.run;
import static io.dumpstream.compare.TensorCompareTest.safetensors;
import static io.dumpstream.compare.TensorCompareTest.t;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.format.DumpBuilder;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.table.DuckDb;
import io.dumpstream.testing.CephS3;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The batch commands on the project's S3 server (Ceph's RADOS Gateway): {@code decode}, {@code import-reference},
 * {@code tensors} and {@code compare} read and write {@code s3://} roots, and what they land there, read back with
 * the AWS SDK, equals row for row what the same commands land on local disk. Wrong settings stop each command at
 * start with one line naming the endpoint, the bucket and the cause, and the secret is never printed.
 */
class ObjectStorageCommandsTest {
    private static final String BUCKET = "commands";

    @TempDir
    static Path tmp;

    static CephS3 s3;
    static List<String> flink;

    @BeforeAll
    static void server() {
        s3 = CephS3.shared();
        s3.createBucket(BUCKET);
        flink = new ArrayList<>();
        s3.flinkConfig().forEach((k, v) -> flink.add("-D" + k + "=" + v));
    }

    private static String[] cli(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(flink);
        return run(all.toArray(new String[0]));
    }

    private static Path mirror(String prefix) {
        Path dir = tmp.resolve("mirror-" + prefix.replace('/', '_'));
        s3.download(BUCKET, prefix, dir);
        return dir;
    }

    /** Every row of every visible Parquet file of {@code table} under {@code root}, without the wall-clock columns. */
    private static List<String> rows(Path root, String table) throws Exception {
        List<String> rows = new ArrayList<>();
        for (Map<String, Object> r : DuckDb.query("SELECT COLUMNS(c -> c NOT LIKE '%\\_at' ESCAPE '\\') FROM read_parquet("
                + DuckDb.glob(root, table + "/**/[!.]*.parquet") + ", hive_partitioning = true)")) {
            Map<String, Object> row = new LinkedHashMap<>();
            r.forEach((k, v) -> row.put(k, v instanceof byte[] b ? java.util.HexFormat.of().formatHex(b) : v));
            rows.add(row.toString());
        }
        rows.sort(null);
        assertFalse(rows.isEmpty(), "no rows in " + root + "/" + table);
        return rows;
    }

    /** Two runs of one launch (four tiles of a float32 tensor; the candidate's tile 2 off by 0.5) as spool files. */
    private static Path spool() throws Exception {
        Path spool = Files.createDirectories(tmp.resolve("spool"));
        for (String run : List.of("base", "cand")) {
            DumpBuilder b = new DumpBuilder(run, 0, 1).step(1L).chunkBytes(4096);
            for (int tile = 0; tile < 4; tile++) {
                float[] rows = new float[8];
                for (int i = 0; i < 8; i++) {
                    rows[i] = tile * 8 + i - 16.5f;
                }
                if (run.equals("cand") && tile == 2) {
                    rows[5] += 0.5f;
                }
                b.add(TensorCompareTest.view(10 + tile, tile, "mlp", 2, "out", "float32", tile * 32L, 1, 8)
                        .payload(CompareJobTest.f32(rows)));
            }
            DumpBuilder.Dump dump = b.build();
            Files.write(spool.resolve(run + ".bin"), dump.buffer());
            Files.write(spool.resolve(run + ".manifest.json"), ManifestParser.toJson(dump.manifest()));
        }
        return spool;
    }

    @Test
    void decodeTensorsAndCompareOnS3LandWhatTheyLandOnLocalDisk() throws Exception {
        Path spool = spool();
        Path local = tmp.resolve("local");
        String[] d = run("decode", "--dir", spool.toString(), "--out", local.toString());
        assertEquals("0", d[0], d[1] + d[2]);
        String[] ds = cli("decode", "--dir", spool.toString(), "--out", "s3://" + BUCKET + "/dec");
        assertEquals("0", ds[0], ds[1] + ds[2]);
        assertTrue(ds[1].contains("decoded 2 dump(s): 8 records accepted, 0 rejected, tables under s3://" + BUCKET + "/dec"),
                ds[1]);
        Path dec = mirror("dec");
        for (String table : List.of("snapshots", "dumps")) {
            assertEquals(rows(local, table), rows(dec, table), table);
        }
        assertTrue(s3.listKeys(BUCKET, "dec/").stream().noneMatch(k -> k.contains("/.") || k.contains("inprogress")),
                "only whole, visible files on S3: " + s3.listKeys(BUCKET, "dec/"));
        // the decoded examples too: every table, rejects included
        String[] e = run("decode", "--example", "--out", tmp.resolve("examples").toString());
        assertEquals("0", e[0], e[1] + e[2]);
        String[] es = cli("decode", "--example", "--out", "s3://" + BUCKET + "/examples");
        assertEquals("0", es[0], es[1] + es[2]);
        Path ex = mirror("examples");
        for (String table : List.of("snapshots", "dumps", "rejects")) {
            assertEquals(rows(tmp.resolve("examples"), table), rows(ex, table), table);
        }

        String[] tl = run("tensors", "--in", local.toString(), "--out", tmp.resolve("tensors").toString());
        assertEquals("0", tl[0], tl[1] + tl[2]);
        String[] ts = cli("tensors", "--in", "s3://" + BUCKET + "/dec", "--out", "s3://" + BUCKET + "/tensors");
        assertEquals("0", ts[0], ts[1] + ts[2]);
        assertTrue(ts[1].contains("table under s3://" + BUCKET + "/tensors"), ts[1]);
        assertEquals(rows(tmp.resolve("tensors"), "tensors"), rows(mirror("tensors"), "tensors"));

        String[] cl = run("compare", "--root", local.toString(), "--baseline", "base", "--candidate", "cand",
                "--out", tmp.resolve("cmp").toString());
        assertEquals("0", cl[0], cl[1] + cl[2]);
        String[] cs = cli("compare", "--root", "s3://" + BUCKET + "/dec", "--baseline", "base", "--candidate", "cand",
                "--out", "s3://" + BUCKET + "/cmp");
        assertEquals("0", cs[0], cs[1] + cs[2]);
        assertEquals("{PASS=3, FAIL=1, SHAPE_MISMATCH=0, DTYPE_MISMATCH=0, MISSING_BASELINE=0, MISSING_CANDIDATE=0}",
                verdicts(cs[1]));
        assertEquals(verdicts(cl[1]), verdicts(cs[1]));
        assertTrue(cs[1].contains("tables under s3://" + BUCKET + "/cmp"), cs[1]);
        Path cmp = mirror("cmp");
        for (String table : List.of("comparisons", "first_divergence")) {
            assertEquals(rows(tmp.resolve("cmp"), table), rows(cmp, table), table);
        }
    }

    /** "{PASS=.., FAIL=..}" of compare's summary line. */
    private static String verdicts(String stdout) {
        int brace = stdout.indexOf('{');
        return stdout.substring(brace, stdout.indexOf('}', brace) + 1);
    }

    @Test
    void importReferenceOnS3LandsWhatItLandsOnLocalDisk() throws Exception {
        Path st = tmp.resolve("ref.safetensors");
        ByteBuffer b = ByteBuffer.allocate(6 * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 6; i++) {
            b.putFloat(i * 0.5f - 1);
        }
        Map<String, Object[]> tensors = new LinkedHashMap<>();
        tensors.put("w", t("F32", List.of(2, 3), b.array()));
        safetensors(st, tensors);
        String[] l = run("import-reference", "--safetensors", st.toString(), "--run", "ref", "--rank", "0", "--launch", "1",
                "--out", tmp.resolve("ref").toString());
        assertEquals("0", l[0], l[1] + l[2]);
        String[] s = cli("import-reference", "--safetensors", st.toString(), "--run", "ref", "--rank", "0", "--launch", "1",
                "--out", "s3://" + BUCKET + "/ref");
        assertEquals("0", s[0], s[1] + s[2]);
        assertTrue(s[1].contains("under s3://" + BUCKET + "/ref"), s[1]);
        Path m = mirror("ref");
        for (String table : List.of("snapshots", "dumps")) {
            assertEquals(rows(tmp.resolve("ref"), table), rows(m, table), table);
        }
    }

    @Test
    void wrongSettingsStopAtStartWithOneLineNamingEndpointBucketAndCause() throws Exception {
        String endpoint = s3.endpoint();
        String[] r = cli("decode", "--example", "--out", "s3://no-such-bucket/x");
        assertEquals("1", r[0]);
        assertEquals("dumpstream decode: --out s3://no-such-bucket/x: endpoint " + endpoint
                + ", bucket 'no-such-bucket': the bucket does not exist\n", r[2]);

        List<String> wrongSecret = new ArrayList<>(flink);
        wrongSecret.add("-Ds3.secret-key=not-the-secret-" + s3.secretKey());
        List<String> args = new ArrayList<>(List.of("tensors", "--in", "s3://" + BUCKET + "/nothing", "--out",
                "s3://" + BUCKET + "/t2"));
        args.addAll(wrongSecret);
        r = run(args.toArray(new String[0]));
        assertEquals("1", r[0]);
        assertEquals("dumpstream tensors: --in s3://" + BUCKET + "/nothing: endpoint " + endpoint + ", bucket '" + BUCKET
                + "': access denied: the credentials were refused (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, or"
                + " -Ds3.access-key / -Ds3.secret-key)\n", r[2]);
        assertFalse((r[1] + r[2]).contains(s3.secretKey()), "the secret is never printed");

        int closed;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        args = new ArrayList<>(List.of("decode", "--example", "--out", "s3://" + BUCKET + "/x"));
        args.addAll(flink);
        args.add("-Ds3.endpoint=http://127.0.0.1:" + closed);
        r = run(args.toArray(new String[0]));
        assertEquals("1", r[0]);
        assertEquals("dumpstream decode: --out s3://" + BUCKET + "/x: endpoint http://127.0.0.1:" + closed + ", bucket '"
                + BUCKET + "': cannot connect to 127.0.0.1:" + closed + " (Connection refused)\n", r[2]);

        // ingest checks both locations before it starts a job: a bad one never becomes a restart loop
        long t0 = System.nanoTime();
        r = cli("ingest", "--bootstrap", "127.0.0.1:9", "--out", "s3://" + BUCKET + "/ingest", "--checkpoints",
                "s3://no-such-bucket/ck");
        assertEquals("1", r[0]);
        assertEquals("dumpstream ingest: --checkpoints s3://no-such-bucket/ck: endpoint " + endpoint
                + ", bucket 'no-such-bucket': the bucket does not exist\n", r[2]);
        assertTrue(System.nanoTime() - t0 < 60e9, "stops at once");

        r = cli("compare", "--root", "gs://b/root", "--baseline", "a", "--candidate", "b", "--out", tmp.resolve("o").toString());
        assertEquals("1", r[0]);
        assertTrue(r[2].startsWith("dumpstream compare: --root gs://b/root: no file system for scheme 'gs' in the plugins folder "),
                r[2]);
        assertEquals(1, r[2].lines().count(), r[2]);
    }
}
