package io.dumpstream.reference;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import io.dumpstream.format.Dtype;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A safetensors file read as untrusted input: an 8-byte little-endian header length, a JSON header
 * (per tensor {@code dtype}, {@code shape}, {@code data_offsets}; optional {@code __metadata__} of
 * strings), then the raw little-endian tensor bytes. Never pickle. Only the header is held in
 * memory; each tensor's bytes are read from the channel on request.
 *
 * <p>Checks, before any allocation sized by the input: header length at most {@link
 * #MAX_HEADER_BYTES} and within the file; every tensor's dtype known; shape dimensions
 * non-negative with an element count and byte size that do not overflow; {@code begin <= end},
 * {@code end - begin == numel * element size}, {@code end} within the data section; no two
 * tensors' byte ranges overlap; no duplicate names. Errors name the file, the field and the
 * value.
 */
public final class Safetensors implements AutoCloseable {

    /** The header size limit the safetensors format itself imposes (100 MB). */
    public static final long MAX_HEADER_BYTES = 100L * 1000 * 1000;

    /** Maximum number of dimensions accepted in a shape. */
    public static final int MAX_RANK = 64;

    /** One tensor entry of the header; offsets are absolute positions in the file. */
    public record Entry(String name, Dtype dtype, long[] shape, long numel, long fileOffset, long bytes) {
        public Entry {
            shape = shape.clone();
        }

        @Override
        public long[] shape() {
            return shape.clone();
        }

        @Override
        public String toString() {
            return name + " " + dtype.torchName() + Arrays.toString(shape);
        }
    }

    private static final JsonFactory JSON = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNestingDepth(8).maxStringLength(1 << 20).maxNumberLength(40).build())
            .build();

    private final Path file;
    private final FileChannel channel;
    private final List<Entry> entries;
    private final Map<String, Entry> byName;
    private final Map<String, String> metadata;

    private Safetensors(Path file, FileChannel channel, List<Entry> entries, Map<String, String> metadata) {
        this.file = file;
        this.channel = channel;
        this.entries = Collections.unmodifiableList(entries);
        Map<String, Entry> m = new LinkedHashMap<>();
        for (Entry e : entries) {
            m.put(e.name(), e);
        }
        this.byName = Collections.unmodifiableMap(m);
        this.metadata = Collections.unmodifiableMap(metadata);
    }

    /** Opens and validates {@code file}; throws {@link SafetensorsException} naming what is wrong. */
    public static Safetensors open(Path file) throws IOException {
        FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
        try {
            return parse(file, ch);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    private static Safetensors parse(Path file, FileChannel ch) throws IOException {
        long size = ch.size();
        if (size < 8) {
            throw new SafetensorsException(file, "header length", size + "-byte file, need at least 8");
        }
        ByteBuffer lenBuf = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        readFully(ch, lenBuf, 0, file);
        long headerLen = lenBuf.getLong(0);
        if (headerLen < 2 || headerLen > MAX_HEADER_BYTES) {
            throw new SafetensorsException(file, "header length",
                    Long.toUnsignedString(headerLen) + " (must be 2.." + MAX_HEADER_BYTES + ")");
        }
        if (headerLen > size - 8) {
            throw new SafetensorsException(file, "header length",
                    headerLen + " exceeds the " + (size - 8) + " bytes after the length field");
        }
        ByteBuffer header = ByteBuffer.allocate((int) headerLen);
        readFully(ch, header, 8, file);
        long dataStart = 8 + headerLen;
        long dataBytes = size - dataStart;
        List<Entry> entries = new ArrayList<>();
        Map<String, String> metadata = new LinkedHashMap<>();
        String headerText;
        try {
            headerText = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(header.flip()).toString();
        } catch (CharacterCodingException e) {
            throw new SafetensorsException(file, "header", "not valid UTF-8");
        }
        try (JsonParser p = JSON.createParser(headerText)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new SafetensorsException(file, "header", "not a JSON object");
            }
            Set<String> seen = new HashSet<>();
            JsonToken t;
            while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                if (!seen.add(name)) {
                    throw new SafetensorsException(file, "tensor name", quote(name) + " appears twice");
                }
                if (p.nextToken() != JsonToken.START_OBJECT) {
                    throw new SafetensorsException(file, quote(name), "is not a JSON object");
                }
                if (name.equals("__metadata__")) {
                    readMetadata(file, p, metadata);
                } else {
                    entries.add(readEntry(file, p, name, dataStart, dataBytes));
                }
            }
            if (t != JsonToken.END_OBJECT || p.nextToken() != null) {
                throw new SafetensorsException(file, "header", "malformed JSON object");
            }
        } catch (com.fasterxml.jackson.core.JacksonException e) {
            throw new SafetensorsException(file, "header", "invalid JSON: " + e.getOriginalMessage());
        }
        List<Entry> sorted = new ArrayList<>(entries);
        sorted.sort(Comparator.comparingLong(Entry::fileOffset).thenComparingLong(Entry::bytes));
        for (int i = 1; i < sorted.size(); i++) {
            Entry a = sorted.get(i - 1);
            Entry b = sorted.get(i);
            if (b.bytes() > 0 && a.fileOffset() + a.bytes() > b.fileOffset()) {
                throw new SafetensorsException(file, quote(b.name()) + ".data_offsets",
                        "[" + (b.fileOffset() - dataStart) + ", " + (b.fileOffset() - dataStart + b.bytes())
                                + "] overlaps " + quote(a.name()));
            }
        }
        return new Safetensors(file, ch, entries, metadata);
    }

    private static void readMetadata(Path file, JsonParser p, Map<String, String> out) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String k = p.currentName();
            if (p.nextToken() != JsonToken.VALUE_STRING) {
                throw new SafetensorsException(file, "__metadata__." + k, "is not a string");
            }
            out.put(k, p.getText());
        }
    }

    private static Entry readEntry(Path file, JsonParser p, String name, long dataStart, long dataBytes)
            throws IOException {
        String dtypeName = null;
        long[] shape = null;
        long[] offsets = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken v = p.nextToken();
            String where = quote(name) + "." + field;
            switch (field) {
                case "dtype" -> {
                    if (v != JsonToken.VALUE_STRING) {
                        throw new SafetensorsException(file, where, "is not a string");
                    }
                    dtypeName = p.getText();
                }
                case "shape" -> shape = readLongs(file, p, v, where, MAX_RANK);
                case "data_offsets" -> offsets = readLongs(file, p, v, where, 2);
                default -> p.skipChildren();
            }
        }
        if (dtypeName == null || shape == null || offsets == null) {
            throw new SafetensorsException(file, quote(name),
                    "missing " + (dtypeName == null ? "dtype" : shape == null ? "shape" : "data_offsets"));
        }
        Dtype dtype = dtypeOf(dtypeName);
        if (dtype == null) {
            throw new SafetensorsException(file, quote(name) + ".dtype", quote(dtypeName) + " is not supported");
        }
        if (offsets.length != 2) {
            throw new SafetensorsException(file, quote(name) + ".data_offsets",
                    Arrays.toString(offsets) + " must have 2 elements");
        }
        long numel = 1;
        for (long d : shape) {
            if (d < 0) {
                throw new SafetensorsException(file, quote(name) + ".shape", Arrays.toString(shape) + " has a negative dimension");
            }
            try {
                numel = Math.multiplyExact(numel, d);
            } catch (ArithmeticException e) {
                throw new SafetensorsException(file, quote(name) + ".shape", Arrays.toString(shape) + " overflows the element count");
            }
        }
        long bytes;
        try {
            bytes = Math.multiplyExact(numel, (long) dtype.elementSize());
        } catch (ArithmeticException e) {
            throw new SafetensorsException(file, quote(name) + ".shape", Arrays.toString(shape) + " overflows the byte size");
        }
        long begin = offsets[0];
        long end = offsets[1];
        if (begin < 0 || end < begin) {
            throw new SafetensorsException(file, quote(name) + ".data_offsets",
                    Arrays.toString(offsets) + ": need 0 <= begin <= end");
        }
        if (end > dataBytes) {
            throw new SafetensorsException(file, quote(name) + ".data_offsets",
                    Arrays.toString(offsets) + " ends past the " + dataBytes + "-byte data section");
        }
        if (end - begin != bytes) {
            throw new SafetensorsException(file, quote(name) + ".data_offsets",
                    Arrays.toString(offsets) + " spans " + (end - begin) + " bytes, shape " + Arrays.toString(shape)
                            + " of " + dtype.torchName() + " needs " + bytes);
        }
        return new Entry(name, dtype, shape, numel, dataStart + begin, bytes);
    }

    private static long[] readLongs(Path file, JsonParser p, JsonToken v, String where, int max) throws IOException {
        if (v != JsonToken.START_ARRAY) {
            throw new SafetensorsException(file, where, "is not an array");
        }
        long[] out = new long[Math.min(max, 8)];
        int n = 0;
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            if (t != JsonToken.VALUE_NUMBER_INT || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                throw new SafetensorsException(file, where, "holds " + quote(p.getText()) + ", not a 64-bit integer");
            }
            if (n == max) {
                throw new SafetensorsException(file, where, "has more than " + max + " elements");
            }
            if (n == out.length) {
                out = Arrays.copyOf(out, Math.min(max, out.length * 2));
            }
            out[n++] = p.getLongValue();
        }
        return Arrays.copyOf(out, n);
    }

    /** Maps a safetensors dtype code to the contract's dtype; null when the project has none for it. */
    public static Dtype dtypeOf(String code) {
        return switch (code) {
            case "F64" -> Dtype.FLOAT64;
            case "F32" -> Dtype.FLOAT32;
            case "F16" -> Dtype.FLOAT16;
            case "BF16" -> Dtype.BFLOAT16;
            case "F8_E4M3" -> Dtype.FLOAT8_E4M3FN;
            case "F8_E5M2" -> Dtype.FLOAT8_E5M2;
            case "I64" -> Dtype.INT64;
            case "I32" -> Dtype.INT32;
            case "I16" -> Dtype.INT16;
            case "I8" -> Dtype.INT8;
            case "U8" -> Dtype.UINT8;
            case "BOOL" -> Dtype.BOOL;
            default -> null;
        };
    }

    public Path file() {
        return file;
    }

    /** Tensors in header order. */
    public List<Entry> entries() {
        return entries;
    }

    /** The tensor named {@code name}, or null. */
    public Entry entry(String name) {
        return byName.get(name);
    }

    public Map<String, String> metadata() {
        return metadata;
    }

    /**
     * Reads {@code dst.remaining()} bytes of {@code e} starting at byte {@code offset} of the
     * tensor into {@code dst}; the range must lie within the tensor.
     */
    public void read(Entry e, long offset, ByteBuffer dst) throws IOException {
        if (offset < 0 || offset > e.bytes() || dst.remaining() > e.bytes() - offset) {
            throw new IllegalArgumentException("range [" + offset + ", +" + dst.remaining() + ") outside "
                    + e.name() + " of " + e.bytes() + " bytes");
        }
        readFully(channel, dst, e.fileOffset() + offset, file);
    }

    /** The whole tensor's bytes; only for tensors below 2 GiB. */
    public byte[] readAll(Entry e) throws IOException {
        if (e.bytes() > Integer.MAX_VALUE - 16) {
            throw new SafetensorsException(file, quote(e.name()), e.bytes() + " bytes is too large to read at once");
        }
        ByteBuffer b = ByteBuffer.allocate((int) e.bytes());
        read(e, 0, b);
        return b.array();
    }

    private static void readFully(FileChannel ch, ByteBuffer dst, long pos, Path file) throws IOException {
        while (dst.hasRemaining()) {
            int n = ch.read(dst, pos);
            if (n < 0) {
                throw new SafetensorsException(file, "data", "file ends at byte " + pos);
            }
            pos += n;
        }
    }

    private static String quote(String s) {
        String t = s.length() > 80 ? s.substring(0, 80) + "..." : s;
        return "'" + t + "'";
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
