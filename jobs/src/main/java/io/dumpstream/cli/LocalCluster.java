package io.dumpstream.cli;

import org.apache.flink.client.deployment.executors.LocalExecutor;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DeploymentOptions;
import org.apache.flink.core.execution.PipelineExecutor;
import org.apache.flink.core.execution.PipelineExecutorFactory;
import org.apache.flink.core.execution.PipelineExecutorServiceLoader;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

/**
 * A local Flink environment, as {@link StreamExecutionEnvironment#createLocalEnvironment}, whose MiniClusters stay up
 * until {@link #close}. Flink's own local executor shuts a job's MiniCluster down as soon as the job's result has been
 * fetched, while the iterator of {@code executeAndCollect} still asks it for the job's status: "MiniCluster is not yet
 * running or has already been shut down ... Some data might be lost" after every correct batch run. Here the batch
 * commands close the iterator first, then the cluster.
 */
final class LocalCluster implements AutoCloseable {
    private final List<HeldMiniCluster> clusters = new CopyOnWriteArrayList<>();
    private final StreamExecutionEnvironment env;

    LocalCluster(int parallelism, Configuration conf) {
        Configuration c = new Configuration(conf);
        c.set(DeploymentOptions.TARGET, LocalExecutor.NAME);
        c.set(DeploymentOptions.ATTACHED, true);
        PipelineExecutorFactory factory = new PipelineExecutorFactory() {
            @Override
            public String getName() {
                return LocalExecutor.NAME;
            }

            @Override
            public boolean isCompatibleWith(Configuration configuration) {
                return LocalExecutor.NAME.equals(configuration.get(DeploymentOptions.TARGET));
            }

            @Override
            public PipelineExecutor getExecutor(Configuration configuration) {
                return LocalExecutor.createWithFactory(configuration, LocalCluster.this::start);
            }
        };
        PipelineExecutorServiceLoader loader = new PipelineExecutorServiceLoader() {
            @Override
            public PipelineExecutorFactory getExecutorFactory(Configuration configuration) {
                return factory;
            }

            @Override
            public Stream<String> getExecutorNames() {
                return Stream.of(LocalExecutor.NAME);
            }
        };
        env = new StreamExecutionEnvironment(loader, c, LocalCluster.class.getClassLoader());
        env.setParallelism(parallelism);
    }

    StreamExecutionEnvironment env() {
        return env;
    }

    private MiniCluster start(MiniClusterConfiguration configuration) {
        HeldMiniCluster cluster = new HeldMiniCluster(configuration);
        clusters.add(cluster);
        return cluster;
    }

    /** Shuts down the MiniClusters of every job run on {@link #env()}. */
    @Override
    public void close() throws Exception {
        Exception failure = null;
        for (HeldMiniCluster c : clusters) {
            try {
                c.shutDown().get();
            } catch (Exception e) {
                failure = failure == null ? e : failure;
            }
        }
        clusters.clear();
        if (failure != null) {
            throw failure;
        }
    }

    /** A MiniCluster that the job client's shutdown request leaves running; {@link #close} stops it. */
    private static final class HeldMiniCluster extends MiniCluster {
        HeldMiniCluster(MiniClusterConfiguration configuration) {
            super(configuration);
        }

        @Override
        public CompletableFuture<Void> closeAsync() {
            return CompletableFuture.completedFuture(null);
        }

        CompletableFuture<Void> shutDown() {
            return super.closeAsync();
        }
    }
}
