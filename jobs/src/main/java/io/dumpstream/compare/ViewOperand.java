package io.dumpstream.compare;

import io.dumpstream.reference.ReferenceImport;

import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;

import java.util.HashSet;
import java.util.Set;

/**
 * One snapshot row as {@code compare --by tensor} needs it: the pair columns of {@link Operand} plus a
 * view's place in its tensor (phase, parameter_position, source_offset_bytes, full and stored bytes),
 * its placement and its note. Read through a Parquet projection without the payload.
 */
public class ViewOperand extends Operand {
    static final Set<String> COLUMNS = columns();
    static final Schema PROJECTION = SnapshotRows.projection(COLUMNS, "TensorSnapshotViews");

    public String phase;
    public int parameterPosition;
    public long sourceOffsetBytes;
    public long fullBytes;
    public long payloadBytes;
    public String coreType;
    public int coreId;
    public String ownerLabel;
    public String note;

    public ViewOperand() {
    }

    private static Set<String> columns() {
        Set<String> s = new HashSet<>(SnapshotRows.COLUMNS);
        s.addAll(Set.of("phase", "parameter_position", "source_offset_bytes", "full_bytes", "payload_bytes", "core_type", "core_id",
                "owner_label", "note"));
        return Set.copyOf(s);
    }

    /** The side of a projected snapshot row; a row missing a column is an IllegalArgumentException. */
    static ViewOperand of(GenericRecord s, boolean baseline, int file, long row) {
        ViewOperand o = new ViewOperand();
        try {
            o.fill(s, baseline, file, row);
            o.phase = text(s, "phase");
            o.parameterPosition = ((Number) s.get("parameter_position")).intValue();
            o.sourceOffsetBytes = ((Number) s.get("source_offset_bytes")).longValue();
            o.fullBytes = ((Number) s.get("full_bytes")).longValue();
            o.payloadBytes = ((Number) s.get("payload_bytes")).longValue();
            o.coreType = text(s, "core_type");
            o.coreId = ((Number) s.get("core_id")).intValue();
            o.ownerLabel = text(s, "owner_label");
            o.note = text(s, "note");
        } catch (NullPointerException | ClassCastException e) {
            throw new IllegalArgumentException("a required column is missing or of another type: " + e.getMessage());
        }
        if (o.phase == null || o.dtype == null || o.tensorName == null) {
            throw new IllegalArgumentException("phase, dtype or tensor_name is null");
        }
        o.key = "";
        return o;
    }

    /** The safetensors key of a reference row ({@code note} = {@code safetensors:<key>}), else its tensor name. */
    String referenceKey() {
        String prefix = ReferenceImport.NOTE_PREFIX;
        return note != null && note.startsWith(prefix) ? note.substring(prefix.length()) : tensorName;
    }
}
