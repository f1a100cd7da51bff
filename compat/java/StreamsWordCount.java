// A Kafka Streams word count with processing.guarantee=exactly_once_v2, for compat/test_transactions.py: it is
// killed with SIGKILL mid-stream and started again, and the counts must come out exact.
//
//   java StreamsWordCount BOOTSTRAP APPLICATION_ID INPUT OUTPUT STATE_DIR REPLICATION_FACTOR
//
// Input values are lines of words; the output is word -> count (a KTable's changes: the last value of a word is
// its count). Prints {"state":"RUNNING"} etc. on every state change; runs until stdin closes (then closes cleanly)
// or it is killed. One stream thread, a static member (group.instance.id), in-memory state stores (rebuilt from
// their changelogs after a restart, as after any crash).

import java.io.InputStream;
import java.util.Arrays;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.Stores;

public final class StreamsWordCount {
    private StreamsWordCount() {
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String applicationId = args[1];
        String input = args[2];
        String output = args[3];
        String stateDir = args[4];
        String replicationFactor = args[5];

        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, replicationFactor);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG), applicationId + "-1");
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 10_000);

        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(line -> Arrays.asList(line.split(" ")))
                .groupBy((key, word) -> word, Grouped.with(Serdes.String(), Serdes.String()))
                .count(Materialized.<String, Long>as(Stores.inMemoryKeyValueStore("counts"))
                        .withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()))
                .toStream()
                .to(output, Produced.with(Serdes.String(), Serdes.Long()));

        KafkaStreams streams = new KafkaStreams(builder.build(), props);
        streams.setStateListener((now, before) -> {
            System.out.println("{\"state\":\"" + now + "\"}");
            System.out.flush();
        });
        streams.start();
        InputStream in = System.in;
        while (in.read() >= 0) {
            // until stdin closes
        }
        streams.close();
        System.out.println("{\"closed\":true}");
    }
}
