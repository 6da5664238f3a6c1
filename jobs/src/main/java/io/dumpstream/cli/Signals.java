package io.dumpstream.cli;

/**
 * SIGTERM and SIGINT as events rather than JVM shutdown: the command stops its job with a savepoint
 * while the JVM (and Flink's own shutdown hooks) are still fully alive, then returns normally.
 */
final class Signals {
    private Signals() {
    }

    static void onTerminate(Runnable action) {
        for (String name : new String[] {"TERM", "INT"}) {
            try {
                sun.misc.Signal.handle(new sun.misc.Signal(name), s -> action.run());
            } catch (IllegalArgumentException e) {
                // this platform does not deliver the signal; Ctrl-C then ends the JVM directly
            }
        }
    }
}
