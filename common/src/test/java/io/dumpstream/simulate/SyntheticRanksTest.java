package io.dumpstream.simulate;

import io.dumpstream.assemble.AssemblyOutput;
import io.dumpstream.assemble.AssemblyState;
import io.dumpstream.assemble.DumpAssembly;
import io.dumpstream.assemble.Outcome;
import io.dumpstream.decode.TensorStats;
import io.dumpstream.format.DumpBuilder;
import io.dumpstream.format.Dtype;
import io.dumpstream.format.ReasonCode;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.schema.RecordPlan;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SyntheticRanksTest {
    private static final Pattern STAGE = Pattern.compile(
            "layer(\\d+)\\.(input_norm|attn\\.qkv|attn\\.softmax|attn\\.o_proj|moe\\.router|moe\\.expert(\\d+)\\.(up|act|down))"
                    + "|final_norm|lm_head");

    static SyntheticRanks.Config small() {
        SyntheticRanks.Config c = new SyntheticRanks.Config();
        c.records = 24;
        c.payloadBytes = 2048;
        return c;
    }

    @Test
    void sameSeedRankAndLaunchGiveIdenticalBytesOthersDiffer() throws Exception {
        DumpBuilder.Dump a = new SyntheticRanks(7, small()).dump(3, 11).build();
        DumpBuilder.Dump b = new SyntheticRanks(7, small()).dump(3, 11).build();
        assertArrayEquals(a.buffer(), b.buffer());
        assertEquals(a.manifest(), b.manifest());
        assertArrayEquals(ManifestParser.toJson(a.manifest()), ManifestParser.toJson(b.manifest()));
        for (DumpBuilder other : List.of(new SyntheticRanks(8, small()).dump(3, 11),
                new SyntheticRanks(7, small()).dump(4, 11), new SyntheticRanks(7, small()).dump(3, 12))) {
            assertFalse(java.util.Arrays.equals(a.buffer(), other.build().buffer()));
        }
    }

    @Test
    void bytesArePinnedForOneSeed() throws Exception {
        // Locks the generator: a change here changes every synthetic dump ever made with this seed.
        DumpBuilder.Dump d = new SyntheticRanks(1, small()).dump(0, 0).build();
        CRC32C crc = new CRC32C();
        crc.update(d.buffer());
        assertEquals(PINNED_LENGTH, d.buffer().length);
        assertEquals(PINNED_CRC, crc.getValue());
    }

    static final long PINNED_LENGTH = 300096;
    static final long PINNED_CRC = 2394813566L;

    @Test
    void dumpsLookLikeAMoeModel() throws Exception {
        SyntheticRanks.Config c = small();
        c.dtypes = List.of("float16", "bfloat16", "float32", "int32");
        SyntheticRanks s = new SyntheticRanks(42, c);
        for (int rank = 0; rank < 4; rank++) {
            DumpManifest m = s.dump(rank, 5).build().manifest();
            assertEquals("synthetic", m.getRunId());
            assertEquals(rank, m.getRank());
            assertEquals(5L, m.getLaunchId());
            assertEquals(5L, m.getStep());
            assertEquals("npu:" + rank, m.getDevice());
            assertEquals(24, m.getRecords().size());
            long prevTask = -1;
            for (RecordPlan p : m.getRecords()) {
                Matcher x = STAGE.matcher(p.getStage());
                assertTrue(x.matches(), p.getStage());
                assertTrue(c.dtypes.contains(p.getDtype()), p.getDtype());
                assertEquals("expert", p.getOwnerLabel());
                if (x.group(3) != null) {
                    assertEquals(Long.valueOf(x.group(3)), p.getOwnerId());
                    assertEquals(x.group(4).equals("down") ? "AIC" : "MIX", p.getCoreType());
                } else {
                    assertNull(p.getOwnerId());
                    String st = p.getStage();
                    boolean matmul = st.endsWith("qkv") || st.endsWith("o_proj") || st.equals("lm_head");
                    assertEquals(matmul ? "AIC" : "AIV", p.getCoreType(), st);
                }
                assertEquals(p.getIo().equals("input") ? "before" : "after", p.getPhase());
                assertTrue(p.getTaskId() >= prevTask);
                prevTask = p.getTaskId();
            }
        }
    }

    @Test
    void acrossDumpsThereAreTruncatedEmptyNonFiniteAndZeroValues() throws Exception {
        SyntheticRanks.Config c = small();
        SyntheticRanks s = new SyntheticRanks(3, c);
        int truncated = 0;
        int empty = 0;
        long nan = 0;
        long inf = 0;
        long zeros = 0;
        long numel = 0;
        Set<String> dtypes = new HashSet<>();
        Set<String> cores = new HashSet<>();
        boolean expertStage = false;
        for (int launch = 0; launch < 30; launch++) {
            DumpBuilder.Dump d = s.dump(launch % 4, launch).build();
            for (RecordPlan p : d.manifest().getRecords()) {
                truncated += p.getTruncated() ? 1 : 0;
                empty += p.getFullBytes() == 0 ? 1 : 0;
                dtypes.add(p.getDtype());
                cores.add(p.getCoreType());
                expertStage |= p.getStage().contains(".moe.expert");
                TensorStats.Stats st = TensorStats.compute(Dtype.fromName(p.getDtype()), d.buffer(),
                        (int) p.getPayloadOffset(), (int) p.getPayloadBytes());
                nan += st.nanCount();
                inf += st.infCount();
                zeros += st.zeroCount();
                numel += st.numel();
                if (st.mean() != null && Values.isFloat(Dtype.fromName(p.getDtype()))) {
                    assertTrue(Math.abs(st.mean()) < 1e4, p.getStage() + " mean " + st.mean());
                }
            }
        }
        assertTrue(truncated > 0, "no truncated record");
        assertTrue(empty > 0, "no empty record");
        assertTrue(nan > 0 && inf > 0, "nan " + nan + " inf " + inf);
        assertTrue(nan + inf < numel / 100, "too many non-finite values: " + (nan + inf) + " of " + numel);
        assertTrue(zeros > numel / 100 && zeros < numel / 2, "zeros " + zeros + " of " + numel);
        assertEquals(new HashSet<>(SyntheticRanks.DEFAULT_DTYPES), dtypes);
        assertEquals(Set.of("AIC", "AIV", "MIX"), cores);
        assertTrue(expertStage);
    }

    @Test
    void everySyntheticDumpPassesTheAssemblyChecks() throws Exception {
        SyntheticRanks.Config c = small();
        c.chunkBytes = 64 * 1024;
        SyntheticRanks s = new SyntheticRanks(9, c);
        for (int launch = 0; launch < 20; launch++) {
            DumpBuilder.Dump d = s.dump(launch % 3, launch).build();
            DumpManifest m = ManifestParser.parseJson(ManifestParser.toJson(d.manifest()));
            DumpAssembly a = new DumpAssembly(m, new AssemblyState());
            List<String> events = new ArrayList<>();
            AssemblyOutput out = new AssemblyOutput() {
                @Override
                public void accepted(int index, byte[] payload) {
                    events.add("A" + index);
                }

                @Override
                public void rejected(int index, ReasonCode reason, String detail, byte[] raw, byte[] p, boolean capped) {
                    events.add("R" + index + " " + reason + " " + detail);
                }

                @Override
                public void finished(Outcome outcome, ReasonCode reason, int accepted, int rejected) {
                    events.add(outcome + " " + accepted + "/" + rejected);
                }
            };
            while (!a.finished()) {
                int i = a.nextChunk();
                a.consume(ByteBuffer.wrap(d.buffer(), (int) Manifests.chunkStart(m, i), Manifests.chunkLength(m, i)), out);
            }
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 24; i++) {
                expected.add("A" + i);
            }
            expected.add("COMPLETE 24/0");
            assertEquals(expected, events, "launch " + launch);
        }
    }

    @Test
    void configIsChecked() {
        SyntheticRanks.Config c = small();
        c.dtypes = List.of("float32", "complex64");
        assertThrows(IllegalArgumentException.class, () -> new SyntheticRanks(1, c));
        SyntheticRanks.Config d = small();
        d.records = 4097;
        assertThrows(IllegalArgumentException.class, () -> new SyntheticRanks(1, d));
    }

    @Test
    void encodersRoundToNearestEven() {
        assertEquals((short) 0x3C00, Values.toHalf(1.0f));
        assertEquals((short) 0xC000, Values.toHalf(-2.0f));
        assertEquals((short) 0x7BFF, Values.toHalf(65504f));
        assertEquals((short) 0x7C00, Values.toHalf(65520f));
        assertEquals((short) 0x0001, Values.toHalf((float) Math.pow(2, -24)));
        assertEquals((short) 0x0000, Values.toHalf((float) Math.pow(2, -25))); // tie to even
        assertEquals((short) 0x0400, Values.toHalf((float) Math.pow(2, -14)));
        assertEquals((short) 0x3C00, Values.toHalf(1.0f + (float) Math.pow(2, -11))); // tie to even
        assertEquals((short) 0x3C02, Values.toHalf(1.0f + 3 * (float) Math.pow(2, -11)));
        assertEquals((short) 0x7E00, Values.toHalf(Float.NaN));
        assertEquals((short) 0xFC00, Values.toHalf(Float.NEGATIVE_INFINITY));
        assertEquals((short) 0x3F80, Values.toBfloat16(1.0f));
        assertEquals((short) 0x3F80, Values.toBfloat16(Float.intBitsToFloat(0x3F808000))); // tie to even
        assertEquals((short) 0x3F82, Values.toBfloat16(Float.intBitsToFloat(0x3F818000)));
        assertEquals((short) 0x7FC0, Values.toBfloat16(Float.NaN));
        assertEquals((byte) 0x38, Values.Fp8.E4M3FN.encode(1.0));
        assertEquals((byte) 0x7E, Values.Fp8.E4M3FN.encode(448.0));
        assertEquals((byte) 0xFE, Values.Fp8.E4M3FN.encode(-1e6));
        assertEquals((byte) 0x01, Values.Fp8.E4M3FN.encode(Math.pow(2, -9)));
        assertEquals((byte) 0x7F, Values.Fp8.E4M3FN.encode(Double.POSITIVE_INFINITY));
        assertEquals((byte) 0x3C, Values.Fp8.E5M2.encode(1.0));
        assertEquals((byte) 0x7B, Values.Fp8.E5M2.encode(57344.0));
        assertEquals((byte) 0x7C, Values.Fp8.E5M2.encode(Double.POSITIVE_INFINITY));
        assertEquals((byte) 0x80, Values.Fp8.E5M2.encode(-0.0));
    }
}
