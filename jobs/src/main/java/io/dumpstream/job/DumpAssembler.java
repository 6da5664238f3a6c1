package io.dumpstream.job;

import io.dumpstream.assemble.AssemblyOutput;
import io.dumpstream.assemble.AssemblyState;
import io.dumpstream.assemble.DumpAssembly;
import io.dumpstream.assemble.Outcome;
import io.dumpstream.format.DumpFormatException;
import io.dumpstream.format.ReasonCode;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.publish.L1Headers;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.schema.DumpOutcome;
import io.dumpstream.schema.RecordPlan;
import io.dumpstream.schema.RejectedRecord;
import io.dumpstream.decode.Rows;
import io.dumpstream.table.HivePartition;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeHint;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Keyed by dump id: assembles each dump from its manifest and chunks, in any order, with
 * duplicates and re-sends, and decides every record with {@link DumpAssembly}. Accepted records go
 * out on the main output (to be decoded in parallel); rejects, dump outcomes and dead-letter
 * messages on side outputs.
 *
 * <p>All state is Flink keyed state: the manifest message, the assembly (record table plus the slot
 * in flight), chunks that arrived ahead of their turn, the head chunks while the header is not yet
 * decided, and after the outcome only a small {@link DoneMarker} until the retention timer clears
 * it. Chunks that arrive in order are consumed at once and never stored.
 *
 * <p>Its concerns beside the assembly live in small classes: {@link DedupRetention} (what a decided
 * dump leaves behind and for how long), {@link DeadLetters} (what goes to the dead-letter output,
 * with which reason) and {@link AssemblerMetrics}.
 */
