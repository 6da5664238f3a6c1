package io.dumpstream.publish;

import java.util.Locale;

/** How the manifest message value is encoded on Kafka. */
public enum ManifestFormat {
    /** UTF-8 JSON with the contract's field names. */
    JSON,
    /** Avro single-object encoding (C3 01, schema fingerprint, body). */
    AVRO;

    /** {@code json} or {@code avro}, any case. */
    public static ManifestFormat parse(String s) {
        try {
            return valueOf(s.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("manifest format must be json or avro, got '" + s + "'");
        }
    }
}
