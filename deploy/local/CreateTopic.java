import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;

/**
 * Creates a topic unless it exists, for deploy/local/hosts.sh (run as a source file on the CLI jar's classpath):
 * {@code java -cp dumpstream.jar CreateTopic.java BOOTSTRAP TOPIC PARTITIONS REPLICATION MIN_INSYNC}.
 */
public class CreateTopic {
    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: CreateTopic BOOTSTRAP TOPIC PARTITIONS REPLICATION MIN_INSYNC");
            System.exit(2);
        }
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "60000");
        NewTopic t = new NewTopic(args[1], Integer.parseInt(args[2]), Short.parseShort(args[3]))
                .configs(Map.of("min.insync.replicas", args[4]));
        try (Admin admin = Admin.create(p)) {
            admin.createTopics(List.of(t)).all().get();
            System.out.println("created topic " + args[1]);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw e;
            }
            System.out.println("topic " + args[1] + " exists");
        }
    }
}