public class DumpAssembler extends KeyedProcessFunction<DumpKey, L1Message, RecordWork>
        implements CheckpointedFunction, CheckpointListener {
    private static final long serialVersionUID = 1L;

    public static final OutputTag<Routed<RejectedRecord>> REJECTS =
            new OutputTag<>("rejects", TypeInformation.of(new TypeHint<Routed<RejectedRecord>>() { }));
    public static final OutputTag<Routed<DumpOutcome>> OUTCOMES =
            new OutputTag<>("outcomes", TypeInformation.of(new TypeHint<Routed<DumpOutcome>>() { }));
    public static final OutputTag<L1Message> DLQ = new OutputTag<>("dlq", TypeInformation.of(L1Message.class));

    private static final int MANIFEST_CACHE = 1024;

    private final AssemblerSettings settings;

    private transient ValueState<L1Message> manifestState;
    private transient ValueState<AssemblyState> assemblyState;
    private transient ValueState<Attempt> attemptState;
    private transient MapState<Integer, L1Message> pendingState;
    private transient ListState<L1Message> headState;
    private transient ValueState<DoneMarker> doneState;
    private transient Map<String, DumpManifest> manifests;
    private transient long maxRecordBytes;
    private transient DedupRetention retention;
    private transient DeadLetters deadLetters;
    private transient AssemblerMetrics metrics;
    /**
     * Processing time of this subtask's first callback since it (re)started, -1 before: a restored
     * dump's timeout counts from here at the earliest.
     */
    private transient long openedAt;

    public DumpAssembler(AssemblerSettings settings) {
        this.settings = settings;
    }

    @Override
    public void open(OpenContext ctx) {
        // a record's slot is allocated when it starts: whatever the configuration says, a claim may
        // never take more than an eighth of this TaskManager's heap (several dumps and subtasks, and
        // the decoder's and the writer's copies, share it)
        long heapShare = HeapShare.bytes();
        maxRecordBytes = Math.min(settings.maxRecordBytes(), heapShare);
        if (maxRecordBytes < settings.maxRecordBytes()) {
            org.slf4j.LoggerFactory.getLogger(DumpAssembler.class).info("max record bytes {} (an eighth of the heap"
                    + " of {} bytes) instead of the configured {}", maxRecordBytes,
                    Runtime.getRuntime().maxMemory(), settings.maxRecordBytes());
        }
        manifestState = getRuntimeContext().getState(new ValueStateDescriptor<>("manifest", L1Message.class));
        assemblyState = getRuntimeContext().getState(new ValueStateDescriptor<>("assembly", AssemblyState.class));
        attemptState = getRuntimeContext().getState(new ValueStateDescriptor<>("attempt", Attempt.class));
        pendingState = getRuntimeContext().getMapState(
                new MapStateDescriptor<>("pending", Types.INT, TypeInformation.of(L1Message.class)));
        headState = getRuntimeContext().getListState(new ListStateDescriptor<>("head", L1Message.class));
        doneState = getRuntimeContext().getState(new ValueStateDescriptor<>("done", DoneMarker.class));
        manifests = new LinkedHashMap<>(64, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, DumpManifest> eldest) {
                return size() > MANIFEST_CACHE;
            }
        };
        retention = new DedupRetention(settings.dedupRetention());
        metrics = new AssemblerMetrics(getRuntimeContext().getMetricGroup());
        deadLetters = new DeadLetters(metrics.deadLetters());
        openedAt = -1;
    }

    // ---------------------------------------------------------------- messages

    @Override
    public void processElement(L1Message msg, Context ctx, Collector<RecordWork> out) throws Exception {
        if (openedAt < 0) {
            openedAt = ctx.timerService().currentProcessingTime();
        }
        metrics.message(msg);
        String bad = DeadLetters.badMessage(msg);
        if (bad != null) {
            dlq(ctx, msg, bad);
        } else if (L1Headers.KIND_MANIFEST.equals(msg.kind())) {
            onManifest(msg, ctx, out);
        } else {
            onChunk(msg, DeadLetters.chunkIndex(msg), ctx, out);
        }
    }

    private void onManifest(L1Message msg, Context ctx, Collector<RecordWork> out) throws Exception {
        long fp = fingerprint(msg.value);
        L1Message current = manifestState.value();
        Attempt attempt = attemptState.value();
        if (current != null) {
            if (attempt != null && attempt.fingerprint == fp) {
                metrics.duplicate();
            } else {
                Instant now = now(ctx);
                String detail = "a second, different manifest for dump id " + msg.key + " while the first (from "
                        + current.where() + ") is still being assembled; this one is from " + msg.where();
                ctx.output(REJECTS, routedReject(Rows.manifestReject(msg.key, ReasonCode.MANIFEST_INVALID, detail,
                        msg.value, now), null, null));
                dlq(ctx, msg, ReasonCode.MANIFEST_INVALID + ": " + detail);
            }
            return;
        }
        DoneMarker done = doneState.value();
        if (DedupRetention.isResend(done, fp)) {
            metrics.duplicate();
            return;
        }
        if (attempt == null) {
            attempt = startAttempt(msg, ctx);
        }
        attempt.fingerprint = fp;
        attempt.publishTs = msg.publishTs();
        long[] written = DedupRetention.written(done);
        if (written != null) {
            attempt.acceptedBits = written;
        }
        DumpManifest m;
        try {
            m = ManifestParser.parse(msg.value == null ? new byte[0] : msg.value);
            if (!Manifests.dumpId(m).equals(msg.key)) {
                throw new DumpFormatException(ReasonCode.MANIFEST_INVALID, "the manifest's dump id '"
                        + Manifests.dumpId(m) + "' differs from the message key '" + msg.key + "'");
            }
        } catch (DumpFormatException e) {
            rejectUnusable(msg, e.reason(), "manifest at " + msg.where() + ": " + e.getMessage(), attempt, ctx);
            return;
        }
        metrics.dumpIn();
        manifestState.update(msg);
        manifests.put(msg.key, m);
        AssemblyState s = new AssemblyState();
        int chunks = (int) Manifests.chunkCount(m.getBufferBytes(), m.getChunkBytes());
        attempt.seenChunks = new long[(chunks + 63) >>> 6];
        attempt.chunkCount = chunks;
        if (attempt.acceptedBits == null || attempt.acceptedBits.length < (m.getRecords().size() + 63) >>> 6) {
            long[] bits = new long[(m.getRecords().size() + 63) >>> 6];
            if (attempt.acceptedBits != null) {
                System.arraycopy(attempt.acceptedBits, 0, bits, 0, attempt.acceptedBits.length);
            }
            attempt.acceptedBits = bits;
        }
        // chunks that came before the manifest: the ones outside its list go to the dead-letter topic
        List<Integer> early = new ArrayList<>();
        for (Integer k : pendingState.keys()) {
            early.add(k);
        }
        for (Integer k : early) {
            if (k >= chunks) {
                L1Message c = pendingState.get(k);
                pendingState.remove(k);
                metrics.held(-c.valueLength());
                dlq(ctx, c, DeadLetters.outOfRange(c, k, chunks));
            } else {
                Attempt.set(attempt.seenChunks, k);
                attempt.seenCount++;
            }
        }
        drain(m, s, attempt, ctx, out);
        saveOrFinish(m, s, attempt, ctx);
    }

    private void onChunk(L1Message msg, int index, Context ctx, Collector<RecordWork> out) throws Exception {
        Attempt attempt = attemptState.value();
        L1Message manifestMsg = manifestState.value();
        if (attempt == null) {
            DoneMarker done = doneState.value();
            switch (DedupRetention.lateChunk(done, index)) {
                case OUT_OF_RANGE -> {
                    dlq(ctx, msg, DeadLetters.outOfRange(msg, index, done.chunkCount));
                    return;
                }
                case AFTER_REJECTION -> {
                    dlq(ctx, msg, DeadLetters.afterRejection(msg.key, index, done.outcome));
                    return;
                }
                case DUPLICATE -> {
                    metrics.duplicate();
                    return;
                }
                case NEW_ATTEMPT -> attempt = startAttempt(msg, ctx);
            }
        }
        if (manifestMsg == null) {
            // the manifest has not come (yet): hold the chunk in state until it does or the timeout fires
            if (pendingState.contains(index)) {
                metrics.duplicate();
            } else if (attempt.earlyBytes + msg.valueLength() > maxRecordBytes) {
                // without a manifest nothing bounds what a key may claim: past the limit, chunks
                // go to the dead-letter topic (for replay) instead of piling up in state
                dlq(ctx, msg, DeadLetters.tooEarly(msg, index, maxRecordBytes));
            } else {
                pendingState.put(index, msg);
                metrics.held(msg.valueLength());
                attempt.earlyBytes += msg.valueLength();
            }
            attemptState.update(attempt);
            return;
        }
        DumpManifest m = manifest(manifestMsg);
        int chunks = (int) Manifests.chunkCount(m.getBufferBytes(), m.getChunkBytes());
        if (index >= chunks) {
            dlq(ctx, msg, DeadLetters.outOfRange(msg, index, chunks));
            return;
        }
        if (Attempt.get(attempt.seenChunks, index)) {
            metrics.duplicate();
            return;
        }
        Attempt.set(attempt.seenChunks, index);
        attempt.seenCount++;
        if (attempt.draining) {
            dlq(ctx, msg, DeadLetters.afterHeadRejection(msg.key, index));
            if (attempt.seenCount >= chunks) {
                finishAttempt(attempt, ctx);
            } else {
                attemptState.update(attempt);
            }
            return;
        }
        AssemblyState s = assemblyState.value();
        if (index != s.nextChunk) {
            pendingState.put(index, msg);
            metrics.held(msg.valueLength());
            attemptState.update(attempt);
            return;
        }
        consume(m, s, attempt, msg, ctx, out);
        drain(m, s, attempt, ctx, out);
        saveOrFinish(m, s, attempt, ctx);
    }

    /** Consumes the pending chunks that are next in order. */
    private void drain(DumpManifest m, AssemblyState s, Attempt attempt, Context ctx, Collector<RecordWork> out)
            throws Exception {
        while (!s.finished && !attempt.draining) {
            L1Message next = pendingState.get(s.nextChunk);
            if (next == null) {
                return;
            }
            pendingState.remove(s.nextChunk);
            metrics.held(-next.valueLength());
            consume(m, s, attempt, next, ctx, out);
        }
    }

    private void consume(DumpManifest m, AssemblyState s, Attempt attempt, L1Message chunk, Context ctx,
                         Collector<RecordWork> out) throws Exception {
        DumpAssembly a = new DumpAssembly(m, s, maxRecordBytes, settings.rejectPayloadCap());
        long before = heldBytes(s);
        boolean headUndecided = s.headerState == 0;
        Sink sink = new Sink(m, attempt, ctx, out);
        a.consume(chunk.value == null ? ByteBuffer.allocate(0) : ByteBuffer.wrap(chunk.value), sink);
        metrics.held(heldBytes(s) - before);
        if (chunk != null) {
            if (headUndecided && s.headerState == 0) {
                headState.add(chunk); // kept until the header is decided, for the dead-letter copy
                metrics.held(chunk.valueLength());
            } else if (headUndecided && s.headerState == 2) {
                headState.add(chunk);
                metrics.held(chunk.valueLength());
            } else {
                attempt.addConsumed(chunk);
            }
        }
        if (headUndecided && s.headerState == 1) {
            for (L1Message h : headState.get()) {
                metrics.held(-h.valueLength());
                attempt.addConsumed(h);
            }
            headState.clear();
        }
        if (headUndecided && s.headerState == 2) {
            // rejected at the head: the dump's messages so far go to the dead-letter topic, later ones as they come
            attempt.draining = true;
            String reason = "dump " + Manifests.dumpId(m) + " rejected: " + ReasonCode.values()[s.dumpReason];
            dlq(ctx, manifestState.value(), reason);
            for (L1Message h : headState.get()) {
                metrics.held(-h.valueLength());
                dlq(ctx, h, reason);
            }
            headState.clear();
            for (Iterator<Map.Entry<Integer, L1Message>> it = pendingState.iterator(); it.hasNext(); ) {
                Map.Entry<Integer, L1Message> e = it.next();
                metrics.held(-e.getValue().valueLength());
                dlq(ctx, e.getValue(), reason);
                it.remove();
            }
        }
    }

    private static long heldBytes(AssemblyState s) {
        return (s.head == null ? 0 : s.head.length) + (s.slot == null ? 0 : s.slot.length);
    }

    private void saveOrFinish(DumpManifest m, AssemblyState s, Attempt attempt, Context ctx) throws Exception {
        int chunks = (int) Manifests.chunkCount(m.getBufferBytes(), m.getChunkBytes());
        if (s.finished && (!attempt.draining || attempt.seenCount >= chunks)) {
            finishAttempt(attempt, ctx);
            return;
        }
        if (s.finished) {
            metrics.held(-heldBytes(s));
            assemblyState.clear();
        } else {
            assemblyState.update(s);
        }
        attemptState.update(attempt);
    }

    // ---------------------------------------------------------------- timers

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<RecordWork> out) throws Exception {
        Attempt attempt = attemptState.value();
        if (openedAt < 0) {
            openedAt = ctx.timerService().currentProcessingTime();
        }
        if (attempt != null && attempt.timeoutTimer == timestamp) {
            long earliest = openedAt + settings.assemblyTimeout().toMillis();
            if (timestamp < earliest) {
                // restored from a checkpoint after a restart (broker outage, lost TaskManager): the source
                // replays this dump's messages from the checkpoint's offsets, so it gets a full timeout
                // of running time before it is declared incomplete
                attempt.timeoutTimer = earliest;
                ctx.timerService().registerProcessingTimeTimer(earliest);
                attemptState.update(attempt);
                return;
            }
            onTimeout(attempt, ctx, out);
            return;
        }
        if (DedupRetention.expires(doneState.value(), timestamp, attempt)) {
            doneState.clear();
        }
    }

    private void onTimeout(Attempt attempt, Context ctx, Collector<RecordWork> out) throws Exception {
        L1Message manifestMsg = manifestState.value();
        String key = ctx.getCurrentKey().id;
        if (manifestMsg == null) {
            List<L1Message> held = new ArrayList<>();
            for (L1Message c : pendingState.values()) {
                held.add(c);
            }
            held.sort((x, y) -> Integer.compare(DeadLetters.chunkIndex(x), DeadLetters.chunkIndex(y)));
            String reason = "no manifest arrived for dump id " + key + " within " + settings.assemblyTimeout() + "; "
                    + held.size() + " chunk message(s) held";
            for (L1Message c : held) {
                metrics.held(-c.valueLength());
                dlq(ctx, c, ReasonCode.MANIFEST_INVALID + ": " + reason);
            }
            pendingState.clear();
            if (doneState.value() == null) {
                Instant now = now(ctx);
                ctx.output(REJECTS, routedReject(Rows.manifestReject(key, ReasonCode.MANIFEST_INVALID,
                        reason + " (sent to the dead-letter topic)", null, now), null, null));
                ctx.output(OUTCOMES, routedOutcome(Rows.unusableOutcome(key, ReasonCode.MANIFEST_INVALID, now), null,
                        null));
                countOutcome(Outcome.REJECTED, attempt);
                finishAttempt(attempt, ctx);
            } else {
                clearAttempt(ctx, attempt); // stray chunks of a dump already decided: dead-lettered, no new rows
            }
            return;
        }
        DumpManifest m = manifest(manifestMsg);
        AssemblyState s = assemblyState.value();
        if (s != null && !s.finished) {
            DumpAssembly a = new DumpAssembly(m, s, maxRecordBytes, settings.rejectPayloadCap());
            Sink sink = new Sink(m, attempt, ctx, out);
            while (!s.finished) {
                L1Message next = pendingState.get(s.nextChunk);
                if (next != null) {
                    pendingState.remove(s.nextChunk);
                    metrics.held(-next.valueLength());
                    consume(m, s, attempt, next, ctx, out);
                } else {
                    a.consume(null, sink); // missing: its records are rejected with CHUNKS_MISSING
                }
            }
            if (Outcome.INCOMPLETE.name().equals(attempt.outcome) || Outcome.REJECTED.name().equals(attempt.outcome)) {
                String reason = "dump " + Manifests.dumpId(m) + " " + attempt.outcome + " after "
                        + settings.assemblyTimeout() + ": " + attempt.reason;
                dlq(ctx, manifestMsg, reason);
                for (L1Message ref : deadLetters.refetches(key, attempt, reason)) {
                    ctx.output(DLQ, ref);
                }
                for (L1Message h : headState.get()) {
                    dlq(ctx, h, reason);
                }
                for (L1Message c : pendingState.values()) {
                    dlq(ctx, c, reason);
                }
            }
        }
        finishAttempt(attempt, ctx);
    }

    // ---------------------------------------------------------------- attempts

    private Attempt startAttempt(L1Message first, Context ctx) throws Exception {
        Attempt a = new Attempt();
        long now = ctx.timerService().currentProcessingTime();
        a.startedAt = now;
        a.publishTs = first.publishTs();
        a.timeoutTimer = now + settings.assemblyTimeout().toMillis();
        ctx.timerService().registerProcessingTimeTimer(a.timeoutTimer);
        a.acceptedBits = DedupRetention.written(doneState.value());
        metrics.attemptStarted();
        attemptState.update(a);
        return a;
    }

    private void rejectUnusable(L1Message msg, ReasonCode reason, String detail, Attempt attempt, Context ctx)
            throws Exception {
        Instant now = now(ctx);
        ctx.output(REJECTS, routedReject(Rows.manifestReject(msg.key, reason, detail, msg.value, now), null, null));
        ctx.output(OUTCOMES, routedOutcome(Rows.unusableOutcome(msg.key, reason, now), null, null));
        metrics.recordRejected(reason);
        dlq(ctx, msg, reason + ": " + detail);
        List<L1Message> held = new ArrayList<>();
        for (L1Message c : pendingState.values()) {
            held.add(c);
        }
        for (L1Message c : held) {
            metrics.held(-c.valueLength());
            dlq(ctx, c, reason + ": chunk of a dump whose manifest is unusable");
        }
        pendingState.clear();
        countOutcome(Outcome.REJECTED, attempt);
        finishWith(DedupRetention.unusable(attempt), attempt, ctx);
    }

    private void finishAttempt(Attempt attempt, Context ctx) throws Exception {
        finishWith(DedupRetention.decided(attempt), attempt, ctx);
    }

    private void finishWith(DoneMarker done, Attempt attempt, Context ctx) throws Exception {
        DoneMarker previous = doneState.value();
        if (previous != null && previous.retentionTimer >= 0) {
            ctx.timerService().deleteProcessingTimeTimer(previous.retentionTimer);
        }
        clearAttempt(ctx, attempt);
        long expiry = retention.expiry(ctx.timerService().currentProcessingTime());
        if (expiry < 0) {
            doneState.clear();
            return;
        }
        done.retentionTimer = expiry;
        ctx.timerService().registerProcessingTimeTimer(done.retentionTimer);
        doneState.update(done);
    }

    private void clearAttempt(Context ctx, Attempt attempt) throws Exception {
        if (attempt.timeoutTimer >= 0) {
            ctx.timerService().deleteProcessingTimeTimer(attempt.timeoutTimer);
        }
        AssemblyState s = assemblyState.value();
        if (s != null) {
            metrics.held(-heldBytes(s));
        }
        for (L1Message h : headState.get()) {
            metrics.held(-h.valueLength());
        }
        for (L1Message c : pendingState.values()) {
            metrics.held(-c.valueLength());
        }
        manifestState.clear();
        assemblyState.clear();
        attemptState.clear();
        pendingState.clear();
        headState.clear();
        manifests.remove(ctx.getCurrentKey().id); // the cache is keyed by the message key, the DumpKey's id
        metrics.attemptCleared();
    }

    private void countOutcome(Outcome o, Attempt attempt) {
        metrics.decided(o, attempt.publishTs);
        attempt.outcome = o.name();
    }

    private DumpManifest manifest(L1Message manifestMsg) throws DumpFormatException {
        DumpManifest m = manifests.get(manifestMsg.key);
        if (m == null) {
            m = ManifestParser.parse(manifestMsg.value); // after a restore: it parsed once, so it parses again
            manifests.put(manifestMsg.key, m);
        }
        return m;
    }

    private void dlq(Context ctx, L1Message msg, String reason) {
        L1Message letter = deadLetters.letter(msg, reason);
        if (letter != null) {
            ctx.output(DLQ, letter);
        }
    }

    private static Instant now(Context ctx) {
        return Instant.ofEpochMilli(ctx.timerService().currentProcessingTime());
    }

    static long fingerprint(byte[] value) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(value == null ? new byte[0] : value);
            return ByteBuffer.wrap(d).getLong();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    static Routed<RejectedRecord> routedReject(RejectedRecord r, String runId, Integer rank) {
        long bytes = r.getPayload() == null ? 0 : r.getPayload().remaining();
        return new Routed<>(HivePartition.rejects(runId, rank), r, bytes);
    }

    static Routed<DumpOutcome> routedOutcome(DumpOutcome o, String runId, Integer rank) {
        return new Routed<>(HivePartition.dumps(runId, rank), o, 0);
    }

    /** Turns the assembly's decisions into outputs. */
    private final class Sink implements AssemblyOutput {
        private final DumpManifest m;
        private final Attempt attempt;
        private final Context ctx;
        private final Collector<RecordWork> out;
        private final String dumpId;

        Sink(DumpManifest m, Attempt attempt, Context ctx, Collector<RecordWork> out) {
            this.m = m;
            this.attempt = attempt;
            this.ctx = ctx;
            this.out = out;
            this.dumpId = Manifests.dumpId(m);
        }

        @Override
        public void accepted(int index, byte[] payload) {
            metrics.recordAccepted();
            if (Attempt.get(attempt.acceptedBits, index)) {
                return; // accepted by an earlier attempt at this dump: already written
            }
            Attempt.set(attempt.acceptedBits, index);
            RecordPlan plan = m.getRecords().get(index);
            RecordWork w = new RecordWork();
            w.dumpId = dumpId;
            w.runId = m.getRunId();
            w.rank = m.getRank();
            w.launchId = m.getLaunchId();
            w.step = m.getStep();
            w.recordIndex = index;
            w.plan = plan;
            w.payload = payload;
            w.bucket = HivePartition.snapshots(m.getRunId(), m.getRank(), plan.getStage());
            out.collect(w);
        }

        @Override
        public void rejected(int index, ReasonCode reason, String detail, byte[] rawEntry, byte[] payload,
                             boolean capped) {
            metrics.recordRejected(reason);
            if (reason == ReasonCode.CHUNK_CRC_MISMATCH || reason == ReasonCode.BUFFER_SIZE_MISMATCH
                    || reason == ReasonCode.CHUNKS_MISSING) {
                attempt.transportFailure = true;
            }
            ctx.output(REJECTS, routedReject(Rows.reject(m, index, reason, detail, rawEntry, payload, capped,
                    now(ctx)), m.getRunId(), m.getRank()));
        }

        @Override
        public void finished(Outcome outcome, ReasonCode reason, int accepted, int rejected) {
            attempt.reason = reason == null ? null : reason.name();
            if (outcome == Outcome.INCOMPLETE || outcome == Outcome.REJECTED) {
                attempt.transportFailure |= reason == ReasonCode.CHUNKS_MISSING
                        || reason == ReasonCode.CHUNK_CRC_MISMATCH || reason == ReasonCode.BUFFER_SIZE_MISMATCH;
            }
            ctx.output(OUTCOMES, routedOutcome(Rows.outcome(m, outcome, reason, accepted, rejected, now(ctx)),
                    m.getRunId(), m.getRank()));
            countOutcome(outcome, attempt);
        }
    }

    // ---------------------------------------------------------------- latency metric

    @Override
    public void snapshotState(FunctionSnapshotContext context) {
        metrics.snapshot(context.getCheckpointId());
    }

    @Override
    public void initializeState(FunctionInitializationContext context) {
        // the latency bookkeeping is a metric only; nothing to restore
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        metrics.checkpointComplete(checkpointId, System.currentTimeMillis());
    }
}
