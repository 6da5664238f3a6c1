package io.dumpstream.compare;

import io.dumpstream.schema.FirstDivergence;

import java.io.IOException;
import java.io.Writer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The self-contained HTML report of one comparison: verdict counts, the first divergence per rank,
 * a stage-by-rank heatmap of the worst cosine similarity (inline SVG) and a sortable table of the
 * non-PASS pairs (a few lines of inline script). Nothing is fetched at view time.
 */
public final class Report {
    /** At most this many failing pairs are listed (the tables hold them all). */
    public static final int MAX_TABLE_ROWS = 5000;
    private static final int CELL_W = 56;
    private static final int CELL_H = 22;
    private static final int LABEL_W = 220;
    private static final int HEAD_H = 28;

    private Report() {
    }

    /** Summary of one heatmap cell: the pairs of a (stage, rank). */
    static final class Cell {
        int pairs;
        int failing;
        Double worstCosine;
        Double worstAbs;

        void add(FirstDivergence r) {
            pairs++;
            if (!Verdict.PASS.name().equals(r.getVerdict())) {
                failing++;
            }
            Double cos = r.getCosineSimilarity();
            if (cos != null && (worstCosine == null || cos < worstCosine)) {
                worstCosine = cos;
            }
            Double abs = r.getMaxAbsErr();
            if (abs != null && (worstAbs == null || abs > worstAbs)) {
                worstAbs = abs;
            }
        }
    }

    /** Writes the report of {@code rows} (every result row of the job). */
    public static void write(Writer w, String baseline, String candidate, List<FirstDivergence> rows, String generatedAt)
            throws IOException {
        write(w, baseline, candidate, rows, generatedAt, false);
    }

