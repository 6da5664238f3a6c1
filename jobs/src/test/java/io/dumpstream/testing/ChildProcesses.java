package io.dumpstream.testing;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Child JVMs started by tests, killed when the test JVM exits if still running: a test that fails
 * before it stops its children never leaves them behind (holding ports, CPU and the output dirs).
 */
public final class ChildProcesses {
    private static final Set<Process> RUNNING = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> RUNNING.forEach(Process::destroyForcibly),
                "kill-test-children"));
    }

    private ChildProcesses() {
    }

    /** Remembers {@code p} until it exits; returns it. */
    public static Process track(Process p) {
        RUNNING.add(p);
        p.onExit().thenRun(() -> RUNNING.remove(p));
        return p;
    }
}
