package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.local.LocalKafka;
import io.dumpstream.testing.Landing;
import io.dumpstream.testing.SharedKafka;
import io.dumpstream.testing.Traffic;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * Exactly once under the failures clusters produce (after Flink's FileSink failover ITs and
 * Kafka's exactly-once sink ITs): an operator failure after a completed checkpoint, a
 * stop-with-savepoint upgrade, the broker down for tens of seconds, a TaskManager lost. Ranks
 * publish at a steady rate throughout, so each failure hits data in flight; every test checks the
 * exact multiset of records and dumps that landed.
 */
class FailoverTest {
    private static final int RANKS = 2;

    @TempDir
    Path dir;

    /** Checkpoints between compactions of the snapshot parts; 0: no compaction ({@link CompactedFailoverTest}: 1). */
    int compactCheckpoints() {
        return 0;
    }

    /** The test's topic, distinct per subclass (they share one broker). */
    String topic(String name) {
        return (compactCheckpoints() == 0 ? "failover-" : "failover-compacted-") + name;
    }

    /**
     * Launches per second the ranks publish at, for a test that publishes at {@code rate} on local disk: slower where
     * the first dumps take longer to land (S3), so that each fault still hits data in flight.
     */
    double rate(double rate) {
        return rate;
    }

    /** Where the job lands its tables and checkpoints: local disk here ({@link S3CompactedFailoverTest}: the S3 server). */
    Landing landing(String topic) {
        return Landing.local(dir);
    }

    /** The landing of the running test, set by {@link #config}. */
    Landing landing;

    IngestConfig config(String bootstrap, String topic, Path dir) {
        IngestConfig c = JobRun.config(bootstrap, topic, dir);
        landing = landing(topic);
        c.out = landing.out();
        c.checkpoints = landing.checkpoints();
        // the process's Flink settings: the S3 file system's endpoint and credentials (none for local disk)
        io.dumpstream.storage.FlinkSettings.install(landing.flinkConfig());
        c.restartAttempts = 5;
        c.resume = true;
        c.compactCheckpoints = compactCheckpoints();
        configure(c);
        return c;
    }

    /** More settings of a subclass's runs ({@link IcebergFailoverTest}: Iceberg on). */
    void configure(IngestConfig c) {
    }

    static Traffic traffic(LocalKafka kafka, String topic, long seed) {
        kafka.createTopic(topic, 2);
        kafka.createTopic(topic + ".dlq", 1);
        return new Traffic(kafka.bootstrapServers(), topic, "failover-" + topic, RANKS, 8, 8 * 1024, 32 * 1024, seed);
    }

    /** Throws once, after a checkpoint has completed and 25 more messages have passed. */
    static final class ThrowOnce extends RichMapFunction<L1Message, L1Message> implements CheckpointListener {
        static final AtomicBoolean THROWN = new AtomicBoolean();
        static final AtomicBoolean CHECKPOINTED = new AtomicBoolean();
        static final AtomicInteger AFTER = new AtomicInteger();

        @Override
        public L1Message map(L1Message m) {
            if (CHECKPOINTED.get() && AFTER.incrementAndGet() >= 25 && THROWN.compareAndSet(false, true)) {
                throw new IllegalStateException("injected failure after a completed checkpoint");
            }
            return m;
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            CHECKPOINTED.set(true);
        }
    }

    @Test
    void anOperatorThatThrowsOnceRestartsFromTheCheckpointExactlyOnce() throws Exception {
        LocalKafka kafka = SharedKafka.get();
        String topic = topic("throw");
        ThrowOnce.THROWN.set(false); // static: a subclass runs the same test in this JVM
        ThrowOnce.CHECKPOINTED.set(false);
        ThrowOnce.AFTER.set(0);
        Traffic t = traffic(kafka, topic, 21);
        IngestConfig c = config(kafka.bootstrapServers(), topic, dir);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(c.parallelism,
                IngestJob.configuration(c));
        IngestJob.build(env, c, s -> s.map(new ThrowOnce()).uid("inject-failure").name("inject failure"));
        JobClient client = env.executeAsync(IngestJob.NAME);
        try {
            Thread publisher = t.publish(0, 25, rate(8.0));
            await(ThrowOnce.THROWN::get, client, Duration.ofSeconds(120), "the injected failure");
            boolean inFlight = publisher.isAlive();
            t.join(publisher, 120_000);
            awaitLanded(c, t, client);
            System.out.println("throw once: failure injected while publishing: " + inFlight);
            assertTrue(inFlight, "the failure hit data in flight");
            t.assertExactlyOnce("throw once after a checkpoint", landing);
        } finally {
            client.cancel().get(60, TimeUnit.SECONDS);
        }
    }

    @Test
    void stopWithSavepointMidStreamAndStartFromItExactlyOnce() throws Exception {
        LocalKafka kafka = SharedKafka.get();
        String topic = topic("savepoint");
        Traffic t = traffic(kafka, topic, 22);
        IngestConfig c = config(kafka.bootstrapServers(), topic, dir);
        Thread publisher;
        String savepoint;
        try (LocalIngest first = LocalIngest.start(c, new Configuration())) {
            publisher = t.publish(0, 25, rate(2.5)); // about 10 s of publishing: the stop comes while it goes on
            await(() -> landed(c) >= 6, first.client(), Duration.ofSeconds(120), "6 dumps landed");
            savepoint = first.stop(Duration.ofSeconds(120));
        }
        assertNotNull(savepoint, "stop-with-savepoint completed");
        boolean inFlight = publisher.isAlive();
        try (LocalIngest second = LocalIngest.start(c, new Configuration())) {
            assertTrue(second.resumedFrom() != null && second.resumedFrom().contains("savepoint-"),
                    "resumed from " + second.resumedFrom());
            t.join(publisher, 120_000);
            awaitLanded(c, t, second.client());
        }
        System.out.println("savepoint " + savepoint + " taken while publishing: " + inFlight);
        assertTrue(inFlight, "the savepoint was taken mid-stream");
        t.assertExactlyOnce("stop with savepoint, start from it", landing);
    }

    @Test
    void theBrokerDownForTwentySecondsMidStreamTheJobRecoversByItself() throws Exception {
        try (LocalKafka kafka = LocalKafka.startEphemeral()) {
            String topic = topic("broker");
            Traffic t = traffic(kafka, topic, 23);
            IngestConfig c = config(kafka.bootstrapServers(), topic, dir);
            c.restartAttempts = -1; // unbounded, exponential delay capped below
            // A dump whose chunks straddle the outage waits for the rest, as with the 10 min default: the
            // assembly timeout must outlast the outage the job rides out (6 s would declare it INCOMPLETE).
            c.assemblyTimeout = Duration.ofSeconds(60);
            Configuration extra = new Configuration();
            extra.set(RestartStrategyOptions.RESTART_STRATEGY_EXPONENTIAL_DELAY_MAX_BACKOFF, Duration.ofSeconds(3));
            try (LocalIngest job = LocalIngest.start(c, extra)) {
                Thread publisher = t.publish(0, 25, rate(6.0));
                await(() -> landed(c) >= 6, job.client(), Duration.ofSeconds(120), "6 dumps landed");
                long t0 = System.nanoTime();
                kafka.stop();
                Thread.sleep(20_000);
                kafka.restart();
                System.out.printf("broker down for %.1f s with publishing under way: %s%n",
                        (System.nanoTime() - t0) / 1e9, publisher.isAlive());
                t.join(publisher, 240_000);
                awaitLanded(c, t, job.client());
            }
            t.assertExactlyOnce("broker stopped for 20 s and restarted", landing);
        }
    }

    @Test
    void aTaskManagerLostMidStreamExactlyOnceAfterRecovery() throws Exception {
        LocalKafka kafka = SharedKafka.get();
        String topic = topic("taskmanager");
        Traffic t = traffic(kafka, topic, 24);
        IngestConfig c = config(kafka.bootstrapServers(), topic, dir);
        Configuration conf = IngestJob.configuration(c);
        MiniClusterConfiguration mc = new MiniClusterConfiguration.Builder().setConfiguration(conf)
                .setNumTaskManagers(2).setNumSlotsPerTaskManager(1).build();
        try (MiniCluster cluster = new MiniCluster(mc)) {
            cluster.start();
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
            IngestJob.build(env, c);
            StreamGraph graph = env.getStreamGraph();
            JobID id = cluster.submitJob(graph).get().getJobID();
            Thread publisher = t.publish(0, 25, rate(8.0));
            awaitCluster(() -> landed(c) >= 6, cluster, id, "6 dumps landed");
            cluster.terminateTaskManager(0).get(60, TimeUnit.SECONDS);
            boolean inFlight = publisher.isAlive();
            cluster.startTaskManager();
            t.join(publisher, 120_000);
            awaitCluster(() -> landed(c) >= t.dumpsSent(), cluster, id, "every dump landed");
            Thread.sleep(2500);
            System.out.println("TaskManager 0 terminated while publishing: " + inFlight);
            assertTrue(inFlight, "the TaskManager was lost mid-stream");
            t.assertExactlyOnce("a TaskManager lost", landing);
            cluster.cancelJob(id).get(60, TimeUnit.SECONDS);
        }
    }

    // ------------------------------------------------------------------ helpers

    long landed(IngestConfig c) {
        try {
            return Traffic.landedDumps(landing.tables());
        } catch (Exception e) {
            return 0;
        }
    }

    void awaitLanded(IngestConfig c, Traffic t, JobClient client) throws Exception {
        await(() -> landed(c) >= t.dumpsSent(), client, Duration.ofSeconds(240), "every dump landed");
        // and every record: with compaction the snapshots land a checkpoint or two after their dumps' rows,
        // and a job closed before that keeps them hidden in its savepoint until it next starts
        await(() -> Traffic.landedRecords(landing.tables()) >= t.recordsSent(), client, Duration.ofSeconds(120),
                "every record landed");
        Thread.sleep(2500); // two more checkpoints: anything doubled would have landed by now
    }

    static void await(BooleanSupplier done, JobClient client, Duration timeout, String what) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!done.getAsBoolean()) {
            JobStatus s = client.getJobStatus().get(30, TimeUnit.SECONDS);
            if (s.isGloballyTerminalState()) {
                client.getJobExecutionResult().get();
                throw new AssertionError("job ended with " + s + " waiting for " + what);
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(200);
        }
    }

    private static void awaitCluster(BooleanSupplier done, MiniCluster cluster, JobID id, String what)
            throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(240).toNanos();
        while (!done.getAsBoolean()) {
            JobStatus s = cluster.getJobStatus(id).get(30, TimeUnit.SECONDS);
            if (s.isGloballyTerminalState()) {
                throw new AssertionError("job ended with " + s + " waiting for " + what);
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(200);
        }
    }
}
