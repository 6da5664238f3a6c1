package io.dumpstream.compare;

import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.formats.parquet.ParquetInputFile;
import org.apache.parquet.HadoopReadOptions;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.format.DataPageHeader;
import org.apache.parquet.format.DataPageHeaderV2;
import org.apache.parquet.format.Encoding;
import org.apache.parquet.format.PageHeader;
import org.apache.parquet.format.Util;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;

import java.io.BufferedInputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * The page index of the payload column ({@code data}, required binary, PLAIN) of one snapshot file:
 * where each data page starts, its sizes and its first row, read from the footer and the page
 * headers only (no page body is read here). {@link PayloadReader} then reads single pages. Every
 * offset and size comes from the file and is checked against the column chunk and the file length
 * before use; a bad one is an {@link IOException} naming the file, the field and the value.
 */
final class PayloadColumn implements Closeable {
    static final String COLUMN = "data";
    /** Largest page header accepted (ours are a few dozen bytes; statistics could add some). */
    static final int MAX_HEADER_BYTES = 1 << 20;

    final String file;
    final FSDataInputStream in;
    final long fileLength;
    private int pages;
    private long[] firstRow = new long[8];
    private long[] bodyOffset = new long[8];
    private int[] compressedSize = new int[8];
    private int[] uncompressedSize = new int[8];
    private int[] values = new int[8];
    /** Bytes of repetition + definition levels before the values (data page v2 only, never compressed). */
    private int[] levelBytes = new int[8];
    /** Whether the values are compressed (v2 pages may say no). */
    private boolean[] compressed = new boolean[8];
    private CompressionCodecName[] codec = new CompressionCodecName[8];
    private long rows;

    private PayloadColumn(String file, FSDataInputStream in, long fileLength) {
        this.file = file;
        this.in = in;
        this.fileLength = fileLength;
    }

    /** Opens {@code file} ({@code length} bytes) and indexes the pages of its payload column; the stream stays open. */
    static PayloadColumn open(String file, FSDataInputStream in, long length, int maxPageBytes) throws IOException {
        PayloadColumn c = new PayloadColumn(file, in, length);
        try {
            c.index(maxPageBytes);
        } catch (IOException | RuntimeException e) {
            in.close();
            throw e;
        }
        return c;
    }

    private void index(int maxPageBytes) throws IOException {
        // the footer through parquet-java (it checks the footer length against the file); the
        // stream is shared, so the reader is not closed here. Options over an empty configuration:
        // the default one parses core-default.xml for every file
        ParquetFileReader footer = new ParquetFileReader(new ParquetInputFile(in, fileLength),
                HadoopReadOptions.builder(new org.apache.hadoop.conf.Configuration(false)).build());
        MessageType schema = footer.getFileMetaData().getSchema();
        if (!schema.containsPath(new String[]{COLUMN})) {
            throw new IOException(file + ": no column '" + COLUMN + "' (the snapshot payload)");
        }
        ColumnDescriptor d = schema.getColumnDescription(new String[]{COLUMN});
        if (d.getPrimitiveType().getPrimitiveTypeName() != PrimitiveType.PrimitiveTypeName.BINARY
                || d.getMaxDefinitionLevel() != 0 || d.getMaxRepetitionLevel() != 0) {
            throw new IOException(file + ": column '" + COLUMN + "' is " + d.getPrimitiveType() + " (max definition level "
                    + d.getMaxDefinitionLevel() + ", max repetition level " + d.getMaxRepetitionLevel()
                    + "), expected a required binary");
        }
        int g = 0;
        for (BlockMetaData block : footer.getRowGroups()) {
            ColumnChunkMetaData chunk = null;
            for (ColumnChunkMetaData c : block.getColumns()) {
                if (c.getPath().toDotString().equals(COLUMN)) {
                    chunk = c;
                }
            }
            if (chunk == null) {
                throw new IOException(file + ": row group " + g + " has no column chunk '" + COLUMN + "'");
            }
            indexChunk(g, block.getRowCount(), chunk, maxPageBytes);
            g++;
        }
    }

