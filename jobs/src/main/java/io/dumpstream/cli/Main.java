package io.dumpstream.cli;

import io.dumpstream.options.UsageException;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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

    private static void printCommands(Map<String, Command> byName, PrintStream s) {
        s.println("usage: java -jar dumpstream.jar <command> [options]   (<command> --help for details)");
        s.println();
        for (Command c : byName.values()) {
            s.printf("  %-10s %s%n", c.name(), c.summary());
        }
    }
}
