package io.dumpstream.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedPart;

/**
 * The shared Ceph S3 server answers as S3 does, byte for byte. It fails (never skips) where the Ceph
 * binaries are missing: {@code .ci/run} installs them, and a test that silently passes without its
 * server would hide that every S3 test stopped running.
 */
class CephS3Test {
    private static final String BUCKET = "cephs3-test";
    private static CephS3 s3;

    @BeforeAll
    static void server() {
        s3 = CephS3.shared();
        s3.createBucket(BUCKET);
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void anObjectReadsBackByteForByte() {
        byte[] data = random(123_457, 1);
        s3.put(BUCKET, "put/one.bin", data);
        assertArrayEquals(data, s3.get(BUCKET, "put/one.bin"));
        s3.put(BUCKET, "put/empty", new byte[0]);
        assertArrayEquals(new byte[0], s3.get(BUCKET, "put/empty"));
    }

    @Test
    void aMultipartUploadOfTwoFiveMebibytePartsCompletes() {
        S3Client c = s3.client();
        byte[] one = random(5 << 20, 2);
        byte[] two = random(5 << 20, 3);
        String key = "multipart/ten-mib.bin";
        String id = c.createMultipartUpload(b -> b.bucket(BUCKET).key(key)).uploadId();
        List<CompletedPart> parts = new ArrayList<>();
        byte[][] bodies = {one, two};
        for (int i = 0; i < bodies.length; i++) {
            int number = i + 1;
            String etag = c.uploadPart(b -> b.bucket(BUCKET).key(key).uploadId(id).partNumber(number),
                    RequestBody.fromBytes(bodies[number - 1])).eTag();
            parts.add(CompletedPart.builder().partNumber(number).eTag(etag).build());
        }
        // Ceph 16 answers an empty ETag here: the object's content is what counts
        c.completeMultipartUpload(b -> b.bucket(BUCKET).key(key).uploadId(id).multipartUpload(m -> m.parts(parts)));
        byte[] both = new byte[one.length + two.length];
        System.arraycopy(one, 0, both, 0, one.length);
        System.arraycopy(two, 0, both, one.length, two.length);
        assertArrayEquals(both, s3.get(BUCKET, key));
        assertEquals(both.length, c.headObject(b -> b.bucket(BUCKET).key(key)).contentLength());
    }

    @Test
    void listKeysPagesThroughEveryKeyUnderThePrefix() {
        List<String> want = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            want.add(String.format("list/run=r/part-%04d.parquet", i));
        }
        want.add("list/run=s/ünï 🚀.parquet");
        for (String k : want) {
            s3.put(BUCKET, k, k.getBytes(StandardCharsets.UTF_8));
        }
        s3.put(BUCKET, "listing/not-under-the-prefix", new byte[] {1});
        // in S3's order (UTF-8 binary, which is this order too), across pages
        assertEquals(want, s3.listKeys(BUCKET, "list/"));
        assertEquals(want, s3.listKeys(BUCKET, "list/", 25));
        assertEquals(want, s3.listKeys(BUCKET, "list/", 7));
        assertEquals(List.of("list/run=s/ünï 🚀.parquet"), s3.listKeys(BUCKET, "list/run=s"));
        assertEquals(List.of(), s3.listKeys(BUCKET, "nothing-here/"));

        assertEquals(101, s3.deletePrefix(BUCKET, "list/"));
        assertEquals(List.of(), s3.listKeys(BUCKET, "list/"));
        assertEquals(List.of("listing/not-under-the-prefix"), s3.listKeys(BUCKET, "listing"));
    }

    @Test
    void downloadMirrorsAPrefixToDisk(@TempDir Path tmp) throws Exception {
        byte[] a = random(70_001, 4);
        byte[] b = random(1, 5);
        s3.put(BUCKET, "mirror/out/run=a/rank=0/part-0.parquet", a);
        s3.put(BUCKET, "mirror/out/run=b/part-1.parquet", b);
        s3.put(BUCKET, "mirror/out-sibling/x", new byte[] {9});
        List<Path> files = s3.download(BUCKET, "mirror/out", tmp);
        assertEquals(List.of(tmp.resolve("run=a/rank=0/part-0.parquet"), tmp.resolve("run=b/part-1.parquet")), files);
        assertArrayEquals(a, Files.readAllBytes(files.get(0)));
        assertArrayEquals(b, Files.readAllBytes(files.get(1)));
        try (var all = Files.walk(tmp)) {
            assertEquals(2, all.filter(Files::isRegularFile).count());
        }
    }

