package io.dumpstream.compare;

import io.dumpstream.format.Dtype;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import java.io.IOException;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The tolerances of every pair: the {@code torch.testing.assert_close} defaults per dtype,
 * overridden by the rules of a tolerance file, the first matching rule winning.
 *
 * <p>A rule is (stage pattern, dtype, rtol, atol). The stage pattern is a glob over the full stage
 * name ({@code *} any run of characters, {@code ?} one character, anything else literal); dtype is
 * a torch name or {@code *}. CSV: a header {@code stage,dtype,rtol,atol} then one rule a line
 * ({@code #} starts a comment line). YAML: a list of maps with those keys, or a map with a
 * {@code tolerances:} list.
 */
public final class Tolerances implements Serializable {
    private static final long serialVersionUID = 1L;
    public static final String DEFAULT_SOURCE = "default";

    /** One rule of a tolerance file. */
    public record Rule(String stagePattern, String dtype, double rtol, double atol, String source) implements Serializable {
        boolean matches(String stage, Dtype d) {
            return ("*".equals(dtype) || Dtype.fromName(dtype) == d) && glob(stagePattern).matcher(stage).matches();
        }
    }

    private static final Map<Dtype, Tolerance> DEFAULTS = new EnumMap<>(Dtype.class);

    static {
        put(Dtype.FLOAT64, 1e-7, 1e-7);
        put(Dtype.FLOAT32, 1.3e-6, 1e-5);
        put(Dtype.FLOAT16, 1e-3, 1e-5);
        put(Dtype.BFLOAT16, 1.6e-2, 1e-5);
        put(Dtype.FLOAT8_E4M3FN, 0.125, 0x1p-6);
        put(Dtype.FLOAT8_E5M2, 0.25, 0x1p-14);
        for (Dtype d : List.of(Dtype.INT64, Dtype.INT32, Dtype.INT16, Dtype.INT8, Dtype.UINT8, Dtype.BOOL)) {
            put(d, 0, 0);
        }
    }

    private static void put(Dtype d, double rtol, double atol) {
        DEFAULTS.put(d, new Tolerance(rtol, atol, DEFAULT_SOURCE));
    }

    private final List<Rule> rules;

    private Tolerances(List<Rule> rules) {
        this.rules = List.copyOf(rules);
    }

    /** Only the defaults. */
    public static Tolerances defaults() {
        return new Tolerances(List.of());
    }

    public static Tolerances of(List<Rule> rules) {
        return new Tolerances(rules);
    }

    public List<Rule> rules() {
        return rules;
    }

    /** The default of a dtype (torch.testing's). */
    public static Tolerance defaultFor(Dtype d) {
        return DEFAULTS.get(d);
    }

    /** The tolerance of a pair of {@code dtype} tensors in {@code stage}. */
    public Tolerance lookup(String stage, Dtype dtype) {
        for (Rule r : rules) {
            if (r.matches(stage, dtype)) {
                return new Tolerance(r.rtol, r.atol, r.source);
            }
        }
        return DEFAULTS.get(dtype);
    }

    /** Reads a tolerance file: YAML when it ends in .yaml or .yml, else CSV. */
    public static Tolerances load(Path file) throws IOException {
        String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
        String text = Files.readString(file, StandardCharsets.UTF_8);
        return name.endsWith(".yaml") || name.endsWith(".yml") ? parseYaml(file.toString(), text) : parseCsv(file.toString(), text);
    }

    /** Parses CSV rules; {@code origin} names the file in errors and sources. */
    public static Tolerances parseCsv(String origin, String text) {
        List<Rule> rules = new ArrayList<>();
        String[] lines = text.split("\r?\n", -1);
        boolean header = false;
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].strip();
            String at = origin + ":" + (i + 1);
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] cells = line.split(",", -1);
            if (!header) {
                List<String> names = new ArrayList<>();
                for (String c : cells) {
                    names.add(c.strip().toLowerCase(Locale.ROOT));
                }
                if (!names.equals(List.of("stage", "dtype", "rtol", "atol"))) {
                    throw new IllegalArgumentException(at + ": the header must be 'stage,dtype,rtol,atol', got '" + line + "'");
                }
                header = true;
                continue;
            }
            if (cells.length != 4) {
                throw new IllegalArgumentException(at + ": a rule has 4 cells (stage,dtype,rtol,atol), got " + cells.length
                        + " in '" + line + "'");
            }
            rules.add(rule(at, cells[0].strip(), cells[1].strip(), cells[2].strip(), cells[3].strip()));
        }
        if (!header) {
            throw new IllegalArgumentException(origin + ": empty tolerance file (expected the header 'stage,dtype,rtol,atol')");
        }
        return new Tolerances(rules);
    }

    /** Parses YAML rules. */
    public static Tolerances parseYaml(String origin, String text) {
        JsonNode root;
        try {
            root = new ObjectMapper(new YAMLFactory()).readTree(text);
        } catch (IOException e) {
            throw new IllegalArgumentException(origin + ": not YAML: " + e.getMessage().lines().findFirst().orElse(""));
        }
        if (root != null && root.isObject() && root.has("tolerances")) {
            root = root.get("tolerances");
        }
        if (root == null || !root.isArray()) {
            throw new IllegalArgumentException(origin + ": expected a list of rules (stage, dtype, rtol, atol) or a map with a"
                    + " 'tolerances' list");
        }
        List<Rule> rules = new ArrayList<>();
        for (int i = 0; i < root.size(); i++) {
            JsonNode n = root.get(i);
            String at = origin + ":rule " + (i + 1);
            if (!n.isObject()) {
                throw new IllegalArgumentException(at + ": a rule is a map with stage, dtype, rtol and atol, got " + n);
            }
            for (var it = n.fieldNames(); it.hasNext(); ) {
                String f = it.next();
                if (!List.of("stage", "dtype", "rtol", "atol").contains(f)) {
                    throw new IllegalArgumentException(at + ": unknown field '" + f + "'");
                }
            }
            rules.add(rule(at, text(n, "stage", at), text(n, "dtype", at), text(n, "rtol", at), text(n, "atol", at)));
        }
        return new Tolerances(rules);
    }

    private static String text(JsonNode n, String field, String at) {
        JsonNode v = n.get(field);
        if (v == null || v.isNull()) {
            throw new IllegalArgumentException(at + ": field '" + field + "' is missing");
        }
        return v.asText();
    }

    private static Rule rule(String at, String stage, String dtype, String rtol, String atol) {
        if (stage.isEmpty()) {
            throw new IllegalArgumentException(at + ": field 'stage' is empty (use * for every stage)");
        }
        if (!"*".equals(dtype) && Dtype.fromName(dtype) == null) {
            throw new IllegalArgumentException(at + ": field 'dtype' has unknown dtype '" + dtype + "'");
        }
        double r = number(at, "rtol", rtol);
        double a = number(at, "atol", atol);
        return new Rule(stage, "*".equals(dtype) ? "*" : Dtype.fromName(dtype).torchName(), r, a, at);
    }

    private static double number(String at, String field, String value) {
        double v;
        try {
            v = Double.parseDouble(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(at + ": field '" + field + "' must be a number, got '" + value + "'");
        }
        if (!(v >= 0) || Double.isInfinite(v)) {
            throw new IllegalArgumentException(at + ": field '" + field + "' must be finite and >= 0, got '" + value + "'");
        }
        return v;
    }

    /** A glob with {@code *} and {@code ?} as a regular expression; every other character literal. */
    static Pattern glob(String pattern) {
        StringBuilder re = new StringBuilder();
        StringBuilder literal = new StringBuilder();
        for (char c : pattern.toCharArray()) {
            if (c == '*' || c == '?') {
                if (!literal.isEmpty()) {
                    re.append(Pattern.quote(literal.toString()));
                    literal.setLength(0);
                }
                re.append(c == '*' ? ".*" : ".");
            } else {
                literal.append(c);
            }
        }
        if (!literal.isEmpty()) {
            re.append(Pattern.quote(literal.toString()));
        }
        return Pattern.compile(re.toString(), Pattern.DOTALL);
    }
}
