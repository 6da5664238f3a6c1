package io.dumpstream.storage;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.UnsupportedFileSystemSchemeException;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Checks at start that a location outside the local disk can be reached, read and written with the
 * settings given, so that a wrong endpoint, wrong credentials or a missing bucket stop a command with one
 * line naming them instead of a job restarting in a loop. The line never holds a secret.
 */
public final class StorageCheck {
    /** URI schemes of object stores: an object is visible only once written whole, and renames are copies. */
    public static final Set<String> OBJECT_STORES = Set.of("s3", "s3a", "s3p", "gs", "oss", "obs", "wasb", "abfs");

    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    static final Duration CHECK_TIMEOUT = Duration.ofSeconds(60);
    static final String PROBE_PREFIX = "_dumpstream-write-check-";

    private StorageCheck() {
    }

    /** True for a location with a URI scheme other than {@code file}. */
    public static boolean remote(String location) {
        String scheme = scheme(location);
        return scheme != null && !scheme.equals("file");
    }

    /** True when {@code location} is on an object store ({@link #OBJECT_STORES}). */
    public static boolean objectStore(String location) {
        String scheme = scheme(location);
        return scheme != null && OBJECT_STORES.contains(scheme);
    }

    /**
     * Checks that {@code location} (named by {@code option} in the message, e.g. {@code --out}) can be written:
     * its file system is there, its endpoint answers, and an object written below it and deleted again.
     * Local paths are not checked here (the commands create them). Throws {@link StorageException} with one line.
     */
    public static void writable(String option, String location, Configuration conf) {
        check(option, location, conf, true);
    }

    /** As {@link #writable}, but only lists {@code location}: for inputs, which are never written. */
    public static void readable(String option, String location, Configuration conf) {
        check(option, location, conf, false);
    }

