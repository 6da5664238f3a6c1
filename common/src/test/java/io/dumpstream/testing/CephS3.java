package io.dumpstream.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3Configuration;
import software.amazon.awssdk.services.s3.model.BucketAlreadyOwnedByYouException;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.S3Error;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * A real S3 server for tests: Ceph's RADOS Gateway on loopback, started by {@code deploy/local/s3.sh} (one
 * node, an in-memory OSD, every file under one directory), with an AWS SDK v2 client for setting up and
 * reading back what a test wrote.
 *
 * <p>{@link #shared()} is one server per test JVM (2-5 s to start, about 145 MB empty, the OSD holding what is
 * stored in memory), stopped when the JVM
 * exits, or by the script's watchdog if the JVM dies; {@link #start(Path)} is a server of one's own.
 * The Ceph binaries come from Debian's {@code ceph-mon ceph-osd radosgw ceph-common} packages, which
 * {@code .ci/run} installs: without them a start fails and says so (there is no skipping, CI always has them).
 *
 * <p>Ceph 16 quirks a client meets here: CompleteMultipartUpload answers an empty ETag; AWS SDK v2
 * clients from 2.30 on must compute and validate checksums only {@code WHEN_REQUIRED}; an empty object
 * PUT in aws-chunked frames (the SDK's default over plain HTTP) fails with 400.
 *
 * <p>A module using this from common's test-jar declares the client too (test scope; versions from the
 * parent's AWS SDK BOM): {@code software.amazon.awssdk:s3} without {@code netty-nio-client} and
 * {@code apache-client}, and {@code software.amazon.awssdk:url-connection-client}.
 */
public final class CephS3 implements AutoCloseable {
    /** The repository root: {@code -Ddumpstream.repo}, else the nearest folder above the working directory with the script. */
    public static final Path REPO = repoRoot();
    /** The script that runs the server. */
    public static final Path SCRIPT = REPO.resolve("deploy/local/s3.sh");
    /** The region the client signs for (radosgw accepts any; Hadoop and Trino want one). */
    public static final String REGION = "us-east-1";

    private static final Duration SCRIPT_TIMEOUT = Duration.ofSeconds(180);
    private static CephS3 shared;

    private final Path dir;
    private final boolean isShared;
    private volatile Map<String, String> env;
    private S3Client client;

    private CephS3(Path dir, boolean isShared, Map<String, String> env) {
        this.dir = dir;
        this.isShared = isShared;
        this.env = env;
    }

    /**
     * Starts a server with its state in {@code dir} (or finds the one already running there) and waits until
     * the gateway answers. Stopped by {@link #close()}, or when this JVM is gone.
     */
    public static CephS3 start(Path dir) {
        Path abs = dir.toAbsolutePath().normalize();
        return new CephS3(abs, false, parse(run(abs, "start", abs.toString(), "--owner-pid",
                Long.toString(ProcessHandle.current().pid()))));
    }

    /**
     * A server someone else runs (deploy/local/hosts.sh on its S3 host): the endpoint and keys from
     * {@code dir/s3.env}; {@link #close()} leaves it running.
     */
    public static CephS3 attach(Path dir) {
        Path abs = dir.toAbsolutePath().normalize();
        try {
            return new CephS3(abs, true, parse(Files.readAllLines(abs.resolve("s3.env"))));
        } catch (IOException e) {
            throw new UncheckedIOException("no S3 server's s3.env in " + abs, e);
        }
    }

    /**
     * The server shared by every test of this JVM, started on first use in {@code target/ceph-s3} of the
     * working directory ({@code -Ddumpstream.s3.dir} to move it), a new one in each JVM (a server already running
     * there is reused), and stopped when the JVM exits, its data discarded. Its
     * {@link #close()} does nothing; tests that stop its gateway must start it again before they end.
     */
    public static synchronized CephS3 shared() {
        if (shared == null) {
            Path dir = Path.of(System.getProperty("dumpstream.s3.dir", "target/ceph-s3")).toAbsolutePath().normalize();
            if (dir.toString().length() > 80) {
                try {
                    // Ceph's admin sockets live in DIR/run and a socket path must fit in 107 bytes
                    dir = Files.createTempDirectory("ceph-s3");
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            // --fresh: a cluster a previous JVM left stopped in DIR is replaced (its ports may be taken by now)
            CephS3 s = new CephS3(dir, true, parse(run(dir, "start", dir.toString(), "--fresh", "--owner-pid",
                    Long.toString(ProcessHandle.current().pid()))));
            // nobody reads the shared server's data after this JVM: SIGKILL and remove it (logs stay)
            Runtime.getRuntime().addShutdownHook(new Thread(() -> s.stopCluster("--discard"), "ceph-s3-stop"));
            shared = s;
        }
        return shared;
    }

    /** The folder holding the server's data, logs ({@code log/}) and {@code s3.env}. */
    public Path dir() {
        return dir;
    }

    /** The gateway's URL, {@code http://127.0.0.1:PORT}. */
    public String endpoint() {
        return env.get("endpoint");
    }

    /** The S3 user's access key. */
    public String accessKey() {
        return env.get("access_key");
    }

    /** The S3 user's secret key. */
    public String secretKey() {
        return env.get("secret_key");
    }

    /**
     * Flink's S3 file system settings for this server (flink-s3-fs-hadoop/-presto keys), to pass as
     * {@code -Dkey=value} or into a {@code Configuration}. Ceph 16's gateway rejects the streaming (aws-chunked)
     * v4 payload signature that flink-s3-fs-hadoop's AWS SDK v1 sends over plain HTTP
     * ({@code XAmzContentSHA256Mismatch}) and accepts whole-request signing with the S3 signer, so that is set here.
     */
    public Map<String, String> flinkConfig() {
        Map<String, String> c = new LinkedHashMap<>();
        c.put("s3.endpoint", endpoint());
        c.put("s3.path.style.access", "true");
        c.put("s3.access-key", accessKey());
        c.put("s3.secret-key", secretKey());
        c.put("s3.signing-algorithm", "S3SignerType");
        return c;
    }

    /** The environment an AWS client in a child process reads ({@code AWS_ACCESS_KEY_ID}, ...). */
    public Map<String, String> awsEnvironment() {
        Map<String, String> e = new LinkedHashMap<>();
        e.put("AWS_ACCESS_KEY_ID", accessKey());
        e.put("AWS_SECRET_ACCESS_KEY", secretKey());
        e.put("AWS_REGION", REGION);
        e.put("AWS_ENDPOINT_URL_S3", endpoint());
        e.put("AWS_REQUEST_CHECKSUM_CALCULATION", "when_required");
        e.put("AWS_RESPONSE_CHECKSUM_VALIDATION", "when_required");
        return e;
    }

    /** An S3 client for this server (path-style, checksums only when required), shared by the calls here. */
    public synchronized S3Client client() {
        if (client == null) {
            client = S3Client.builder()
                    .endpointOverride(URI.create(endpoint()))
                    .region(Region.of(REGION))
                    .credentialsProvider(StaticCredentialsProvider.create(
                            AwsBasicCredentials.create(accessKey(), secretKey())))
                    .forcePathStyle(true)
                    // over plain HTTP the SDK signs bodies in aws-chunked frames, and Ceph 16 rejects an empty
                    // body sent that way ("signature of last chunk does not match", 400): sign whole bodies
                    .serviceConfiguration(S3Configuration.builder().chunkedEncodingEnabled(false).build())
                    .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                    .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                    .httpClientBuilder(UrlConnectionHttpClient.builder()
                            .connectionTimeout(Duration.ofSeconds(5))
                            .socketTimeout(Duration.ofSeconds(60)))
                    .build();
        }
        return client;
    }

    /** Creates {@code bucket} (3..63 lower-case letters, digits, dots, hyphens); a bucket already there is fine. */
    public void createBucket(String bucket) {
        try {
            client().createBucket(b -> b.bucket(bucket));
        } catch (BucketAlreadyOwnedByYouException e) {
            // created by an earlier test of this JVM
        }
    }

    /** Writes {@code bytes} to {@code bucket/key}. */
    public void put(String bucket, String key, byte[] bytes) {
        client().putObject(b -> b.bucket(bucket).key(key), RequestBody.fromBytes(bytes));
    }

    /** The bytes of {@code bucket/key}. */
    public byte[] get(String bucket, String key) {
        return client().getObjectAsBytes(b -> b.bucket(bucket).key(key)).asByteArray();
    }

    /** Every key of {@code bucket} that starts with {@code prefix} ("" for all), in S3's (UTF-8 binary) order. */
    public List<String> listKeys(String bucket, String prefix) {
        return listKeys(bucket, prefix, 1000);
    }

    /** {@link #listKeys(String, String)}, asking for {@code pageSize} keys a request. */
    public List<String> listKeys(String bucket, String prefix, int pageSize) {
        List<String> keys = new ArrayList<>();
        for (S3Object o : objects(bucket, prefix, pageSize)) {
            keys.add(o.key());
        }
        return keys;
    }

    private List<S3Object> objects(String bucket, String prefix) {
        return objects(bucket, prefix, 1000);
    }

    private List<S3Object> objects(String bucket, String prefix, int pageSize) {
        List<S3Object> all = new ArrayList<>();
        String token = null;
        do {
            ListObjectsV2Request.Builder req = ListObjectsV2Request.builder().bucket(bucket).prefix(prefix)
                    .maxKeys(pageSize);
            if (token != null) {
                req.continuationToken(token);
            }
            ListObjectsV2Response page = client().listObjectsV2(req.build());
            all.addAll(page.contents());
            token = Boolean.TRUE.equals(page.isTruncated()) ? page.nextContinuationToken() : null;
        } while (token != null);
        return all;
    }

    /**
     * Mirrors the "folder" {@code prefix} of {@code bucket} into {@code localDir}: the object
     * {@code prefix/a/b.parquet} becomes {@code localDir/a/b.parquet} ({@code prefix} "" mirrors the bucket).
     * Keys ending in "/" (folder markers) are skipped. Returns the files written, in key order.
     */
    public List<Path> download(String bucket, String prefix, Path localDir) {
        String folder = prefix.isEmpty() || prefix.endsWith("/") ? prefix : prefix + "/";
        Path root = localDir.toAbsolutePath().normalize();
        List<Path> written = new ArrayList<>();
        for (S3Object o : objects(bucket, folder)) {
            String rel = o.key().substring(folder.length());
            if (rel.isEmpty() || rel.endsWith("/")) {
                continue;
            }
            Path target = root.resolve(rel).normalize();
            if (!target.startsWith(root) || target.equals(root)) {
                throw new IllegalStateException("s3://" + bucket + "/" + o.key() + " would land outside " + root);
            }
            try {
                Files.createDirectories(target.getParent());
                try (InputStream in = client().getObject(b -> b.bucket(bucket).key(o.key()))) {
                    Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("downloading s3://" + bucket + "/" + o.key() + " to " + target, e);
            }
            written.add(target);
        }
        return written;
    }

    /** Deletes every object of {@code bucket} whose key starts with {@code prefix}; returns how many. */
    public int deletePrefix(String bucket, String prefix) {
        List<S3Object> objects = objects(bucket, prefix);
        for (int from = 0; from < objects.size(); from += 1000) {
            List<ObjectIdentifier> batch = new ArrayList<>();
            for (S3Object o : objects.subList(from, Math.min(from + 1000, objects.size()))) {
                batch.add(ObjectIdentifier.builder().key(o.key()).build());
            }
            DeleteObjectsResponse r = client().deleteObjects(b -> b.bucket(bucket).delete(d -> d.objects(batch).quiet(true)));
            if (!r.errors().isEmpty()) {
                S3Error e = r.errors().get(0);
                throw new IllegalStateException("deleting s3://" + bucket + "/" + e.key() + " failed: " + e.code()
                        + " " + e.message() + " (" + r.errors().size() + " keys not deleted)");
            }
        }
        return objects.size();
    }

    /** Stops radosgw only (SIGTERM, waits for it): S3 calls fail until {@link #startGateway()}; data stays. */
    public void stopGateway() {
        run(dir, "gateway-stop", dir.toString());
    }

    /** Kills radosgw (SIGKILL): an S3 outage with requests cut off mid-way; data stays. */
    public void killGateway() {
        run(dir, "gateway-stop", dir.toString(), "--kill");
    }

    /** Starts radosgw again on the same port and waits until it answers. */
    public void startGateway() {
        env = parse(run(dir, "gateway-start", dir.toString()));
    }

    /** Stops the whole server (its data is saved under {@link #dir()}); the shared server is left running. */
    @Override
    public void close() {
        if (!isShared) {
            stopCluster();
        }
    }

    private synchronized void stopCluster(String... options) {
        if (client != null) {
            client.close();
            client = null;
        }
        List<String> args = new ArrayList<>(List.of("stop", dir.toString()));
        args.addAll(List.of(options));
        run(dir, args.toArray(String[]::new));
    }

    private static Map<String, String> parse(List<String> lines) {
        Map<String, String> env = new LinkedHashMap<>();
        for (String line : lines) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                env.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        for (String k : List.of("endpoint", "access_key", "secret_key")) {
            if (!env.containsKey(k)) {
                throw new IllegalStateException("s3.sh printed no " + k + "= line (printed " + env.keySet() + ")");
            }
        }
        return env;
    }

    /** Runs {@code s3.sh ARGS}; its stdout lines, or an exception carrying the script's one-line reason. */
    private static List<String> run(Path dir, String... args) {
        List<String> cmd = new ArrayList<>(List.of("bash", SCRIPT.toString()));
        cmd.addAll(List.of(args));
        try {
            Files.createDirectories(dir);
            Path out = Files.createTempFile(dir, "s3-sh", ".out");
            Path err = Files.createTempFile(dir, "s3-sh", ".err");
            try {
                Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
                if (!p.waitFor(SCRIPT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                    p.descendants().forEach(ProcessHandle::destroyForcibly);
                    p.destroyForcibly();
                    throw new IllegalStateException("s3.sh " + args[0] + " " + dir + " still running after "
                            + SCRIPT_TIMEOUT + ": " + Files.readString(err, StandardCharsets.UTF_8).strip());
                }
                if (p.exitValue() != 0) {
                    throw new IllegalStateException("s3.sh " + args[0] + " " + dir + " exited " + p.exitValue() + ": "
                            + Files.readString(err, StandardCharsets.UTF_8).strip());
                }
                return Files.readAllLines(out, StandardCharsets.UTF_8);
            } finally {
                Files.deleteIfExists(out);
                Files.deleteIfExists(err);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("running " + SCRIPT, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running s3.sh " + args[0], e);
        }
    }

    private static Path repoRoot() {
        String prop = System.getProperty("dumpstream.repo");
        if (prop != null) {
            return Path.of(prop).toAbsolutePath().normalize();
        }
        Path start = Path.of("").toAbsolutePath();
        for (Path p = start; p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("deploy/local/s3.sh"))) {
                return p;
            }
        }
        throw new IllegalStateException("no deploy/local/s3.sh in " + start + " or above: set -Ddumpstream.repo");
    }
}
