package io.dumpstream.cli;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The README's option list of each command ("Command-line options") against what {@code <command> --help} prints:
 * the same options, in the same order, for every command and no other.
 */
class CommandLineReadmeTest {
    /** An option line of picocli's help: a short option at column 2, a long one at column 6. */
    private static final Pattern HELP_OPTION = Pattern.compile("(?m)^(?:  (-[A-Za-z])  | {6}(--\\S+))");
    private static final Pattern README_LINE = Pattern.compile("(?m)^- `([a-z-]+)`: (.*)$");
    private static final Pattern CODE = Pattern.compile("`([^`]+)`");

    static List<String> helpOptions(String command) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream s = new PrintStream(out, true, StandardCharsets.UTF_8);
        assertEquals(0, Main.run(new String[]{command, "--help"}, s, s), command);
        List<String> names = new ArrayList<>();
        Matcher m = HELP_OPTION.matcher(out.toString(StandardCharsets.UTF_8));
        while (m.find()) {
            names.add(m.group(1) != null ? m.group(1) : m.group(2));
        }
        return names;
    }

    static Map<String, List<String>> readmeOptions() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);
        int start = readme.indexOf("\n## Command-line options\n");
        assertTrue(start >= 0, "README.md has a section 'Command-line options'");
        int end = readme.indexOf("\n## ", start + 1);
        Map<String, List<String>> lists = new LinkedHashMap<>();
        Matcher line = README_LINE.matcher(readme.substring(start, end < 0 ? readme.length() : end));
        while (line.find()) {
            List<String> names = new ArrayList<>();
            Matcher code = CODE.matcher(line.group(2));
            while (code.find()) {
                names.add(code.group(1));
            }
            lists.put(line.group(1), names);
        }
        return lists;
    }

    @Test
    void theReadmeListsExactlyTheOptionsEachCommandsHelpPrints() throws Exception {
        Map<String, List<String>> readme = readmeOptions();
        List<String> commands = new ArrayList<>();
        for (Command c : Main.commands()) {
            commands.add(c.name());
            List<String> help = helpOptions(c.name());
            assertTrue(help.size() >= 2, c.name() + " --help lists its options: " + help);
            assertEquals(help, readme.get(c.name()), "README.md, 'Command-line options', the line of " + c.name());
        }
        assertEquals(commands, List.copyOf(readme.keySet()), "the README lists every command once, in --help's order");
    }

    @Test
    void ingestsHelpNamesMaxParallelismWhichItAccepts() {
        assertTrue(helpOptions("ingest").contains("--max-parallelism"));
    }
}
