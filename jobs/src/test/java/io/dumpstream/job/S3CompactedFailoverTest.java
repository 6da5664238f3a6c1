package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.local.LocalKafka;
import io.dumpstream.testing.CephS3;
import io.dumpstream.testing.Landing;
import io.dumpstream.testing.SharedKafka;
import io.dumpstream.testing.Traffic;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.junit.jupiter.api.Test;

import java.time.Duration;

/**
 * {@link CompactedFailoverTest}'s failures with the tables and checkpoints on the project's S3 server (Ceph's
 * RADOS Gateway): parts are multipart uploads completed when their checkpoint commits, compaction reads and
 * writes S3, restarts restore from checkpoints on S3. Plus the S3 server itself gone for 30 s mid-stream: the
 * job fails its checkpoints, restarts from the newest one once S3 answers again, and loses nothing. What landed
 * is read back with the AWS SDK (not the file system that wrote it) and compared with what was sent.
 */
class S3CompactedFailoverTest extends CompactedFailoverTest {
    @Override
    String topic(String name) {
        return "failover-s3-" + name;
    }

    /** The first parts land later on S3 (multipart uploads, compaction one checkpoint later): publish 4x slower. */
    @Override
    double rate(double rate) {
        return rate / 4;
    }

    @Override
    Landing landing(String topic) {
        return Landing.s3(dir, "failover", topic);
    }

    @Test
    void theS3ServerDownForThirtySecondsMidStreamTheJobRecoversByItself() throws Exception {
        LocalKafka kafka = SharedKafka.get();
        String topic = topic("s3-outage");
        Traffic t = traffic(kafka, topic, 25);
        IngestConfig c = config(kafka.bootstrapServers(), topic, dir);
        c.restartAttempts = -1; // unbounded, exponential delay capped below
        c.assemblyTimeout = Duration.ofSeconds(120); // dumps straddling the outage wait for their chunks
        CephS3 s3 = landing.server();
        Configuration extra = new Configuration();
        extra.set(RestartStrategyOptions.RESTART_STRATEGY_EXPONENTIAL_DELAY_MAX_BACKOFF, Duration.ofSeconds(5));
        try (LocalIngest job = LocalIngest.start(c, extra)) {
            Thread publisher = t.publish(0, 25, 0.6); // about 40 s of publishing: across the outage
            await(() -> landed(c) >= 6, job.client(), Duration.ofSeconds(120), "6 dumps landed");
            long t0 = System.nanoTime();
            s3.stopGateway();
            boolean inFlight;
            try {
                Thread.sleep(30_000);
                inFlight = publisher.isAlive();
            } finally {
                s3.startGateway();
            }
            long healed = System.nanoTime();
            System.out.printf("S3 gateway down for %.1f s with publishing under way: %s%n", (healed - t0) / 1e9, inFlight);
            t.join(publisher, 240_000);
            awaitLanded(c, t, job.client());
            System.out.printf("S3 outage: caught up %.1f s after the gateway came back%n",
                    (System.nanoTime() - healed) / 1e9 - 2.5);
            assertTrue(inFlight, "publishing ran across the outage");
        }
        t.assertExactlyOnce("S3 gateway stopped for 30 s and restarted", landing);
    }

    /**
     * Not run on S3 (CI time): a restart from a checkpoint on S3 is this class's S3 outage and TaskManager loss,
     * and IngestCommandTest's SIGKILL (FailoverTest and CompactedFailoverTest run it on local disk). Nor is the
     * broker outage (CompactedFailoverTest leaves it out: it does not touch the storage; FailoverTest runs it).
     */
    @Override
    void anOperatorThatThrowsOnceRestartsFromTheCheckpointExactlyOnce() {
    }
}
