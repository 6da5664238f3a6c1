package io.dumpstream.storage;

/** A location cannot be used with the settings given; the message is one line and holds no secret. */
public final class StorageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public StorageException(String message) {
        super(message);
    }
}
