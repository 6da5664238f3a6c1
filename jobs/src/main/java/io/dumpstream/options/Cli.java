package io.dumpstream.options;

import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;

/**
 * Parses a command's options, declared once as picocli {@code @Option} fields (type, default, help text), and
 * renders its help from the same declarations. Errors become a {@link UsageException} whose message names the
 * option and the value. {@code --kafka.<name>=<value>} arguments go to the {@link KafkaOptions} of the command.
 */
public final class Cli {
    /** The help text of the {@code -D} option of the commands that run Flink. */
    public static final String FLINK_CONF_HELP = "a Flink configuration setting, as Flink's own CLI takes it"
            + " (repeatable), for example -D taskmanager.memory.task.off-heap.size=512m";
    /** The help text of {@code -D} on the commands that run no Flink job but write through Flink's file systems. */
    public static final String FLINK_CONF_STORAGE_HELP = "a Flink configuration setting of the file system of --out, as"
            + " Flink's own CLI takes it (repeatable), for example -D s3.endpoint=http://127.0.0.1:7480";
    public static final String FLINK_CONF_LABEL = "key=value";
    private static final String KAFKA_PREFIX = "--kafka.";
    private static final int WIDTH = 112;

    private Cli() {
    }

    /**
     * Parses {@code argv} into {@code options} (and the {@code mixins}, extra option groups such as
     * {@code --verbose}), returning {@code options}.
     *
     * @throws UsageException an unknown option, a missing required one or a value that does not convert; the message
     *                        names the option and the value
     */
    public static <T> T parse(T options, String[] argv, Object... mixins) {
        parseResult(options, argv, mixins);
        return options;
    }

    /** {@link #parse}, returning picocli's record of what was given (to tell a default from a value given). */
    public static CommandLine.ParseResult parseResult(Object options, String[] argv, Object... mixins) {
        CommandLine cl = commandLine("", options, mixins);
        List<String> rest = new ArrayList<>();
        Properties kafka = new Properties();
        for (int i = 0; i < argv.length; i++) {
            String arg = argv[i];
            if (!arg.startsWith(KAFKA_PREFIX)) {
                int eq = arg.indexOf('=');
                OptionSpec o = arg.startsWith("--") && eq > 2 ? cl.getCommandSpec().findOption(arg.substring(0, eq)) : null;
                if (o != null && o.arity().max() == 0) {
                    throw new UsageException("option " + o.longestName() + " takes no value, got '"
                            + arg.substring(eq + 1) + "'");
                }
                if (o != null && o.arity().min() > 0) {
                    // --name=value as --name value: picocli reads --name= (an empty value) as an unknown option
                    rest.add(arg.substring(0, eq));
                    rest.add(arg.substring(eq + 1));
                } else {
                    rest.add(arg);
                }
                continue;
            }
            String body = arg.substring(KAFKA_PREFIX.length());
            int eq = body.indexOf('=');
            if (eq >= 0) {
                kafka.setProperty(body.substring(0, eq), body.substring(eq + 1));
            } else if (i + 1 < argv.length) {
                kafka.setProperty(body, argv[++i]);
            } else {
                throw new UsageException("option " + arg + " needs a value");
            }
        }
        if (!kafka.isEmpty()) {
            KafkaOptions k = find(cl.getCommandSpec(), KafkaOptions.class);
            if (k == null) {
                throw new UsageException("unknown option " + KAFKA_PREFIX + kafka.stringPropertyNames().iterator().next());
            }
            k.overrides.putAll(kafka);
        }
        try {
            return cl.parseArgs(rest.toArray(String[]::new));
        } catch (CommandLine.MissingParameterException e) {
            // picocli checks required options before unknown ones: an unknown option explains more
            for (String arg : rest) {
                String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
                if (arg.startsWith("--") && arg.length() > 2 && cl.getCommandSpec().findOption(name) == null) {
                    throw new UsageException("unknown option " + name);
                }
            }
            throw new UsageException(message(e));
        } catch (ParameterException e) {
            throw new UsageException(message(e));
        }
    }

    /**
     * The help of a command: {@code usage: NAME} and the synopsis, {@code description}, the options, {@code footer};
     * all of it generated from the option declarations but for the two texts.
     */
    public static String usage(String name, String description, String footer, Object options, Object... mixins) {
        CommandLine cl = commandLine(name, options, mixins);
        CommandSpec spec = cl.getCommandSpec();
        spec.usageMessage().description(paragraphs(description));
        if (!footer.isEmpty()) {
            spec.usageMessage().footerHeading("%n").footer(paragraphs(footer));
        }
        String text = cl.getUsageMessage(CommandLine.Help.Ansi.OFF);
        return text.stripTrailing();
    }

    /** Help text as picocli takes it: one string per paragraph (it wraps them), an empty one between them. */
    private static String[] paragraphs(String text) {
        List<String> out = new ArrayList<>();
        for (String p : text.split("\n\n")) {
            if (!p.isBlank()) {
                if (!out.isEmpty()) {
                    out.add("");
                }
                out.add(p.replace('\n', ' ').replace("%", "%%"));
            }
        }
        return out.toArray(String[]::new);
    }

    /** The long names of every option {@code --help} lists for these option objects, in order. */
    public static List<String> optionNames(Object options, Object... mixins) {
        List<String> names = new ArrayList<>();
        for (OptionSpec o : commandLine("", options, mixins).getCommandSpec().options()) {
            if (!o.hidden()) {
                names.add(o.longestName());
            }
        }
        return names;
    }

