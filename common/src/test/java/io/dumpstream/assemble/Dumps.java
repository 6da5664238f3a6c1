package io.dumpstream.assemble;

import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.schema.DumpManifest;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Test fixtures: vectors loaded from the test resources, re-chunked, and fed to an assembly. */
final class Dumps {
    private Dumps() {
    }

    static Path vector(String file) throws Exception {
        return Path.of(Dumps.class.getResource("/vectors/" + file).toURI());
    }

    static DumpManifest manifest(String name) throws Exception {
        return ManifestParser.parseJson(Files.readAllBytes(vector(name + ".manifest.json")));
    }

    static byte[] buffer(String name) throws Exception {
        return Files.readAllBytes(vector(name + ".bin"));
    }

    /** The manifest with chunk_bytes set and the CRC list computed over {@code buffer}. */
    static DumpManifest rechunk(DumpManifest m, byte[] buffer, int chunkBytes) throws Exception {
        DumpManifest c = ManifestParser.parseJson(ManifestParser.toJson(m));
        c.setChunkBytes(chunkBytes);
        c.setBufferBytes((long) buffer.length);
        List<Long> crcs = new ArrayList<>();
        for (long off = 0; off < buffer.length; off += chunkBytes) {
            int len = (int) Math.min(chunkBytes, buffer.length - off);
            crcs.add(Checks.crc32c(ByteBuffer.wrap(buffer, (int) off, len)));
        }
        c.setChunkCrc32c(crcs);
        return c;
    }

    /** Feeds every chunk of {@code buffer} in order; chunks listed in {@code missing} are not given. */
    static Collect run(DumpManifest m, byte[] buffer, int... missing) {
        Collect out = new Collect();
        DumpAssembly a = new DumpAssembly(m, new AssemblyState());
        while (!a.finished()) {
            int i = a.nextChunk();
            boolean skip = false;
            for (int k : missing) {
                skip |= k == i;
            }
            long start = Manifests.chunkStart(m, i);
            int len = (int) Math.max(0, Math.min(Manifests.chunkLength(m, i), buffer.length - start));
            a.consume(skip ? null : ByteBuffer.wrap(buffer, (int) start, len), out);
        }
        if (out.finishedCalls != 1) {
            throw new AssertionError("finished " + out.finishedCalls + " times");
        }
        return out;
    }
}
