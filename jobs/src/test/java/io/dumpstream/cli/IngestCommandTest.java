package io.dumpstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.local.LocalKafka;
import io.dumpstream.testing.IngestProc;
import io.dumpstream.testing.Landing;
import io.dumpstream.testing.SharedKafka;
import io.dumpstream.testing.Traffic;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * The local {@code ingest} command as a separate process: killed with SIGKILL mid-stream and started
 * again with the same arguments it resumes from its newest retained checkpoint; SIGTERM stops it with
 * a savepoint that the next start resumes from. Exactly once across both: the exact multiset of
 * records sent lands, nothing lost and nothing doubled.
 */
class IngestCommandTest {
    private static final LocalKafka kafka = SharedKafka.get();
    private static final int RANKS = 2;
    private static final List<String> JVM = List.of("-Xmx768m");

    @TempDir
    Path dir;


    /**
     * Without compaction, and with the snapshot parts compacted after every checkpoint, on local disk; on the
     * project's S3 server (Ceph's RADOS Gateway) without compaction, the README's advice there, read back through
     * an independent client (compaction on S3 through failures is S3CompactedFailoverTest's).
     */
    @ParameterizedTest(name = "{0}, compact-checkpoints {1}")
    @CsvSource({"local, 0", "local, 1", "s3, 0"})
    void sigkillMidStreamResumesFromTheCheckpointAndSigtermStopsWithASavepoint(String storage, int compactCheckpoints)
            throws Exception {
        String topic = "ingest-cli-" + storage + "-" + compactCheckpoints;
        kafka.createTopic(topic, 2);
        kafka.createTopic(topic + ".dlq", 1);
        Traffic traffic = new Traffic(kafka.bootstrapServers(), topic, "cli-run-" + storage + compactCheckpoints, RANKS, 8,
                8 * 1024, 32 * 1024, 11);
        Landing out = storage.equals("s3") ? Landing.s3(dir, "ingest-cli", topic) : Landing.local(dir);
        List<String> args = new ArrayList<>(List.of("ingest", "--bootstrap", kafka.bootstrapServers(), "--topic", topic,
                "--group", "cli-it", "--out", out.out(), "--checkpoints", out.checkpoints(),
                "--checkpoint-interval", "1s", "--parallelism", "2",
                "--compact-checkpoints", Integer.toString(compactCheckpoints)));
        args.addAll(out.flinkArgs());

        // 1. the first process runs while ranks publish at a steady rate; SIGKILL once some dumps landed
        Thread publisher = traffic.publish(0, 30, 6.0);
        try (IngestProc p1 = IngestProc.start(JVM, args, dir.resolve("p1"))) {
            awaitLanded(out, 8, p1);
            p1.process().destroyForcibly();
            assertTrue(p1.process().waitFor(30, TimeUnit.SECONDS));
        }
        long atKill = Traffic.landedDumps(out.tables());
        System.out.printf("SIGKILL with %d of 60 dumps landed, publishing still under way: %s%n", atKill,
                publisher.isAlive());

        // 2. the same arguments again: it resumes from the newest retained checkpoint by itself
        try (IngestProc p2 = IngestProc.start(JVM, args, dir.resolve("p2"))) {
            assertTrue(p2.stdout().contains("resumed from") && p2.stdout().contains("/chk-"), p2.stdout());
            if (out.onS3()) {
                assertTrue(p2.stdout().contains("resumed from " + out.checkpoints()), p2.stdout());
            }
            traffic.join(publisher, 120_000);
            assertEquals(RANKS * 30, traffic.dumpsSent());
            awaitLanded(out, RANKS * 30, p2);

            // 3. SIGTERM: a savepoint, exit status 0
            p2.process().destroy();
            assertTrue(p2.process().waitFor(150, TimeUnit.SECONDS), "SIGTERM ends the process");
            assertEquals(0, p2.process().exitValue(), p2.stdout() + p2.stderr());
            assertTrue(p2.stdout().contains("stopped with savepoint"), p2.stdout());
        }

        // 4. more dumps while nothing runs; the next start resumes from that savepoint
        traffic.join(traffic.publish(30, 5, 0), 60_000);
        try (IngestProc p3 = IngestProc.start(JVM, args, dir.resolve("p3"))) {
            assertTrue(p3.stdout().contains("resumed from") && p3.stdout().contains("/savepoint-"), p3.stdout());
            awaitLanded(out, RANKS * 35, p3);
            Thread.sleep(2500); // two more checkpoints: anything doubled would have landed by now
            p3.process().destroy();
            assertTrue(p3.process().waitFor(150, TimeUnit.SECONDS));
            assertEquals(0, p3.process().exitValue(), p3.stderr());
            assertNoSecret(out, p3);
        }

        if (compactCheckpoints > 0) {
            // 5. with compaction the parts of the final checkpoint stay hidden, their merge pending in the
            // savepoint (Flink's compactor merges a checkpoint's parts after that checkpoint completes, and a
            // stopped job takes no further checkpoint); the next start merges and publishes them
            long hidden = RANKS * 35L * 8 - Traffic.landedRecords(out.tables());
            try (IngestProc p4 = IngestProc.start(JVM, args, dir.resolve("p4"))) {
                assertTrue(p4.stdout().contains("resumed from") && p4.stdout().contains("/savepoint-"), p4.stdout());
                Traffic.awaitRecords(out, RANKS * 35L * 8);
                assertNoSecret(out, p4);
                p4.process().destroy();
                assertTrue(p4.process().waitFor(150, TimeUnit.SECONDS));
                assertEquals(0, p4.process().exitValue(), p4.stderr());
            }
            System.out.printf("records held for compaction in the final savepoint, published by the next start: %d%n",
                    hidden);
        }
        traffic.assertExactlyOnce("ingest SIGKILL/SIGTERM, compact-checkpoints " + compactCheckpoints, out);
    }

    private static void awaitLanded(Landing out, long n, IngestProc p) throws Exception {
        p.awaitLanded(out, n, Duration.ofSeconds(180));
    }

    /** The S3 secret key, passed as -Ds3.secret-key, is in neither the output nor the log of the process. */
    static void assertNoSecret(Landing out, IngestProc p) throws Exception {
        if (!out.onS3()) {
            return;
        }
        String secret = out.server().secretKey();
        String all = p.stdout() + java.nio.file.Files.readString(p.stderrFile());
        assertFalse(all.contains(secret), "the S3 secret key was printed");
    }
}
