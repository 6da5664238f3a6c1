package io.dumpstream.tensors;

import io.dumpstream.decode.TensorStats;
import io.dumpstream.format.Dtype;
import io.dumpstream.format.DumpBuilder;
import io.dumpstream.format.DumpBuilder.RecordSpec;
import io.dumpstream.manifest.ManifestParser;

import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Tile views of known tensors for the tensors tests, the dumps that carry them (one per run, rank and
 * launch, views in the listed order), and the expected tensors table computed here, independently of the
 * reassembler: a byte map of each tensor (which accepted view covered each byte first), gaps as maximal
 * unmapped runs, overlaps as views that meet mapped bytes, disagreements as differing elements against
 * the first view, statistics over the mapped bytes concatenated in offset order.
 */
final class TensorModel {
    /** One snapshot row to be: a task's view of a parameter. {@code payload} holds the full view; max truncates it. */
    record V(String run, int rank, long launch, String io, int param, String name, String dtype, long task, String stage,
             Long worker, long offset, byte[] payload, Long max) {
        String phase() {
            return io.equals("input") ? "before" : "after";
        }

        Dtype type() {
            return Dtype.fromName(dtype);
        }

        long full() {
            return payload.length;
        }

        long stored() {
            if (max == null || max >= payload.length) {
                return payload.length;
            }
            int es = type().elementSize();
            return max / es * es;
        }

        String key() {
            return run + "|" + rank + "|" + launch + "|" + phase() + "|" + param;
        }
    }

    record Dis(long earlier, long later, long offset, long length, long differing, long first) {
        @Override
        public String toString() {
            return earlier + ">" + later + "@" + offset + "+" + length + ":" + differing + "@" + first;
        }
    }

    /** An expected row: the scalar columns as one line, views and disagreements as lists, mean and norm apart. */
    record Row(String line, List<String> views, List<String> disagreements, Double mean, Double l2) {
    }

    final List<V> views = new ArrayList<>();

    V add(String run, int rank, long launch, String io, int param, String name, String dtype, long task, String stage, Long worker,
          long offset, byte[] payload, Long max) {
        V v = new V(run, rank, launch, io, param, name, dtype, task, stage, worker, offset, payload, max);
        views.add(v);
        return v;
    }

    /** One dump per (run, rank, launch), records in the order added; written as NAME.manifest.json + NAME.bin. */
    List<Path> writeDumps(Path dir) throws Exception {
        Map<String, DumpBuilder> dumps = new LinkedHashMap<>();
        for (V v : views) {
            DumpBuilder b = dumps.computeIfAbsent(v.run + "|" + v.rank + "|" + v.launch,
                    k -> new DumpBuilder(v.run, v.rank, v.launch).step(v.launch).chunkBytes(4096));
            RecordSpec s = new RecordSpec().taskId(v.task).taskIndex(v.task).stage(v.stage).io(v.io).index(v.param)
                    .parameterPosition(v.param).tensorName(v.name).dtype(v.dtype).sourceOffsetBytes(v.offset)
                    .actualShape(v.payload.length / v.type().elementSize()).coreType("AIV").coreId((int) (v.task % 8))
                    .ownerLabel("expert").ownerId(v.task % 2 == 0 ? v.task / 2 : null).payload(v.payload).maxPayloadBytes(v.max);
            if (v.worker != null) {
                s.workerId(v.worker);
            }
            b.add(s);
        }
        List<Path> manifests = new ArrayList<>();
        int i = 0;
        for (DumpBuilder b : dumps.values()) {
            DumpBuilder.Dump d = b.build();
            String name = "dump" + i++;
            Files.write(dir.resolve(name + ".bin"), d.buffer());
            Path m = dir.resolve(name + ".manifest.json");
            Files.write(m, ManifestParser.toJson(d.manifest()));
            manifests.add(m);
        }
        return manifests;
    }

    int dumps() {
        return (int) views.stream().map(v -> v.run + "|" + v.rank + "|" + v.launch).distinct().count();
    }

    /** Expected rows by key (run|rank|launch|phase|param), of the runs {@code runs}. */
    Map<String, Row> expected(List<String> runs) {
        Map<String, List<V>> byKey = new TreeMap<>();
        for (V v : views) {
            if (runs.contains(v.run)) {
                byKey.computeIfAbsent(v.key(), k -> new ArrayList<>()).add(v);
            }
        }
        Map<String, Row> out = new TreeMap<>();
        byKey.forEach((k, vs) -> out.put(k, row(vs)));
        return out;
    }

