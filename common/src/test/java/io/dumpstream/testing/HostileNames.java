package io.dumpstream.testing;

import io.dumpstream.format.DumpBuilder;
import io.dumpstream.manifest.ManifestParser;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.function.Predicate;

/**
 * Run ids and stage names that a partition path must survive: traversal, separators, escapes, control
 * characters, Unicode beyond the Basic Multilingual Plane, and names longer than one path segment.
 */
public final class HostileNames {
    public static final List<String> NAMES = List.of("..", "../../etc", "/abs/path", "a\\b", "%2F", "a%2Fb", "a/b=c",
            "tab\there", "nul\u0000byte", "bell\u0007\u001f", "new\nline", "ünïcødé-层-🚀", "=", " lead and trail ",
            "x".repeat(300), "é".repeat(200), "🚀".repeat(100), "%".repeat(120));

    /** The run id of the dumps that carry a hostile name as their stage. */
    public static final String STAGES_RUN = "names-run";
    /** The stage of the dumps that carry a hostile name as their run id. */
    public static final String PLAIN_STAGE = "layer0.attn";
    /** The rank of every dump written here. */
    public static final int RANK = 5;

    /** True for a name with a character outside the Basic Multilingual Plane (a UTF-16 surrogate pair). */
    public static final Predicate<String> SUPPLEMENTARY = s -> s.codePoints().anyMatch(Character::isSupplementaryCodePoint);

    private HostileNames() {
    }

    /**
     * {@code HostileNames DIR all|bmp}: writes the pairs of every name, or of those without supplementary
     * characters, into DIR (the reader tests run this with the shaded jar, away from Spark's classpath).
     */
    public static void main(String[] args) throws IOException {
        List<String> names = args[1].equals("all") ? NAMES : NAMES.stream().filter(SUPPLEMENTARY.negate()).toList();
        System.out.println(writePairs(Path.of(args[0]), names) + " dumps written to " + args[0]);
    }

    /**
     * Writes {@code h<i>.manifest.json} + {@code h<i>.bin} into {@code dir}: for each name, one dump with
     * it as the run id (stage {@link #PLAIN_STAGE}) and one with it as the stage (run {@link #STAGES_RUN}),
     * each of two uint8 records of 64 bytes whose values follow the dump's index (so sums differ by dump).
     * Returns the number of dumps written.
     */
    public static int writePairs(Path dir, List<String> names) throws IOException {
        Files.createDirectories(dir);
        int i = 0;
        for (String name : names) {
            for (boolean asRun : new boolean[] {true, false}) {
                DumpBuilder b = new DumpBuilder(asRun ? name : STAGES_RUN, RANK, i);
                for (int r = 0; r < 2; r++) {
                    byte[] payload = new byte[64];
                    Arrays.fill(payload, (byte) (i + r));
                    b.add(new DumpBuilder.RecordSpec().taskId(r).taskIndex(r).stage(asRun ? PLAIN_STAGE : name)
                            .tensorName("t" + r).dtype("uint8").actualShape(payload.length).payload(payload));
                }
                DumpBuilder.Dump d = b.build();
                Files.write(dir.resolve("h" + i + ".manifest.json"), ManifestParser.toJson(d.manifest()));
                Files.write(dir.resolve("h" + i + ".bin"), d.buffer());
                i++;
            }
        }
        return i;
    }
}