    /**
     * Writes the report; with {@code byTensor} (rows of {@code compare --by tensor}) the baseline is the
     * reference, every tensor is listed with its coverage beside its verdict, and the verdict counts show
     * the coverage of their tensors.
     */
    public static void write(Writer w, String baseline, String candidate, List<FirstDivergence> rows, String generatedAt,
                             boolean byTensor) throws IOException {
        String unit = byTensor ? "tensors" : "pairs";
        Map<Verdict, Integer> counts = new EnumMap<>(Verdict.class);
        for (Verdict v : Verdict.values()) {
            counts.put(v, 0);
        }
        Map<Integer, FirstDivergence> first = new TreeMap<>();
        List<FirstDivergence> failing = new ArrayList<>();
        Map<String, Long> stageOrder = new LinkedHashMap<>();
        TreeSet<Integer> ranks = new TreeSet<>();
        Map<String, Cell> cells = new LinkedHashMap<>();
        for (FirstDivergence r : rows) {
            counts.merge(Verdict.valueOf(r.getVerdict()), 1, Integer::sum);
            ranks.add(r.getRank());
            stageOrder.merge(r.getStage(), r.getTaskId(), Math::min);
            cells.computeIfAbsent(r.getStage() + "\u0000" + r.getRank(), k -> new Cell()).add(r);
            if (!Verdict.PASS.name().equals(r.getVerdict())) {
                failing.add(r);
            }
            if (PairRows.diverged(r, byTensor)) {
                first.merge(r.getRank(), r, (a, b) -> PairRows.EARLIEST.compare(a, b) <= 0 ? a : b);
            }
        }
        failing.sort(Comparator.comparingInt(FirstDivergence::getRank).thenComparing(PairRows.EARLIEST));
        List<String> stages = new ArrayList<>(stageOrder.keySet());
        stages.sort(Comparator.comparingLong((String s) -> stageOrder.get(s)).thenComparing(s -> s));

        w.write("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>dumpstream compare"
                + (byTensor ? " --by tensor" : "") + ": ");
        w.write(esc(baseline) + " vs " + esc(candidate) + "</title>\n<style>\n"
                + "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}h1{font-size:20px}h2{font-size:16px;margin-top:28px}\n"
                + "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 7px;text-align:left;white-space:nowrap}\n"
                + "th{background:#f2f2f2}#failing th,#tensors th{cursor:pointer}#failing th:after,#tensors th:after{content:' \\2195';color:#999}\n"
                + "td.cov{font-weight:600}td.cov.partial{color:#b26a00}\n"
                + ".PASS{color:#17692b}.FAIL,.SHAPE_MISMATCH,.DTYPE_MISMATCH,.MISSING_BASELINE,.MISSING_CANDIDATE{color:#b00020;font-weight:600}\n"
                + "td.num{text-align:right;font-variant-numeric:tabular-nums}.muted{color:#777}\n"
                + "</style></head><body>\n");
        if (byTensor) {
            w.write("<h1>Tensor comparison: <code>" + esc(candidate) + "</code> (candidate, reassembled from its views) against"
                    + " <code>" + esc(baseline) + "</code> (reference)</h1>\n<p class=\"muted\">" + rows.size() + " tensors, generated "
                    + esc(generatedAt) + ". Coverage: the share of the reference's elements that the candidate's views hold;"
                    + " only covered elements are compared.</p>\n");
            w.write("<h2>Verdicts</h2>\n<table id=\"verdicts\"><tr><th>verdict</th><th>tensors</th><th>lowest coverage</th>"
                    + "<th>mean coverage</th></tr>\n");
            for (Map.Entry<Verdict, Integer> e : counts.entrySet()) {
                double min = Double.NaN;
                double sum = 0;
                int n = 0;
                for (FirstDivergence r : rows) {
                    if (r.getVerdict().equals(e.getKey().name()) && r.getCoverage() != null) {
                        min = n == 0 ? r.getCoverage() : Math.min(min, r.getCoverage());
                        sum += r.getCoverage();
                        n++;
                    }
                }
                w.write("<tr><td class=\"" + e.getKey() + "\">" + e.getKey() + "</td><td class=\"num\">" + e.getValue()
                        + "</td><td class=\"num\">" + (n == 0 ? "" : fmt(min)) + "</td><td class=\"num\">" + (n == 0 ? "" : fmt(sum / n))
                        + "</td></tr>\n");
            }
        } else {
            w.write("<h1>Run comparison: <code>" + esc(baseline) + "</code> (baseline) vs <code>" + esc(candidate)
                    + "</code> (candidate)</h1>\n<p class=\"muted\">" + rows.size() + " pairs, generated " + esc(generatedAt) + "</p>\n");
            w.write("<h2>Verdicts</h2>\n<table id=\"verdicts\"><tr><th>verdict</th><th>pairs</th></tr>\n");
            for (Map.Entry<Verdict, Integer> e : counts.entrySet()) {
                w.write("<tr><td class=\"" + e.getKey() + "\">" + e.getKey() + "</td><td class=\"num\">" + e.getValue() + "</td></tr>\n");
            }
        }
        w.write("</table>\n");

        w.write("<h2>First divergence per rank</h2>\n");
        if (first.isEmpty()) {
            w.write("<p id=\"first-none\">Every " + (byTensor ? "tensor" : "pair") + " passed.</p>\n");
        } else {
            w.write("<table id=\"first\"><tr>" + headers(byTensor) + "</tr>\n");
            for (FirstDivergence r : first.values()) {
                w.write("<tr>" + cells(r, byTensor) + "</tr>\n");
            }
            w.write("</table>\n");
        }

        w.write("<h2>Worst cosine similarity by stage and rank</h2>\n");
        heatmap(w, stages, new ArrayList<>(ranks), cells);

        if (byTensor) {
            List<FirstDivergence> all = new ArrayList<>(rows);
            all.sort(Comparator.comparingInt(FirstDivergence::getRank).thenComparing(PairRows.EARLIEST));
            w.write("<h2>Tensors</h2>\n");
            if (all.size() > MAX_TABLE_ROWS) {
                w.write("<p>The first " + MAX_TABLE_ROWS + " of " + all.size() + " tensors; the tensor_comparisons table holds all.</p>\n");
            }
            w.write("<p class=\"muted\">Every tensor, its coverage beside its verdict. Click a column header to sort.</p>\n"
                    + "<table id=\"tensors\"><thead><tr>" + headers(true) + "</tr></thead><tbody>\n");
            for (FirstDivergence r : all.subList(0, Math.min(MAX_TABLE_ROWS, all.size()))) {
                w.write("<tr class=\"tensor\">" + cells(r, true) + "</tr>\n");
            }
            w.write("</tbody></table>\n");
            failing.clear(); // every tensor is in the table above
        }
        w.write("<h2>Failing " + unit + "</h2>\n");
        if (byTensor) {
            w.write("<p id=\"failing-tensors\">" + rows.stream().filter(r -> !Verdict.PASS.name().equals(r.getVerdict())).count()
                    + " of " + rows.size() + " tensors are not PASS (listed above with the rest).</p>\n");
        } else if (failing.isEmpty()) {
            w.write("<p id=\"failing-none\">None.</p>\n");
        } else {
            if (failing.size() > MAX_TABLE_ROWS) {
                w.write("<p>The first " + MAX_TABLE_ROWS + " of " + failing.size() + " failing pairs; the comparisons table holds all.</p>\n");
            }
            w.write("<p class=\"muted\">Click a column header to sort.</p>\n<table id=\"failing\"><thead><tr>" + headers()
                    + "</tr></thead><tbody>\n");
            for (FirstDivergence r : failing.subList(0, Math.min(MAX_TABLE_ROWS, failing.size()))) {
                w.write("<tr class=\"pair\">" + cells(r) + "</tr>\n");
            }
            w.write("</tbody></table>\n");
        }
        w.write("<script>\n"
                + "document.querySelectorAll('#failing th, #tensors th').forEach(function(th,i){th.addEventListener('click',function(){\n"
                + " var body=th.closest('table').tBodies[0],rows=Array.from(body.rows),asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';\n"
                + " rows.sort(function(a,b){var x=a.cells[i].dataset.v,y=b.cells[i].dataset.v,nx=parseFloat(x),ny=parseFloat(y);\n"
                + "  var c=(!isNaN(nx)&&!isNaN(ny))?nx-ny:(x<y?-1:x>y?1:0);return asc?c:-c;});\n"
                + " rows.forEach(function(r){body.appendChild(r);});});});\n"
                + "</script>\n</body></html>\n");
    }

