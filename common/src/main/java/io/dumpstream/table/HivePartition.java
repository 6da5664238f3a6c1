package io.dumpstream.table;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.BitSet;
import java.util.HexFormat;
import java.util.Objects;

/**
 * Hive-style partition directories ({@code key=value}) for the three output tables (CONTRACT §6).
 *
 * <p>Values are escaped exactly like Hive's {@code FileUtils.escapePathName} (Linux flavour):
 * every char below 0x20, 0x7F and {@code " # % ' * / : = ? \ { [ ] ^} become {@code %XX}
 * (uppercase hex); space and non-ASCII text stay as they are (non-ASCII lands as raw UTF-8).
 * Hive, Spark, Trino and DuckDB all undo this on read. Because {@code /} and {@code \} are always
 * escaped and a segment always starts with {@code key=}, a value can never form {@code ..}, an
 * absolute path or a second segment.
 *
 * <p>A segment longer than {@value #MAX_SEGMENT_BYTES} UTF-8 bytes (the usual file-name limit)
 * is shortened: the escaped value is cut on a token boundary (never inside a {@code %XX} or a
 * multi-byte character) and {@code ~} plus the first 16 hex chars of the SHA-256 of the full
 * value is appended, so distinct long values stay distinct. Readers then see the shortened value;
 * the tables keep the full value in a column of their own ({@code run_id}, {@code stage_name}).
 */
public final class HivePartition {

    /** Hive's name for a null or empty partition value. */
    public static final String DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__";
    /** Longest segment {@code key=value}, in UTF-8 bytes (NAME_MAX on common file systems). */
    public static final int MAX_SEGMENT_BYTES = 255;
    /** Hex chars of the SHA-256 digest appended to a shortened value. */
    public static final int HASH_HEX_CHARS = 16;

    public static final String SNAPSHOTS = "snapshots";
    public static final String DUMPS = "dumps";
    public static final String REJECTS = "rejects";
    public static final String RUN = "run";
    public static final String RANK = "rank";
    public static final String STAGE = "stage";

    private static final char HASH_SEPARATOR = '~';
    private static final BitSet ESCAPED = new BitSet(128);

    static {
        ESCAPED.set(0, 0x20);
        ESCAPED.set(0x7F);
        for (char c : "\"#%'*/:=?\\{[]^".toCharArray()) {
            ESCAPED.set(c);
        }
    }

    private HivePartition() {}

    /** Whether Hive percent-encodes {@code c} in a partition value. */
    public static boolean needsEscaping(char c) {
        return c < 128 && ESCAPED.get(c);
    }

