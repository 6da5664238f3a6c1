package io.dumpstream.job;

import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.streaming.api.functions.sink.filesystem.BucketAssigner;
import org.apache.flink.streaming.api.functions.sink.filesystem.bucketassigners.SimpleVersionedStringSerializer;

/** Buckets are the Hive partition paths computed (and escaped) when the row was built. */
public final class HiveBuckets<T> implements BucketAssigner<Routed<T>, String> {
    private static final long serialVersionUID = 1L;

    @Override
    public String getBucketId(Routed<T> element, Context context) {
        return element.bucket;
    }

    @Override
    public SimpleVersionedSerializer<String> getSerializer() {
        return SimpleVersionedStringSerializer.INSTANCE;
    }
}