    @Test
    void dataSurvivesAGatewayRestartAndCallsFailWhileItIsDown() {
        byte[] data = random(1_000_003, 6);
        s3.put(BUCKET, "outage/kept.bin", data);
        s3.stopGateway();
        try {
            // nothing listens: the client gives up after its retries with a connection failure, not an S3 answer
            assertThrows(SdkClientException.class, () -> s3.get(BUCKET, "outage/kept.bin"));
        } finally {
            s3.startGateway();
        }
        assertArrayEquals(data, s3.get(BUCKET, "outage/kept.bin"));
        assertEquals(List.of("outage/kept.bin"), s3.listKeys(BUCKET, "outage/"));
    }

    @Test
    void aServerOfItsOwnKeepsItsDataPortAndKeysAcrossAFullStop(@TempDir Path tmp) {
        Path dir = tmp.resolve("own");
        byte[] data = random(300_001, 7);
        CephS3 own = CephS3.start(dir);
        try {
            own.createBucket("own-bucket");
            own.put("own-bucket", "kept/after-stop.bin", data);
            // a second start finds it running: the same server
            CephS3 again = CephS3.start(dir);
            assertEquals(own.endpoint(), again.endpoint());
            assertEquals(own.secretKey(), again.secretKey());
            assertArrayEquals(data, again.get("own-bucket", "kept/after-stop.bin"));
        } finally {
            own.close();
        }
        // mon, OSD and gateway are stopped (the OSD saved its memory store under dir): nothing answers
        assertThrows(SdkClientException.class, () -> own.get("own-bucket", "kept/after-stop.bin"));
        try (CephS3 back = CephS3.start(dir)) {
            assertEquals(own.endpoint(), back.endpoint());
            assertEquals(own.accessKey(), back.accessKey());
            assertArrayEquals(data, back.get("own-bucket", "kept/after-stop.bin"));
            assertEquals(List.of("kept/after-stop.bin"), back.listKeys("own-bucket", ""));
        }
    }

    /** Runs {@code s3.sh ARGS} with {@code env} added; its exit code and stderr. */
    private static String[] script(Path tmp, Map<String, String> env, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("bash", CephS3.SCRIPT.toString()));
        cmd.addAll(List.of(args));
        Path err = tmp.resolve("stderr");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(tmp.resolve("stdout").toFile())
                .redirectError(err.toFile());
        pb.environment().putAll(env);
        Process p = pb.start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "s3.sh " + args[0] + " did not end");
        return new String[] {Integer.toString(p.exitValue()), Files.readString(err)};
    }

    @Test
    void aTakenGatewayPortStopsTheStartWithOneLineNamingIt(@TempDir Path tmp) throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            String[] r = script(tmp, Map.of("S3_PORT", Integer.toString(port)), "start",
                    tmp.resolve("s3").toString());
            assertEquals("1", r[0]);
            assertEquals("s3.sh: radosgw: port 127.0.0.1:" + port + " (S3_PORT) is taken by another process\n", r[1]);
        }
    }

    @Test
    void missingCephBinariesAreNamedWithWhereTheyComeFrom(@TempDir Path tmp) throws Exception {
        // a PATH with what the script needs before its check, and no Ceph
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        for (String tool : List.of("bash", "dirname", "basename", "mkdir", "flock")) {
            Path real = Stream.of("/usr/bin", "/bin").map(d -> Path.of(d, tool))
                    .filter(Files::isExecutable).findFirst().orElseThrow();
            Files.createSymbolicLink(bin.resolve(tool), real);
        }
        String[] r = script(tmp, Map.of("PATH", bin.toString()), "start", tmp.resolve("s3").toString());
        assertEquals("1", r[0]);
        assertEquals("s3.sh: missing ceph ceph-authtool monmaptool ceph-mon ceph-osd radosgw radosgw-admin"
                + " (apt-get install -y --no-install-recommends ceph-mon ceph-osd radosgw ceph-common; .ci/run does)\n",
                r[1]);
    }
}
