package io.dumpstream.options;

import org.junit.jupiter.api.Test;

import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The parser every command shares: values, defaults in the help, and an error that names the option and the value. */
class CliTest {
    static final class Options {
        @Option(names = "--name", paramLabel = "N", required = true, description = "required")
        String name;
        @Option(names = "--count", paramLabel = "C", description = "default ${DEFAULT-VALUE}")
        int count = 3;
        @Option(names = "--wait", paramLabel = "D", description = "default ${DEFAULT-VALUE}")
        Duration wait = Duration.ofHours(24);
        @Option(names = "--flag", description = "a flag")
        boolean flag;
        @Option(names = "-D", paramLabel = "key=value", description = "settings")
        Map<String, String> conf = new LinkedHashMap<>();
        @Mixin
        KafkaOptions kafka = new KafkaOptions();
    }

    static String error(String... argv) {
        return assertThrows(UsageException.class, () -> Cli.parse(new Options(), argv)).getMessage();
    }

    @Test
    void valuesInEveryFormTheLastOneWinning() {
        Options o = Cli.parse(new Options(), new String[]{"--name=", "--count", "-1", "--count=7", "--wait", "500ms",
            "--flag", "-D", "a=1", "-Db=2=3", "--kafka.client.id=x", "--kafka.acks", "all"});
        assertEquals("", o.name);
        assertEquals(7, o.count);
        assertEquals(Duration.ofMillis(500), o.wait);
        assertTrue(o.flag);
        assertEquals(Map.of("a", "1", "b", "2=3"), o.conf);
        assertEquals(Map.of("client.id", "x", "acks", "all"), Map.copyOf(o.kafka.overrides));
        assertEquals(Duration.ofMinutes(90), Cli.parse(new Options(), new String[]{"--name", "n", "--wait", "PT90M"}).wait);
    }

    @Test
    void errorsNameTheOptionAndTheValue() {
        assertEquals("missing required option --name", error("--count", "1"));
        assertEquals("unknown option --bogus", error("--name", "n", "--bogus", "1"));
        assertEquals("unknown option --bogus", error("--bogus=1"), "an unknown option explains more than a missing one");
        assertEquals("unexpected argument 'extra'", error("--name", "n", "extra"));
        assertEquals("option --count needs a value", error("--name", "n", "--count"));
        assertEquals("option --count must be an integer, got 'two'", error("--name", "n", "--count", "two"));
        assertEquals("option --count is out of range [-2147483648, 2147483647], got '4294967296'",
                error("--name", "n", "--count", "4294967296"));
        assertEquals("option --wait must be a duration such as 10s, 5m or 24h, got '5x'", error("--name", "n", "--wait", "5x"));
        assertEquals("option --flag takes no value, got 'yes'", error("--name", "n", "--flag=yes"));
        assertEquals("option -D must be key=value, got 'foo'", error("--name", "n", "-D", "foo"));
        assertEquals("option --kafka.acks needs a value", error("--name", "n", "--kafka.acks"));
        assertEquals("unknown option --kafka.acks", assertThrows(UsageException.class,
                () -> Cli.parse(new Object() {
                    @Option(names = "--x")
                    String x;
                }, new String[]{"--kafka.acks=all"})).getMessage());
    }

    @Test
    void theHelpShowsDefaultsAsTheyAreTyped() {
        String help = Cli.usage("demo", "What it does.", "What it prints.", new Options());
        assertTrue(help.startsWith("usage: demo --name N [--count C] [--wait D] [--flag] [-D key=value]..."), help);
        assertTrue(help.contains("      --count C   ") && help.contains("default 3\n"), help);
        assertTrue(help.contains("default 1d\n"), "24h shown as a duration the option takes: " + help);
        assertTrue(help.contains("${env:NAME} in a value is the environment variable NAME"), help);
        assertTrue(help.endsWith("\n\nWhat it prints."), help);
        assertEquals(List.of("--name", "--count", "--wait", "--flag", "-D", "--kafka-config", "--kafka.<prop>"),
                Cli.optionNames(new Options()));
    }

    @Test
    void durationsReadBackAsTheyAreShown() {
        for (Duration d : List.of(Duration.ofMillis(1500), Duration.ofSeconds(10), Duration.ofMinutes(90), Duration.ofHours(36),
                Duration.ofDays(2))) {
            assertEquals(d, Cli.duration(Cli.format(d)), Cli.format(d));
        }
        assertEquals("90m", Cli.format(Duration.ofMinutes(90)));
    }
}