    private static Row row(List<V> in) {
        List<V> vs = new ArrayList<>(in);
        vs.sort(Comparator.comparingLong(V::offset).thenComparingLong(V::task));
        Dtype dtype = null;
        String name = null;
        List<V> accepted = new ArrayList<>();
        List<String> viewLines = new ArrayList<>();
        for (V v : vs) {
            String reason = null;
            if (dtype != null && v.type() != dtype) {
                reason = "DTYPE_MISMATCH";
            } else if (v.offset % v.type().elementSize() != 0) {
                reason = "MISALIGNED";
            } else {
                if (dtype == null) {
                    dtype = v.type();
                    name = v.name;
                }
                accepted.add(v);
            }
            viewLines.add(v.task + "/" + (v.worker == null ? "-" : v.worker) + "/" + v.offset + "/" + v.stored() + "/" + v.full()
                    + "/" + (reason == null ? "ok" : reason) + "/" + v.task % 8);
        }
        long extent = 0;
        for (V v : accepted) {
            extent = Math.max(extent, v.offset + v.full());
        }
        int n = (int) extent;
        int[] owner = new int[n];
        Arrays.fill(owner, -1);
        byte[] value = new byte[n];
        int es = dtype == null ? 1 : dtype.elementSize();
        long overlapCount = 0;
        long overlapBytes = 0;
        List<Dis> dis = new ArrayList<>();
        for (int a = 0; a < accepted.size(); a++) {
            V v = accepted.get(a);
            int o = (int) v.offset;
            int end = o + (int) v.stored();
            long overlapped = 0;
            // segments of bytes covered before, by the view that covered them
            int b = o;
            while (b < end) {
                if (owner[b] < 0) {
                    owner[b] = a;
                    value[b] = v.payload[b - o];
                    b++;
                    continue;
                }
                int seg = owner[b];
                int s = b;
                long differing = 0;
                long first = -1;
                while (b < end && owner[b] == seg) {
                    b++;
                }
                overlapped += b - s;
                for (int e = s; e < b; e += es) {
                    boolean differs = false;
                    for (int j = e; j < e + es; j++) {
                        differs |= value[j] != v.payload[j - o];
                    }
                    if (differs) {
                        differing++;
                        if (first < 0) {
                            first = e;
                        }
                    }
                }
                if (differing > 0) {
                    long earlier = accepted.get(seg).task;
                    Dis last = dis.isEmpty() ? null : dis.get(dis.size() - 1);
                    if (last != null && last.earlier == earlier && last.later == v.task && last.offset + last.length == s) {
                        dis.set(dis.size() - 1, new Dis(earlier, v.task, last.offset, last.length + b - s, last.differing + differing,
                                last.first));
                    } else {
                        dis.add(new Dis(earlier, v.task, s, b - s, differing, first));
                    }
                }
            }
            if (overlapped > 0) {
                overlapCount++;
                overlapBytes += overlapped;
            }
        }
        long covered = 0;
        long gaps = 0;
        long gapBytes = 0;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (int i = 0; i < n; i++) {
            if (owner[i] >= 0) {
                covered++;
                bytes.write(value[i]);
            } else {
                gapBytes++;
                if (i == 0 || owner[i - 1] >= 0) {
                    gaps++;
                }
            }
        }
        byte[] all = bytes.toByteArray();
        TensorStats.Stats st = dtype == null ? new TensorStats.Stats(0, 0, 0, 0, null, null, null, null)
                : TensorStats.compute(dtype, all, 0, all.length);
        V k = vs.get(0);
        String line = String.format(Locale.ROOT, "%s|%d|%d|%s|%d name=%s dtype=%s extent=%d/%d covered=%d/%d coverage=%s gaps=%d/%d"
                        + " overlaps=%d/%d agree=%s numel=%d nan=%d inf=%d zero=%d min=%s max=%s", k.run, k.rank, k.launch, k.phase(),
                k.param, name, dtype == null ? null : dtype.torchName(), extent, extent / es, covered, covered / es,
                extent == 0 ? 0.0 : (double) covered / extent, gaps, gapBytes, overlapCount, overlapBytes, dis.isEmpty(), st.numel(),
                st.nanCount(), st.infCount(), st.zeroCount(), st.min(), st.max());
        return new Row(line, viewLines, dis.stream().map(Dis::toString).toList(), st.mean(), st.l2Norm());
    }
}