    /** Hive's escapePathName: null or empty becomes {@link #DEFAULT_PARTITION}. */
    public static String escape(String value) {
        if (value == null || value.isEmpty()) {
            return DEFAULT_PARTITION;
        }
        StringBuilder out = new StringBuilder(value.length() + 8);
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (needsEscaping(c)) {
                appendPercent(out, c);
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /** Hive's unescapePathName: every {@code %XX} with two hex digits becomes that char; anything else stays. */
    public static String unescape(String escaped) {
        StringBuilder out = new StringBuilder(escaped.length());
        for (int i = 0; i < escaped.length(); i++) {
            char c = escaped.charAt(i);
            if (c == '%' && i + 2 < escaped.length()) {
                int hi = hexDigit(escaped.charAt(i + 1));
                int lo = hexDigit(escaped.charAt(i + 2));
                if (hi >= 0 && lo >= 0) {
                    out.append((char) (hi << 4 | lo));
                    i += 2;
                    continue;
                }
            }
            out.append(c);
        }
        return out.toString();
    }

    /**
     * One directory name {@code key=escaped(value)}, at most {@value #MAX_SEGMENT_BYTES} UTF-8
     * bytes, shortened with a digest suffix when needed.
     */
    public static String segment(String key, String value) {
        Objects.requireNonNull(key, "key");
        if (key.isEmpty() || !escape(key).equals(key) || !isAscii(key)) {
            throw new IllegalArgumentException("partition key must be plain ASCII without escapable chars: " + key);
        }
        String escaped = escapeForPath(value);
        String segment = key + '=' + escaped;
        if (utf8Length(segment) <= MAX_SEGMENT_BYTES && isWellFormed(value)) {
            return segment;
        }
        int budget = MAX_SEGMENT_BYTES - key.length() - 1 - 1 - HASH_HEX_CHARS;
        if (budget < 1) {
            throw new IllegalArgumentException("partition key too long: " + key);
        }
        return key + '=' + cut(escaped, budget) + HASH_SEPARATOR + digest(value);
    }

    /** The value a Hive-aware reader sees for {@code value} (the shortened one when it had to be cut). */
    public static String readBackValue(String key, String value) {
        String escaped = segment(key, value).substring(key.length() + 1);
        return DEFAULT_PARTITION.equals(escaped) ? null : unescape(escaped);
    }

    /** {@code snapshots/run=<run>/rank=<rank>/stage=<stage>}, '/'-separated, relative. */
    public static String snapshots(String runId, Integer rank, String stage) {
        return SNAPSHOTS + '/' + segment(RUN, runId) + '/' + segment(RANK, rankText(rank)) + '/' + segment(STAGE, stage);
    }

    /** {@code dumps/run=<run>/rank=<rank>}, '/'-separated, relative. */
    public static String dumps(String runId, Integer rank) {
        return DUMPS + '/' + segment(RUN, runId) + '/' + segment(RANK, rankText(rank));
    }

    /** {@code rejects/run=<run>/rank=<rank>}, '/'-separated, relative. */
    public static String rejects(String runId, Integer rank) {
        return REJECTS + '/' + segment(RUN, runId) + '/' + segment(RANK, rankText(rank));
    }

    /** {@link #snapshots} as a relative {@link Path}. */
    public static Path snapshotsPath(String runId, Integer rank, String stage) {
        return toPath(snapshots(runId, rank, stage));
    }

    /** {@link #dumps} as a relative {@link Path}. */
    public static Path dumpsPath(String runId, Integer rank) {
        return toPath(dumps(runId, rank));
    }

    /** {@link #rejects} as a relative {@link Path}. */
    public static Path rejectsPath(String runId, Integer rank) {
        return toPath(rejects(runId, rank));
    }

    /**
     * Resolves a relative '/'-separated path under {@code root} and checks that the normalized
     * result is still strictly inside the normalized root.
     *
     * @throws IllegalArgumentException when it would leave the root
     */
    public static Path resolveUnder(Path root, String relative) {
        Path base = root.toAbsolutePath().normalize();
        Path resolved = base.resolve(toPath(relative)).normalize();
        if (!resolved.startsWith(base) || resolved.equals(base)) {
            throw new IllegalArgumentException("path escapes the output root: root=" + base + " relative=" + relative);
        }
        return resolved;
    }

    private static Path toPath(String relative) {
        if (relative.startsWith("/")) {
            throw new IllegalArgumentException("not a relative path: " + relative);
        }
        return Path.of("", relative.split("/"));
    }

    private static String rankText(Integer rank) {
        return rank == null ? null : Integer.toString(rank);
    }

    /**
     * Like {@link #escape}, but a lone UTF-16 surrogate (which has no UTF-8 form and no file name)
     * is replaced by U+FFFD; {@link #segment} then adds the digest so the value stays distinct.
     */
    private static String escapeForPath(String value) {
        if (value == null || value.isEmpty() || isWellFormed(value)) {
            return escape(value);
        }
        StringBuilder repaired = new StringBuilder(value.length());
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
                repaired.append(c).append(value.charAt(++i));
            } else if (Character.isSurrogate(c)) {
                repaired.append('\uFFFD');
            } else {
                repaired.append(c);
            }
        }
        return escape(repaired.toString());
    }

    /** Longest prefix of {@code escaped} within {@code budget} UTF-8 bytes, ending on a token boundary. */
    private static String cut(String escaped, int budget) {
        int bytes = 0;
        int i = 0;
        while (i < escaped.length()) {
            char c = escaped.charAt(i);
            int chars;
            int size;
            if (c == '%') {
                chars = 3; // escape() only emits complete %XX tokens
                size = 3;
            } else if (Character.isHighSurrogate(c)) {
                chars = 2;
                size = 4;
            } else {
                chars = 1;
                size = c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
            }
            if (bytes + size > budget) {
                break;
            }
            bytes += size;
            i += chars;
        }
        return escaped.substring(0, i);
    }

    private static String digest(String value) {
        byte[] input = isWellFormed(value)
                ? value.getBytes(StandardCharsets.UTF_8)
                : value.getBytes(StandardCharsets.UTF_16BE);
        try {
            byte[] sha = MessageDigest.getInstance("SHA-256").digest(input);
            return HexFormat.of().formatHex(sha).substring(0, HASH_HEX_CHARS);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }

    private static boolean isWellFormed(String value) {
        if (value == null) {
            return true;
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    private static boolean isAscii(String s) {
        return s.chars().allMatch(c -> c < 0x80);
    }

    private static int utf8Length(String s) {
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n += 1;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    private static int hexDigit(char c) {
        return c < 0x80 ? Character.digit(c, 16) : -1;
    }

    private static void appendPercent(StringBuilder out, char c) {
        out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4 & 0xF, 16)))
                .append(Character.toUpperCase(Character.forDigit(c & 0xF, 16)));
    }
}
