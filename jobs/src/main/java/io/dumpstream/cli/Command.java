package io.dumpstream.cli;

import java.io.PrintStream;

/** One subcommand of {@code java -jar dumpstream.jar <command> ...}. */
public interface Command {

    /** The word that selects this command. */
    String name();

    /** One line for the command list. */
    String summary();

    /** Full usage text printed by {@code <command> --help}. */
    String usage();

    /**
     * Runs the command.
     *
     * @return the process exit status: 0 on success, 2 for unusable arguments, 1 for other failures
     */
    int run(String[] args, PrintStream out, PrintStream err) throws Exception;
}
