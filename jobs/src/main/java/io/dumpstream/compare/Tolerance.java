package io.dumpstream.compare;

import java.io.Serializable;

/**
 * Closeness bounds of one pair: {@code |c - b| <= atol + rtol * |b|}; {@code source} says where
 * they came from ({@code default} or {@code FILE:LINE} of the rule).
 */
public record Tolerance(double rtol, double atol, String source) implements Serializable {

    public Tolerance {
        if (!(rtol >= 0) || !(atol >= 0) || Double.isInfinite(rtol) || Double.isInfinite(atol)) {
            throw new IllegalArgumentException("tolerance from " + source + ": rtol and atol must be finite and >= 0, got rtol="
                    + rtol + " atol=" + atol);
        }
    }

    /** Whether integers compare exactly (both bounds 0). */
    public boolean exact() {
        return rtol == 0 && atol == 0;
    }
}
