package io.dumpstream.testing;

import java.io.IOException;
import java.io.UncheckedIOException;

import io.dumpstream.local.LocalKafka;

/** One broker for every test class of the run that does not stop it; started on first use. */
public final class SharedKafka {
    private static LocalKafka kafka;

    private SharedKafka() {
    }

    public static synchronized LocalKafka get() {
        if (kafka == null) {
            try {
                kafka = LocalKafka.startEphemeral();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            Runtime.getRuntime().addShutdownHook(new Thread(kafka::close, "shared-kafka-stop"));
        }
        return kafka;
    }
}
