package io.dumpstream.options;

/** Unusable command-line arguments; the message names the option and the value. */
public final class UsageException extends RuntimeException {
    public UsageException(String message) {
        super(message);
    }
}