    private static final String[] HEADERS = {"rank", "launch_id", "stage", "task_id", "io", "port_index", "tensor_name",
            "worker_id", "dtype", "verdict", "max_abs_err", "max_rel_err", "cosine_similarity", "mismatch_count",
            "first_mismatch_index", "detail"};

    private static final String[] TENSOR_HEADERS = {"rank", "launch_id", "phase", "parameter_position", "tensor_name",
            "reference_key", "dtype", "verdict", "coverage", "covered / extent", "views", "max_abs_err", "max_rel_err",
            "cosine_similarity", "mismatch_count", "first_mismatch_index", "first_mismatch_task_id", "stage", "detail"};

    private static String headers() {
        return headers(false);
    }

    private static String headers(boolean byTensor) {
        StringBuilder s = new StringBuilder();
        for (String h : byTensor ? TENSOR_HEADERS : HEADERS) {
            s.append("<th>").append(h).append("</th>");
        }
        return s.toString();
    }

    private static String cells(FirstDivergence r, boolean byTensor) {
        if (!byTensor) {
            return cells(r);
        }
        StringBuilder s = new StringBuilder();
        num(s, r.getRank());
        num(s, r.getLaunchId());
        text(s, r.getPhase() == null ? "" : r.getPhase(), null);
        num(s, r.getParameterPosition());
        text(s, r.getTensorName(), null);
        text(s, r.getReferenceKey() == null ? "" : r.getReferenceKey(), null);
        text(s, r.getDtype(), null);
        text(s, r.getVerdict(), r.getVerdict());
        Double cov = r.getCoverage();
        s.append("<td class=\"num cov").append(cov != null && cov < 1 ? " partial" : "").append("\" data-v=\"")
                .append(cov == null ? "" : cov.toString()).append("\">")
                .append(cov == null ? "" : String.format(Locale.ROOT, "%.2f%%", 100 * cov)).append("</td>");
        String ce = r.getCoveredElements() == null && r.getExtentElements() == null ? ""
                : (r.getCoveredElements() == null ? "" : r.getCoveredElements()) + " / "
                + (r.getExtentElements() == null ? "" : r.getExtentElements());
        s.append("<td class=\"num\" data-v=\"").append(r.getCoveredElements() == null ? "" : r.getCoveredElements()).append("\">")
                .append(esc(ce)).append("</td>");
        num(s, r.getViews());
        num(s, r.getMaxAbsErr());
        num(s, r.getMaxRelErr());
        num(s, r.getCosineSimilarity());
        num(s, r.getMismatchCount());
        num(s, r.getFirstMismatchIndex());
        num(s, r.getFirstMismatchTaskId());
        text(s, r.getStage(), null);
        text(s, r.getDetail() == null ? "" : r.getDetail(), null);
        return s.toString();
    }

