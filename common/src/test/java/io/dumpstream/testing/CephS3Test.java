package io.dumpstream.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

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
        for (int i = 0; i < 250; i++) {
            want.add(String.format("list/run=r/part-%04d.parquet", i));
        }
        want.add("list/run=s/ünï 🚀.parquet");
        for (String k : want) {
            s3.put(BUCKET, k, k.getBytes(StandardCharsets.UTF_8));
        }
        s3.put(BUCKET, "listing/not-under-the-prefix", new byte[] {1});
        // in S3's order (UTF-8 binary, which is this order too), across pages
        assertEquals(want, s3.listKeys(BUCKET, "list/"));
        assertEquals(want, s3.listKeys(BUCKET, "list/", 100));
        assertEquals(want, s3.listKeys(BUCKET, "list/", 7));
        assertEquals(List.of("list/run=s/ünï 🚀.parquet"), s3.listKeys(BUCKET, "list/run=s"));
        assertEquals(List.of(), s3.listKeys(BUCKET, "nothing-here/"));

        assertEquals(251, s3.deletePrefix(BUCKET, "list/"));
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
}
