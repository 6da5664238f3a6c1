package io.dumpstream.table;

import org.apache.avro.generic.GenericRecord;
import org.apache.parquet.avro.AvroParquetReader;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.io.LocalInputFile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * What has landed under an output root, read back from the committed Parquet files (visible
 * {@code *.parquet} files only, parts and merged parts: in-progress and pending files are hidden, so this is what a
 * query engine sees). Row counts come from the file footers; only the small dumps and rejects
 * tables are read row by row.
 */
public final class LandedTables {
    private final Path root;

    public LandedTables(Path root) {
        this.root = root;
    }

    /** Committed files of {@code table}, in path order. */
    public List<Path> files(String table) throws IOException {
        Path dir = root.resolve(table);
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(p -> {
                String n = p.getFileName().toString();
                // parts and merged parts (compacted-part-*); hidden ones (.part-*: in progress, or waiting
                // for their merge) and _-prefixed ones are not the table's
                return n.endsWith(".parquet") && !n.startsWith(".") && !n.startsWith("_") && Files.isRegularFile(p);
            }).sorted().toList();
        }
    }

    /** Rows of {@code table} in committed files, from the footers. */
    public long rowCount(String table) throws IOException {
        long n = 0;
        for (Path f : files(table)) {
            n += footerRows(f);
        }
        return n;
    }

    /** Rows per partition directory of {@code table}, keyed by the unescaped partition values joined with " / ". */
    public Map<String, Long> rowsPerPartition(String table) throws IOException {
        Map<String, Long> counts = new TreeMap<>();
        Path dir = root.resolve(table);
        for (Path f : files(table)) {
            List<String> values = new ArrayList<>();
            for (Path seg : dir.relativize(f.getParent())) {
                String s = seg.toString();
                int eq = s.indexOf('=');
                values.add(eq < 0 ? s : HivePartition.unescape(s.substring(eq + 1)));
            }
            counts.merge(String.join(" / ", values), footerRows(f), Long::sum);
        }
        return counts;
    }

    /** Counts of the values of one column of {@code table} (for the small tables: every row is read). */
    public Map<String, Long> countBy(String table, String... fields) throws IOException {
        Map<String, Long> counts = new TreeMap<>();
        for (Path f : files(table)) {
            try (ParquetReader<GenericRecord> r = AvroParquetReader.<GenericRecord>builder(new LocalInputFile(f))
                    .build()) {
                for (GenericRecord rec = r.read(); rec != null; rec = r.read()) {
                    List<String> key = new ArrayList<>(fields.length);
                    for (String field : fields) {
                        key.add(String.valueOf(rec.get(field)));
                    }
                    counts.merge(String.join(" / ", key), 1L, Long::sum);
                }
            }
        }
        return counts;
    }

    private static long footerRows(Path f) {
        try (ParquetFileReader r = ParquetFileReader.open(new LocalInputFile(f))) {
            return r.getRecordCount();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the footer of " + f + ": " + e.getMessage(), e);
        }
    }
}
