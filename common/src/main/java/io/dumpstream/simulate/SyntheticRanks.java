package io.dumpstream.simulate;

import io.dumpstream.format.DumpBuilder;
import io.dumpstream.format.Dtype;
import io.dumpstream.format.L1Layout;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * Deterministic, realistic-looking L1 dumps of a MoE transformer: the same (seed, rank, launch)
 * and {@link Config} always give byte-identical buffers and manifests.
 *
 * <p>A dump walks the operators of the model in order from a launch-dependent layer
 * ({@code layer3.input_norm}, {@code layer3.attn.qkv}, {@code layer3.attn.softmax},
 * {@code layer3.attn.o_proj}, {@code layer3.moe.router}, {@code layer3.moe.expert12.up},
 * {@code layer3.moe.expert12.act}, {@code layer3.moe.expert12.down}, ..., {@code final_norm},
 * {@code lm_head}), one task per operator with its input and output views. Experts are owners
 * ({@code owner_label} "expert", {@code owner_id} the expert number); matmuls run on AIC, norms,
 * softmax and routers on AIV, expert up/act on MIX. Payloads are generated lazily, record by
 * record, so a large dump streams without being held whole.
 */
public final class SyntheticRanks {

    /** Default dtypes, picked per record. */
    public static final List<String> DEFAULT_DTYPES = List.of(
            "float16", "bfloat16", "float32", "int32", "float8_e4m3fn", "int8", "float64", "uint8", "bool",
            "int64", "int16", "float8_e5m2");

    /** What the dumps look like; all fields have defaults. */
    public static final class Config {
        public String runId = "synthetic";
        public int worldSize = 8;
        public int records = 16;
        /** Typical full bytes per record; actual sizes vary between about 1/2 and 3/2 of it. */
        public long payloadBytes = 16 * 1024;
        public List<String> dtypes = DEFAULT_DTYPES;
        public int layers = 32;
        public int experts = 16;
        public int chunkBytes = DumpBuilder.DEFAULT_CHUNK_BYTES;
        /** Share of dumps captured with max_bytes_per_tensor = payloadBytes / 2. */
        public double truncatedDumpShare = 0.2;
        /** Share of records whose view has a zero dimension. */
        public double emptyShare = 0.05;
        /** Share of float tensors that carry a few NaN and infinite elements. */
        public double nonFiniteShare = 0.1;

        public Config validate() {
            Objects.requireNonNull(runId, "runId");
            if (records < 1 || records > L1Layout.MAX_RECORDS) {
                throw new IllegalArgumentException("records must be in 1.." + L1Layout.MAX_RECORDS + ", got " + records);
            }
            if (payloadBytes < 1) {
                throw new IllegalArgumentException("payload bytes must be >= 1, got " + payloadBytes);
            }
            if (dtypes == null || dtypes.isEmpty()) {
                throw new IllegalArgumentException("at least one dtype is needed");
            }
            for (String d : dtypes) {
                if (Dtype.fromName(d) == null) {
                    throw new IllegalArgumentException("unknown dtype '" + d + "'");
                }
            }
            if (layers < 1 || experts < 1) {
                throw new IllegalArgumentException("layers and experts must be >= 1");
            }
            if ((double) records * payloadBytes * 1.5 + L1Layout.PAYLOAD_BASE >= L1Layout.MAX_TOTAL_BYTES) {
                throw new IllegalArgumentException("records x payload bytes exceeds the 4 GiB buffer limit");
            }
            return this;
        }
    }

    private final long seed;
    private final Config config;

    public SyntheticRanks(long seed, Config config) {
        this.seed = seed;
        this.config = config.validate();
    }

    public Config config() {
        return config;
    }

