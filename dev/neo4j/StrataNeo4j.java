import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

/**
 * Development launcher for Strata: an embedded Neo4j 5.26 Community DBMS with
 * the Bolt connector on loopback. Started and supervised by `strata dev neo4j`.
 *
 * Configuration comes from the environment so that the password never shows
 * in a process listing:
 *   STRATA_NEO4J_HOME      data directory (kept across restarts)
 *   STRATA_NEO4J_HOST      listen host, default 127.0.0.1
 *   STRATA_NEO4J_PORT      Bolt port, default 7687
 *   STRATA_NEO4J_PASSWORD  password of the `neo4j` user (at least 8 chars)
 *   STRATA_NEO4J_PAGECACHE page cache size in MiB, default 256
 *
 * Prints one line "STRATA_NEO4J_STARTED" once the DBMS and its connector are
 * up; the Python side then confirms readiness by running a query over Bolt.
 * SIGTERM triggers a clean shutdown (checkpoint, store closed).
 */
public final class StrataNeo4j {
    private StrataNeo4j() {}

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    /** The launcher owns this DBMS: the configured password is authoritative. */
    private static void setPassword(DatabaseManagementService dbms, String password) {
        try {
            dbms.database("system").executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", password));
        } catch (RuntimeException e) {
            String message = String.valueOf(e.getMessage());
            if (!message.contains("Old password and new password cannot be the same")) {
                throw e;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        Path home = Path.of(env("STRATA_NEO4J_HOME", "var/neo4j")).toAbsolutePath();
        String host = env("STRATA_NEO4J_HOST", "127.0.0.1");
        int port = Integer.parseInt(env("STRATA_NEO4J_PORT", "7687"));
        String password = env("STRATA_NEO4J_PASSWORD", "");
        long pageCacheMiB = Long.parseLong(env("STRATA_NEO4J_PAGECACHE", "256"));
        if (password.length() < 8) {
            System.err.println("STRATA_NEO4J_ERROR password must be at least 8 characters");
            System.exit(2);
        }
        Files.createDirectories(home);

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress(host, port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress(host, port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(HttpConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                .setConfig(GraphDatabaseSettings.pagecache_memory, pageCacheMiB * 1024 * 1024)
                .setConfig(GraphDatabaseSettings.transaction_timeout, Duration.ofMinutes(10))
                .build();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("STRATA_NEO4J_STOPPING");
            System.out.flush();
            dbms.shutdown();
            stopped.countDown();
        }, "strata-neo4j-shutdown"));

        try {
            setPassword(dbms, password);
        } catch (RuntimeException e) {
            System.out.println("STRATA_NEO4J_ERROR cannot set the password: " + e.getMessage());
            System.out.flush();
            System.exit(1);
        }

        System.out.println("STRATA_NEO4J_STARTED bolt://" + host + ":" + port);
        System.out.flush();
        stopped.await();
    }
}
