package io.dumpstream.testing;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** The public test vectors copied into {@code src/test/resources/vectors/}. */
public final class Vectors {
    /** The one vector whose buffer file is shorter than its manifest's buffer_bytes. */
    public static final String TRUNCATED = "corrupt_truncated_buffer";

    private Vectors() {
    }

    public static Path dir() {
        try {
            return Path.of(Vectors.class.getResource("/vectors/multi_chunk.bin").toURI()).getParent();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Every vector name (NAME.manifest.json + NAME.bin), sorted. */
    public static List<String> names() throws IOException {
        try (Stream<Path> s = Files.list(dir())) {
            return s.map(p -> p.getFileName().toString()).filter(f -> f.endsWith(".manifest.json"))
                    .map(f -> f.substring(0, f.length() - ".manifest.json".length())).sorted().toList();
        }
    }

    public static Path manifest(String name) {
        return dir().resolve(name + ".manifest.json");
    }

    public static Path buffer(String name) {
        return dir().resolve(name + ".bin");
    }
}
