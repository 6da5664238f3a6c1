package io.dumpstream.storage;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.plugin.DefaultPluginManager;
import org.apache.flink.core.plugin.DirectoryBasedPluginFinder;
import org.apache.flink.core.plugin.PluginManager;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The Flink configuration of a command-line process and the file systems it reaches.
 *
 * <p>Flink's own CLI reads {@code $FLINK_CONF_DIR/config.yaml} and overlays {@code -Dkey=value}; so does
 * this. The file systems of Flink's plugins folder (the S3 one, built beside {@code dumpstream.jar} in
 * {@code plugins/s3-fs-hadoop/}; {@code FLINK_PLUGINS_DIR} overrides the folder) are loaded in their own
 * class loaders, as a Flink cluster does: their Hadoop and Jackson are not relocated and would clash with
 * the job's. A MiniCluster never initializes the file systems itself, so without {@link #install} the
 * {@code s3.*} keys would never reach the S3 file system.
 */
public final class FlinkSettings {
    /** The environment variable Flink's scripts name the plugins folder with. */
    public static final String PLUGINS_ENV = "FLINK_PLUGINS_DIR";
    /** The environment variable Flink's scripts name the configuration folder with. */
    public static final String CONF_ENV = "FLINK_CONF_DIR";

    private static final String AWS_V1_NOTICE = "aws.java.v1.disableDeprecationAnnouncement";

    private static volatile Configuration current = new Configuration();
    private static volatile Path pluginsDir;

    private FlinkSettings() {
    }

    /**
     * Loads {@code $FLINK_CONF_DIR/config.yaml} (when the variable is set), overlays {@code dynamic}, and
     * initializes Flink's file systems with it and the plugins folder. Called once per process by the CLI
     * before a command touches a file system; later calls replace the settings.
     */
    public static synchronized Configuration install(Map<String, String> dynamic) {
        Configuration conf = load(System.getenv(CONF_ENV), dynamic);
        // the S3 plugin's AWS SDK v1 prints a deprecation notice with a stack trace to stderr on first use
        if (System.getProperty(AWS_V1_NOTICE) == null) {
            System.setProperty(AWS_V1_NOTICE, "true");
        }
        Path plugins = pluginsFolder(System.getenv(PLUGINS_ENV));
        FileSystem.initialize(conf, pluginManager(conf, plugins));
        pluginsDir = plugins;
        current = conf;
        return conf.clone();
    }

    /** The settings {@link #install} loaded (empty before): the base every job configuration starts from. */
    public static Configuration current() {
        return current.clone();
    }

    /** The plugins folder {@link #install} used, or null when there was none. */
    public static Path pluginsDir() {
        return pluginsDir;
    }

    /** The configuration of {@code confDir/config.yaml} (none when {@code confDir} is null) with {@code dynamic} over it. */
    static Configuration load(String confDir, Map<String, String> dynamic) {
        Configuration overlay = new Configuration();
        dynamic.forEach(overlay::setString);
        if (confDir == null || confDir.isBlank()) {
            return overlay;
        }
        if (!Files.isDirectory(Path.of(confDir))) {
            throw new IllegalArgumentException(CONF_ENV + "=" + confDir + ": no such directory");
        }
        return GlobalConfiguration.loadConfiguration(confDir, overlay);
    }

    /**
     * {@code FLINK_PLUGINS_DIR} when set, else {@code plugins/} beside this class's jar (or beside its classes
     * folder, as in the build's tests: {@code jobs/target/plugins}), else null.
     */
    static Path pluginsFolder(String fromEnv) {
        if (fromEnv != null && !fromEnv.isBlank()) {
            Path p = Path.of(fromEnv);
            if (!Files.isDirectory(p)) {
                throw new IllegalArgumentException(PLUGINS_ENV + "=" + fromEnv + ": no such directory");
            }
            return p;
        }
        try {
            Path code = Path.of(FlinkSettings.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            Path beside = code.toAbsolutePath().getParent().resolve("plugins");
            return Files.isDirectory(beside) ? beside : null;
        } catch (URISyntaxException | NullPointerException | SecurityException e) {
            return null;
        }
    }

    private static PluginManager pluginManager(Configuration conf, Path plugins) {
        // PluginConfig.fromConfiguration would warn about a "plugins" folder in the working directory
        List<String> patterns = new java.util.ArrayList<>(conf.get(CoreOptions.PLUGIN_ALWAYS_PARENT_FIRST_LOADER_PATTERNS));
        patterns.addAll(conf.get(CoreOptions.PLUGIN_ALWAYS_PARENT_FIRST_LOADER_PATTERNS_ADDITIONAL));
        String[] parentFirst = patterns.toArray(new String[0]);
        if (plugins == null) {
            return new DefaultPluginManager(List.of(), parentFirst);
        }
        try {
            return new DefaultPluginManager(new DirectoryBasedPluginFinder(plugins).findPlugins(), parentFirst);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the plugins folder " + plugins + ": " + e.getMessage(), e);
        }
    }
}
