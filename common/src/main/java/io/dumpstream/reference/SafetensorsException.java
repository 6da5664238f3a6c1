package io.dumpstream.reference;

import java.io.IOException;
import java.nio.file.Path;

/** A safetensors file that fails a check; the message names the file, the field and the value. */
public final class SafetensorsException extends IOException {
    private final String field;

    public SafetensorsException(Path file, String field, String detail) {
        super(file + ": " + field + ": " + detail);
        this.field = field;
    }

    /** The header field (or tensor name and field) that failed. */
    public String field() {
        return field;
    }
}
