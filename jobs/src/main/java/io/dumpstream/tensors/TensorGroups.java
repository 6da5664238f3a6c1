package io.dumpstream.tensors;

import io.dumpstream.compare.Partition;
import io.dumpstream.compare.SnapshotPartitions;
import io.dumpstream.table.HivePartition;

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
 * The units of work of the tensors job: one {@link Partition} per (run, rank), holding the snapshot
 * files of every stage of that rank ({@code snapshots/run=<run>/rank=<r>/stage=*}, listed by
 * {@link SnapshotPartitions}). A tensor's key (run, rank, launch, phase, parameter position) has no
 * stage: the views of one parameter can come from tasks of several stages, so the rank is the
 * smallest directory that holds every view of a tensor. {@link Partition#dir} is
 * {@code run=<run>/rank=<r>} (relative to {@code snapshots}). Largest groups first.
 */
public final class TensorGroups {
    private TensorGroups() {
    }

    /** The groups of the runs {@code runDirs} ({@code snapshots/run=<run>} directories that exist). */
    public static List<Partition> list(List<Path> runDirs) throws IOException {
        List<Partition> out = new ArrayList<>();
        for (Path run : runDirs) {
            Map<String, List<Partition>> byRank = new TreeMap<>();
            for (Partition p : SnapshotPartitions.list(List.of(run))) {
                int slash = p.dir.indexOf('/');
                String rank = slash < 0 ? p.dir : p.dir.substring(0, slash);
                byRank.computeIfAbsent(rank, k -> new ArrayList<>()).add(p);
            }
            for (Map.Entry<String, List<Partition>> e : byRank.entrySet()) {
                rankOf(e.getKey(), run); // checked here, on the client, before the job starts
                List<Partition> stages = e.getValue();
                stages.sort(Comparator.comparing(p -> p.dir));
                int n = 0;
                for (Partition p : stages) {
                    n += p.paths.length;
                }
                String[] paths = new String[n];
                long[] lengths = new long[n];
                int i = 0;
                for (Partition p : stages) {
                    System.arraycopy(p.paths, 0, paths, i, p.paths.length);
                    System.arraycopy(p.lengths, 0, lengths, i, p.lengths.length);
                    i += p.paths.length;
                }
                out.add(new Partition(run.getName() + "/" + e.getKey(), paths, lengths));
            }
        }
        out.sort(Comparator.comparingLong(Partition::bytes).reversed().thenComparing(p -> p.dir));
        return out;
    }

    /** The rank of a group's directory {@code run=<run>/rank=<r>}. */
    public static int rank(Partition group) {
        return rankOf(group.dir.substring(group.dir.lastIndexOf('/') + 1), new Path(group.dir));
    }

    private static int rankOf(String segment, Path where) {
        String prefix = HivePartition.RANK + "=";
        if (segment.startsWith(prefix)) {
            try {
                return Integer.parseInt(segment.substring(prefix.length()));
            } catch (NumberFormatException e) {
                // below
            }
        }
        throw new IllegalArgumentException(where + ": directory '" + segment + "' is not rank=<integer> (the snapshots"
                + " table is snapshots/run=<run>/rank=<rank>/stage=<stage>/*.parquet)");
    }

    /** {@code snapshots/run=*} directories under {@code snapshots}, in name order. */
    public static List<Path> runDirs(Path snapshots) throws IOException {
        FileSystem fs = snapshots.getFileSystem();
        List<Path> out = new ArrayList<>();
        FileStatus[] entries = fs.listStatus(snapshots);
        if (entries != null) {
            for (FileStatus s : entries) {
                String name = s.getPath().getName();
                if (s.isDir() && name.startsWith(HivePartition.RUN + "=")) {
                    out.add(s.getPath());
                }
            }
        }
        out.sort(Comparator.comparing(Path::getName));
        return out;
    }
}
