package io.dumpstream.job;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

import java.nio.charset.StandardCharsets;

/** Keeps every message as bytes with its headers: nothing is parsed (or can fail) in the source. */
public final class L1MessageDeserializer implements KafkaRecordDeserializationSchema<L1Message> {
    private static final long serialVersionUID = 1L;

    @Override
    public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<L1Message> out) {
        out.collect(from(record));
    }

    /** The message as received. */
    public static L1Message from(ConsumerRecord<byte[], byte[]> record) {
        L1Message m = new L1Message();
        m.keyBytes = record.key();
        m.key = record.key() == null ? "" : new String(record.key(), StandardCharsets.UTF_8);
        m.value = record.value();
        Header[] headers = record.headers().toArray();
        m.headerKeys = new String[headers.length];
        m.headerValues = new byte[headers.length][];
        for (int i = 0; i < headers.length; i++) {
            m.headerKeys[i] = headers[i].key();
            m.headerValues[i] = headers[i].value();
        }
        m.topic = record.topic();
        m.partition = record.partition();
        m.offset = record.offset();
        m.timestamp = record.timestamp();
        return m;
    }

    @Override
    public TypeInformation<L1Message> getProducedType() {
        return TypeInformation.of(L1Message.class);
    }
}