    private static String cells(FirstDivergence r) {
        StringBuilder s = new StringBuilder();
        num(s, r.getRank());
        num(s, r.getLaunchId());
        text(s, r.getStage(), null);
        num(s, r.getTaskId());
        text(s, r.getIo(), null);
        num(s, r.getPortIndex());
        text(s, r.getTensorName(), null);
        num(s, r.getWorkerId());
        text(s, r.getDtype(), null);
        text(s, r.getVerdict(), r.getVerdict());
        num(s, r.getMaxAbsErr());
        num(s, r.getMaxRelErr());
        num(s, r.getCosineSimilarity());
        num(s, r.getMismatchCount());
        num(s, r.getFirstMismatchIndex());
        text(s, r.getDetail() == null ? "" : r.getDetail(), null);
        return s.toString();
    }

    private static void num(StringBuilder s, Number v) {
        String shown = v == null ? "" : v instanceof Double d ? fmt(d) : v.toString();
        String key = v == null ? "" : v instanceof Double d && d.isInfinite() ? (d > 0 ? "1e999" : "-1e999") : v.toString();
        s.append("<td class=\"num\" data-v=\"").append(esc(key)).append("\">").append(esc(shown)).append("</td>");
    }

    private static void text(StringBuilder s, String v, String cls) {
        s.append("<td").append(cls == null ? "" : " class=\"" + esc(cls) + "\"").append(" data-v=\"").append(esc(v)).append("\">")
                .append(esc(v)).append("</td>");
    }

