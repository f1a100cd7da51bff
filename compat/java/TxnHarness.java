// The Java client's transactions (kafka-clients 3.9), driven by compat/test_transactions.py as a subprocess, like
// Harness.java (compiled at test time the same way, compat/clients/java.py).
//
//   java TxnHarness --bootstrap HOST:PORT [--config key=value]... SUBCOMMAND ARGS...
//
//   produce-read TOPIC TXN_ID TXNS PER_TXN
//           one transactional producer: TXNS transactions of PER_TXN records spread over every partition of TOPIC
//           (values "t<i>-<j>"), the even ones committed, the odd ones aborted (after a flush, so their records are
//           in the log); then every partition read from the start to its end at read_committed and at
//           read_uncommitted. Prints {"txn":i,"committed":bool} per transaction and {"isolation":...,"records":[
//           [partition, offset, value]...]} per read.
//   copy IN OUT GROUP TXN_ID
//           a consume-transform-produce loop (Kafka's exactly-once recipe, KIP-447): a read_committed consumer in
//           GROUP (static member TXN_ID), a producer with transactional.id TXN_ID; per poll one transaction sends
//           "copy:<value>" for every record to OUT (same key, same partition number) and commits the consumer's
//           offsets with sendOffsetsToTransaction(offsets, groupMetadata()). Prints {"committed":N} after each
//           commit (N records so far); exits once it has read every record IN held when it started and nothing came
//           for 2 s. Killed at any point and run again, OUT still holds every record of IN exactly once.
//   zombie TOPIC TXN_ID
//           two producers with the same transactional id: the first begins a transaction and sends, the second's
//           initTransactions fences it; the first's send/commit fails, the second commits its own. Prints what
//           each saw.
//
// Output is JSON lines on stdout; the clients' own logging goes to stderr. Exit status 0 only if the subcommand did
// everything it was asked.

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class TxnHarness {
    private static final Duration POLL = Duration.ofMillis(500);
    private static final long READ_TIMEOUT_MS = 60_000;
    private static final long COPY_IDLE_MS = 2_000;

    private final String bootstrap;
    private final Map<String, String> overrides;
    private final PrintStream out;

    private TxnHarness(String bootstrap, Map<String, String> overrides) {
        this.bootstrap = bootstrap;
        this.overrides = overrides;
        this.out = new PrintStream(
                new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = null;
        Map<String, String> overrides = new HashMap<>();
        int i = 0;
        while (i + 1 < args.length && args[i].startsWith("--")) {
            String value = args[i + 1];
            switch (args[i]) {
                case "--bootstrap" -> bootstrap = value;
                case "--config" -> {
                    int eq = value.indexOf('=');
                    overrides.put(value.substring(0, eq), value.substring(eq + 1));
                }
                default -> usage("unknown option " + args[i]);
            }
            i += 2;
        }
        if (bootstrap == null || i >= args.length) {
            usage("need --bootstrap and a subcommand");
        }
        List<String> rest = List.of(args).subList(i + 1, args.length);
        TxnHarness harness = new TxnHarness(bootstrap, overrides);
        boolean ok = switch (args[i]) {
            case "produce-read" -> harness.produceRead(rest.get(0), rest.get(1), Integer.parseInt(rest.get(2)),
                    Integer.parseInt(rest.get(3)));
            case "copy" -> harness.copy(rest.get(0), rest.get(1), rest.get(2), rest.get(3));
            case "zombie" -> harness.zombie(rest.get(0), rest.get(1));
            default -> {
                usage("unknown subcommand " + args[i]);
                yield false;
            }
        };
        harness.out.flush();
        System.exit(ok ? 0 : 1);
    }

    private static void usage(String problem) {
        System.err.println("TxnHarness: " + problem);
        System.exit(2);
    }

    // ---- clients -------------------------------------------------------------------------------------------

    private Properties config(Map<String, Object> defaults) {
        Properties props = new Properties();
        props.putAll(defaults);
        props.put("bootstrap.servers", bootstrap);
        props.putAll(overrides);
        return props;
    }

    private KafkaProducer<byte[], byte[]> transactionalProducer(String transactionalId) {
        return new KafkaProducer<>(config(Map.of(
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName(),
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName(),
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId)));
    }

    private KafkaConsumer<byte[], byte[]> consumer(String isolation, Map<String, Object> more) {
        Map<String, Object> defaults = new HashMap<>(more);
        defaults.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        defaults.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        defaults.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        defaults.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        return new KafkaConsumer<>(config(defaults));
    }

    // ---- produce-read --------------------------------------------------------------------------------------

    private boolean produceRead(String topic, String transactionalId, int txns, int perTxn) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = transactionalProducer(transactionalId)) {
            int partitions = producer.partitionsFor(topic).size();
            producer.initTransactions();
            for (int t = 0; t < txns; t++) {
                boolean commit = t % 2 == 0;
                producer.beginTransaction();
                List<Future<RecordMetadata>> sent = new ArrayList<>();
                for (int j = 0; j < perTxn; j++) {
                    byte[] value = ("t" + t + "-" + j).getBytes(StandardCharsets.UTF_8);
                    sent.add(producer.send(new ProducerRecord<>(topic, j % partitions, null, value)));
                }
                if (commit) {
                    producer.commitTransaction();
                } else {
                    producer.flush();  // in the log, then aborted: read_uncommitted consumers see them
                    producer.abortTransaction();
                }
                for (Future<RecordMetadata> f : sent) {
                    if (commit) {
                        f.get();  // a committed transaction's every record was acknowledged
                    }
                }
                out.println("{\"txn\":" + t + ",\"committed\":" + commit + "}");
            }
        }
        read(topic, "read_committed");
        read(topic, "read_uncommitted");
        return true;
    }

    /** Every partition of `topic` from its start to its end offset at `isolation` (the LSO at read_committed). */
    private void read(String topic, String isolation) {
        StringBuilder json = new StringBuilder("{\"isolation\":\"" + isolation + "\",\"records\":[");
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(isolation, Map.of())) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo info : consumer.partitionsFor(topic)) {
                partitions.add(new TopicPartition(topic, info.partition()));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            long deadline = System.currentTimeMillis() + READ_TIMEOUT_MS;
            String separator = "";
            while (!caughtUp(consumer, end) && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(POLL)) {
                    json.append(separator).append('[').append(r.partition()).append(',').append(r.offset())
                            .append(",\"").append(new String(r.value(), StandardCharsets.UTF_8)).append("\"]");
                    separator = ",";
                }
            }
        }
        out.println(json.append("]}"));
    }

    private static boolean caughtUp(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, Long> end) {
        for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
            if (consumer.position(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }

    // ---- copy: consume-transform-produce -------------------------------------------------------------------

    private boolean copy(String in, String outTopic, String group, String transactionalId) {
        long copied = 0;
        try (KafkaProducer<byte[], byte[]> producer = transactionalProducer(transactionalId);
             KafkaConsumer<byte[], byte[]> consumer = consumer("read_committed", Map.of(
                     ConsumerConfig.GROUP_ID_CONFIG, group,
                     ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, transactionalId,
                     ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"))) {
            // First: fence any earlier incarnation and abort its open transaction, so the group's offsets are stable.
            producer.initTransactions();
            consumer.subscribe(List.of(in));
            Map<TopicPartition, Long> end = null;
            long lastRecord = System.currentTimeMillis();
            while (true) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(POLL);
                if (end == null && !consumer.assignment().isEmpty()) {
                    end = consumer.endOffsets(consumer.assignment());
                }
                if (records.isEmpty()) {
                    if (end != null && caughtUp(consumer, end)
                            && System.currentTimeMillis() - lastRecord > COPY_IDLE_MS) {
                        break;
                    }
                    continue;
                }
                lastRecord = System.currentTimeMillis();
                producer.beginTransaction();
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    byte[] value = ("copy:" + new String(r.value(), StandardCharsets.UTF_8))
                            .getBytes(StandardCharsets.UTF_8);
                    producer.send(new ProducerRecord<>(outTopic, r.partition(), r.key(), value));
                    offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                }
                producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                producer.commitTransaction();
                copied += records.count();
                out.println("{\"committed\":" + copied + "}");
            }
        }
        out.println("{\"done\":" + copied + "}");
        return true;
    }

    // ---- zombie fencing ------------------------------------------------------------------------------------

    private boolean zombie(String topic, String transactionalId) {
        boolean ok = true;
        try (KafkaProducer<byte[], byte[]> zombie = transactionalProducer(transactionalId);
             KafkaProducer<byte[], byte[]> fresh = transactionalProducer(transactionalId)) {
            zombie.initTransactions();
            zombie.beginTransaction();
            zombie.send(new ProducerRecord<>(topic, 0, null, "zombie-1".getBytes(StandardCharsets.UTF_8)));
            zombie.flush();
            fresh.initTransactions();  // fences the zombie: its open transaction is aborted first
            String seen;
            try {
                zombie.send(new ProducerRecord<>(topic, 0, null, "zombie-2".getBytes(StandardCharsets.UTF_8)));
                zombie.commitTransaction();
                seen = "committed";
                ok = false;
            } catch (Exception e) {
                seen = e.getClass().getSimpleName();
            }
            out.println("{\"zombie\":\"" + seen + "\"}");
            fresh.beginTransaction();
            fresh.send(new ProducerRecord<>(topic, 0, null, "fresh".getBytes(StandardCharsets.UTF_8)));
            fresh.commitTransaction();
            out.println("{\"fresh\":\"committed\"}");
        }
        read(topic, "read_committed");
        return ok;
    }
}
