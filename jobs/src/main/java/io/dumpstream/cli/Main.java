package io.dumpstream.cli;

import io.dumpstream.options.UsageException;
import io.dumpstream.storage.FlinkSettings;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Entry point of {@code java -jar dumpstream.jar <command> ...}. */
public final class Main {

    private Main() {
    }

    /** Every command, in the order {@code --help} lists them. Add new commands here. */
    static List<Command> commands() {
        return List.of(
                new DecodeCommand(),
                new KafkaCommand(),
                new PublishCommand(),
                new AgentCommand(),
                new SimulateCommand(),
                new IngestCommand(),
                new DemoCommand(),
                new CompareCommand(),
                new ImportReferenceCommand(),
                new TensorsCommand());
    }

    /** Commands that run Flink or reach its file systems: they take {@code -Dkey=value} Flink settings. */
    static final Set<String> FLINK_COMMANDS = Set.of("ingest", "demo", "decode", "compare", "tensors", "import-reference");

    public static void main(String[] argv) {
        System.exit(run(argv, System.out, System.err));
    }

    /** Runs one command and returns its exit status; never calls {@code System.exit}. */
    public static int run(String[] argv, PrintStream out, PrintStream err) {
        Map<String, Command> byName = new LinkedHashMap<>();
        for (Command c : commands()) {
            byName.put(c.name(), c);
        }
        if (argv.length == 0 || argv[0].equals("--help") || argv[0].equals("-h") || argv[0].equals("help")) {
            printCommands(byName, argv.length == 0 ? err : out);
            return argv.length == 0 ? 2 : 0;
        }
        Command command = byName.get(argv[0]);
        if (command == null) {
            err.println("dumpstream: unknown command '" + argv[0] + "'");
            printCommands(byName, err);
            return 2;
        }
        String[] rest = Arrays.copyOfRange(argv, 1, argv.length);
        if (Arrays.asList(rest).contains("--help") || Arrays.asList(rest).contains("-h")) {
            out.println(command.usage());
            return 0;
        }
        try {
            if (FLINK_COMMANDS.contains(command.name())) {
                Map<String, String> dynamic = new LinkedHashMap<>();
                rest = flinkSettings(rest, dynamic);
                FlinkSettings.install(dynamic);
            }
            return command.run(rest, out, err);
        } catch (UsageException e) {
            err.println("dumpstream " + command.name() + ": " + e.getMessage());
            err.println("run 'dumpstream " + command.name() + " --help' for usage");
            return 2;
        } catch (Exception e) {
            err.println("dumpstream " + command.name() + ": " + e.getMessage());
            return 1;
        }
    }

    /**
     * Takes Flink settings out of {@code argv} into {@code into}, as Flink's own CLI takes them:
     * {@code -Dkey=value} or {@code -D key=value}, repeatable, the last one of a key winning.
     */
    static String[] flinkSettings(String[] argv, Map<String, String> into) {
        java.util.List<String> rest = new java.util.ArrayList<>();
        for (int i = 0; i < argv.length; i++) {
            String a = argv[i];
            if (!a.startsWith("-D") || a.startsWith("--")) {
                rest.add(a);
                continue;
            }
            String kv = a.length() > 2 ? a.substring(2) : (i + 1 < argv.length ? argv[++i] : "");
            int eq = kv.indexOf('=');
            if (eq <= 0) {
                throw new UsageException("-D needs key=value, got '-D" + kv + "'");
            }
            into.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        return rest.toArray(new String[0]);
    }

    private static void printCommands(Map<String, Command> byName, PrintStream s) {
        s.println("usage: java -jar dumpstream.jar <command> [options]   (<command> --help for details)");
        s.println();
        for (Command c : byName.values()) {
            s.printf("  %-10s %s%n", c.name(), c.summary());
        }
    }
}