    private void indexChunk(int group, long groupRows, ColumnChunkMetaData chunk, int maxPageBytes) throws IOException {
        String where = file + ": column '" + COLUMN + "' of row group " + group;
        long start = chunk.getStartingPos();
        long size = chunk.getTotalSize();
        if (start < 4 || size < 0 || start > fileLength || size > fileLength - start) {
            throw new IOException(where + ": column chunk at byte " + start + " of total_compressed_size " + size
                    + " is not inside the " + fileLength + "-byte file");
        }
        if (groupRows < 0) {
            throw new IOException(where + ": num_rows " + groupRows);
        }
        long end = start + size;
        long pos = start;
        long seen = 0;
        while (seen < groupRows) {
            if (pos >= end) {
                throw new IOException(where + ": the pages hold " + seen + " values but the row group has num_rows " + groupRows);
            }
            in.seek(pos);
            Counting counting = new Counting(new BufferedInputStream(new Bounded(in, Math.min(end - pos, MAX_HEADER_BYTES)), 8192));
            PageHeader h;
            try {
                h = Util.readPageHeader(counting);
            } catch (IOException | RuntimeException e) {
                throw new IOException(where + ": unreadable page header at byte " + pos + ": " + e.getMessage(), e);
            }
            long body = pos + counting.count;
            int csize = h.getCompressed_page_size();
            int usize = h.getUncompressed_page_size();
            String page = where + ", page at byte " + pos;
            if (csize < 0 || csize > end - body) {
                throw new IOException(page + ": compressed_page_size " + csize + " exceeds the " + (end - body)
                        + " bytes left in the column chunk");
            }
            if (usize < 0 || usize > maxPageBytes) {
                throw new IOException(page + ": uncompressed_page_size " + usize + " is outside [0, " + maxPageBytes
                        + "] (the largest page this reader buffers)");
            }
            switch (h.getType()) {
                case DATA_PAGE -> {
                    DataPageHeader dp = h.getData_page_header();
                    if (dp == null) {
                        throw new IOException(page + ": DATA_PAGE without data_page_header");
                    }
                    checkPlain(page, dp.getEncoding());
                    add(page, seen, groupRows, body, csize, usize, dp.getNum_values(), 0, chunk.getCodec() != CompressionCodecName.UNCOMPRESSED,
                            chunk.getCodec());
                    seen += dp.getNum_values();
                }
                case DATA_PAGE_V2 -> {
                    DataPageHeaderV2 dp = h.getData_page_header_v2();
                    if (dp == null) {
                        throw new IOException(page + ": DATA_PAGE_V2 without data_page_header_v2");
                    }
                    checkPlain(page, dp.getEncoding());
                    int levels = dp.getRepetition_levels_byte_length() + dp.getDefinition_levels_byte_length();
                    if (dp.getRepetition_levels_byte_length() < 0 || dp.getDefinition_levels_byte_length() < 0 || levels > csize
                            || levels > usize) {
                        throw new IOException(page + ": level byte lengths " + dp.getRepetition_levels_byte_length() + " + "
                                + dp.getDefinition_levels_byte_length() + " exceed the page");
                    }
                    if (dp.getNum_nulls() != 0 || dp.getNum_rows() != dp.getNum_values()) {
                        throw new IOException(page + ": num_nulls " + dp.getNum_nulls() + ", num_rows " + dp.getNum_rows()
                                + " and num_values " + dp.getNum_values() + " do not fit a required, non-repeated column");
                    }
                    boolean comp = dp.isIs_compressed() && chunk.getCodec() != CompressionCodecName.UNCOMPRESSED;
                    add(page, seen, groupRows, body, csize, usize, dp.getNum_values(), levels, comp, chunk.getCodec());
                    seen += dp.getNum_values();
                }
                case DICTIONARY_PAGE -> throw new IOException(page + ": dictionary-encoded payloads are not supported"
                        + " (the snapshot writers store column '" + COLUMN + "' PLAIN)");
                default -> {
                    // index pages and unknown kinds hold no values: skipped
                }
            }
            pos = body + csize;
        }
        rows += groupRows;
    }

