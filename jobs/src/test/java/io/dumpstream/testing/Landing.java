package io.dumpstream.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Where a test's job lands its tables and checkpoints: a local folder, or a bucket of the project's real S3
 * server (Ceph's RADOS Gateway, {@link CephS3}). The tables are always read back from a local folder: for S3
 * a mirror of the bucket's objects made with the AWS SDK (an independent client, not the file system that
 * wrote them), brought up to date on each {@link #tables()}, so DuckDB reads exactly what S3 holds.
 */
public final class Landing {
    private final Path localRoot;
    private final CephS3 s3;
    private final String bucket;
    private final String prefix;

    private Landing(Path localRoot, CephS3 s3, String bucket, String prefix) {
        this.localRoot = localRoot;
        this.s3 = s3;
        this.bucket = bucket;
        this.prefix = prefix;
    }

    /** Tables in {@code dir/out}, checkpoints in {@code dir/ck}. */
    public static Landing local(Path dir) {
        return new Landing(dir, null, null, null);
    }

    /**
     * Tables under {@code s3://bucket/prefix/out}, checkpoints under {@code s3://bucket/prefix/ck}, on the shared
     * test server; the mirror in {@code dir/s3-mirror}.
     */
    public static Landing s3(Path dir, String bucket, String prefix) {
        CephS3 s = CephS3.shared();
        s.createBucket(bucket);
        return new Landing(dir, s, bucket, prefix);
    }

    /** As {@link #s3(Path, String, String)} on {@code server}, which already has the bucket. */
    public static Landing s3(Path dir, CephS3 server, String bucket, String prefix) {
        return new Landing(dir, server, bucket, prefix);
    }

    public boolean onS3() {
        return s3 != null;
    }

    public CephS3 server() {
        return s3;
    }

    /** The {@code --out} argument. */
    public String out() {
        return s3 == null ? localRoot.resolve("out").toString() : "s3://" + bucket + "/" + prefix + "/out";
    }

    /** The {@code --checkpoints} argument. */
    public String checkpoints() {
        return s3 == null ? localRoot.resolve("ck").toString() : "s3://" + bucket + "/" + prefix + "/ck";
    }

    /**
     * The {@code -Dkey=value} arguments the CLI needs for this landing (none for a local one): the server's
     * {@link CephS3#flinkConfig()}.
     */
    public List<String> flinkArgs() {
        List<String> args = new ArrayList<>();
        flinkConfig().forEach((k, v) -> args.add("-D" + k + "=" + v));
        return args;
    }

    /** The same settings as a map (for a {@code Configuration}). */
    public Map<String, String> flinkConfig() {
        return s3 == null ? Map.of() : s3.flinkConfig();
    }

    /**
     * A local folder holding the committed tables: {@code dir/out} itself, or the S3 mirror brought up to date
     * (objects new since the last call downloaded, objects gone removed).
     */
    public Path tables() {
        if (s3 == null) {
            return localRoot.resolve("out");
        }
        Path mirror = localRoot.resolve("s3-mirror");
        String folder = prefix + "/out/";
        Set<Path> live = new HashSet<>();
        try {
            Files.createDirectories(mirror);
            for (String key : s3.listKeys(bucket, folder)) {
                String rel = key.substring(folder.length());
                if (rel.isEmpty() || rel.endsWith("/")) {
                    continue;
                }
                Path target = mirror.resolve(rel).normalize();
                if (!target.startsWith(mirror)) {
                    throw new IllegalStateException("s3://" + bucket + "/" + key + " would land outside " + mirror);
                }
                live.add(target);
                if (!Files.exists(target)) {
                    // objects are immutable and visible only once whole: a name seen once never changes
                    Files.createDirectories(target.getParent());
                    Path tmp = target.resolveSibling(".dl-" + target.getFileName());
                    Files.write(tmp, s3.get(bucket, key));
                    Files.move(tmp, target);
                }
            }
            try (Stream<Path> s = Files.walk(mirror)) {
                for (Path p : s.filter(Files::isRegularFile).toList()) {
                    if (!live.contains(p)) {
                        Files.delete(p);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (software.amazon.awssdk.core.exception.SdkException unreachable) {
            // the server may be down on purpose (an outage test): the mirror stays as it was
            return mirror;
        }
        return mirror;
    }

    @Override
    public String toString() {
        return s3 == null ? "local" : "s3";
    }
}