    /** The dump of {@code rank}'s launch {@code launch}, ready to {@code build()} or {@code writeTo}. */
    public DumpBuilder dump(int rank, long launch) {
        SplittableRandom r = new SplittableRandom(mix(seed, rank, launch, -1));
        DumpBuilder b = new DumpBuilder(config.runId, rank, launch)
                .worldSize(config.worldSize)
                .step(launch)
                .device("npu:" + (rank % 8))
                .chunkBytes(config.chunkBytes);
        Long maxBytes = r.nextDouble() < config.truncatedDumpShare ? Math.max(8, config.payloadBytes / 2) : null;
        List<Op> ops = new ArrayList<>();
        int layer = r.nextInt(config.layers);
        int added = 0;
        long taskId = 1 + r.nextInt(64);
        int parameter = 0;
        while (added < config.records) {
            if (ops.isEmpty()) {
                ops.addAll(layerOps(layer, r));
                layer++;
                if (layer == config.layers) {
                    ops.add(new Op("final_norm", "AIV", null, Kind.NORM, new String[] {"hidden"}, "normed"));
                    ops.add(new Op("lm_head", "AIC", null, Kind.LOGITS, new String[] {"normed"}, "logits"));
                    layer = 0;
                }
            }
            Op op = ops.remove(0);
            int tasks = op.ownerId != null && r.nextInt(4) == 0 ? 2 : 1;
            for (int t = 0; t < tasks && added < config.records; t++) {
                int coreId = op.coreType.equals("AIC") ? r.nextInt(24) : r.nextInt(48);
                for (int port = 0; port <= op.inputs.length && added < config.records; port++) {
                    boolean output = port == op.inputs.length;
                    String io = output ? "output" : "input";
                    int index = output ? 0 : port;
                    String name = output ? op.output : op.inputs[port];
                    String dtype = config.dtypes.get(r.nextInt(config.dtypes.size()));
                    Dtype dt = Dtype.fromName(dtype);
                    long[] shape = shape(r, dt, op.stage.endsWith("lm_head"));
                    long numel = 1;
                    for (long d : shape) {
                        numel *= d;
                    }
                    long sourceOffset = r.nextInt(4) == 0 ? (long) r.nextInt(1 << 16) * dt.elementSize() : 0;
                    Values values = Values.pick(r, op.kind, output, dt, config.nonFiniteShare);
                    long payloadSeed = mix(seed, rank, launch, added);
                    b.add(new DumpBuilder.RecordSpec()
                            .taskId(taskId).taskIndex(t).stage(op.stage)
                            .ownerId(op.ownerId).ownerLabel("expert")
                            .coreType(op.coreType).coreId(coreId)
                            .io(io).index(index).parameterPosition(parameter++ % 64)
                            .tensorName(name).dtype(dtype).sourceOffsetBytes(sourceOffset)
                            .actualShape(shape)
                            .note(op.ownerId != null ? "expert shard" : numel == 0 ? "empty view" : "")
                            .maxPayloadBytes(maxBytes)
                            .payload(new Values.Generator(values, dt, payloadSeed)));
                    added++;
                }
                taskId++;
            }
        }
        return b;
    }

    private long[] shape(SplittableRandom r, Dtype dt, boolean logits) {
        if (r.nextDouble() < config.emptyShare) {
            return new long[] {0, 64L << r.nextInt(3)};
        }
        long target = Math.max(1, (long) (config.payloadBytes * (0.5 + r.nextDouble())) / dt.elementSize());
        long cols = logits ? 1000 + r.nextInt(31000) : 16L << r.nextInt(6);
        cols = Math.min(cols, target);
        long rows = Math.max(1, target / cols);
        if (r.nextInt(3) == 0 && rows % 2 == 0 && rows > 2) {
            return new long[] {2, rows / 2, cols};
        }
        return new long[] {rows, cols};
    }

    private List<Op> layerOps(int layer, SplittableRandom r) {
        String l = "layer" + layer;
        List<Op> ops = new ArrayList<>();
        ops.add(new Op(l + ".input_norm", "AIV", null, Kind.NORM, new String[] {"hidden"}, "normed"));
        ops.add(new Op(l + ".attn.qkv", "AIC", null, Kind.MATMUL, new String[] {"normed", "w_qkv"}, "qkv"));
        ops.add(new Op(l + ".attn.softmax", "AIV", null, Kind.SOFTMAX, new String[] {"scores"}, "probs"));
        ops.add(new Op(l + ".attn.o_proj", "AIC", null, Kind.MATMUL, new String[] {"attn_out", "w_o"}, "hidden"));
        ops.add(new Op(l + ".moe.router", "AIV", null, Kind.ROUTER, new String[] {"hidden"}, "expert_ids"));
        int picked = 1 + r.nextInt(2);
        for (int k = 0; k < picked; k++) {
            long e = r.nextInt(config.experts);
            String p = l + ".moe.expert" + e;
            ops.add(new Op(p + ".up", "MIX", e, Kind.MATMUL, new String[] {"tokens", "w_up"}, "up"));
            ops.add(new Op(p + ".act", "MIX", e, Kind.ACT, new String[] {"up"}, "act"));
            ops.add(new Op(p + ".down", "AIC", e, Kind.MATMUL, new String[] {"act", "w_down"}, "down"));
        }
        return ops;
    }

    /** What an operator computes, which shapes its values. */
    enum Kind { NORM, MATMUL, SOFTMAX, ROUTER, ACT, LOGITS }

    private record Op(String stage, String coreType, Long ownerId, Kind kind, String[] inputs, String output) {
    }

    /** SplitMix64-style mixing of the dump coordinates into one seed. */
    static long mix(long seed, long rank, long launch, long record) {
        long z = seed;
        for (long v : new long[] {rank, launch, record}) {
            z += 0x9E3779B97F4A7C15L + v;
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            z ^= z >>> 31;
        }
        return z;
    }
}
