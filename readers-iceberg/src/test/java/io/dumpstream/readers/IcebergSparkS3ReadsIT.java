package io.dumpstream.readers;

import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;

/**
 * The Iceberg tables of a running ingest on a real S3 server ({@link IcebergLake#onS3()}: Ceph's RADOS Gateway)
 * read by a real local Spark 4.1: the session is made with the README's {@code pyspark} settings for S3 (S3A under
 * the {@code s3://} scheme, Spark 4.1's hadoop-aws on the AWS SDK v2 modules), its python lines run verbatim give
 * exactly what DuckDB reads from a download of the same Parquet objects, hostile names included; a run that lands
 * while the session is open is in its next query.
 */
class IcebergSparkS3ReadsIT {
    private static IcebergLake lake;
    private static SparkSession spark;

    @BeforeAll
    static void landAndStartSpark() throws Exception {
        lake = IcebergLake.onS3();
        String sdk = System.getProperty("awssdk.version");
        spark = IcebergSparkReadsIT.session("pyspark --packages org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0,"
                + "org.postgresql:postgresql:42.7.14,org.apache.hadoop:", lake, List.of(
                        "org.apache.hadoop:hadoop-aws:" + System.getProperty("hadoop.version"), "software.amazon.awssdk:s3:" + sdk,
                        "software.amazon.awssdk:s3-transfer-manager:" + sdk, "software.amazon.awssdk:sts:" + sdk));
    }

    @AfterAll
    static void stopSpark() {
        if (spark != null) {
            spark.stop();
        }
    }

    @Test
    void readmeIcebergS3LinesGiveWhatDuckDbReadsAndANewRunWithNoDdl() throws Exception {
        IcebergSparkReadsIT.readsAsDuckDb(spark, lake, "late-for-spark-on-s3");
    }
}
