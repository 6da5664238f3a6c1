package io.dumpstream.manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dumpstream.schema.DumpManifest;
import io.dumpstream.schema.RecordPlan;
import java.io.InputStream;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Both parsers build the generated classes (SpecificData, with the classes trusted by AvroTrust). */
class ManifestParserTest {

    @Test
    void jsonAndAvroParseIntoTheGeneratedRecordClasses() throws Exception {
        byte[] json;
        try (InputStream in = ManifestParserTest.class.getResourceAsStream("/vectors/multi_chunk.manifest.json")) {
            json = in.readAllBytes();
        }
        DumpManifest fromJson = ManifestParser.parse(json);
        DumpManifest fromAvro = ManifestParser.parse(ManifestParser.toAvro(fromJson));
        for (DumpManifest m : List.of(fromJson, fromAvro)) {
            assertEquals(DumpManifest.class, m.getClass());
            assertEquals(List.of(RecordPlan.class, RecordPlan.class, RecordPlan.class),
                    m.getRecords().stream().map(Object::getClass).toList());
        }
        assertEquals(fromJson, fromAvro);
    }
}
