package io.dumpstream.compare;

import io.dumpstream.format.Dtype;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Tolerance files: first matching rule wins, defaults otherwise, errors name file, line, field and value. */
class TolerancesTest {

    @Test
    void csvAndYamlGiveTheSameRules() {
        Tolerances csv = Tolerances.parseCsv("t.csv", "# comment\nstage,dtype,rtol,atol\nmoe.*,bfloat16,0.05,1e-3\n*,float32,1e-4,0\n");
        Tolerances yaml = Tolerances.parseYaml("t.yaml", "tolerances:\n  - {stage: 'moe.*', dtype: torch.bfloat16, rtol: 0.05, atol: 1e-3}\n"
                + "  - stage: '*'\n    dtype: float32\n    rtol: 1e-4\n    atol: 0\n");
        assertEquals(new Tolerance(0.05, 1e-3, "t.csv:3"), csv.lookup("moe.experts", Dtype.BFLOAT16));
        assertEquals(new Tolerance(0.05, 1e-3, "t.yaml:rule 1"), yaml.lookup("moe.experts", Dtype.BFLOAT16));
        assertEquals(new Tolerance(1e-4, 0, "t.csv:4"), csv.lookup("moe.experts", Dtype.FLOAT32));
        assertEquals(Tolerances.defaultFor(Dtype.BFLOAT16), csv.lookup("attn", Dtype.BFLOAT16), "no rule: default");
        assertEquals(Tolerances.defaultFor(Dtype.BFLOAT16), csv.lookup("moeX", Dtype.BFLOAT16), "'.' is literal in a glob");
    }

    @Test
    void errorsNameTheLineTheFieldAndTheValue() {
        assertEquals("t.csv:2: field 'rtol' must be a number, got 'abc'", assertThrows(IllegalArgumentException.class,
                () -> Tolerances.parseCsv("t.csv", "stage,dtype,rtol,atol\n*,float32,abc,0\n")).getMessage());
        assertEquals("t.csv:2: field 'dtype' has unknown dtype 'float7'", assertThrows(IllegalArgumentException.class,
                () -> Tolerances.parseCsv("t.csv", "stage,dtype,rtol,atol\n*,float7,0,0\n")).getMessage());
        assertEquals("t.csv:2: field 'atol' must be finite and >= 0, got '-1'", assertThrows(IllegalArgumentException.class,
                () -> Tolerances.parseCsv("t.csv", "stage,dtype,rtol,atol\n*,*,0,-1\n")).getMessage());
        assertEquals("t.csv:1: the header must be 'stage,dtype,rtol,atol', got 'a,b'", assertThrows(IllegalArgumentException.class,
                () -> Tolerances.parseCsv("t.csv", "a,b\n")).getMessage());
        assertEquals("t.yaml:rule 1: field 'atol' is missing", assertThrows(IllegalArgumentException.class,
                () -> Tolerances.parseYaml("t.yaml", "- {stage: '*', dtype: '*', rtol: 0}\n")).getMessage());
        assertEquals("t.yaml:rule 1: unknown field 'rtool'", assertThrows(IllegalArgumentException.class,
                () -> Tolerances.parseYaml("t.yaml", "- {stage: '*', dtype: '*', rtol: 0, atol: 0, rtool: 1}\n")).getMessage());
    }
}