    private static void checkPlain(String page, Encoding e) throws IOException {
        if (e != Encoding.PLAIN) {
            throw new IOException(page + ": encoding " + e + " is not supported for the payload column (PLAIN expected)");
        }
    }

    private void add(String page, long seen, long groupRows, long body, int csize, int usize, int n, int levels, boolean comp,
                     CompressionCodecName c) throws IOException {
        if (n < 0 || n > groupRows - seen) {
            throw new IOException(page + ": num_values " + n + " exceeds the " + (groupRows - seen) + " rows left in the row group");
        }
        if (!comp && csize != usize) {
            throw new IOException(page + ": uncompressed page with compressed_page_size " + csize + " but uncompressed_page_size "
                    + usize);
        }
        if (pages == firstRow.length) {
            int m = pages * 2;
            firstRow = Arrays.copyOf(firstRow, m);
            bodyOffset = Arrays.copyOf(bodyOffset, m);
            compressedSize = Arrays.copyOf(compressedSize, m);
            uncompressedSize = Arrays.copyOf(uncompressedSize, m);
            values = Arrays.copyOf(values, m);
            levelBytes = Arrays.copyOf(levelBytes, m);
            compressed = Arrays.copyOf(compressed, m);
            codec = Arrays.copyOf(codec, m);
        }
        firstRow[pages] = rows + seen;
        bodyOffset[pages] = body;
        compressedSize[pages] = csize;
        uncompressedSize[pages] = usize;
        values[pages] = n;
        levelBytes[pages] = levels;
        compressed[pages] = comp;
        codec[pages] = c;
        pages++;
    }

    /** Rows in the file (all row groups). */
    long rows() {
        return rows;
    }

    /** The page holding {@code row}. */
    int pageOf(long row) {
        if (row < 0 || row >= rows) {
            throw new IllegalArgumentException(file + ": row " + row + " is outside the file's " + rows + " rows");
        }
        int lo = 0;
        int hi = pages - 1;
        while (lo < hi) { // last page whose first row <= row (pages without values share a first row)
            int mid = (lo + hi + 1) >>> 1;
            if (firstRow[mid] <= row) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        while (values[lo] == 0 || row >= firstRow[lo] + values[lo]) {
            lo--; // never below 0: page 0 starts at row 0 and rows are contiguous
        }
        return lo;
    }

    long firstRow(int page) {
        return firstRow[page];
    }

    long bodyOffset(int page) {
        return bodyOffset[page];
    }

    int compressedSize(int page) {
        return compressedSize[page];
    }

    int uncompressedSize(int page) {
        return uncompressedSize[page];
    }

    int values(int page) {
        return values[page];
    }

    int levelBytes(int page) {
        return levelBytes[page];
    }

    boolean compressed(int page) {
        return compressed[page];
    }

    CompressionCodecName codec(int page) {
        return codec[page];
    }

    @Override
    public void close() throws IOException {
        in.close();
    }

    /** At most {@code limit} bytes of a stream, not closing it. */
    private static final class Bounded extends InputStream {
        private final InputStream in;
        private long left;

        Bounded(InputStream in, long limit) {
            this.in = in;
            this.left = limit;
        }

        @Override
        public int read() throws IOException {
            if (left <= 0) {
                return -1;
            }
            int b = in.read();
            if (b >= 0) {
                left--;
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (left <= 0) {
                return -1;
            }
            int n = in.read(b, off, (int) Math.min(len, left));
            if (n > 0) {
                left -= n;
            }
            return n;
        }
    }

    /** Counts the bytes the header parser consumed (so the body offset is known). */
    private static final class Counting extends InputStream {
        private final InputStream in;
        long count;

        Counting(InputStream in) {
            this.in = in;
        }

        @Override
        public int read() throws IOException {
            int b = in.read();
            if (b >= 0) {
                count++;
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = in.read(b, off, len);
            if (n > 0) {
                count += n;
            }
            return n;
        }
    }
}
