package io.dumpstream.format;

/**
 * The one domain error of the codec: input that breaks the contract. Carries the reason code and
 * a message naming the field and the offending value. Nothing else escapes the codec on bad input.
 */
public final class DumpFormatException extends Exception {
    private final ReasonCode reason;

    public DumpFormatException(ReasonCode reason, String message) {
        super(message);
        this.reason = reason;
    }

    public ReasonCode reason() {
        return reason;
    }

    @Override
    public String toString() {
        return reason + ": " + getMessage();
    }
}
