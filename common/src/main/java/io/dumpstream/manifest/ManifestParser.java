package io.dumpstream.manifest;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import io.dumpstream.format.DumpFormatException;
import io.dumpstream.format.ReasonCode;
import io.dumpstream.schema.DumpManifest;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.generic.IndexedRecord;
import org.apache.avro.specific.SpecificData;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Parses plan manifests (CONTRACT section 2) from JSON or from Avro single-object encoding, and
 * writes them back. Both parsers walk the {@code DumpManifest} schema themselves, so every type,
 * length and count is checked before anything is allocated from it; any defect becomes a
 * {@link DumpFormatException} with {@link ReasonCode#MANIFEST_INVALID} naming the field.
 */
public final class ManifestParser {
    /** Largest manifest accepted, in bytes (4096 records take about 2.2 MB of JSON). */
    public static final int MAX_MANIFEST_BYTES = 16 * 1024 * 1024;
    /** Largest number of dimensions in a shape. */
    public static final int MAX_SHAPE_DIMS = 64;
    /** Largest chunk list: a buffer below 2^32 bytes in chunks of at least 4 KiB. */
    public static final int MAX_CHUNKS = 1 << 20;
    private static final int MAX_STRING_BYTES = 1024 * 1024;

    static final Schema SCHEMA = DumpManifest.getClassSchema();
    private static final SpecificData SPECIFIC = new SpecificData(DumpManifest.class.getClassLoader());
    private static final byte[] AVRO_MARKER = {(byte) 0xC3, (byte) 0x01};
    private static final long FINGERPRINT = SchemaNormalization.parsingFingerprint64(SCHEMA);

    private static final JsonFactory JSON = JsonFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNestingDepth(16)
                    .maxNumberLength(40)
                    .maxStringLength(MAX_STRING_BYTES)
                    .maxDocumentLength(MAX_MANIFEST_BYTES)
                    .build())
            .build();

    static {
        AvroTrust.ensure();
    }

    private ManifestParser() {
    }

    /**
     * Parses a manifest file, refusing one larger than {@link #MAX_MANIFEST_BYTES} from its size
     * before reading any of it.
     */
    public static DumpManifest parseFile(Path file) throws DumpFormatException, IOException {
        long size = Files.size(file);
        if (size > MAX_MANIFEST_BYTES) {
            throw invalid("manifest file " + file + " is " + size + " bytes, more than the limit of "
                    + MAX_MANIFEST_BYTES);
        }
        return parse(Files.readAllBytes(file));
    }

    /** Parses either form: Avro single-object encoding when it starts with C3 01, else JSON. */
    public static DumpManifest parse(byte[] bytes) throws DumpFormatException {
        if (bytes != null && bytes.length >= 2 && bytes[0] == AVRO_MARKER[0] && bytes[1] == AVRO_MARKER[1]) {
            return parseAvro(bytes);
        }
        return parseJson(bytes);
    }

    /** Parses and validates a JSON manifest. */
    public static DumpManifest parseJson(byte[] json) throws DumpFormatException {
        checkSize(json);
        DumpManifest m;
        try (JsonParser p = JSON.createParser(json)) {
            JsonToken first = p.nextToken();
            if (first != JsonToken.START_OBJECT) {
                throw invalid("manifest: expected a JSON object, got " + describe(first, p));
            }
            m = (DumpManifest) readJson(p, SCHEMA, "");
            JsonToken trailing = p.nextToken();
            if (trailing != null) {
                throw invalid("manifest: unexpected content after the JSON object: " + describe(trailing, p));
            }
        } catch (JsonProcessingException e) {
            throw invalid("manifest: not valid JSON: " + e.getOriginalMessage() + " at "
                    + (e.getLocation() == null ? "?" : "byte " + e.getLocation().getByteOffset()));
        } catch (IOException e) {
            throw invalid("manifest: unreadable JSON: " + e.getMessage());
        }
        ManifestValidator.validate(m);
        return m;
    }

    /** Parses and validates an Avro single-object encoded manifest (C3 01, fingerprint, body). */
    public static DumpManifest parseAvro(byte[] bytes) throws DumpFormatException {
        checkSize(bytes);
        if (bytes.length < 10 || bytes[0] != AVRO_MARKER[0] || bytes[1] != AVRO_MARKER[1]) {
            throw invalid("manifest: not Avro single-object encoding (expected marker C3 01 and an 8-byte fingerprint)");
        }
        long fingerprint = ByteBuffer.wrap(bytes, 2, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        if (fingerprint != FINGERPRINT) {
            throw invalid("manifest: unknown Avro schema fingerprint " + Long.toHexString(fingerprint)
                    + ", expected DumpManifest " + Long.toHexString(FINGERPRINT));
        }
        AvroReader r = new AvroReader(ByteBuffer.wrap(bytes, 10, bytes.length - 10));
        DumpManifest m = (DumpManifest) r.read(SCHEMA, "");
        if (r.remaining() != 0) {
            throw invalid("manifest: " + r.remaining() + " trailing bytes after the Avro record");
        }
        ManifestValidator.validate(m);
        return m;
    }

    /** The manifest as UTF-8 JSON with the contract's field names. */
    public static byte[] toJson(DumpManifest m) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(4096);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            writeJson(g, SCHEMA, m);
        } catch (IOException e) {
            throw new IllegalStateException("writing JSON to memory failed", e);
        }
        return out.toByteArray();
    }

    /** The manifest as Avro single-object encoding. */
    public static byte[] toAvro(DumpManifest m) {
        try {
            ByteBuffer b = DumpManifest.getEncoder().encode(m);
            byte[] out = new byte[b.remaining()];
            b.get(out);
            return out;
        } catch (IOException e) {
            throw new IllegalStateException("encoding Avro to memory failed", e);
        }
    }

    private static void checkSize(byte[] bytes) throws DumpFormatException {
        if (bytes == null || bytes.length == 0) {
            throw invalid("manifest: empty");
        }
        if (bytes.length > MAX_MANIFEST_BYTES) {
            throw invalid("manifest: " + bytes.length + " bytes exceeds the limit of " + MAX_MANIFEST_BYTES);
        }
    }

    static DumpFormatException invalid(String message) {
        return new DumpFormatException(ReasonCode.MANIFEST_INVALID, message);
    }

    private static String field(String path, String name) {
        return path.isEmpty() ? name : path + "." + name;
    }

    private static int maxItems(String path) {
        if (path.equals("records")) {
            return io.dumpstream.format.L1Layout.MAX_RECORDS;
        }
        if (path.endsWith("actual_shape")) {
            return MAX_SHAPE_DIMS;
        }
        return MAX_CHUNKS;
    }

    private static String describe(JsonToken t, JsonParser p) throws IOException {
        if (t == null) {
            return "end of input";
        }
        switch (t) {
            case VALUE_STRING:
                String s = p.getText();
                return "string \"" + (s.length() > 40 ? s.substring(0, 40) + "..." : s) + "\"";
            case VALUE_NUMBER_INT:
            case VALUE_NUMBER_FLOAT:
                return "number " + p.getText();
            case VALUE_TRUE:
            case VALUE_FALSE:
                return "boolean " + p.getText();
            case VALUE_NULL:
                return "null";
            case START_OBJECT:
                return "an object";
            case START_ARRAY:
                return "an array";
            default:
                return t.toString();
        }
    }

    // ---- JSON, walking the schema ----

    private static Object readJson(JsonParser p, Schema s, String path) throws IOException, DumpFormatException {
        JsonToken t = p.currentToken();
        switch (s.getType()) {
            case UNION: {
                if (t == JsonToken.VALUE_NULL) {
                    return null;
                }
                return readJson(p, nonNull(s), path);
            }
            case RECORD: {
                if (t != JsonToken.START_OBJECT) {
                    throw invalid("manifest field " + path + ": expected an object, got " + describe(t, p));
                }
                IndexedRecord rec = (IndexedRecord) SPECIFIC.newRecord(null, s);
                boolean[] seen = new boolean[s.getFields().size()];
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    Schema.Field f = s.getField(name);
                    p.nextToken();
                    if (f == null) {
                        p.skipChildren();
                        continue;
                    }
                    rec.put(f.pos(), readJson(p, f.schema(), field(path, name)));
                    seen[f.pos()] = true;
                }
                fillMissing(s, rec, seen, path);
                return rec;
            }
            case ARRAY: {
                if (t != JsonToken.START_ARRAY) {
                    throw invalid("manifest field " + path + ": expected an array, got " + describe(t, p));
                }
                int cap = maxItems(path);
                List<Object> items = new ArrayList<>();
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    if (items.size() >= cap) {
                        throw invalid("manifest field " + path + ": more than " + cap + " entries");
                    }
                    items.add(readJson(p, s.getElementType(), path + "[" + items.size() + "]"));
                }
                return items;
            }
            case INT: {
                if (t != JsonToken.VALUE_NUMBER_INT || p.getNumberType() != JsonParser.NumberType.INT) {
                    throw invalid("manifest field " + path + ": expected a 32-bit integer, got " + describe(t, p));
                }
                return p.getIntValue();
            }
            case LONG: {
                if (t != JsonToken.VALUE_NUMBER_INT || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                    throw invalid("manifest field " + path + ": expected a 64-bit integer, got " + describe(t, p));
                }
                return p.getLongValue();
            }
            case STRING: {
                if (t != JsonToken.VALUE_STRING) {
                    throw invalid("manifest field " + path + ": expected a string, got " + describe(t, p));
                }
                return p.getText();
            }
            case BOOLEAN: {
                if (t != JsonToken.VALUE_TRUE && t != JsonToken.VALUE_FALSE) {
                    throw invalid("manifest field " + path + ": expected true or false, got " + describe(t, p));
                }
                return t == JsonToken.VALUE_TRUE;
            }
            default:
                throw new IllegalStateException("schema type not handled: " + s.getType());
        }
    }

    private static void fillMissing(Schema s, IndexedRecord rec, boolean[] seen, String path) throws DumpFormatException {
        for (Schema.Field f : s.getFields()) {
            if (seen[f.pos()]) {
                continue;
            }
            if (!f.hasDefaultValue()) {
                throw invalid("manifest field " + field(path, f.name()) + ": missing");
            }
            rec.put(f.pos(), SPECIFIC.getDefaultValue(f));
        }
    }

    private static Schema nonNull(Schema union) {
        for (Schema branch : union.getTypes()) {
            if (branch.getType() != Schema.Type.NULL) {
                return branch;
            }
        }
        throw new IllegalStateException("union without a non-null branch");
    }

    private static void writeJson(JsonGenerator g, Schema s, Object v) throws IOException {
        if (v == null) {
            g.writeNull();
            return;
        }
        switch (s.getType()) {
            case UNION:
                writeJson(g, nonNull(s), v);
                return;
            case RECORD: {
                IndexedRecord rec = (IndexedRecord) v;
                g.writeStartObject();
                for (Schema.Field f : s.getFields()) {
                    g.writeFieldName(f.name());
                    writeJson(g, f.schema(), rec.get(f.pos()));
                }
                g.writeEndObject();
                return;
            }
            case ARRAY: {
                g.writeStartArray();
                for (Object item : (List<?>) v) {
                    writeJson(g, s.getElementType(), item);
                }
                g.writeEndArray();
                return;
            }
            case INT:
                g.writeNumber((Integer) v);
                return;
            case LONG:
                g.writeNumber((Long) v);
                return;
            case STRING:
                g.writeString(v.toString());
                return;
            case BOOLEAN:
                g.writeBoolean((Boolean) v);
                return;
            default:
                throw new IllegalStateException("schema type not handled: " + s.getType());
        }
    }

    // ---- Avro binary, walking the schema over a bounded buffer ----

    private static final class AvroReader {
        private final ByteBuffer in;

        AvroReader(ByteBuffer in) {
            this.in = in;
        }

        int remaining() {
            return in.remaining();
        }

        Object read(Schema s, String path) throws DumpFormatException {
            switch (s.getType()) {
                case UNION: {
                    long branch = readLong(path);
                    if (branch < 0 || branch >= s.getTypes().size()) {
                        throw invalid("manifest field " + path + ": union branch " + branch + " does not exist");
                    }
                    Schema b = s.getTypes().get((int) branch);
                    return b.getType() == Schema.Type.NULL ? null : read(b, path);
                }
                case RECORD: {
                    IndexedRecord rec = (IndexedRecord) SPECIFIC.newRecord(null, s);
                    for (Schema.Field f : s.getFields()) {
                        rec.put(f.pos(), read(f.schema(), field(path, f.name())));
                    }
                    return rec;
                }
                case ARRAY: {
                    int cap = maxItems(path);
                    List<Object> items = new ArrayList<>();
                    while (true) {
                        long count = readLong(path);
                        if (count == 0) {
                            return items;
                        }
                        if (count < 0) {
                            count = -count;
                            readLong(path); // block size in bytes, not needed
                        }
                        if (count > cap - items.size() || count > in.remaining()) {
                            throw invalid("manifest field " + path + ": block of " + count
                                    + " entries exceeds the limit of " + cap + " or the " + in.remaining()
                                    + " bytes left");
                        }
                        for (long i = 0; i < count; i++) {
                            items.add(read(s.getElementType(), path + "[" + items.size() + "]"));
                        }
                    }
                }
                case INT: {
                    long v = readLong(path);
                    if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
                        throw invalid("manifest field " + path + ": " + v + " does not fit a 32-bit integer");
                    }
                    return (int) v;
                }
                case LONG:
                    return readLong(path);
                case STRING: {
                    long len = readLong(path);
                    if (len < 0 || len > in.remaining() || len > MAX_STRING_BYTES) {
                        throw invalid("manifest field " + path + ": string length " + len + " is negative or exceeds the "
                                + in.remaining() + " bytes left");
                    }
                    byte[] b = new byte[(int) len];
                    in.get(b);
                    return new String(b, StandardCharsets.UTF_8);
                }
                case BOOLEAN: {
                    need(1, path);
                    byte b = in.get();
                    if (b != 0 && b != 1) {
                        throw invalid("manifest field " + path + ": boolean byte " + b);
                    }
                    return b == 1;
                }
                default:
                    throw new IllegalStateException("schema type not handled: " + s.getType());
            }
        }

        private void need(int n, String path) throws DumpFormatException {
            if (in.remaining() < n) {
                throw invalid("manifest field " + path + ": input ends early");
            }
        }

        private long readLong(String path) throws DumpFormatException {
            long raw = 0;
            int shift = 0;
            while (true) {
                need(1, path);
                int b = in.get() & 0xFF;
                raw |= (long) (b & 0x7F) << shift;
                if ((b & 0x80) == 0) {
                    break;
                }
                shift += 7;
                if (shift > 63) {
                    throw invalid("manifest field " + path + ": malformed variable-length integer");
                }
            }
            return (raw >>> 1) ^ -(raw & 1);
        }
    }
}