    private static CommandLine commandLine(String name, Object options, Object... mixins) {
        CommandLine cl = new CommandLine(options);
        for (Object m : mixins) {
            cl.addMixin(m.getClass().getSimpleName(), m);
        }
        cl.setCommandName(name);
        cl.setOverwrittenOptionsAllowed(true); // the last of a repeated option wins, as before
        cl.setExpandAtFiles(false); // an argument starting with @ is a value, not a file of arguments
        cl.setUsageHelpWidth(WIDTH);
        cl.setUsageHelpLongOptionsMaxWidth(32);
        cl.registerConverter(Integer.class, s -> (int) integer(s, Integer.MIN_VALUE, Integer.MAX_VALUE));
        cl.registerConverter(Integer.TYPE, s -> (int) integer(s, Integer.MIN_VALUE, Integer.MAX_VALUE));
        cl.registerConverter(Long.class, s -> integer(s, Long.MIN_VALUE, Long.MAX_VALUE));
        cl.registerConverter(Long.TYPE, s -> integer(s, Long.MIN_VALUE, Long.MAX_VALUE));
        cl.registerConverter(Double.class, Cli::number);
        cl.registerConverter(Double.TYPE, Cli::number);
        cl.registerConverter(Duration.class, Cli::duration);
        cl.setDefaultValueProvider(Cli::durationDefault);
        CommandSpec spec = cl.getCommandSpec();
        spec.usageMessage().synopsisHeading("usage: ").sortOptions(false).sortSynopsis(false)
                .optionListHeading("%nOptions:%n").descriptionHeading("%n").width(WIDTH);
        spec.parser().separator(" ");
        return cl;
    }

    private static <M> M find(CommandSpec spec, Class<M> type) {
        if (type.isInstance(spec.userObject())) {
            return type.cast(spec.userObject());
        }
        for (CommandSpec m : spec.mixins().values()) {
            M found = find(m, type);
            if (found != null) {
                return found;
            }
        }
        return null;
    }

    /** Help shows a {@link Duration} default as it is typed ({@code 10s}), not as {@code PT10S}. */
    private static String durationDefault(ArgSpec arg) {
        if (arg.type() == Duration.class && arg.initialValue() instanceof Duration d) {
            return format(d);
        }
        return null;
    }

    private static String message(ParameterException e) {
        ArgSpec arg = e.getArgSpec();
        String name = arg instanceof OptionSpec o ? o.longestName() : arg == null ? null : arg.paramLabel();
        if (e instanceof CommandLine.UnmatchedArgumentException u && !u.getUnmatched().isEmpty()) {
            String first = u.getUnmatched().get(0);
            if (first.startsWith("-") && first.length() > 1) {
                int eq = first.indexOf('=');
                return "unknown option " + (eq > 0 ? first.substring(0, eq) : first);
            }
            return "unexpected argument '" + first + "'";
        }
        if (e instanceof CommandLine.MissingParameterException m) {
            List<String> missing = new ArrayList<>();
            for (ArgSpec a : m.getMissing()) {
                missing.add(a instanceof OptionSpec o ? o.longestName() : a.paramLabel());
            }
            if (e.getMessage().startsWith("Missing required parameter for option")) {
                return "option " + (name != null ? name : String.join(", ", missing)) + " needs a value";
            }
            return "missing required option " + String.join(", ", missing);
        }
        if (arg instanceof OptionSpec o && o.typeInfo().isMap() && e.getMessage().contains("KEY=VALUE")) {
            String value = e.getValue() != null ? e.getValue()
                    : e.getMessage().substring(e.getMessage().lastIndexOf("but was ") + "but was ".length());
            return "option " + name + " must be key=value, got '" + value + "'";
        }
        if (e.getCause() instanceof CommandLine.TypeConversionException t && name != null) {
            return "option " + name + " " + t.getMessage() + ", got '" + e.getValue() + "'";
        }
        return e.getMessage();
    }

    private static long integer(String s, long min, long max) {
        long v;
        try {
            v = Long.parseLong(s.trim());
        } catch (NumberFormatException e) {
            throw new CommandLine.TypeConversionException("must be an integer");
        }
        if (v < min || v > max) {
            throw new CommandLine.TypeConversionException("is out of range [" + min + ", " + max + "]");
        }
        return v;
    }

    private static double number(String s) {
        try {
            return Double.parseDouble(s.trim());
        } catch (NumberFormatException e) {
            throw new CommandLine.TypeConversionException("must be a number");
        }
    }

    /** Parses 10s, 500ms, 5m, 24h, 2d or an ISO-8601 duration (PT10S). */
    public static Duration duration(String v) {
        String s = v.trim().toLowerCase(Locale.ROOT);
        try {
            if (s.startsWith("p")) {
                return Duration.parse(s.toUpperCase(Locale.ROOT));
            }
            if (s.endsWith("ms")) {
                return Duration.ofMillis(Long.parseLong(s.substring(0, s.length() - 2)));
            }
            long n = Long.parseLong(s.substring(0, s.length() - 1));
            switch (s.charAt(s.length() - 1)) {
                case 's': return Duration.ofSeconds(n);
                case 'm': return Duration.ofMinutes(n);
                case 'h': return Duration.ofHours(n);
                case 'd': return Duration.ofDays(n);
                default: break;
            }
        } catch (NumberFormatException | DateTimeParseException | StringIndexOutOfBoundsException e) {
            // reported below
        }
        throw new CommandLine.TypeConversionException("must be a duration such as 10s, 5m or 24h");
    }

    /** {@code d} as {@link #duration} reads it back: the largest whole unit of d, days to milliseconds. */
    static String format(Duration d) {
        long ms = d.toMillis();
        long[] sizes = {86_400_000L, 3_600_000L, 60_000L, 1000L};
        String[] units = {"d", "h", "m", "s"};
        for (int i = 0; i < sizes.length; i++) {
            if (ms != 0 && ms % sizes[i] == 0) {
                return ms / sizes[i] + units[i];
            }
        }
        return ms + "ms";
    }
}
