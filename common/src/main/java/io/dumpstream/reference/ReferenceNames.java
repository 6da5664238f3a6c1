package io.dumpstream.reference;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;

import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code --names} map of {@code import-reference}: how each safetensors key lands in the snapshots
 * table, so that {@code compare --by tensor} finds the candidate tensor it is the reference of.
 *
 * <pre>
 * {"model.layers.12.mlp.out": {"tensor_name": "mlp_out", "stage": "mlp", "phase": "after", "parameter_position": 3},
 *  "attn_scores": "scores"}
 * </pre>
 *
 * A value is an object with any of {@code tensor_name}, {@code stage}, {@code phase} ({@code before} or
 * {@code after}), {@code parameter_position} (an int >= 0), or a string (just the tensor name). A key
 * the file lacks, an unknown field or a value of the wrong type is an error naming the map, the key,
 * the field and the value. Keys of the file not in the map keep the defaults ({@link #DEFAULT}).
 */
public final class ReferenceNames {
    /** Larger maps are refused before they are read. */
    public static final long MAX_BYTES = 16L << 20;
    /** Where a key lands: its tensor name, stage, phase and parameter position (-1: not given, match by name). */
    public record Names(String tensorName, String stage, String phase, int parameterPosition) {
    }

    /** Stage and phase of keys the map does not name: {@code reference}, {@code after} (an eager result). */
    public static final Names DEFAULT = new Names(null, "reference", "after", -1);

    private static final JsonFactory JSON = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(4).maxStringLength(1 << 16)
                    .maxNumberLength(20).build())
            .build();

    private final Map<String, Names> byKey;

    private ReferenceNames(Map<String, Names> byKey) {
        this.byKey = Collections.unmodifiableMap(byKey);
    }

    /** No map: every key with the defaults, its tensor name the key itself. */
    public static ReferenceNames none() {
        return new ReferenceNames(new LinkedHashMap<>());
    }

    /** The names of safetensors key {@code key}. */
    public Names of(String key) {
        Names n = byKey.get(key);
        if (n == null) {
            return new Names(key, DEFAULT.stage(), DEFAULT.phase(), DEFAULT.parameterPosition());
        }
        return new Names(n.tensorName() == null ? key : n.tensorName(), n.stage(), n.phase(), n.parameterPosition());
    }

    public Map<String, Names> entries() {
        return byKey;
    }

    /** Reads and checks a map file. */
    public static ReferenceNames load(Path file) throws IOException {
        long size = Files.size(file);
        if (size > MAX_BYTES) {
            throw new IOException(file + ": " + size + " bytes, more than the " + MAX_BYTES + " a names map may have");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(Files.readAllBytes(file)))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new IOException(file + ": not valid UTF-8");
        }
        return parse(file.toString(), text);
    }

    /** Parses map text; {@code origin} names it in errors. */
    public static ReferenceNames parse(String origin, String text) throws IOException {
        Map<String, Names> out = new LinkedHashMap<>();
        try (JsonParser p = JSON.createParser(text)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IOException(origin + ": a names map is a JSON object {\"safetensors key\": {...}}");
            }
            JsonToken t;
            while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                String key = p.currentName();
                if (out.containsKey(key)) {
                    throw new IOException(origin + ": key '" + key + "' appears twice");
                }
                JsonToken v = p.nextToken();
                if (v == JsonToken.VALUE_STRING) {
                    out.put(key, new Names(nonEmpty(origin, key, "tensor_name", p.getText()), DEFAULT.stage(), DEFAULT.phase(),
                            DEFAULT.parameterPosition()));
                    continue;
                }
                if (v != JsonToken.START_OBJECT) {
                    throw new IOException(origin + ": key '" + key + "': the value must be an object or a tensor name string, got "
                            + v);
                }
                String name = null;
                String stage = DEFAULT.stage();
                String phase = DEFAULT.phase();
                int position = DEFAULT.parameterPosition();
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String field = p.currentName();
                    JsonToken fv = p.nextToken();
                    switch (field) {
                        case "tensor_name" -> name = nonEmpty(origin, key, field, string(origin, key, field, p, fv));
                        case "stage" -> stage = nonEmpty(origin, key, field, string(origin, key, field, p, fv));
                        case "phase" -> {
                            phase = string(origin, key, field, p, fv);
                            if (!phase.equals("before") && !phase.equals("after")) {
                                throw new IOException(origin + ": key '" + key + "': field 'phase' must be before or after, got '"
                                        + phase + "'");
                            }
                        }
                        case "parameter_position" -> {
                            if (fv != JsonToken.VALUE_NUMBER_INT || p.getNumberType() != JsonParser.NumberType.INT
                                    || p.getIntValue() < 0) {
                                throw new IOException(origin + ": key '" + key + "': field 'parameter_position' must be an int >= 0,"
                                        + " got " + p.getText());
                            }
                            position = p.getIntValue();
                        }
                        default -> throw new IOException(origin + ": key '" + key + "': unknown field '" + field
                                + "' (tensor_name, stage, phase, parameter_position)");
                    }
                }
                out.put(key, new Names(name, stage, phase, position));
            }
            if (t != JsonToken.END_OBJECT || p.nextToken() != null) {
                throw new IOException(origin + ": malformed JSON object");
            }
        } catch (com.fasterxml.jackson.core.JacksonException e) {
            throw new IOException(origin + ": invalid JSON: " + e.getOriginalMessage());
        }
        return new ReferenceNames(out);
    }

    private static String string(String origin, String key, String field, JsonParser p, JsonToken v) throws IOException {
        if (v != JsonToken.VALUE_STRING) {
            throw new IOException(origin + ": key '" + key + "': field '" + field + "' must be a string, got " + p.getText());
        }
        return p.getText();
    }

    private static String nonEmpty(String origin, String key, String field, String value) throws IOException {
        if (value.isEmpty()) {
            throw new IOException(origin + ": key '" + key + "': field '" + field + "' is empty");
        }
        return value;
    }
}