    private static void check(String option, String location, Configuration conf, boolean write) {
        if (!remote(location)) {
            return;
        }
        URI uri = URI.create(location);
        String where = option + " " + location + ": " + describe(uri, conf);
        FileSystem fs;
        try {
            fs = FileSystem.get(uri);
        } catch (UnsupportedFileSystemSchemeException e) {
            java.nio.file.Path plugins = FlinkSettings.pluginsDir();
            throw new StorageException(option + " " + location + ": no file system for scheme '" + uri.getScheme() + "'"
                    + (plugins == null
                        ? " (Flink's S3 file system is loaded from plugins/ beside dumpstream.jar, or from $"
                            + FlinkSettings.PLUGINS_ENV + "; none was found)"
                        : " in the plugins folder " + plugins));
        } catch (IOException | RuntimeException e) {
            throw new StorageException(where + ": " + cause(e, conf));
        }
        String endpoint = endpoint(conf);
        if (objectStore(location) && endpoint != null) {
            connect(where, endpoint);
        }
        ExecutorService pool = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "dumpstream-storage-check");
            t.setDaemon(true);
            return t;
        });
        try {
            Future<?> done = pool.submit(() -> {
                Path base = new Path(uri);
                if (write) {
                    Path probe = new Path(base, PROBE_PREFIX + UUID.randomUUID());
                    try (FSDataOutputStream out = fs.create(probe, FileSystem.WriteMode.NO_OVERWRITE)) {
                        out.write("dumpstream write check\n".getBytes(StandardCharsets.UTF_8));
                    }
                    fs.delete(probe, false);
                } else if (!fs.exists(base)) {
                    throw new java.io.FileNotFoundException("no such location");
                }
                return null;
            });
            done.get(CHECK_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new StorageException(where + ": no answer within " + CHECK_TIMEOUT.toSeconds() + " s");
        } catch (ExecutionException e) {
            throw new StorageException(where + ": " + cause(e.getCause(), conf));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StorageException(where + ": interrupted");
        } finally {
            pool.shutdownNow();
        }
    }

    /** "S3 endpoint E, bucket 'B'" for an object store, else the file system's authority. */
    static String describe(URI uri, Configuration conf) {
        if (OBJECT_STORES.contains(uri.getScheme().toLowerCase(Locale.ROOT))) {
            String endpoint = endpoint(conf);
            return "endpoint " + (endpoint == null ? "(the AWS default)" : endpoint) + ", bucket '" + uri.getAuthority() + "'";
        }
        return "file system " + uri.getScheme() + "://" + (uri.getAuthority() == null ? "" : uri.getAuthority());
    }

    /** The S3 endpoint the settings name (Flink's {@code s3.endpoint}, or the S3A key it maps to), or null. */
    static String endpoint(Configuration conf) {
        for (String key : List.of("s3.endpoint", "s3a.endpoint", "fs.s3a.endpoint")) {
            String v = conf.getString(key, null);
            if (v != null && !v.isBlank()) {
                return v.trim();
            }
        }
        return null;
    }

    private static void connect(String where, String endpoint) {
        URI e;
        try {
            e = URI.create(endpoint.contains("://") ? endpoint : "https://" + endpoint);
        } catch (IllegalArgumentException bad) {
            throw new StorageException(where + ": the endpoint is not a URL");
        }
        if (e.getHost() == null) {
            throw new StorageException(where + ": the endpoint names no host");
        }
        int port = e.getPort() >= 0 ? e.getPort() : "http".equalsIgnoreCase(e.getScheme()) ? 80 : 443;
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(e.getHost(), port), (int) CONNECT_TIMEOUT.toMillis());
        } catch (IOException refused) {
            throw new StorageException(where + ": cannot connect to " + e.getHost() + ":" + port + " ("
                    + (refused.getMessage() == null ? refused.getClass().getSimpleName() : refused.getMessage()) + ")");
        }
    }

    /**
     * What went wrong, in words: the S3 client's exceptions come from the plugin's class loader, so they are
     * told apart by name and error code. Any setting value that looks like a credential is masked.
     */
    static String cause(Throwable e, Configuration conf) {
        List<String> seen = new ArrayList<>();
        for (Throwable t = e; t != null && seen.size() < 20; t = t.getCause() == t ? null : t.getCause()) {
            seen.add(t.getClass().getSimpleName() + ": " + t.getMessage());
        }
        String all = String.join(" | ", seen);
        String text;
        if (all.contains("NoSuchBucket") || all.contains("UnknownStoreException") || all.contains("does not exist")
                && all.toLowerCase(Locale.ROOT).contains("bucket")) {
            text = "the bucket does not exist";
        } else if (all.contains("InvalidAccessKeyId") || all.contains("SignatureDoesNotMatch")
                || all.contains("AccessDenied") || all.contains("403") || all.contains("No AWS Credentials")
                || all.contains("NoAuthWithAWSException")) {
            text = "access denied: the credentials were refused (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, or"
                    + " -Ds3.access-key / -Ds3.secret-key)";
            if (all.contains("No AWS Credentials") || all.contains("NoAuthWithAWSException")) {
                text = "no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or -Ds3.access-key and -Ds3.secret-key";
            }
        } else if (all.contains("UnknownHost")) {
            text = "unknown host (" + root(e).getMessage() + ")";
        } else if (all.contains("FileNotFoundException") && all.contains("no such location")) {
            text = "no such location";
        } else {
            Throwable r = root(e);
            String m = r.getMessage() == null ? r.getClass().getSimpleName() : r.getMessage();
            int nl = m.indexOf('\n');
            text = nl < 0 ? m : m.substring(0, nl);
        }
        return mask(text, conf);
    }

    /** {@code text} with the value of every setting whose key names a secret or an access key replaced. */
    static String mask(String text, Configuration conf) {
        String out = text;
        List<String> values = new ArrayList<>();
        conf.toMap().forEach((k, v) -> {
            String key = k.toLowerCase(Locale.ROOT);
            if ((key.contains("secret") || key.contains("access-key") || key.contains("access.key")
                    || key.contains("password") || key.contains("token")) && v != null && v.length() >= 4) {
                values.add(v);
            }
        });
        for (String env : List.of("AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "AWS_SESSION_TOKEN")) {
            String v = System.getenv(env);
            if (v != null && v.length() >= 4) {
                values.add(v);
            }
        }
        for (String v : values) {
            out = out.replace(v, "****");
        }
        return out;
    }

    private static Throwable root(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t;
    }

    private static String scheme(String location) {
        if (location == null || !location.matches("^[a-zA-Z][a-zA-Z0-9+.-]*://.*")) {
            return null;
        }
        return location.substring(0, location.indexOf(':')).toLowerCase(Locale.ROOT);
    }
}
