package io.dumpstream.local;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import io.dumpstream.options.KafkaClientProperties;

/**
 * The users file of {@code kafka --sasl-users FILE}: one {@code user=password} a line, blank lines
 * and lines starting with {@code #} ignored. The password is everything after the first {@code =},
 * taken literally (no escapes, no trimming but of a trailing carriage return), except that
 * {@code ${env:NAME}} is replaced by the environment variable NAME. Errors name the file, the line
 * and the user, never a password.
 */
public final class SaslUsers {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._@-]{1,255}");

    private SaslUsers() {
    }

    /** True for a user name this broker accepts: 1 to 255 letters, digits, '.', '_', '-' or '@'. */
    public static boolean validName(String user) {
        return user != null && NAME.matcher(user).matches();
    }

    /** Reads {@code file}; at least one user. */
    public static Map<String, String> load(Path file, Map<String, String> env) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        Map<String, String> users = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.endsWith("\r")) {
                line = line.substring(0, line.length() - 1);
            }
            if (line.isBlank() || line.stripLeading().startsWith("#")) {
                continue;
            }
            String where = file + " line " + (i + 1);
            int eq = line.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException(where + ": expected user=password, found no '='");
            }
            String user = line.substring(0, eq).trim();
            if (!validName(user)) {
                throw new IllegalArgumentException(where + ": user name must be 1 to 255 letters, digits, '.', '_', '-'"
                        + " or '@', got '" + user + "'");
            }
            String password = KafkaClientProperties.expand(line.substring(eq + 1), env, where + " (user " + user + ")");
            if (password.isEmpty()) {
                throw new IllegalArgumentException(where + ": user " + user + " has an empty password");
            }
            if (users.put(user, password) != null) {
                throw new IllegalArgumentException(where + ": user " + user + " is listed twice");
            }
        }
        if (users.isEmpty()) {
            throw new IllegalArgumentException(file + " lists no users (expected user=password lines)");
        }
        return users;
    }
}
