package io.dumpstream.iceberg;

import io.dumpstream.job.IngestConfig;
import io.dumpstream.options.Cli;
import io.dumpstream.options.UsageException;

import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StatisticsFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.io.CloseableIterable;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Upkeep of the Iceberg tables of a continuously fed lake: snapshot expiry and orphan-file cleanup,
 * neither of which can delete a file a live snapshot references.
 *
 * <ul>
 *   <li>Expiry: snapshots older than {@code --expire-older-than} go, the newest {@code --retain-last}
 *       always stay (Iceberg's own expiry: it deletes only the files no remaining snapshot reaches).
 *       Without compaction the ingest job only appends, so every data file stays referenced by the
 *       current snapshot and what goes is old manifests and manifest lists; with compaction, also the
 *       parts that the expired snapshots' rewrites replaced by their merged file (those the oldest
 *       remaining snapshot's rewrite replaced go with it, at a later expiry).</li>
 *   <li>Orphans: files under a table's {@code metadata/} folder older than {@code --orphans-older-than}
 *       that no part of the current metadata names (left by a commit that failed or was cut short).
 *       Data files are never deleted: a published file the table does not reference yet may be waiting
 *       for its commit in a stopped job's state; they are counted and listed.</li>
 * </ul>
 *
 * <pre>java -cp dumpstream.jar io.dumpstream.iceberg.IcebergMaintenance --iceberg-catalog URL --out DIR [...]</pre>
 */
public final class IcebergMaintenance {
    public static final String USAGE = String.join("\n",
            "usage: java -cp dumpstream.jar io.dumpstream.iceberg.IcebergMaintenance --iceberg-catalog URL --out DIR [options]",
            "  --iceberg-catalog URL      the ingest job's catalog (user and password from $" + IcebergSettings.USER_ENV
                    + ", $" + IcebergSettings.PASSWORD_ENV + ")",
            "  --iceberg-namespace NS     (default " + IcebergSettings.DEFAULT_NAMESPACE + ")",
            "  --iceberg-warehouse URI    (default <out>/" + IcebergSettings.DEFAULT_WAREHOUSE_DIR + ")",
            "  --out DIR                  the ingest job's output root (its data files are reported, never deleted)",
            "  --expire-older-than D      expire snapshots older than this (default 7d)",
            "  --retain-last N            ... but always keep the newest N (default 100, at least 1)",
            "  --orphans-older-than D     delete unreferenced metadata files older than this (default 3d, at least 1h)",
            "  --dry-run                  say what would go, delete nothing");

    private IcebergMaintenance() {
    }

    /** What one table's upkeep did. */
    public record Result(String table, int snapshotsBefore, int snapshotsAfter, List<String> orphansDeleted,
                         List<String> dataNotInTable, List<String> referencedMissing) {
    }

    /** The command line, declared once (picocli). */
    static final class Options {
        @picocli.CommandLine.Option(names = "--iceberg-catalog", paramLabel = "URL", required = true,
                description = "the JDBC catalog (jdbc:postgresql://HOST:PORT/DB)")
        String catalog;
        @picocli.CommandLine.Option(names = "--iceberg-namespace", paramLabel = "NS", description = "default "
                + IcebergSettings.DEFAULT_NAMESPACE)
        String namespace = IcebergSettings.DEFAULT_NAMESPACE;
        @picocli.CommandLine.Option(names = "--iceberg-warehouse", paramLabel = "URI", description = "default <out>/"
                + IcebergSettings.DEFAULT_WAREHOUSE_DIR)
        String warehouse;
        @picocli.CommandLine.Option(names = "--out", paramLabel = "URI", required = true, description = "the tables' root")
        String out;
        @picocli.CommandLine.Option(names = "--expire-older-than", paramLabel = "D", description = "default 7d")
        Duration expire = Duration.ofDays(7);
        @picocli.CommandLine.Option(names = "--retain-last", paramLabel = "N", description = "default 100")
        int retain = 100;
        @picocli.CommandLine.Option(names = "--orphans-older-than", paramLabel = "D", description = "default 3d")
        Duration orphans = Duration.ofDays(3);
        @picocli.CommandLine.Option(names = "--dry-run", description = "report, delete nothing")
        boolean dryRun;
    }

    public static void main(String[] argv) {
        try {
            Options o = Cli.parse(new Options(), argv);
            String out = o.out;
            IcebergSettings s = new IcebergSettings(o.catalog, IcebergTables.location(o.warehouse != null ? o.warehouse
                    : IcebergTables.location(out) + "/" + IcebergSettings.DEFAULT_WAREHOUSE_DIR), o.namespace).validate();
            Duration expire = o.expire;
            int retain = o.retain;
            Duration orphans = o.orphans;
            if (retain < 1) {
                throw new UsageException("--retain-last must be >= 1, got " + retain);
            }
            if (orphans.compareTo(Duration.ofHours(1)) < 0) {
                throw new UsageException("--orphans-older-than must be at least 1h (a commit under way writes its"
                        + " files before it names them), got " + orphans);
            }
            Catalog catalog = IcebergTables.open(s, System.getenv());
            try {
                run(catalog, s, out, expire, retain, orphans, o.dryRun, System.out);
            } finally {
                IcebergTables.close(catalog);
            }
        } catch (UsageException e) {
            System.err.println("error: " + e.getMessage());
            System.err.println(USAGE);
            System.exit(2);
        }
    }

    /** Expiry and orphan cleanup of the three tables; prints one line per table to {@code report}. */
    public static List<Result> run(Catalog catalog, IcebergSettings s, String out, Duration expireOlderThan,
                                   int retainLast, Duration orphansOlderThan, boolean dryRun, PrintStream report) {
        List<Result> results = new ArrayList<>();
        long now = System.currentTimeMillis();
        String root = IcebergTables.location(out);
        for (String name : IcebergTables.TABLES) {
            Table t = catalog.loadTable(IcebergTables.id(s, name));
            int before = count(t.snapshots());
            if (!dryRun && t.currentSnapshot() != null) {
                t.expireSnapshots().expireOlderThan(now - expireOlderThan.toMillis()).retainLast(retainLast)
                        .cleanExpiredFiles(true).commit();
                t.refresh();
            }
            int after = count(t.snapshots());
            List<String> orphans = orphanMetadata(t, now - orphansOlderThan.toMillis());
            if (!dryRun) {
                orphans.forEach(t.io()::deleteFile);
            }
            Set<String> live = dataFiles(t);
            List<String> notInTable = new ArrayList<>();
            for (String f : visibleDataFiles(root + "/" + name)) {
                if (!live.remove(key(f))) {
                    notInTable.add(f);
                }
            }
            List<String> missing = new ArrayList<>(live);
            missing.removeIf(f -> exists(f));
            Result r = new Result(name, before, after, orphans, notInTable, missing);
            results.add(r);
            report.printf("%s: %d snapshots, %s %d; %s %d orphan metadata files; %d data files published but not in"
                            + " the table (kept); %d referenced files missing%n", name, before,
                    dryRun ? "would expire" : "expired",
                    dryRun ? expirable(t, now - expireOlderThan.toMillis(), retainLast) : before - after,
                    dryRun ? "would delete" : "deleted", orphans.size(), notInTable.size(), missing.size());
        }
        return results;
    }

    private static int expirable(Table t, long olderThan, int retainLast) {
        List<Snapshot> all = new ArrayList<>();
        t.snapshots().forEach(all::add);
        all.sort(java.util.Comparator.comparingLong(Snapshot::timestampMillis).reversed());
        int n = 0;
        for (int i = retainLast; i < all.size(); i++) {
            if (all.get(i).timestampMillis() < olderThan) {
                n++;
            }
        }
        return n;
    }

    private static int count(Iterable<?> it) {
        int n = 0;
        for (Object o : it) {
            n++;
        }
        return n;
    }

    /**
     * Files under the table's {@code metadata/} folder last modified before {@code before} that the current
     * metadata does not name: not the metadata file or one of its logged predecessors, nor any live
     * snapshot's manifest list or manifests, nor a statistics file.
     */
    static List<String> orphanMetadata(Table t, long before) {
        TableMetadata m = ((HasTableOperations) t).operations().current();
        Set<String> named = new HashSet<>();
        named.add(key(m.metadataFileLocation()));
        m.previousFiles().forEach(e -> named.add(key(e.file())));
        for (Snapshot snap : m.snapshots()) {
            named.add(key(snap.manifestListLocation()));
            for (ManifestFile mf : snap.allManifests(t.io())) {
                named.add(key(mf.path()));
            }
        }
        for (StatisticsFile st : m.statisticsFiles()) {
            named.add(key(st.path()));
        }
        m.partitionStatisticsFiles().forEach(p -> named.add(key(p.path())));
        List<String> orphans = new ArrayList<>();
        for (FileStatus f : listFiles(new Path(m.location() + "/metadata"))) {
            String loc = f.getPath().toString();
            if (f.getModificationTime() < before && !named.contains(key(loc))) {
                orphans.add(loc);
            }
        }
        orphans.sort(null);
        return orphans;
    }

    /** Keys of the data files of the current snapshot. */
    private static Set<String> dataFiles(Table t) {
        Set<String> out = new HashSet<>();
        if (t.currentSnapshot() == null) {
            return out;
        }
        try (CloseableIterable<FileScanTask> tasks = t.newScan().planFiles()) {
            for (FileScanTask task : tasks) {
                out.add(key(task.file().location()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /** Published (not hidden) Parquet files under a table's folder of the Hive layout. */
    private static List<String> visibleDataFiles(String dir) {
        List<String> out = new ArrayList<>();
        for (FileStatus f : listFiles(new Path(dir))) {
            String n = f.getPath().getName();
            if (n.endsWith(".parquet") && !n.startsWith(".") && !n.startsWith("_")) {
                out.add(f.getPath().toString());
            }
        }
        out.sort(null);
        return out;
    }

    private static List<FileStatus> listFiles(Path dir) {
        List<FileStatus> out = new ArrayList<>();
        try {
            FileSystem fs = dir.getFileSystem();
            if (!fs.exists(dir)) {
                return out;
            }
            List<Path> todo = new ArrayList<>(List.of(dir));
            while (!todo.isEmpty()) {
                FileStatus[] entries = fs.listStatus(todo.remove(todo.size() - 1));
                if (entries == null) {
                    continue;
                }
                for (FileStatus e : entries) {
                    if (e.isDir()) {
                        todo.add(e.getPath());
                    } else {
                        out.add(e);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir, e);
        }
        return out;
    }

    private static boolean exists(String key) {
        try {
            Path p = new Path(URI.create(key));
            return p.getFileSystem().exists(p);
        } catch (IOException e) {
            return false;
        }
    }

    /** One form of a location whatever way it is written (file:/a, file:///a, /a): scheme, authority, path. */
    public static String key(String location) {
        URI u = new Path(location).toUri();
        String scheme = u.getScheme() == null ? "file" : u.getScheme();
        String authority = u.getRawAuthority() == null ? "" : u.getRawAuthority();
        return scheme + "://" + authority + u.getRawPath();
    }
}
