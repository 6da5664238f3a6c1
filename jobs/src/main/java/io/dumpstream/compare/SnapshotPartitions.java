package io.dumpstream.compare;

import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Lists the partitions of a comparison: every directory under {@code snapshots/run=<A>} or
 * {@code snapshots/run=<B>} that holds files, with the files of both runs under the same relative
 * path grouped into one {@link Partition}. Names starting with '.' or '_' (in-progress or hidden
 * files) are skipped, as Flink's file source does. Largest partitions first, so the dynamic
 * assignment ends with small ones.
 */
public final class SnapshotPartitions {
    private SnapshotPartitions() {
    }

    /** The partitions of runs {@code runDirs} (directories that must exist). */
    public static List<Partition> list(List<Path> runDirs) throws IOException {
        Map<String, List<FileStatus>> byDir = new TreeMap<>();
        for (Path run : runDirs) {
            walk(run.getFileSystem(), run, "", byDir);
        }
        List<Partition> out = new ArrayList<>();
        for (Map.Entry<String, List<FileStatus>> e : byDir.entrySet()) {
            List<FileStatus> files = e.getValue();
            String[] paths = new String[files.size()];
            long[] lengths = new long[files.size()];
            for (int i = 0; i < paths.length; i++) {
                paths[i] = files.get(i).getPath().toString();
                lengths[i] = files.get(i).getLen();
            }
            out.add(new Partition(e.getKey(), paths, lengths));
        }
        out.sort(Comparator.comparingLong(Partition::bytes).reversed().thenComparing(p -> p.dir));
        return out;
    }

    /**
     * The partitions of {@link #list} merged by their first directory ({@code rank=<r>}): the unit of
     * {@code compare --by tensor}, whose tensors span stages. Largest first, as {@link #list}.
     */
    public static List<Partition> byRank(List<Partition> partitions) {
        Map<String, List<Partition>> byRank = new TreeMap<>();
        for (Partition p : partitions) {
            int slash = p.dir.indexOf('/');
            byRank.computeIfAbsent(slash < 0 ? p.dir : p.dir.substring(0, slash), k -> new ArrayList<>()).add(p);
        }
        List<Partition> out = new ArrayList<>();
        for (Map.Entry<String, List<Partition>> e : byRank.entrySet()) {
            List<String> paths = new ArrayList<>();
            List<Long> lengths = new ArrayList<>();
            for (Partition p : e.getValue()) {
                for (int i = 0; i < p.paths.length; i++) {
                    paths.add(p.paths[i]);
                    lengths.add(p.lengths[i]);
                }
            }
            out.add(new Partition(e.getKey(), paths.toArray(new String[0]), lengths.stream().mapToLong(Long::longValue).toArray()));
        }
        out.sort(Comparator.comparingLong(Partition::bytes).reversed().thenComparing(p -> p.dir));
        return out;
    }

    private static void walk(FileSystem fs, Path dir, String relative, Map<String, List<FileStatus>> byDir) throws IOException {
        FileStatus[] entries = fs.listStatus(dir);
        if (entries == null) {
            return;
        }
        java.util.Arrays.sort(entries, Comparator.comparing(s -> s.getPath().getName()));
        for (FileStatus s : entries) {
            String name = s.getPath().getName();
            if (name.startsWith(".") || name.startsWith("_")) {
                continue;
            }
            if (s.isDir()) {
                walk(fs, s.getPath(), relative.isEmpty() ? name : relative + "/" + name, byDir);
            } else {
                byDir.computeIfAbsent(relative, k -> new ArrayList<>()).add(s);
            }
        }
    }
}
