package io.dumpstream.publish;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.zip.CRC32C;

import io.dumpstream.format.DumpFormatException;
import io.dumpstream.format.L1Layout;
import io.dumpstream.format.ReasonCode;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.manifest.ManifestValidator;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.schema.DumpManifest;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes one L1 dump as the contract's Kafka messages: the manifest first, then the buffer's
 * chunks in order, all keyed by the dump id so they share a partition.
 *
 * <p>The buffer is read twice, chunk by chunk: a first pass computes every chunk's CRC-32C (the
 * manifest carries them and goes first), a second one sends. Chunk buffers come from a small pool
 * that is refilled as Kafka acknowledges, so memory stays at a few chunks whatever the dump size.
 * {@code publish} returns only once every message of the dump is acknowledged.
 *
 * <p>Dumps are published one at a time; concurrent callers wait for each other.
 */
public final class DumpPublisher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DumpPublisher.class);

    private final PublisherConfig config;
    private final ReadFault fault;
    private final Producer<byte[], byte[]> producer;
    private final BlockingQueue<byte[]> pool;
    private int pooledBuffers;

    public DumpPublisher(PublisherConfig config) {
        this(config, ReadFault.NONE);
    }

    /**
     * A publisher whose buffer file reads first pass through {@code fault}, which may throw an
     * IOException for a range: the seam tests use to make a chunk unreadable on a real file.
     */
    public DumpPublisher(PublisherConfig config, ReadFault fault) {
        this.config = config;
        this.fault = fault;
        this.producer = new KafkaProducer<>(config.producerProperties());
        this.pool = new ArrayBlockingQueue<>(config.inFlightChunks());
    }

    public PublisherConfig config() {
        return config;
    }

    /**
     * Publishes a dump whose buffer is a file.
     *
     * A file shorter or longer than buffer_bytes, or a chunk whose range cannot be read, is still
     * published (see {@link PublishResult#defects()}).
     *
     * @throws DumpFormatException the manifest is invalid
     * @throws PublishException    Kafka did not acknowledge a message; names the dump and the chunk
     * @throws IOException         the file could not be read
     */
    public synchronized PublishResult publish(DumpManifest manifest, Path bufferFile)
            throws DumpFormatException, IOException {
        try (FileChannel ch = FileChannel.open(bufferFile, StandardOpenOption.READ)) {
            return publish(manifest, new FileSource(ch, bufferFile, fault));
        }
    }

    /**
     * Publishes a dump whose buffer is {@code buffer}'s remaining bytes; the buffer is sliced per
     * chunk, never copied whole, and its position is left unchanged.
     */
    public synchronized PublishResult publish(DumpManifest manifest, ByteBuffer buffer)
            throws DumpFormatException, IOException {
        return publish(manifest, new MemorySource(buffer.duplicate()));
    }

    private PublishResult publish(DumpManifest manifest, Source source) throws DumpFormatException, IOException {
        long publishTs = System.currentTimeMillis();
        String dumpId = Manifests.dumpId(manifest);
        long bufferBytes = manifest.getBufferBytes();
        if (bufferBytes < L1Layout.PAYLOAD_BASE || bufferBytes > L1Layout.MAX_TOTAL_BYTES) {
            throw new DumpFormatException(ReasonCode.MANIFEST_INVALID, "dump " + dumpId + ": buffer_bytes "
                    + bufferBytes + " must be in [" + L1Layout.PAYLOAD_BASE + ", " + L1Layout.MAX_TOTAL_BYTES + "]");
        }
        long fileBytes = source.size();
        List<String> defects = new ArrayList<>();
        if (fileBytes != bufferBytes) {
            defects.add(ReasonCode.BUFFER_SIZE_MISMATCH + ": " + source + " has " + fileBytes
                    + " bytes but manifest buffer_bytes is " + bufferBytes + "; published the bytes that exist");
        }
        int chunkBytes = config.chunkBytes();
        int chunks = Math.toIntExact(Manifests.chunkCount(bufferBytes, chunkBytes));
        Layout layout = new Layout(bufferBytes, fileBytes, chunkBytes, chunks);

        BitSet unreadable = new BitSet(chunks);
        List<Long> crcs = checksums(source, layout, unreadable, defects);
        DumpManifest sent = withChunks(manifest, chunkBytes, crcs);
        ManifestValidator.validate(sent);
        byte[] manifestValue = config.manifestFormat() == ManifestFormat.AVRO
                ? ManifestParser.toAvro(sent) : ManifestParser.toJson(sent);
        if (manifestValue.length > ManifestParser.MAX_MANIFEST_BYTES) {
            throw new DumpFormatException(ReasonCode.MANIFEST_INVALID, "dump " + dumpId + ": encoded manifest is "
                    + manifestValue.length + " bytes, more than " + ManifestParser.MAX_MANIFEST_BYTES);
        }

        byte[] key = dumpId.getBytes(StandardCharsets.UTF_8);
        byte[] ts = L1Headers.decimal(publishTs);
        Acks acks = new Acks();
        RecordHeaders mh = new RecordHeaders();
        mh.add(L1Headers.KIND, L1Headers.ascii(L1Headers.KIND_MANIFEST));
        mh.add(L1Headers.PUBLISH_TS, ts);
        send(new ProducerRecord<>(config.topic(), null, key, manifestValue, mh), -1, null, acks);
        int sentChunks = 0;
        long sentBytes = 0;
        try {
            for (int i = 0; i < chunks && !acks.failed(); i++) {
                if (unreadable.get(i)) {
                    continue;
                }
                long offset = (long) i * chunkBytes;
                int length = layout.sentLength(i);
                boolean pooled = length == chunkBytes;
                byte[] value = pooled ? takeBuffer() : new byte[length];
                try {
                    source.read(offset, value, length);
                } catch (IOException | RuntimeException e) {
                    if (pooled) {
                        pool.add(value);
                    }
                    throw e;
                }
                long crc = crcOf(value, length);
                if (crc != crcs.get(i)) {
                    if (pooled) {
                        pool.add(value);
                    }
                    throw new IOException("dump " + dumpId + ": chunk " + i + " of " + source
                            + " changed while publishing (CRC-32C " + crcs.get(i) + " then " + crc + ")");
                }
                RecordHeaders h = new RecordHeaders();
                h.add(L1Headers.KIND, L1Headers.ascii(L1Headers.KIND_CHUNK));
                h.add(L1Headers.CHUNK_INDEX, L1Headers.decimal(i));
                h.add(L1Headers.CHUNK_OFFSET, L1Headers.decimal(offset));
                h.add(L1Headers.CHUNK_CRC32C, L1Headers.decimal(crc));
                h.add(L1Headers.PUBLISH_TS, ts);
                send(new ProducerRecord<>(config.topic(), null, key, value, h), i, pooled ? value : null, acks);
                sentChunks++;
                sentBytes += length;
            }
        } finally {
            producer.flush();
            acks.awaitAll();
        }
        if (acks.failed()) {
            throw new PublishException(dumpId, acks.failedIndex, acks.error.toString(), acks.error);
        }
        int messages = 1 + sentChunks;
        long bytes = manifestValue.length + sentBytes;
        for (String d : defects) {
            LOG.warn("dump {} published with a defect: {}", dumpId, d);
        }
        LOG.debug("published dump {}: {} messages, {} bytes", dumpId, messages, bytes);
        return new PublishResult(dumpId, messages, bytes, sentChunks, sent, List.copyOf(defects));
    }

    /**
     * What each chunk message carries when the buffer file's length differs from buffer_bytes, so
     * the job's per-chunk length check finds exactly the chunks the offline decoder finds:
     * a chunk inside the file carries its range; a chunk the file ends in carries the bytes that
     * exist (none for one wholly past the end: an empty chunk, CRC-32C 0); when the file is longer,
     * the last chunk carries its range plus the excess bytes, at most up to chunk_bytes (at least
     * one, so a full last chunk is still one byte too long), never the whole excess, so a file of
     * any length costs at most one chunk more than buffer_bytes.
     */
    private record Layout(long bufferBytes, long fileBytes, int chunkBytes, int chunks) {
        int expectedLength(int i) {
            return (int) Math.min(chunkBytes, bufferBytes - (long) i * chunkBytes);
        }

        int sentLength(int i) {
            long offset = (long) i * chunkBytes;
            int expected = expectedLength(i);
            if (i == chunks - 1 && fileBytes > bufferBytes) {
                long extra = Math.min(fileBytes - bufferBytes, Math.max(1, chunkBytes - expected));
                return (int) (expected + extra);
            }
            return (int) Math.max(0, Math.min(expected, fileBytes - offset));
        }
    }

    /**
     * The manifest as published: a shallow copy with the chunk fields set, so the caller's manifest
     * is untouched and its (up to 4096) records are shared rather than deep-copied per publish.
     */
    public static DumpManifest withChunks(DumpManifest m, int chunkBytes, List<Long> crcs) {
        DumpManifest copy = new DumpManifest();
        for (int i = 0; i < DumpManifest.SCHEMA$.getFields().size(); i++) {
            copy.put(i, m.get(i));
        }
        copy.setChunkBytes(chunkBytes);
        copy.setChunkCrc32c(crcs);
        return copy;
    }

    /**
     * CRC-32C of every chunk as it will be sent. A chunk whose bytes cannot be read (an I/O error
     * on its range) is marked in {@code unreadable}, listed with CRC-32C 0 and never sent: the job
     * records it as CHUNKS_MISSING when the assembly times out.
     */
    private List<Long> checksums(Source source, Layout layout, BitSet unreadable, List<String> defects)
            throws InterruptedIOException {
        List<Long> crcs = new ArrayList<>(layout.chunks());
        byte[] scratch = takeBuffer();
        try {
            for (int i = 0; i < layout.chunks(); i++) {
                long offset = (long) i * layout.chunkBytes();
                int length = layout.sentLength(i);
                byte[] b = length <= scratch.length ? scratch : new byte[length];
                try {
                    crcs.add(source.crc(offset, length, b));
                } catch (InterruptedIOException e) {
                    throw e;
                } catch (IOException e) {
                    unreadable.set(i);
                    crcs.add(0L);
                    defects.add(ReasonCode.CHUNKS_MISSING + ": chunk " + i + " (bytes " + offset + ".."
                            + (offset + length) + ") of " + source + " could not be read (" + e.getMessage()
                            + "); not published");
                }
            }
        } finally {
            pool.add(scratch);
        }
        return crcs;
    }

    private void send(ProducerRecord<byte[], byte[]> record, int index, byte[] pooled, Acks acks) {
        acks.sent();
        Callback cb = (metadata, error) -> {
            if (pooled != null) {
                pool.add(pooled);
            }
            acks.done(index, error);
        };
        try {
            producer.send(record, cb);
        } catch (RuntimeException e) {
            cb.onCompletion(null, e);
        }
    }

    private byte[] takeBuffer() throws InterruptedIOException {
        synchronized (pool) {
            if (pool.isEmpty() && pooledBuffers < config.inFlightChunks()) {
                pooledBuffers++;
                return new byte[config.chunkBytes()];
            }
        }
        try {
            return pool.take();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for Kafka to acknowledge a chunk");
        }
    }

    private static long crcOf(byte[] b, int length) {
        CRC32C c = new CRC32C();
        c.update(b, 0, length);
        return c.getValue();
    }

    /** Closes the producer, waiting for nothing: {@code publish} already waited for its messages. */
    @Override
    public void close() {
        producer.close(java.time.Duration.ofSeconds(5));
    }

    /** Outstanding sends of one dump and the first failure, by lowest message index. */
    private static final class Acks {
        private int outstanding;
        private Exception error;
        private int failedIndex = Integer.MAX_VALUE;

        synchronized void sent() {
            outstanding++;
        }

        synchronized void done(int index, Exception e) {
            outstanding--;
            if (e != null && index < failedIndex) {
                failedIndex = index;
                error = e;
            }
            notifyAll();
        }

        synchronized boolean failed() {
            return error != null;
        }

        synchronized void awaitAll() throws InterruptedIOException {
            while (outstanding > 0) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("interrupted with " + outstanding + " messages unacknowledged");
                }
            }
        }
    }

    /** Called before each read of a buffer file's range; throws to simulate an I/O error there. */
    @FunctionalInterface
    public interface ReadFault {
        ReadFault NONE = (file, offset, length) -> { };

        void check(Path file, long offset, int length) throws IOException;
    }

    /** The buffer being published, read at absolute offsets. */
    private interface Source {
        long size() throws IOException;

        void read(long offset, byte[] dst, int length) throws IOException;

        /** CRC-32C of [offset, offset + length), using {@code scratch} if it needs memory. */
        long crc(long offset, int length, byte[] scratch) throws IOException;
    }

    private static final class FileSource implements Source {
        private final FileChannel ch;
        private final Path path;
        private final ReadFault fault;

        FileSource(FileChannel ch, Path path, ReadFault fault) {
            this.ch = ch;
            this.path = path;
            this.fault = fault;
        }

        @Override
        public long size() throws IOException {
            return ch.size();
        }

        @Override
        public void read(long offset, byte[] dst, int length) throws IOException {
            fault.check(path, offset, length);
            ByteBuffer b = ByteBuffer.wrap(dst, 0, length);
            while (b.hasRemaining()) {
                int n = ch.read(b, offset + b.position());
                if (n < 0) {
                    throw new IOException(path + " ended at byte " + (offset + b.position()) + " while reading "
                            + length + " bytes at offset " + offset + "; it shrank while publishing");
                }
            }
        }

        @Override
        public long crc(long offset, int length, byte[] scratch) throws IOException {
            read(offset, scratch, length);
            return crcOf(scratch, length);
        }

        @Override
        public String toString() {
            return "buffer file " + path;
        }
    }

    private static final class MemorySource implements Source {
        private final ByteBuffer buffer;
        private final int base;

        MemorySource(ByteBuffer buffer) {
            this.buffer = buffer;
            this.base = buffer.position();
        }

        @Override
        public long size() {
            return buffer.remaining();
        }

        @Override
        public void read(long offset, byte[] dst, int length) {
            buffer.slice(base + (int) offset, length).get(dst, 0, length);
        }

        @Override
        public long crc(long offset, int length, byte[] scratch) {
            CRC32C c = new CRC32C();
            c.update(buffer.slice(base + (int) offset, length));
            return c.getValue();
        }

        @Override
        public String toString() {
            return "buffer";
        }
    }
}
