package io.dumpstream.compare;

import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.Path;

import java.io.Closeable;
import java.io.IOException;

/**
 * Payloads of the snapshot files of one {@link Partition} by (file, row), for readers outside this
 * package that visit rows in an order of their own (the {@code tensors} job reads views in offset
 * order): the payload column of each file is indexed on first use ({@link PayloadColumn}) and pages
 * are decoded by {@link PayloadReader}s, each keeping its last page. Pages up to {@link #SMALL_PAGE}
 * bytes go to a few readers reused least recently first, so rows read back and forth over a handful
 * of pages decode each page once; larger pages (a page per large payload) all go through one reader,
 * so at most one large page is held: memory is the largest page plus {@code (readers - 1)} small ones.
 * Not thread-safe.
 */
public final class PayloadPages implements Closeable {
    /** Largest page the small-page readers take (larger pages hold one or a few large payloads). */
    public static final int SMALL_PAGE = 4 << 20;

    private final Partition partition;
    private final int maxPageBytes;
    private final PayloadColumn[] columns;
    private final PayloadReader[] readers;
    /** What each reader holds: file index and page (-1 for nothing), and when it was last used. */
    private final int[] heldFile;
    private final int[] heldPage;
    private final long[] used;
    private final Operand scratch = new Operand();
    private long clock;

    /** @param readers decoded pages kept (at least 2: one for large pages, the rest for small ones) */
    public PayloadPages(Partition partition, int readers, int maxPageBytes) {
        if (readers < 2) {
            throw new IllegalArgumentException("readers must be >= 2, got " + readers);
        }
        this.partition = partition;
        this.maxPageBytes = maxPageBytes;
        this.columns = new PayloadColumn[partition.paths.length];
        this.readers = new PayloadReader[readers];
        this.heldFile = new int[readers];
        this.heldPage = new int[readers];
        this.used = new long[readers];
        for (int i = 0; i < readers; i++) {
            this.readers[i] = new PayloadReader();
            heldFile[i] = -1;
            heldPage[i] = -1;
        }
    }

    /** Rows of file {@code file} (opens and indexes it on first use). */
    public long rows(int file) throws IOException {
        return column(file).rows();
    }

    /** A copy of the payload of row {@code row} of file {@code file} of the partition. */
    public byte[] copy(int file, long row) throws IOException {
        PayloadColumn c = column(file);
        if (row < 0 || row >= c.rows()) {
            throw new IOException(c.file + ": row " + row + " is outside the file's " + c.rows() + " rows (column '"
                    + PayloadColumn.COLUMN + "')");
        }
        int page = c.pageOf(row);
        int r = pick(file, page, c.uncompressedSize(page) > SMALL_PAGE);
        scratch.row = row;
        try {
            readers[r].read(c, scratch);
        } catch (IOException | RuntimeException e) {
            heldFile[r] = -1;
            heldPage[r] = -1;
            throw e;
        }
        heldFile[r] = file;
        heldPage[r] = page;
        used[r] = ++clock;
        byte[] out = new byte[scratch.dataLength];
        System.arraycopy(scratch.data, scratch.dataOffset, out, 0, out.length);
        scratch.data = null;
        return out;
    }

    /** Bytes decompressed or copied from the files so far (a page decoded twice counts twice). */
    public long bytesDecoded() {
        long n = 0;
        for (PayloadReader r : readers) {
            n += r.bytesRead;
        }
        return n;
    }

    private int pick(int file, int page, boolean large) {
        for (int i = 0; i < readers.length; i++) {
            if (heldFile[i] == file && heldPage[i] == page) {
                return i;
            }
        }
        if (large) {
            return 0;
        }
        int lru = 1;
        for (int i = 2; i < readers.length; i++) {
            if (used[i] < used[lru]) {
                lru = i;
            }
        }
        return lru;
    }

    private PayloadColumn column(int f) throws IOException {
        if (f < 0 || f >= columns.length) {
            throw new IllegalArgumentException("file " + f + " is not one of the partition's " + columns.length);
        }
        if (columns[f] == null) {
            Path path = new Path(partition.paths[f]);
            FSDataInputStream in = path.getFileSystem().open(path);
            columns[f] = PayloadColumn.open(partition.paths[f], in, partition.lengths[f], maxPageBytes);
        }
        return columns[f];
    }

    @Override
    public void close() throws IOException {
        IOException failed = null;
        for (PayloadColumn c : columns) {
            if (c != null) {
                try {
                    c.close();
                } catch (IOException e) {
                    failed = e;
                }
            }
        }
        for (PayloadReader r : readers) {
            r.close();
        }
        if (failed != null) {
            throw failed;
        }
    }
}