    static String fmt(double d) {
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            return Double.toString(d);
        }
        return d != 0 && (Math.abs(d) < 1e-3 || Math.abs(d) >= 1e6) ? String.format(Locale.ROOT, "%.4e", d)
                : String.format(Locale.ROOT, "%.6f", d);
    }

    private static void heatmap(Writer w, List<String> stages, List<Integer> ranks, Map<String, Cell> cells) throws IOException {
        int width = Math.max(LABEL_W + CELL_W * Math.max(1, ranks.size()) + 10, LABEL_W + 460); // room for the legend
        int height = HEAD_H + CELL_H * Math.max(1, stages.size()) + 40;
        w.write("<svg id=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + width + "\" height=\"" + height
                + "\" viewBox=\"0 0 " + width + " " + height + "\" font-family=\"system-ui,sans-serif\" font-size=\"12\">\n");
        for (int j = 0; j < ranks.size(); j++) {
            w.write("<text x=\"" + (LABEL_W + CELL_W * j + CELL_W / 2) + "\" y=\"" + (HEAD_H - 8)
                    + "\" text-anchor=\"middle\">rank " + ranks.get(j) + "</text>\n");
        }
        for (int i = 0; i < stages.size(); i++) {
            String stage = stages.get(i);
            int y = HEAD_H + CELL_H * i;
            w.write("<text x=\"" + (LABEL_W - 6) + "\" y=\"" + (y + CELL_H - 7) + "\" text-anchor=\"end\">" + esc(shorten(stage))
                    + "</text>\n");
            for (int j = 0; j < ranks.size(); j++) {
                Cell c = cells.get(stage + "\u0000" + ranks.get(j));
                int x = LABEL_W + CELL_W * j;
                if (c == null) {
                    w.write("<rect class=\"cell empty\" x=\"" + x + "\" y=\"" + y + "\" width=\"" + (CELL_W - 2) + "\" height=\""
                            + (CELL_H - 2) + "\" fill=\"#eeeeee\"><title>" + esc(stage) + ", rank " + ranks.get(j)
                            + ": no pairs</title></rect>\n");
                    continue;
                }
                String label = c.worstCosine == null ? (c.failing > 0 ? "\u2716" : "-") : String.format(Locale.ROOT, "%.4f", c.worstCosine);
                w.write("<rect class=\"cell\" data-stage=\"" + esc(stage) + "\" data-rank=\"" + ranks.get(j) + "\" data-failing=\""
                        + c.failing + "\" x=\"" + x + "\" y=\"" + y + "\" width=\"" + (CELL_W - 2) + "\" height=\"" + (CELL_H - 2)
                        + "\" fill=\"" + color(c) + "\"><title>" + esc(stage) + ", rank " + ranks.get(j) + ": " + c.pairs + " pairs, "
                        + c.failing + " not PASS, worst cosine " + (c.worstCosine == null ? "n/a" : fmt(c.worstCosine))
                        + ", worst max_abs_err " + (c.worstAbs == null ? "n/a" : fmt(c.worstAbs)) + "</title></rect>\n");
                w.write("<text x=\"" + (x + CELL_W / 2 - 1) + "\" y=\"" + (y + CELL_H - 7) + "\" text-anchor=\"middle\" font-size=\"10\">"
                        + esc(label) + "</text>\n");
            }
        }
        int ly = HEAD_H + CELL_H * Math.max(1, stages.size()) + 16;
        w.write("<rect x=\"" + LABEL_W + "\" y=\"" + (ly - 10) + "\" width=\"12\" height=\"12\" fill=\"#4caf50\"/><text x=\""
                + (LABEL_W + 16) + "\" y=\"" + ly + "\">all PASS</text>\n");
        w.write("<rect x=\"" + (LABEL_W + 90) + "\" y=\"" + (ly - 10) + "\" width=\"12\" height=\"12\" fill=\"#ffb300\"/><text x=\""
                + (LABEL_W + 106) + "\" y=\"" + ly + "\">FAIL, cosine near 1</text>\n");
        w.write("<rect x=\"" + (LABEL_W + 240) + "\" y=\"" + (ly - 10) + "\" width=\"12\" height=\"12\" fill=\"#c62828\"/><text x=\""
                + (LABEL_W + 256) + "\" y=\"" + ly + "\">low cosine or not comparable</text>\n");
        w.write("</svg>\n");
    }

    /** Green when every pair passed; else amber to red as 1 - cosine grows (log scale), red when there is no cosine. */
    static String color(Cell c) {
        if (c.failing == 0) {
            return "#4caf50";
        }
        if (c.worstCosine == null || c.worstCosine.isNaN()) {
            return "#c62828";
        }
        double gap = Math.max(1e-12, 1 - c.worstCosine);
        double t = Math.min(1, Math.max(0, (Math.log10(gap) + 8) / 8)); // 1e-8 -> 0, 1 -> 1
        int r = (int) Math.round(0xff + t * (0xc6 - 0xff));
        int g = (int) Math.round(0xb3 + t * (0x28 - 0xb3));
        int b = (int) Math.round(0x00 + t * (0x28 - 0x00));
        return String.format(Locale.ROOT, "#%02x%02x%02x", r, g, b);
    }

    private static String shorten(String s) {
        return s.length() > 32 ? s.substring(0, 31) + "\u2026" : s;
    }

    /** HTML text and attribute escaping. */
    static String esc(String s) {
        StringBuilder o = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '<' -> o.append("&lt;");
                case '>' -> o.append("&gt;");
                case '&' -> o.append("&amp;");
                case '"' -> o.append("&quot;");
                case '\'' -> o.append("&#39;");
                default -> o.append(c < 0x20 && c != '\n' && c != '\t' ? '\uFFFD' : c);
            }
        }
        return o.toString();
    }
}
