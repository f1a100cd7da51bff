// A command-line harness around the stock Java kafka-clients (3.9), the client Spark's Kafka source and sink use.
// The compat tests compile it at test time and drive it through subprocesses.
//
//   java Harness --bootstrap HOST:PORT [--config key=value]... SUBCOMMAND ARGS...
//
//   admin-create TOPIC PARTITIONS   Admin.createTopics (replication factor 1)
//   admin-describe TOPIC            Admin.describeTopics + describeCluster, one JSON object each
//   list-offsets TOPIC [TS]...      Admin.listOffsets earliest / latest / forTimestamp(TS) for every partition
//   produce TOPIC N                 KafkaProducer with default settings (so idempotent, acks=all) sending N records
//                                   read from stdin, one per line: partition, timestamp, key, value, headers,
//                                   tab-separated, bytes in base64, "-" for null (see compat/records.py)
//   consume TOPIC N                 Spark's read path: the driver's Admin.listOffsets, then per partition one
//                                   KafkaConsumer (assign only) making exactly the executor's calls per fetch:
//                                   seek, poll, position, seekToBeginning+position, seekToEnd+position
//   group-consume TOPIC GROUP N [IDLE_MS]
//                                   KafkaConsumer subscribed to TOPIC in group GROUP (auto.offset.reset=earliest, no
//                                   auto commit): commitSync after each poll's records, until N records arrived or
//                                   none for IDLE_MS (default 10000) after the last one (before the first: a minute
//                                   after the assignment). Prints assignments, revocations, records and a summary
//   group-member TOPIC GROUP        KafkaConsumer subscribed to TOPIC in group GROUP (auto.offset.reset=earliest, no
//                                   auto commit), commitSync after each poll's records, until stdin closes; then
//                                   close() (LeaveGroup). Prints assignments, revocations, records, commits, "closed"
//   ops                             one operation per stdin line, tab-separated (compat/clients/ops.py lists them,
//                                   the admin APIs of issue 14 too),
//                                   through one Admin and one KafkaProducer; one JSON object per operation: its result
//                                   or {"error": the exception's class, "message": ...}
//
// Output is JSON lines on stdout (one object per record, acknowledgement or partition summary); the clients'
// own logging goes to stderr. The exit status is 0 only if the subcommand did everything it was asked.
// --config pairs go to every client the subcommand creates, over the defaults set here.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class Harness {
    private static final long ADMIN_TIMEOUT_SECONDS = 60;
    // Spark's default kafkaConsumer.pollTimeoutMs is 120 s; a shorter one keeps a broken broker from stalling tests.
    private static final Duration POLL_TIMEOUT = Duration.ofSeconds(10);

    private final String bootstrap;
    private final Map<String, String> overrides;
    private final PrintStream out;

    private Harness(String bootstrap, Map<String, String> overrides) {
        this.bootstrap = bootstrap;
        this.overrides = overrides;
        // One buffered stream for all output; println on it is synchronized, so producer callbacks may use it.
        this.out = new PrintStream(
                new java.io.FileOutputStream(java.io.FileDescriptor.out), false, StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = null;
        Map<String, String> overrides = new HashMap<>();
        int i = 0;
        while (i < args.length && args[i].startsWith("--")) {
            String option = args[i];
            if (i + 1 >= args.length) {
                usage("missing value for " + option);
            }
            String value = args[i + 1];
            switch (option) {
                case "--bootstrap" -> bootstrap = value;
                case "--config" -> {
                    int eq = value.indexOf('=');
                    if (eq < 0) {
                        usage("--config wants key=value, got " + value);
                    }
                    overrides.put(value.substring(0, eq), value.substring(eq + 1));
                }
                default -> usage("unknown option " + option);
            }
            i += 2;
        }
        if (bootstrap == null || i >= args.length) {
            usage("need --bootstrap and a subcommand");
        }
        String command = args[i];
        List<String> rest = List.of(args).subList(i + 1, args.length);
        Harness harness = new Harness(bootstrap, overrides);
        boolean ok;
        try {
            ok = switch (command) {
                case "admin-create" -> harness.adminCreate(arg(rest, 0), Integer.parseInt(arg(rest, 1)));
                case "admin-describe" -> harness.adminDescribe(arg(rest, 0));
                case "list-offsets" -> harness.listOffsets(arg(rest, 0), rest.subList(1, rest.size()));
                case "produce" -> harness.produce(arg(rest, 0), Integer.parseInt(arg(rest, 1)));
                case "consume" -> harness.consume(arg(rest, 0), Integer.parseInt(arg(rest, 1)));
                case "group-consume" -> harness.groupConsume(arg(rest, 0), arg(rest, 1), Integer.parseInt(arg(rest, 2)),
                        rest.size() > 3 ? Long.parseLong(rest.get(3)) : 10_000L);
                case "group-member" -> harness.groupMember(arg(rest, 0), arg(rest, 1));
                case "ops" -> harness.ops();
                default -> {
                    usage("unknown subcommand " + command);
                    yield false;
                }
            };
        } finally {
            harness.out.flush();
        }
        System.exit(ok ? 0 : 1);
    }

    private static String arg(List<String> rest, int index) {
        if (index >= rest.size()) {
            usage("missing argument " + (index + 1));
        }
        return rest.get(index);
    }

    private static void usage(String problem) {
        System.err.println("Harness: " + problem);
        System.err.println("usage: Harness --bootstrap HOST:PORT [--config key=value]... SUBCOMMAND ARGS...");
        System.exit(2);
    }

    // ---- clients -------------------------------------------------------------------------------------------

    private Properties config(Map<String, Object> defaults) {
        Properties props = new Properties();
        props.putAll(defaults);
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.putAll(overrides);
        return props;
    }

    private Admin admin() {
        return Admin.create(config(Map.of()));
    }

    private KafkaProducer<byte[], byte[]> producer() {
        // Nothing but the serializers: the defaults (acks=all, enable.idempotence=true) are what Spark's sink uses.
        return new KafkaProducer<>(config(Map.of(
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName(),
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName())));
    }

    private KafkaConsumer<byte[], byte[]> sparkExecutorConsumer() {
        // KafkaSourceProvider.kafkaParamsForExecutors: no offset reset, no auto commit, a group id that is never
        // joined (assign only), 64 KiB receive buffer.
        return new KafkaConsumer<>(config(Map.of(
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName(),
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false",
                ConsumerConfig.GROUP_ID_CONFIG, "spark-kafka-source-" + UUID.randomUUID() + "-executor",
                ConsumerConfig.RECEIVE_BUFFER_CONFIG, "65536")));
    }

    // ---- subcommands ---------------------------------------------------------------------------------------

    private boolean adminCreate(String topic, int partitions) throws Exception {
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1)))
                    .all().get(ADMIN_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        }
        out.println("{\"created\":" + quote(topic) + ",\"partitions\":" + partitions + "}");
        return true;
    }

    private boolean adminDescribe(String topic) throws Exception {
        try (Admin admin = admin()) {
            TopicDescription description = admin.describeTopics(List.of(topic))
                    .allTopicNames().get(ADMIN_TIMEOUT_SECONDS, TimeUnit.SECONDS).get(topic);
            StringBuilder json = new StringBuilder();
            json.append("{\"topic\":").append(quote(description.name()))
                    .append(",\"topic_id\":").append(quote(description.topicId().toString()))
                    .append(",\"internal\":").append(description.isInternal())
                    .append(",\"partitions\":[");
            String separator = "";
            for (TopicPartitionInfo info : description.partitions()) {
                json.append(separator).append("{\"partition\":").append(info.partition())
                        .append(",\"leader\":").append(info.leader() == null ? "null" : info.leader().id())
                        .append(",\"replicas\":").append(nodeIds(info.replicas()))
                        .append(",\"isr\":").append(nodeIds(info.isr())).append('}');
                separator = ",";
            }
            out.println(json.append("]}"));

            DescribeClusterResult cluster = admin.describeCluster();
            Node controller = cluster.controller().get(ADMIN_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            json = new StringBuilder();
            String clusterId = cluster.clusterId().get(ADMIN_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            json.append("{\"cluster_id\":").append(quote(clusterId))
                    .append(",\"controller\":").append(controller == null ? "null" : controller.id())
                    .append(",\"nodes\":[");
            separator = "";
            for (Node node : cluster.nodes().get(ADMIN_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                json.append(separator).append("{\"id\":").append(node.id())
                        .append(",\"host\":").append(quote(node.host()))
                        .append(",\"port\":").append(node.port()).append('}');
                separator = ",";
            }
            out.println(json.append("]}"));
        }
        return true;
    }

    private boolean listOffsets(String topic, List<String> timestamps) throws Exception {
        try (Admin admin = admin()) {
            List<TopicPartition> partitions = partitionsOf(admin, topic);
            Map<TopicPartition, ListOffsetsResultInfo> earliest = listOffsets(admin, partitions, OffsetSpec.earliest());
            Map<TopicPartition, ListOffsetsResultInfo> latest = listOffsets(admin, partitions, OffsetSpec.latest());
            Map<String, Map<TopicPartition, ListOffsetsResultInfo>> byTimestamp = new TreeMap<>();
            for (String ts : timestamps) {
                byTimestamp.put(ts, listOffsets(admin, partitions, OffsetSpec.forTimestamp(Long.parseLong(ts))));
            }
            for (TopicPartition tp : partitions) {
                StringBuilder json = new StringBuilder();
                json.append("{\"partition\":").append(tp.partition())
                        .append(",\"earliest\":").append(earliest.get(tp).offset())
                        .append(",\"latest\":").append(latest.get(tp).offset())
                        .append(",\"for_timestamp\":{");
                String separator = "";
                for (Map.Entry<String, Map<TopicPartition, ListOffsetsResultInfo>> entry : byTimestamp.entrySet()) {
                    ListOffsetsResultInfo info = entry.getValue().get(tp);
                    json.append(separator).append(quote(entry.getKey()))
                            .append(":{\"offset\":").append(info.offset())
                            .append(",\"timestamp\":").append(info.timestamp()).append('}');
                    separator = ",";
                }
                out.println(json.append("}}"));
            }
        }
        return true;
    }

    private boolean produce(String topic, int count) throws Exception {
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger acknowledged = new AtomicInteger();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        int sent = 0;
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            for (String line; sent < count && (line = in.readLine()) != null; sent++) {
                final int index = sent;
                producer.send(parseRecord(topic, line), (metadata, error) -> {
                    if (error != null) {
                        failed.incrementAndGet();
                        out.println("{\"index\":" + index + ",\"error\":" + quote(error.toString()) + "}");
                    } else {
                        acknowledged.incrementAndGet();
                        out.println("{\"index\":" + index + ",\"partition\":" + metadata.partition()
                                + ",\"offset\":" + metadata.offset() + ",\"timestamp\":" + metadata.timestamp() + "}");
                    }
                });
            }
            producer.flush();
        }
        out.println("{\"sent\":" + sent + ",\"acknowledged\":" + acknowledged.get()
                + ",\"failed\":" + failed.get() + "}");
        return sent == count && acknowledged.get() == count;
    }

    private boolean consume(String topic, int count) throws Exception {
        // The driver's part: offset ranges from the Admin (KafkaOffsetReaderAdmin), waiting until `count` records
        // are visible in case a producer is still finishing.
        Map<TopicPartition, Long> from;
        Map<TopicPartition, Long> until;
        try (Admin admin = admin()) {
            List<TopicPartition> partitions = partitionsOf(admin, topic);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ADMIN_TIMEOUT_SECONDS);
            while (true) {
                from = offsets(listOffsets(admin, partitions, OffsetSpec.earliest()));
                until = offsets(listOffsets(admin, partitions, OffsetSpec.latest()));
                long available = 0;
                for (TopicPartition tp : partitions) {
                    available += until.get(tp) - from.get(tp);
                }
                if (available >= count || System.nanoTime() > deadline) {
                    break;
                }
                Thread.sleep(200);
            }
        }
        // The executors' part: one consumer per partition (Spark caches one per TopicPartition).
        boolean ok = true;
        int received = 0;
        for (TopicPartition tp : from.keySet().stream().sorted((a, b) -> a.partition() - b.partition()).toList()) {
            int[] polls = {0};
            long got = readRange(tp, from.get(tp), until.get(tp), polls);
            received += got;
            boolean complete = got == until.get(tp) - from.get(tp);
            ok &= complete;
            out.println("{\"partition\":" + tp.partition() + ",\"from\":" + from.get(tp) + ",\"until\":" + until.get(tp)
                    + ",\"received\":" + got + ",\"polls\":" + polls[0] + ",\"complete\":" + complete + "}");
        }
        return ok && received == count;
    }

    // KafkaDataConsumer.get for every offset in [from, until): each fetch is seek, poll, position and the
    // available range (seekToBeginning + position, seekToEnd + position), exactly the calls Spark makes.
    private long readRange(TopicPartition tp, long from, long until, int[] polls) {
        long received = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = sparkExecutorConsumer()) {
            consumer.assign(List.of(tp));
            long offset = from;
            while (offset < until) {
                consumer.seek(tp, offset);
                ConsumerRecords<byte[], byte[]> records = consumer.poll(POLL_TIMEOUT);
                polls[0]++;
                long offsetAfterPoll = consumer.position(tp);
                consumer.seekToBeginning(List.of(tp));
                long earliest = consumer.position(tp);
                consumer.seekToEnd(List.of(tp));
                long latest = consumer.position(tp);
                if (records.isEmpty()) {
                    // Spark: "Cannot fetch record for offset ..." (or data loss if the offset left the range).
                    System.err.println("Harness: empty poll for " + tp + " at " + offset
                            + " (position " + offsetAfterPoll + ", available [" + earliest + ", " + latest + "))");
                    return received;
                }
                for (ConsumerRecord<byte[], byte[]> record : records.records(tp)) {
                    if (record.offset() < offset) {
                        throw new IllegalStateException("record offset " + record.offset() + " before " + offset);
                    }
                    if (record.offset() >= until) {
                        break;
                    }
                    out.println(recordJson(record));
                    received++;
                    offset = record.offset() + 1;
                }
            }
        }
        return received;
    }

    private boolean groupConsume(String topic, String group, int count, long idleMs) {
        // What an application consuming with a group does: subscribe, process, commit what was processed.
        Map<String, Object> defaults = Map.of(
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName(),
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName(),
                ConsumerConfig.GROUP_ID_CONFIG, group,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        int received = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config(defaults))) {
            boolean[] assigned = {false};
            long[] lastRecord = {System.nanoTime()};
            consumer.subscribe(List.of(topic), new org.apache.kafka.clients.consumer.ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(java.util.Collection<TopicPartition> partitions) {
                    out.println("{\"revoked\":" + partitionNumbers(partitions) + "}");
                }

                @Override
                public void onPartitionsAssigned(java.util.Collection<TopicPartition> partitions) {
                    if (!assigned[0]) {
                        assigned[0] = true;
                        lastRecord[0] = System.nanoTime();
                    }
                    out.println("{\"assigned\":" + partitionNumbers(partitions)
                            + ",\"generation\":" + consumer.groupMetadata().generationId()
                            + ",\"member_id\":" + quote(consumer.groupMetadata().memberId()) + "}");
                    out.flush();
                }
            });
            while (received < count) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                if (records.isEmpty()) {
                    // Idle time counts from the last record; before the first one, from the assignment, for at
                    // most a minute (a producer may still be starting).
                    long idleLimit = received > 0 ? idleMs : Math.max(idleMs, 60_000L);
                    if (assigned[0] && System.nanoTime() - lastRecord[0] > TimeUnit.MILLISECONDS.toNanos(idleLimit)) {
                        break;
                    }
                    continue;
                }
                lastRecord[0] = System.nanoTime();
                for (ConsumerRecord<byte[], byte[]> record : records) {
                    out.println(recordJson(record));
                    received++;
                }
                try {
                    consumer.commitSync();
                } catch (org.apache.kafka.clients.consumer.CommitFailedException
                        | org.apache.kafka.common.errors.RebalanceInProgressException error) {
                    // The group rebalanced under us: these records may be delivered again elsewhere (at least once).
                    out.println("{\"commit_failed\":" + quote(error.toString()) + "}");
                }
                out.flush();
            }
        }
        out.println("{\"received\":" + received + "}");
        return true;
    }

    private boolean groupMember(String topic, String group) throws Exception {
        Map<String, Object> defaults = Map.of(
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName(),
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName(),
                ConsumerConfig.GROUP_ID_CONFIG, group,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config(defaults))) {
            // The test closes our stdin to ask for a clean exit, seen between polls (not with wakeup(), which could
            // interrupt a commitSync whose offsets the broker has already written).
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            Thread stdinWatcher = new Thread(() -> {
                try {
                    while (System.in.read() >= 0) {
                        // anything written is ignored; only the end of the stream counts
                    }
                } catch (java.io.IOException ignored) {
                    // a broken stdin means the same: stop
                }
                stop.set(true);
            });
            stdinWatcher.setDaemon(true);
            stdinWatcher.start();
            consumer.subscribe(List.of(topic), new org.apache.kafka.clients.consumer.ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(java.util.Collection<TopicPartition> partitions) {
                    out.println("{\"revoked\":" + partitionNumbers(partitions) + "}");
                    out.flush();
                }

                @Override
                public void onPartitionsAssigned(java.util.Collection<TopicPartition> partitions) {
                    out.println("{\"assigned\":" + partitionNumbers(partitions) + "}");
                    out.flush();
                }
            });
            while (!stop.get()) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                if (records.isEmpty()) {
                    continue;
                }
                for (ConsumerRecord<byte[], byte[]> record : records) {
                    out.println(recordJson(record));
                }
                try {
                    consumer.commitSync();
                    out.println("{\"committed\":" + records.count() + "}");
                } catch (org.apache.kafka.clients.consumer.CommitFailedException
                        | org.apache.kafka.common.errors.RebalanceInProgressException error) {
                    out.println("{\"commit_failed\":" + quote(error.toString()) + "}");
                }
                out.flush();
            }
        }
        out.println("{\"closed\":true}");
        return true;
    }

    // ---- ops: one Admin and one producer, one operation per stdin line --------------------------------------

    private boolean ops() throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        KafkaProducer<byte[], byte[]> producer = null;
        try (Admin admin = admin()) {
            for (String line; (line = in.readLine()) != null; ) {
                if (line.isBlank()) {
                    continue;
                }
                String[] op = line.split("\t", -1);
                StringBuilder json = new StringBuilder("{\"op\":").append(quote(op[0]));
                try {
                    if (op[0].equals("produce") && producer == null) {
                        producer = producer();
                    }
                    json.append(runOp(admin, producer, op));
                } catch (Exception error) {
                    Throwable cause = error;
                    while (cause instanceof java.util.concurrent.ExecutionException && cause.getCause() != null) {
                        cause = cause.getCause();
                    }
                    json.append(",\"error\":").append(quote(cause.getClass().getSimpleName()))
                            .append(",\"message\":").append(quote(String.valueOf(cause.getMessage())));
                }
                out.println(json.append('}'));
                out.flush();
            }
        } finally {
            if (producer != null) {
                producer.close(Duration.ofSeconds(10));
            }
        }
        return true;
    }

    private String runOp(Admin admin, KafkaProducer<byte[], byte[]> producer, String[] op) throws Exception {
        long timeout = ADMIN_TIMEOUT_SECONDS;
        switch (op[0]) {
            case "create" -> {
                NewTopic topic = new NewTopic(op[1], Integer.parseInt(op[2]), Short.parseShort(op[3]));
                Map<String, String> configs = new TreeMap<>();
                for (int i = 4; i < op.length; i++) {
                    int eq = op[i].indexOf('=');
                    configs.put(op[i].substring(0, eq), op[i].substring(eq + 1));
                }
                admin.createTopics(List.of(topic.configs(configs))).all().get(timeout, TimeUnit.SECONDS);
                return "";
            }
            case "describe" -> {
                TopicDescription description = admin.describeTopics(List.of(op[1]))
                        .allTopicNames().get(timeout, TimeUnit.SECONDS).get(op[1]);
                List<Integer> partitions = new ArrayList<>();
                List<Integer> replicas = new ArrayList<>();
                for (TopicPartitionInfo info : description.partitions()) {
                    partitions.add(info.partition());
                    replicas.add(info.replicas().size());
                }
                return ",\"partitions\":" + partitions.toString().replace(" ", "")
                        + ",\"replicas\":" + replicas.toString().replace(" ", "")
                        + ",\"internal\":" + description.isInternal();
            }
            case "delete" -> {
                admin.deleteTopics(List.of(op[1])).all().get(timeout, TimeUnit.SECONDS);
                return "";
            }
            case "topics" -> {
                List<String> names = new ArrayList<>(admin.listTopics().names().get(timeout, TimeUnit.SECONDS));
                names.sort(null);
                StringBuilder json = new StringBuilder(",\"topics\":[");
                String separator = "";
                for (String name : names) {
                    json.append(separator).append(quote(name));
                    separator = ",";
                }
                return json.append(']').toString();
            }
            case "configs" -> {
                org.apache.kafka.common.config.ConfigResource resource = new org.apache.kafka.common.config.ConfigResource(
                        org.apache.kafka.common.config.ConfigResource.Type.TOPIC, op[1]);
                org.apache.kafka.clients.admin.Config config = admin.describeConfigs(List.of(resource))
                        .all().get(timeout, TimeUnit.SECONDS).get(resource);
                StringBuilder values = new StringBuilder(",\"configs\":{");
                StringBuilder sources = new StringBuilder(",\"sources\":{");
                String separator = "";
                for (org.apache.kafka.clients.admin.ConfigEntry entry : config.entries()) {
                    values.append(separator).append(quote(entry.name())).append(':').append(quote(entry.value()));
                    sources.append(separator).append(quote(entry.name())).append(':')
                            .append(quote(entry.source().name()));
                    separator = ",";
                }
                return values.append('}').toString() + sources.append('}');
            }
            case "offsets" -> {
                TopicPartition tp = new TopicPartition(op[1], Integer.parseInt(op[2]));
                OffsetSpec spec = switch (op[3]) {
                    case "earliest" -> OffsetSpec.earliest();
                    case "latest" -> OffsetSpec.latest();
                    case "max" -> OffsetSpec.maxTimestamp();
                    default -> OffsetSpec.forTimestamp(Long.parseLong(op[3]));
                };
                ListOffsetsResultInfo info = admin.listOffsets(Map.of(tp, spec)).partitionResult(tp)
                        .get(timeout, TimeUnit.SECONDS);
                return ",\"offset\":" + info.offset() + ",\"timestamp\":" + info.timestamp();
            }
            case "produce" -> {
                int partition = Integer.parseInt(op[2]);
                byte[] value = new byte[Integer.parseInt(op[3])];
                java.util.Arrays.fill(value, (byte) 'x');
                org.apache.kafka.clients.producer.RecordMetadata metadata = producer.send(new ProducerRecord<>(
                        op[1], partition < 0 ? null : partition, null, value)).get(timeout, TimeUnit.SECONDS);
                return ",\"partition\":" + metadata.partition() + ",\"offset\":" + metadata.offset();
            }
            case "groups" -> {
                StringBuilder json = new StringBuilder(",\"groups\":{");
                String separator = "";
                for (org.apache.kafka.clients.admin.ConsumerGroupListing listing
                        : admin.listConsumerGroups().all().get(timeout, TimeUnit.SECONDS)) {
                    json.append(separator).append(quote(listing.groupId())).append(':')
                            .append(quote(listing.state().map(Object::toString).orElse(null)));
                    separator = ",";
                }
                return json.append('}').toString();
            }
            case "describe-group" -> {
                org.apache.kafka.clients.admin.ConsumerGroupDescription group = admin
                        .describeConsumerGroups(List.of(op[1])).all().get(timeout, TimeUnit.SECONDS).get(op[1]);
                StringBuilder json = new StringBuilder(",\"state\":").append(quote(group.state().toString()))
                        .append(",\"assignor\":").append(quote(group.partitionAssignor()))
                        .append(",\"members\":[");
                String separator = "";
                for (org.apache.kafka.clients.admin.MemberDescription member : group.members()) {
                    json.append(separator).append("{\"client_id\":").append(quote(member.clientId()))
                            .append(",\"host\":").append(quote(member.host()))
                            .append(",\"partitions\":")
                            .append(partitionNumbers(member.assignment().topicPartitions())).append('}');
                    separator = ",";
                }
                return json.append(']').toString();
            }
            case "group-offsets" -> {
                Map<TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> offsets = admin
                        .listConsumerGroupOffsets(op[1]).partitionsToOffsetAndMetadata()
                        .get(timeout, TimeUnit.SECONDS);
                StringBuilder json = new StringBuilder(",\"offsets\":{");
                String separator = "";
                List<TopicPartition> keys = new ArrayList<>(offsets.keySet());
                keys.sort(java.util.Comparator.comparing(TopicPartition::toString));
                for (TopicPartition tp : keys) {
                    org.apache.kafka.clients.consumer.OffsetAndMetadata offset = offsets.get(tp);
                    json.append(separator).append(quote(tp.topic() + ":" + tp.partition())).append(':')
                            .append(offset == null ? "null" : offset.offset());
                    separator = ",";
                }
                return json.append('}').toString();
            }
            case "producers" -> {
                TopicPartition tp = new TopicPartition(op[1], Integer.parseInt(op[2]));
                StringBuilder json = new StringBuilder(",\"producers\":[");
                String separator = "";
                for (org.apache.kafka.clients.admin.ProducerState state : admin.describeProducers(List.of(tp))
                        .partitionResult(tp).get(timeout, TimeUnit.SECONDS).activeProducers()) {
                    json.append(separator).append("{\"producer_id\":").append(state.producerId())
                            .append(",\"epoch\":").append(state.producerEpoch())
                            .append(",\"last_sequence\":").append(state.lastSequence()).append('}');
                    separator = ",";
                }
                return json.append(']').toString();
            }
            case "wait-gone" -> {
                // Until describeTopics says the topic does not exist (deletion completes asynchronously).
                long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Long.parseLong(op[2]));
                while (true) {
                    try {
                        admin.describeTopics(List.of(op[1])).allTopicNames().get(timeout, TimeUnit.SECONDS);
                    } catch (java.util.concurrent.ExecutionException error) {
                        if (error.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException) {
                            return ",\"gone\":true";
                        }
                        throw error;
                    }
                    if (System.nanoTime() > deadline) {
                        return ",\"gone\":false";
                    }
                    Thread.sleep(50);
                }
            }
            case "create-partitions" -> {
                // create-partitions TOPIC COUNT [REPLICAS]...: REPLICAS of each new partition as "1,2,3"
                List<List<Integer>> assignments = new ArrayList<>();
                for (int i = 3; i < op.length; i++) {
                    assignments.add(brokerList(op[i]));
                }
                org.apache.kafka.clients.admin.NewPartitions count = assignments.isEmpty()
                        ? org.apache.kafka.clients.admin.NewPartitions.increaseTo(Integer.parseInt(op[2]))
                        : org.apache.kafka.clients.admin.NewPartitions.increaseTo(Integer.parseInt(op[2]), assignments);
                admin.createPartitions(Map.of(op[1], count)).all().get(timeout, TimeUnit.SECONDS);
                return "";
            }
            case "alter-configs", "alter-broker-configs" -> {
                // alter-configs TOPIC OP:NAME[=VALUE]...; alter-broker-configs BROKER|- OP:NAME[=VALUE]...
                org.apache.kafka.common.config.ConfigResource resource = configResource(op[0], op[1]);
                List<org.apache.kafka.clients.admin.AlterConfigOp> changes = new ArrayList<>();
                for (int i = 2; i < op.length; i++) {
                    int colon = op[i].indexOf(':');
                    String setting = op[i].substring(colon + 1);
                    int eq = setting.indexOf('=');
                    String name = eq < 0 ? setting : setting.substring(0, eq);
                    String value = eq < 0 ? null : setting.substring(eq + 1);
                    changes.add(new org.apache.kafka.clients.admin.AlterConfigOp(
                            new org.apache.kafka.clients.admin.ConfigEntry(name, value),
                            org.apache.kafka.clients.admin.AlterConfigOp.OpType.valueOf(
                                    op[i].substring(0, colon).toUpperCase(java.util.Locale.ROOT))));
                }
                admin.incrementalAlterConfigs(Map.of(resource, changes)).all().get(timeout, TimeUnit.SECONDS);
                return "";
            }
            case "broker-configs" -> {
                org.apache.kafka.common.config.ConfigResource resource = configResource(op[0], op[1]);
                org.apache.kafka.clients.admin.Config config = admin.describeConfigs(List.of(resource))
                        .all().get(timeout, TimeUnit.SECONDS).get(resource);
                StringBuilder values = new StringBuilder(",\"configs\":{");
                StringBuilder sources = new StringBuilder(",\"sources\":{");
                StringBuilder writable = new StringBuilder(",\"writable\":[");
                String separator = "";
                String comma = "";
                for (org.apache.kafka.clients.admin.ConfigEntry entry : config.entries()) {
                    values.append(separator).append(quote(entry.name())).append(':').append(quote(entry.value()));
                    sources.append(separator).append(quote(entry.name())).append(':')
                            .append(quote(entry.source().name()));
                    separator = ",";
                    if (!entry.isReadOnly()) {
                        writable.append(comma).append(quote(entry.name()));
                        comma = ",";
                    }
                }
                return values.append('}').toString() + sources.append('}') + writable.append(']');
            }
            case "delete-records" -> {
                TopicPartition tp = new TopicPartition(op[1], Integer.parseInt(op[2]));
                org.apache.kafka.clients.admin.DeletedRecords deleted = admin.deleteRecords(
                        Map.of(tp, org.apache.kafka.clients.admin.RecordsToDelete.beforeOffset(Long.parseLong(op[3]))))
                        .lowWatermarks().get(tp).get(timeout, TimeUnit.SECONDS);
                return ",\"low_watermark\":" + deleted.lowWatermark();
            }
            case "log-dirs" -> {
                // log-dirs TOPIC: the size of each partition of TOPIC in every log directory of every broker
                List<Integer> brokers = new ArrayList<>();
                for (Node node : admin.describeCluster().nodes().get(timeout, TimeUnit.SECONDS)) {
                    brokers.add(node.id());
                }
                Map<Integer, Map<String, org.apache.kafka.clients.admin.LogDirDescription>> dirs = admin
                        .describeLogDirs(brokers).allDescriptions().get(timeout, TimeUnit.SECONDS);
                TreeMap<String, Long> sizes = new TreeMap<>();
                int count = 0;
                for (Map.Entry<Integer, Map<String, org.apache.kafka.clients.admin.LogDirDescription>> broker
                        : dirs.entrySet()) {
                    for (org.apache.kafka.clients.admin.LogDirDescription dir : broker.getValue().values()) {
                        count++;
                        dir.replicaInfos().forEach((tp, info) -> {
                            if (tp.topic().equals(op[1])) {
                                sizes.put(broker.getKey() + ":" + tp.partition(), info.size());
                            }
                        });
                    }
                }
                StringBuilder json = new StringBuilder(",\"dirs\":" + count + ",\"sizes\":{");
                String separator = "";
                for (Map.Entry<String, Long> entry : sizes.entrySet()) {
                    json.append(separator).append(quote(entry.getKey())).append(':').append(entry.getValue());
                    separator = ",";
                }
                return json.append('}').toString();
            }
            case "elect-leaders" -> {
                // elect-leaders PREFERRED|UNCLEAN TOPIC PARTITION
                TopicPartition tp = new TopicPartition(op[2], Integer.parseInt(op[3]));
                java.util.Optional<Throwable> error = admin
                        .electLeaders(org.apache.kafka.common.ElectionType.valueOf(op[1]), java.util.Set.of(tp))
                        .partitions().get(timeout, TimeUnit.SECONDS).get(tp);
                if (error.isPresent()) {
                    throw error.get() instanceof Exception exception ? exception : new RuntimeException(error.get());
                }
                return "";
            }
            case "reassign" -> {
                // reassign TOPIC PARTITION REPLICAS|cancel
                TopicPartition tp = new TopicPartition(op[1], Integer.parseInt(op[2]));
                java.util.Optional<org.apache.kafka.clients.admin.NewPartitionReassignment> target = op[3].equals("cancel")
                        ? java.util.Optional.empty()
                        : java.util.Optional.of(new org.apache.kafka.clients.admin.NewPartitionReassignment(brokerList(op[3])));
                admin.alterPartitionReassignments(Map.of(tp, target)).all().get(timeout, TimeUnit.SECONDS);
                return "";
            }
            case "reassignments" -> {
                Map<TopicPartition, org.apache.kafka.clients.admin.PartitionReassignment> ongoing = admin
                        .listPartitionReassignments().reassignments().get(timeout, TimeUnit.SECONDS);
                StringBuilder json = new StringBuilder(",\"reassignments\":{");
                String separator = "";
                for (Map.Entry<String, org.apache.kafka.clients.admin.PartitionReassignment> entry
                        : new TreeMap<>(toStrings(ongoing)).entrySet()) {
                    json.append(separator).append(quote(entry.getKey()))
                            .append(":{\"replicas\":").append(entry.getValue().replicas().toString().replace(" ", ""))
                            .append(",\"adding\":").append(entry.getValue().addingReplicas().toString().replace(" ", ""))
                            .append(",\"removing\":").append(entry.getValue().removingReplicas().toString().replace(" ", ""))
                            .append('}');
                    separator = ",";
                }
                return json.append('}').toString();
            }
            case "replicas" -> {
                // replicas TOPIC: each partition's leader, replicas and ISR as describeTopics shows them
                TopicDescription description = admin.describeTopics(List.of(op[1]))
                        .allTopicNames().get(timeout, TimeUnit.SECONDS).get(op[1]);
                StringBuilder json = new StringBuilder(",\"partitions\":{");
                String separator = "";
                for (TopicPartitionInfo info : description.partitions()) {
                    json.append(separator).append(quote(String.valueOf(info.partition())))
                            .append(":{\"leader\":").append(info.leader() == null ? -1 : info.leader().id())
                            .append(",\"replicas\":").append(nodeIds(info.replicas()))
                            .append(",\"isr\":").append(nodeIds(info.isr())).append('}');
                    separator = ",";
                }
                return json.append('}').toString();
            }
            default -> throw new IllegalArgumentException("unknown op " + op[0]);
        }
    }

    private static org.apache.kafka.common.config.ConfigResource configResource(String op, String name) {
        boolean broker = op.equals("alter-broker-configs") || op.equals("broker-configs");
        return new org.apache.kafka.common.config.ConfigResource(
                broker ? org.apache.kafka.common.config.ConfigResource.Type.BROKER
                        : org.apache.kafka.common.config.ConfigResource.Type.TOPIC,
                broker && name.equals("-") ? "" : name);
    }

    private static List<Integer> brokerList(String text) {
        List<Integer> brokers = new ArrayList<>();
        for (String id : text.split(",")) {
            brokers.add(Integer.valueOf(id.trim()));
        }
        return brokers;
    }

    private static <V> Map<String, V> toStrings(Map<TopicPartition, V> map) {
        Map<String, V> out = new HashMap<>();
        map.forEach((tp, value) -> out.put(tp.toString(), value));
        return out;
    }

    private static String partitionNumbers(java.util.Collection<TopicPartition> partitions) {
        return partitions.stream().map(TopicPartition::partition).sorted().toList().toString().replace(" ", "");
    }

    // ---- helpers -------------------------------------------------------------------------------------------

    private static List<TopicPartition> partitionsOf(Admin admin, String topic) throws Exception {
        TopicDescription description = admin.describeTopics(List.of(topic))
                .allTopicNames().get(ADMIN_TIMEOUT_SECONDS, TimeUnit.SECONDS).get(topic);
        List<TopicPartition> partitions = new ArrayList<>();
        for (TopicPartitionInfo info : description.partitions()) {
            partitions.add(new TopicPartition(topic, info.partition()));
        }
        return partitions;
    }

    private static Map<TopicPartition, ListOffsetsResultInfo> listOffsets(
            Admin admin, List<TopicPartition> partitions, OffsetSpec spec) throws Exception {
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        for (TopicPartition tp : partitions) {
            request.put(tp, spec);
        }
        return admin.listOffsets(request).all().get(ADMIN_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }

    private static Map<TopicPartition, Long> offsets(Map<TopicPartition, ListOffsetsResultInfo> infos) {
        Map<TopicPartition, Long> offsets = new HashMap<>();
        infos.forEach((tp, info) -> offsets.put(tp, info.offset()));
        return offsets;
    }

    private static ProducerRecord<byte[], byte[]> parseRecord(String topic, String line) {
        String[] fields = line.split("\t", -1);
        if (fields.length != 5) {
            throw new IllegalArgumentException("want 5 tab-separated fields: " + line);
        }
        Integer partition = fields[0].equals("-") ? null : Integer.valueOf(fields[0]);
        Long timestamp = fields[1].equals("-") ? null : Long.valueOf(fields[1]);
        List<Header> headers = new ArrayList<>();
        if (!fields[4].equals("-")) {
            for (String header : fields[4].split(",")) {
                int eq = header.indexOf('=');
                headers.add(new RecordHeader(header.substring(0, eq), unbase64(header.substring(eq + 1))));
            }
        }
        return new ProducerRecord<>(topic, partition, timestamp, unbase64(fields[2]), unbase64(fields[3]), headers);
    }

    private static String recordJson(ConsumerRecord<byte[], byte[]> record) {
        StringBuilder json = new StringBuilder(128);
        json.append("{\"partition\":").append(record.partition())
                .append(",\"offset\":").append(record.offset())
                .append(",\"timestamp\":").append(record.timestamp())
                .append(",\"timestamp_type\":").append(quote(record.timestampType().name))
                .append(",\"leader_epoch\":").append(record.leaderEpoch().map(String::valueOf).orElse("null"))
                .append(",\"key\":").append(base64(record.key()))
                .append(",\"value\":").append(base64(record.value()))
                .append(",\"headers\":[");
        String separator = "";
        for (Header header : record.headers()) {
            json.append(separator).append('[').append(quote(header.key()))
                    .append(',').append(base64(header.value())).append(']');
            separator = ",";
        }
        return json.append("]}").toString();
    }

    private static String nodeIds(List<Node> nodes) {
        return nodes.stream().map(node -> String.valueOf(node.id())).toList().toString().replace(" ", "");
    }

    private static byte[] unbase64(String field) {
        return field.equals("-") ? null : Base64.getDecoder().decode(field);
    }

    private static String base64(byte[] data) {
        return data == null ? "null" : "\"" + Base64.getEncoder().encodeToString(data) + "\"";
    }

    private static String quote(String text) {
        if (text == null) {
            return "null";
        }
        StringBuilder json = new StringBuilder(text.length() + 2).append('"');
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> json.append("\\\"");
                case '\\' -> json.append("\\\\");
                case '\n' -> json.append("\\n");
                case '\r' -> json.append("\\r");
                case '\t' -> json.append("\\t");
                default -> {
                    if (c < 0x20) {
                        json.append(String.format("\\u%04x", (int) c));
                    } else {
                        json.append(c);
                    }
                }
            }
        }
        return json.append('"').toString();
    }
}
