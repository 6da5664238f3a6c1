import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;

/**
 * Creates topics unless they exist, for deploy/local/hosts.sh (run as a source file on the CLI jar's classpath):
 * {@code java -cp dumpstream.jar CreateTopic.java BOOTSTRAP REPLICATION MIN_INSYNC TOPIC:PARTITIONS...}.
 */
public class CreateTopic {
    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println("usage: CreateTopic BOOTSTRAP REPLICATION MIN_INSYNC TOPIC:PARTITIONS...");
            System.exit(2);
        }
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "60000");
        try (Admin admin = Admin.create(p)) {
            // a broker's port answers before it has registered: wait until every broker the replication needs has
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            int brokers;
            while ((brokers = admin.describeCluster().nodes().get().size()) < Short.parseShort(args[1])) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(brokers + " brokers registered at " + args[0] + " after 120 s, "
                            + args[1] + " needed for replication factor " + args[1]);
                }
                Thread.sleep(250);
            }
            for (int i = 3; i < args.length; i++) {
                String name = args[i].substring(0, args[i].lastIndexOf(':'));
                int partitions = Integer.parseInt(args[i].substring(args[i].lastIndexOf(':') + 1));
                NewTopic t = new NewTopic(name, partitions, Short.parseShort(args[1]))
                        .configs(Map.of("min.insync.replicas", args[2]));
                try {
                    admin.createTopics(List.of(t)).all().get();
                    System.out.println("created topic " + name);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        throw e;
                    }
                    System.out.println("topic " + name + " exists");
                }
            }
        }
    }
}
