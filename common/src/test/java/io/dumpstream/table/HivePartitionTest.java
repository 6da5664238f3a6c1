package io.dumpstream.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class HivePartitionTest {

    private static final Path ROOT = Path.of("/data/out/root");

    static Stream<String> hostile() {
        return Stream.concat(
                TableRows.HOSTILE.stream(),
                Stream.of("", "ü".repeat(300), "%".repeat(300), "a\uD800b", "\uDC00", "😀".repeat(100)));
    }

    @Test
    void escapesExactlyHivesCharacters() {
        StringBuilder escaped = new StringBuilder();
        for (char c = 0; c < 128; c++) {
            boolean hive = c < 0x20 || c == 0x7F || "\"#%'*/:=?\\{[]^".indexOf(c) >= 0;
            assertEquals(hive, HivePartition.needsEscaping(c), "char " + (int) c);
            String one = HivePartition.escape("a" + c);
            assertEquals(hive ? String.format("a%%%02X", (int) c) : "a" + c, one, "char " + (int) c);
            escaped.append(one, 1, one.length());
        }
        assertEquals(
                "%00%01%02%03%04%05%06%07%08%09%0A%0B%0C%0D%0E%0F%10%11%12%13%14%15%16%17%18%19%1A%1B%1C%1D%1E%1F"
                        + " !%22%23$%25&%27()%2A+,-.%2F0123456789%3A;<%3D>%3F@ABCDEFGHIJKLMNOPQRSTUVWXYZ%5B%5C%5D%5E_`"
                        + "abcdefghijklmnopqrstuvwxyz%7B|}~%7F",
                escaped.toString());
    }

    @Test
    void leavesSpaceAndNonAsciiAlone() {
        assertEquals("a b", HivePartition.escape("a b"));
        assertEquals("ünïcødé", HivePartition.escape("ünïcødé"));
        assertEquals("run=ünïcødé", HivePartition.segment("run", "ünïcødé"));
    }

    @Test
    void nullAndEmptyAreTheDefaultPartition() {
        assertEquals("__HIVE_DEFAULT_PARTITION__", HivePartition.escape(null));
        assertEquals("__HIVE_DEFAULT_PARTITION__", HivePartition.escape(""));
        assertEquals("dumps/run=__HIVE_DEFAULT_PARTITION__/rank=__HIVE_DEFAULT_PARTITION__",
                HivePartition.dumps(null, null));
        assertNull(HivePartition.readBackValue("rank", null));
    }

    @Test
    void unescapeIsHives() {
        assertEquals("a/b=c", HivePartition.unescape("a%2Fb%3Dc"));
        assertEquals("a/b", HivePartition.unescape("a%2fb"));
        assertEquals("%zz%4", HivePartition.unescape("%zz%4"));
        assertEquals("%", HivePartition.unescape("%"));
        assertEquals("%2F..%2F", HivePartition.unescape(HivePartition.escape("%2F..%2F")));
    }

    @Test
    void pathsHaveTheContractLayout() {
        assertEquals("snapshots/run=r%2F1/rank=3/stage=s%3D1", HivePartition.snapshots("r/1", 3, "s=1"));
        assertEquals("dumps/run=r/rank=0", HivePartition.dumps("r", 0));
        assertEquals("rejects/run=r/rank=__HIVE_DEFAULT_PARTITION__", HivePartition.rejects("r", null));
        assertEquals(Path.of("snapshots", "run=r", "rank=3", "stage=s"), HivePartition.snapshotsPath("r", 3, "s"));
        assertEquals(Path.of("dumps", "run=r", "rank=1"), HivePartition.dumpsPath("r", 1));
        assertEquals(Path.of("rejects", "run=r", "rank=1"), HivePartition.rejectsPath("r", 1));
    }

    @ParameterizedTest
    @MethodSource("hostile")
    void hostileValueIsOneSegmentUnderTheRoot(String value) throws CharacterCodingException {
        String segment = HivePartition.segment("stage", value);
        assertTrue(segment.startsWith("stage="), segment);
        assertFalse(segment.contains("/"), segment);
        assertFalse(segment.contains("\\"), segment);
        assertFalse(segment.chars().anyMatch(c -> c < 0x20 || c == 0x7F), segment);
        assertTrue(utf8(segment).length <= 255, segment);
        strictUtf8(segment);

        String relative = HivePartition.snapshots(value, 7, value);
        assertEquals(4, relative.split("/", -1).length, relative);
        Path resolved = HivePartition.resolveUnder(ROOT, relative);
        assertTrue(resolved.startsWith(ROOT), resolved.toString());
        assertEquals(ROOT.getNameCount() + 4, resolved.getNameCount(), resolved.toString());
        assertEquals(resolved, ROOT.resolve(HivePartition.snapshotsPath(value, 7, value)).normalize());
        assertEquals(segment, resolved.getFileName().toString());
    }

    @ParameterizedTest
    @MethodSource("hostile")
    void shortValuesRoundTripThroughUnescape(String value) {
        String segment = HivePartition.segment("run", value);
        String escaped = segment.substring("run=".length());
        if (value.isEmpty()) {
            assertEquals(HivePartition.DEFAULT_PARTITION, escaped);
        } else if (!escaped.contains("~") || escaped.equals(HivePartition.escape(value))) {
            assertEquals(value, HivePartition.unescape(escaped));
            assertEquals(value, HivePartition.readBackValue("run", value));
        }
    }

    @Test
    void longNamesAreCutOnATokenBoundaryAndKeepADigest() {
        String longName = "x".repeat(150) + "/" + "y".repeat(149);
        assertEquals(300, longName.length());
        String segment = HivePartition.segment("stage", longName);
        assertTrue(utf8(segment).length <= 255);
        assertTrue(segment.matches("stage=x{150}%2Fy+~[0-9a-f]{16}"), segment);
        assertEquals(segment, HivePartition.segment("stage", longName), "deterministic");
        assertNotEquals(segment, HivePartition.segment("stage", longName.substring(0, 299) + "z"));

        String percents = HivePartition.segment("stage", "/".repeat(300));
        assertTrue(percents.matches("stage=(%2F)+~[0-9a-f]{16}"), percents);
        assertEquals(255 - 17 - 6 - (255 - 17 - 6) % 3, percents.length() - 17 - 6);

        for (String multiByte : List.of("ü".repeat(300), "😀".repeat(100), "ü".repeat(115) + "😀".repeat(10))) {
            String cut = HivePartition.segment("stage", multiByte);
            assertTrue(utf8(cut).length <= 255, cut);
            assertTrue(utf8(cut).length > 255 - 4, "uses the budget: " + cut);
            assertTrue(multiByte.startsWith(cut.substring(6, cut.length() - 17)), cut);
        }
    }

    @Test
    void distinctLongNamesStayDistinct() {
        Set<String> segments = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            assertTrue(segments.add(HivePartition.segment("run", "r".repeat(300) + i)));
        }
    }

    @Test
    void loneSurrogatesGetADigestAndAValidName() throws CharacterCodingException {
        String lone = HivePartition.segment("run", "a\uD800b");
        String replaced = HivePartition.segment("run", "a\uFFFDb");
        assertEquals("run=a\uFFFDb", replaced);
        assertTrue(lone.matches("run=a\uFFFDb~[0-9a-f]{16}"), lone);
        strictUtf8(lone);
    }

    @Test
    void resolveUnderRejectsEscapes() {
        assertThrows(IllegalArgumentException.class, () -> HivePartition.resolveUnder(ROOT, "../x"));
        assertThrows(IllegalArgumentException.class, () -> HivePartition.resolveUnder(ROOT, "a/../../x"));
        assertThrows(IllegalArgumentException.class, () -> HivePartition.resolveUnder(ROOT, "/etc/passwd"));
        assertThrows(IllegalArgumentException.class, () -> HivePartition.resolveUnder(ROOT, "."));
        assertThrows(IllegalArgumentException.class, () -> HivePartition.segment("bad=key", "v"));
        assertThrows(IllegalArgumentException.class, () -> HivePartition.segment("", "v"));
    }

    @Property(tries = 500)
    void anyValueStaysOneSegmentUnderTheRoot(@ForAll String value, @ForAll int rank) {
        String segment = HivePartition.segment("stage", value);
        assertTrue(utf8(segment).length <= 255);
        assertFalse(segment.contains("/"));
        Path resolved = HivePartition.resolveUnder(ROOT, HivePartition.snapshots(value, rank, value));
        assertEquals(ROOT.getNameCount() + 4, resolved.getNameCount());
        String read = HivePartition.readBackValue("stage", value);
        if (value.isEmpty()) {
            assertNull(read);
        } else if (segment.equals("stage=" + HivePartition.escape(value))) {
            assertEquals(value, read);
        } else {
            assertTrue(read.matches("(?s).*~[0-9a-f]{16}"), read);
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static void strictUtf8(String s) throws CharacterCodingException {
        StandardCharsets.UTF_8.newEncoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .encode(java.nio.CharBuffer.wrap(s));
        ByteBuffer.wrap(utf8(s));
    }
}
