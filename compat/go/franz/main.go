// A command-line harness around franz-go (kgo, the client, and kadm, its admin package), the way
// compat/java/Harness.java wraps the Java client: the compat tests build it once (compat/go/build.py) and drive
// it through subprocesses.
//
//	franz --brokers HOST:PORT [--config KEY=VALUE]... SUBCOMMAND ARGS...
//
//	create TOPIC PARTITIONS [KEY=VALUE]...  kadm CreateTopics, replication factor -1 (the broker's default)
//	delete TOPIC...                         kadm DeleteTopics
//	list-topics [TOPIC]...                  kadm ListTopics: id, partitions, leaders, replicas, ISR
//	describe-configs TOPIC                  kadm DescribeTopicConfigs: name, value, source of every config
//	list-offsets TOPIC [MILLIS]...          kadm ListStartOffsets, ListEndOffsets, ListOffsetsAfterMilli
//	produce TOPIC CODEC                     kgo producer with default settings (idempotent, acks=all) and one
//	                                        codec, sending the records read from stdin, one per line: partition,
//	                                        timestamp, key, value, headers, tab-separated, bytes in base64, "-"
//	                                        for null (compat/records.py); explicit partitions or none at all
//	consume TOPIC PARTITIONS N [SECONDS]    kgo consumer assigned every partition from the start, until N records
//	                                        arrived (exit 1 if they did not within SECONDS, default 120)
//	group-consume TOPIC GROUP               kgo group member with the cooperative-sticky balancer: poll, print,
//	                                        commit what was polled, and only then allow a rebalance; runs until
//	                                        stdin closes, then commits, leaves the group and exits
//	list-groups                             kadm ListGroups
//	describe-groups GROUP...                kadm DescribeGroups with each member's decoded assignment
//	fetch-offsets GROUP                     kadm FetchOffsets
//	commit-offsets GROUP TOPIC P=OFFSET...  kadm CommitOffsets (as an admin: no member, no generation)
//	delete-groups GROUP...                  kadm DeleteGroups
//	ops                                     compat/clients/ops.py's operations, one per stdin line, each answered
//	                                        by one JSON line (one kadm client for all, one kgo producer per kind
//	                                        of partitioning): see runOp
//	group-member TOPIC GROUP                compat/clients/members.py's JSON-lines member: a group-consume with
//	                                        kgo's default balancer (cooperative-sticky) that prints its whole
//	                                        assignment after each change ({"assigned": [...]}), each record
//	                                        (partition, offset, value), {"committed": N} after each synchronous
//	                                        commit, {"error": ...} for lost partitions or fetch errors, and
//	                                        {"closed": true} once it has left the group after stdin closed
//	txn-copy IN OUT GROUP TXN_ID COUNT      kgo GroupTransactSession (read_committed, stable offsets): per poll,
//	                                        one transaction copies the records to OUT as "copy:<value>" and
//	                                        commits the group's offsets, until COUNT records are copied
//
// --config sets kgo options by these names (anything else is a usage error): client.id,
// producer.batch.max.bytes, producer.linger.ms, producer.compression (a codec of produce), unknown.topic.retries,
// record.delivery.timeout.ms, metadata.min.age.ms, session.timeout.ms, heartbeat.interval.ms; and, with librdkafka's
// names, the security settings: security.protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL), ssl.ca.location,
// ssl.certificate.location, ssl.key.location, sasl.mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), sasl.username,
// sasl.password.
//
// Output is JSON lines on stdout; kgo's own log goes to stderr at warn level. A request-level failure exits 1
// with the error on stderr; per-topic, per-partition and per-group errors are printed in their JSON line
// ("error") and exit 0, so the tests compare them between brokers.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

const requestTimeout = 60 * time.Second

// out serializes JSON lines from the main goroutine and kgo's callbacks.
type out struct {
	mu sync.Mutex
	w  *bufio.Writer
}

var stdout = &out{w: bufio.NewWriterSize(os.Stdout, 1<<16)}

func (o *out) line(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.w.Write(data)
	o.w.WriteByte('\n')
}

func (o *out) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.w.Flush()
}

type object = map[string]any

func fail(format string, args ...any) {
	stdout.flush()
	fmt.Fprintf(os.Stderr, "franz: "+format+"\n", args...)
	os.Exit(1)
}

func usage(problem string) {
	fmt.Fprintf(os.Stderr, "franz: %s\nusage: franz --brokers HOST:PORT SUBCOMMAND ARGS... (see main.go)\n", problem)
	os.Exit(2)
}

func errorText(err error) any {
	if err == nil {
		return nil
	}
	return err.Error()
}

func main() {
	args := os.Args[1:]
	if len(args) < 3 || args[0] != "--brokers" {
		usage("need --brokers HOST:PORT and a subcommand")
	}
	brokers := strings.Split(args[1], ",")
	args = args[2:]
	for len(args) >= 2 && args[0] == "--config" {
		if opt := setting(args[1]); opt != nil {
			configured = append(configured, opt)
		}
		args = args[2:]
	}
	configured = append(configured, securityOptions()...)
	if len(args) == 0 {
		usage("need a subcommand")
	}
	command, rest := args[0], args[1:]
	need := func(n int) {
		if len(rest) < n {
			usage(fmt.Sprintf("%s needs %d arguments", command, n))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	switch command {
	case "create":
		need(2)
		create(ctx, admin(brokers), rest[0], atoi(rest[1]), rest[2:])
	case "delete":
		need(1)
		deleteTopics(ctx, admin(brokers), rest)
	case "list-topics":
		listTopics(ctx, admin(brokers), rest)
	case "describe-configs":
		need(1)
		describeConfigs(ctx, admin(brokers), rest[0])
	case "list-offsets":
		need(1)
		listOffsets(ctx, admin(brokers), rest[0], rest[1:])
	case "produce":
		need(2)
		produce(brokers, rest[0], rest[1])
	case "consume":
		need(3)
		seconds := 120
		if len(rest) > 3 {
			seconds = atoi(rest[3])
		}
		consume(brokers, rest[0], atoi(rest[1]), atoi(rest[2]), time.Duration(seconds)*time.Second)
	case "group-consume":
		need(2)
		groupConsume(brokers, rest[0], rest[1])
	case "list-groups":
		listGroups(ctx, admin(brokers))
	case "describe-groups":
		need(1)
		describeGroups(ctx, admin(brokers), rest)
	case "fetch-offsets":
		need(1)
		fetchOffsets(ctx, admin(brokers), rest[0])
	case "commit-offsets":
		need(3)
		commitOffsets(ctx, admin(brokers), rest[0], rest[1], rest[2:])
	case "delete-groups":
		need(1)
		deleteGroups(ctx, admin(brokers), rest)
	case "ops":
		ops(brokers)
	case "group-member":
		need(2)
		groupMember(brokers, rest[0], rest[1])
	case "txn-copy":
		need(5)
		txnCopy(brokers, rest[0], rest[1], rest[2], rest[3], atoi(rest[4]))
	default:
		usage("unknown subcommand " + command)
	}
	stdout.flush()
}

func atoi(text string) int {
	n, err := strconv.Atoi(text)
	if err != nil {
		usage("not a number: " + text)
	}
	return n
}

// configured holds the --config options, applied to every client after the defaults.
var configured []kgo.Opt

func setting(pair string) kgo.Opt {
	key, value, ok := strings.Cut(pair, "=")
	if !ok {
		usage("--config wants KEY=VALUE, got " + pair)
	}
	ms := func() time.Duration { return time.Duration(atoi(value)) * time.Millisecond }
	switch key {
	case "security.protocol", "ssl.ca.location", "ssl.certificate.location", "ssl.key.location", "sasl.mechanism",
		"sasl.username", "sasl.password":
		security[key] = value
		return nil
	case "client.id":
		return kgo.ClientID(value)
	case "producer.batch.max.bytes":
		return kgo.ProducerBatchMaxBytes(int32(atoi(value)))
	case "producer.linger.ms":
		return kgo.ProducerLinger(ms())
	case "producer.compression":
		return kgo.ProducerBatchCompression(codec(value))
	case "unknown.topic.retries":
		return kgo.UnknownTopicRetries(atoi(value))
	case "record.delivery.timeout.ms":
		return kgo.RecordDeliveryTimeout(ms())
	case "metadata.min.age.ms":
		return kgo.MetadataMinAge(ms())
	case "session.timeout.ms":
		return kgo.SessionTimeout(ms())
	case "heartbeat.interval.ms":
		return kgo.HeartbeatInterval(ms())
	}
	usage("unknown --config key " + key)
	panic("unreachable")
}

// security holds the security settings of --config; securityOptions turns them into kgo's dialer and SASL options.
var security = map[string]string{}

func securityOptions() []kgo.Opt {
	protocol := security["security.protocol"]
	var opts []kgo.Opt
	if protocol == "SSL" || protocol == "SASL_SSL" {
		config := &tls.Config{MinVersion: tls.VersionTLS12}
		if ca := security["ssl.ca.location"]; ca != "" {
			pem, err := os.ReadFile(ca)
			if err != nil {
				fail("%v", err)
			}
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(pem)
			config.RootCAs = pool
		}
		if cert := security["ssl.certificate.location"]; cert != "" {
			pair, err := tls.LoadX509KeyPair(cert, security["ssl.key.location"])
			if err != nil {
				fail("%v", err)
			}
			config.Certificates = []tls.Certificate{pair}
		}
		opts = append(opts, kgo.DialTLSConfig(config))
	}
	if protocol == "SASL_PLAINTEXT" || protocol == "SASL_SSL" {
		user, pass := security["sasl.username"], security["sasl.password"]
		switch security["sasl.mechanism"] {
		case "PLAIN":
			opts = append(opts, kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism()))
		case "SCRAM-SHA-256":
			opts = append(opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()))
		case "SCRAM-SHA-512":
			opts = append(opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()))
		default:
			usage("unknown sasl.mechanism " + security["sasl.mechanism"])
		}
	}
	return opts
}

func options(brokers []string, more ...kgo.Opt) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(brokers...),
		kgo.ClientID("kbroker-compat-franz"),
		kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelWarn, nil)),
	}
	opts = append(opts, configured...)
	return append(opts, more...)
}

func client(brokers []string, more ...kgo.Opt) *kgo.Client {
	cl, err := kgo.NewClient(options(brokers, more...)...)
	if err != nil {
		fail("kgo.NewClient: %v", err)
	}
	return cl
}

func admin(brokers []string) *kadm.Client {
	return kadm.NewClient(client(brokers))
}

// ---- admin ---------------------------------------------------------------------------------------------------

func create(ctx context.Context, adm *kadm.Client, topic string, partitions int, configPairs []string) {
	configs := map[string]*string{}
	for _, pair := range configPairs {
		key, value, ok := strings.Cut(pair, "=")
		if !ok {
			usage("config wants KEY=VALUE, got " + pair)
		}
		configs[key] = kadm.StringPtr(value)
	}
	responses, err := adm.CreateTopics(ctx, int32(partitions), -1, configs, topic)
	if err != nil {
		fail("CreateTopics: %v", err)
	}
	for _, r := range responses.Sorted() {
		stdout.line(object{
			"created": r.Topic, "id": r.ID.String(), "partitions": r.NumPartitions,
			"replication_factor": r.ReplicationFactor, "error": errorText(r.Err),
		})
	}
}

func deleteTopics(ctx context.Context, adm *kadm.Client, topics []string) {
	responses, err := adm.DeleteTopics(ctx, topics...)
	if err != nil {
		fail("DeleteTopics: %v", err)
	}
	for _, r := range responses.Sorted() {
		stdout.line(object{"deleted": r.Topic, "error": errorText(r.Err)})
	}
}

func listTopics(ctx context.Context, adm *kadm.Client, topics []string) {
	details, err := adm.ListTopics(ctx, topics...)
	if err != nil {
		fail("ListTopics: %v", err)
	}
	for _, t := range details.Sorted() {
		partitions := []object{}
		for _, p := range t.Partitions.Sorted() {
			partitions = append(partitions, object{
				"partition": p.Partition, "leader": p.Leader, "replicas": p.Replicas, "isr": p.ISR,
				"error": errorText(p.Err),
			})
		}
		stdout.line(object{
			"topic": t.Topic, "id": t.ID.String(), "internal": t.IsInternal, "partitions": partitions,
			"error": errorText(t.Err),
		})
	}
}

func describeConfigs(ctx context.Context, adm *kadm.Client, topic string) {
	resources, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		fail("DescribeTopicConfigs: %v", err)
	}
	for _, resource := range resources {
		if resource.Err != nil {
			stdout.line(object{"topic": resource.Name, "error": resource.Err.Error()})
			continue
		}
		for _, c := range resource.Configs {
			stdout.line(object{
				"name": c.Key, "value": c.Value, "source": c.Source.String(), "sensitive": c.Sensitive,
			})
		}
	}
}

func listOffsets(ctx context.Context, adm *kadm.Client, topic string, millis []string) {
	check := func(what string, listed kadm.ListedOffsets, err error) kadm.ListedOffsets {
		if err == nil {
			err = listed.Error()
		}
		if err != nil {
			fail("%s: %v", what, err)
		}
		return listed
	}
	start, err := adm.ListStartOffsets(ctx, topic)
	start = check("ListStartOffsets", start, err)
	end, err := adm.ListEndOffsets(ctx, topic)
	end = check("ListEndOffsets", end, err)
	byMilli := map[string]kadm.ListedOffsets{}
	for _, text := range millis {
		ms, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			usage("not a timestamp: " + text)
		}
		listed, err := adm.ListOffsetsAfterMilli(ctx, ms, topic)
		byMilli[text] = check("ListOffsetsAfterMilli", listed, err)
	}
	partitions := []int32{}
	for p := range end[topic] {
		partitions = append(partitions, p)
	}
	sort.Slice(partitions, func(i, j int) bool { return partitions[i] < partitions[j] })
	for _, p := range partitions {
		forTimestamp := object{}
		for text, listed := range byMilli {
			o := listed[topic][p]
			forTimestamp[text] = object{"offset": o.Offset, "timestamp": o.Timestamp}
		}
		stdout.line(object{
			"partition": p, "earliest": start[topic][p].Offset, "latest": end[topic][p].Offset,
			"for_timestamp": forTimestamp,
		})
	}
}

func listGroups(ctx context.Context, adm *kadm.Client) {
	groups, err := adm.ListGroups(ctx)
	if err != nil {
		fail("ListGroups: %v", err)
	}
	for _, g := range groups.Sorted() {
		stdout.line(object{"group": g.Group, "state": g.State, "protocol_type": g.ProtocolType})
	}
}

func describeGroups(ctx context.Context, adm *kadm.Client, groups []string) {
	described, err := adm.DescribeGroups(ctx, groups...)
	if err != nil && !errors.As(err, new(*kadm.ShardErrors)) {
		fail("DescribeGroups: %v", err)
	}
	for _, g := range described.Sorted() {
		members := []object{}
		for _, m := range g.Members {
			assigned := map[string][]int32{}
			if assignment, ok := m.Assigned.AsConsumer(); ok {
				for _, t := range assignment.Topics {
					partitions := append([]int32{}, t.Partitions...)
					sort.Slice(partitions, func(i, j int) bool { return partitions[i] < partitions[j] })
					assigned[t.Topic] = partitions
				}
			}
			members = append(members, object{
				"member_id": m.MemberID, "client_id": m.ClientID, "host": m.ClientHost, "assigned": assigned,
			})
		}
		stdout.line(object{
			"group": g.Group, "state": g.State, "protocol_type": g.ProtocolType, "protocol": g.Protocol,
			"members": members, "error": errorText(g.Err),
		})
	}
}

// printOffsets prints one line per partition, in no particular order (the tests sort).
func printOffsets(responses kadm.OffsetResponses) {
	responses.Each(func(r kadm.OffsetResponse) {
		stdout.line(object{
			"topic": r.Topic, "partition": r.Partition, "offset": r.At, "leader_epoch": r.LeaderEpoch,
			"metadata": r.Metadata, "error": errorText(r.Err),
		})
	})
}

func fetchOffsets(ctx context.Context, adm *kadm.Client, group string) {
	responses, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		fail("FetchOffsets: %v", err)
	}
	printOffsets(responses)
}

func commitOffsets(ctx context.Context, adm *kadm.Client, group, topic string, pairs []string) {
	offsets := make(kadm.Offsets)
	for _, pair := range pairs {
		partition, offset, ok := strings.Cut(pair, "=")
		if !ok {
			usage("want PARTITION=OFFSET, got " + pair)
		}
		offsets.Add(kadm.Offset{Topic: topic, Partition: int32(atoi(partition)), At: int64(atoi(offset)), LeaderEpoch: -1})
	}
	responses, err := adm.CommitOffsets(ctx, group, offsets)
	if err != nil {
		fail("CommitOffsets: %v", err)
	}
	printOffsets(responses)
}

func deleteGroups(ctx context.Context, adm *kadm.Client, groups []string) {
	responses, err := adm.DeleteGroups(ctx, groups...)
	if err != nil {
		fail("DeleteGroups: %v", err)
	}
	for _, r := range responses.Sorted() {
		stdout.line(object{"group": r.Group, "error": errorText(r.Err)})
	}
}

// ---- produce and consume -------------------------------------------------------------------------------------

func codec(name string) kgo.CompressionCodec {
	switch name {
	case "none":
		return kgo.NoCompression()
	case "gzip":
		return kgo.GzipCompression()
	case "snappy":
		return kgo.SnappyCompression()
	case "lz4":
		return kgo.Lz4Compression()
	case "zstd":
		return kgo.ZstdCompression()
	}
	usage("unknown codec " + name)
	panic("unreachable")
}

func unb64(text string) []byte {
	if text == "-" {
		return nil
	}
	data, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		usage("bad base64: " + text)
	}
	if data == nil {
		data = []byte{} // empty, not null
	}
	return data
}

// parseRecord reads one line of compat/records.py's to_line format; explicit tells whether it names a partition.
func parseRecord(topic, line string) (record *kgo.Record, explicit bool) {
	fields := strings.Split(line, "\t")
	if len(fields) != 5 {
		usage("a record line has 5 tab-separated fields: " + line)
	}
	record = &kgo.Record{Topic: topic, Key: unb64(fields[2]), Value: unb64(fields[3])}
	if fields[0] != "-" {
		record.Partition = int32(atoi(fields[0]))
		explicit = true
	}
	if fields[1] != "-" {
		ms, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			usage("bad timestamp " + fields[1])
		}
		record.Timestamp = time.UnixMilli(ms)
	}
	if fields[4] != "-" {
		for _, header := range strings.Split(fields[4], ",") {
			name, value, _ := strings.Cut(header, "=")
			v := unb64(value)
			if v == nil {
				v = []byte{}
			}
			record.Headers = append(record.Headers, kgo.RecordHeader{Key: name, Value: v})
		}
	}
	return record, explicit
}

func produce(brokers []string, topic, codecName string) {
	var records []*kgo.Record
	explicit := 0
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	for scanner.Scan() {
		record, named := parseRecord(topic, scanner.Text())
		if named {
			explicit++
		}
		records = append(records, record)
	}
	if err := scanner.Err(); err != nil {
		fail("reading stdin: %v", err)
	}
	more := []kgo.Opt{kgo.ProducerBatchCompression(codec(codecName))}
	switch explicit {
	case len(records):
		more = append(more, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	case 0: // kgo's default partitioner (sticky, by key hash when there is a key)
	default:
		usage("records must all name a partition or none")
	}
	cl := client(brokers, more...)
	defer cl.Close()
	var acknowledged, failed int
	var mu sync.Mutex
	ctx := context.Background()
	for i, record := range records {
		index := i
		cl.Produce(ctx, record, func(r *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
				stdout.line(object{"index": index, "error": err.Error()})
				return
			}
			acknowledged++
			stdout.line(object{
				"index": index, "partition": r.Partition, "offset": r.Offset, "timestamp": r.Timestamp.UnixMilli(),
			})
		})
	}
	if err := cl.Flush(ctx); err != nil {
		fail("Flush: %v", err)
	}
	stdout.line(object{"sent": len(records), "acknowledged": acknowledged, "failed": failed})
	if failed > 0 {
		stdout.flush()
		os.Exit(1)
	}
}

// consumed is one record as compat/records.py's from_json reads it.
func consumed(r *kgo.Record) object {
	headers := [][2]any{}
	for _, h := range r.Headers {
		value := h.Value
		if value == nil {
			value = []byte{}
		}
		headers = append(headers, [2]any{h.Key, value})
	}
	// encoding/json writes []byte as base64 and a nil slice as null: null key and value stay null.
	return object{
		"partition": r.Partition, "offset": r.Offset, "timestamp": r.Timestamp.UnixMilli(),
		"key": r.Key, "value": r.Value, "headers": headers,
	}
}

func consume(brokers []string, topic string, partitions, count int, timeout time.Duration) {
	assignment := map[int32]kgo.Offset{}
	for p := 0; p < partitions; p++ {
		assignment[int32(p)] = kgo.NewOffset().AtStart()
	}
	cl := client(brokers, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assignment}))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	received := 0
	for received < count {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		fetches.EachError(func(t string, p int32, err error) {
			fmt.Fprintf(os.Stderr, "franz: fetch %s[%d]: %v\n", t, p, err)
		})
		fetches.EachRecord(func(r *kgo.Record) {
			stdout.line(consumed(r))
			received++
		})
	}
	stdout.line(object{"received": received})
	if received != count {
		fail("received %d of %d records within %s", received, count, timeout)
	}
}

func partitionsJSON(assigned map[string][]int32) map[string][]int32 {
	sorted := map[string][]int32{}
	for topic, partitions := range assigned {
		p := append([]int32{}, partitions...)
		sort.Slice(p, func(i, j int) bool { return p[i] < p[j] })
		sorted[topic] = p
	}
	return sorted
}

// groupConsume is a group member as an application would write it with kgo: BlockRebalanceOnPoll makes every
// rebalance wait until what was polled is processed and committed, so that no partition moves to another
// member with records processed but not committed (exactly once across members, as long as none crashes).
func groupConsume(brokers []string, topic, group string) {
	var cl *kgo.Client
	event := func(kind string) func(context.Context, *kgo.Client, map[string][]int32) {
		return func(_ context.Context, c *kgo.Client, partitions map[string][]int32) {
			member, generation := c.GroupMetadata()
			stdout.line(object{kind: partitionsJSON(partitions), "generation": generation, "member_id": member})
			stdout.flush()
		}
	}
	cl = client(brokers,
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		// Quicker than the defaults (3 s, 45 s), so a join or a leave settles within seconds.
		kgo.HeartbeatInterval(500*time.Millisecond),
		kgo.SessionTimeout(10*time.Second),
		kgo.OnPartitionsAssigned(event("assigned")),
		kgo.OnPartitionsRevoked(event("revoked")),
		kgo.OnPartitionsLost(event("lost")),
	)
	ctx, stop := context.WithCancel(context.Background())
	go func() {
		io.Copy(io.Discard, os.Stdin) // until stdin closes: the test's signal to leave
		stop()
	}()
	received := 0
	for {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		fetches.EachError(func(t string, p int32, err error) {
			stdout.line(object{"fetch_error": err.Error(), "topic": t, "partition": p})
		})
		fetches.EachRecord(func(r *kgo.Record) {
			stdout.line(consumed(r))
			received++
		})
		commit(cl)
		cl.AllowRebalance()
		stdout.flush()
	}
	commit(cl)
	cl.CloseAllowingRebalance()
	stdout.line(object{"closed": true, "received": received})
}

func commit(cl *kgo.Client) {
	uncommitted := cl.UncommittedOffsets()
	if len(uncommitted) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	committed := map[string]map[int32]int64{}
	for topic, partitions := range uncommitted {
		committed[topic] = map[int32]int64{}
		for p, o := range partitions {
			committed[topic][p] = o.Offset
		}
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		stdout.line(object{"commit_failed": err.Error(), "offsets": committed})
		return
	}
	stdout.line(object{"committed": committed})
}

// ---- ops: compat/clients/ops.py's operation language -----------------------------------------------------------

// errNotListed: kadm lists offsets per topic, and a partition the topic does not have is simply not in its answer.
var errNotListed = errors.New("kadm listed no offset for the partition")

// errorName is the error as franz-go shows it: a broker's error by Kafka's name (kerr), kgo's own errors by their
// variable's name, anything else by its text.
func errorName(err error) string {
	var ke *kerr.Error
	switch {
	case errors.As(err, &ke):
		return ke.Message
	case errors.Is(err, kgo.ErrRecordTimeout):
		return "ErrRecordTimeout"
	case errors.Is(err, kgo.ErrRecordRetries):
		return "ErrRecordRetries"
	case errors.Is(err, kgo.ErrClientClosed):
		return "ErrClientClosed"
	case errors.Is(err, errNotListed):
		return "not listed"
	case errors.Is(err, context.DeadlineExceeded):
		return "DeadlineExceeded"
	}
	return err.Error()
}

func ops(brokers []string) {
	adm := admin(brokers)
	// kgo partitions by a client option: one producer that takes the record's partition, one that picks it.
	producers := map[bool]*kgo.Client{}
	defer func() {
		for _, cl := range producers {
			cl.Close()
		}
	}()
	producer := func(manual bool) *kgo.Client {
		if producers[manual] == nil {
			var more []kgo.Opt
			if manual {
				more = append(more, kgo.RecordPartitioner(kgo.ManualPartitioner()))
			}
			producers[manual] = client(brokers, more...)
		}
		return producers[manual]
	}
	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		if strings.TrimSpace(scanner.Text()) == "" {
			continue
		}
		op := strings.Split(scanner.Text(), "\t")
		result := object{"op": op[0]}
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		fields, err := runOp(ctx, adm, producer, op[0], op[1:])
		cancel()
		if err != nil {
			result["error"], result["message"] = errorName(err), err.Error()
		}
		for key, value := range fields {
			result[key] = value
		}
		stdout.line(result)
		stdout.flush()
	}
}

// runOp runs one operation; a broker's error for the topic, partition or group asked about is returned as err.
func runOp(
	ctx context.Context, adm *kadm.Client, producer func(manual bool) *kgo.Client, name string, args []string,
) (object, error) {
	arg := func(i int) string {
		if i >= len(args) {
			usage(fmt.Sprintf("op %s needs %d arguments", name, i+1))
		}
		return args[i]
	}
	switch name {
	case "create":
		configs := map[string]*string{}
		for _, pair := range args[3:] {
			key, value, _ := strings.Cut(pair, "=")
			configs[key] = kadm.StringPtr(value)
		}
		created, err := adm.CreateTopics(ctx, int32(atoi(arg(1))), int16(atoi(arg(2))), configs, arg(0))
		if err != nil {
			return nil, err
		}
		return object{}, created[arg(0)].Err
	case "describe":
		details, err := adm.ListTopics(ctx, arg(0))
		if err != nil {
			return nil, err
		}
		topic := details[arg(0)]
		if topic.Err != nil {
			return nil, topic.Err
		}
		partitions, replicas := []int32{}, []int{}
		for _, p := range topic.Partitions.Sorted() {
			partitions = append(partitions, p.Partition)
			replicas = append(replicas, len(p.Replicas))
		}
		return object{"partitions": partitions, "replicas": replicas, "internal": topic.IsInternal}, nil
	case "delete":
		deleted, err := adm.DeleteTopics(ctx, arg(0))
		if err != nil {
			return nil, err
		}
		return object{}, deleted[arg(0)].Err
	case "wait-gone":
		deadline := time.Now().Add(time.Duration(atoi(arg(1))) * time.Millisecond)
		for {
			details, err := adm.ListTopics(ctx, arg(0))
			if err != nil {
				return nil, err
			}
			if errors.Is(details[arg(0)].Err, kerr.UnknownTopicOrPartition) {
				return object{"gone": true}, nil
			}
			if time.Now().After(deadline) {
				return object{"gone": false}, nil
			}
			time.Sleep(50 * time.Millisecond)
		}
	case "topics":
		details, err := adm.ListTopics(ctx)
		if err != nil {
			return nil, err
		}
		return object{"topics": details.Names()}, nil
	case "configs":
		resources, err := adm.DescribeTopicConfigs(ctx, arg(0))
		if err != nil {
			return nil, err
		}
		resource, err := resources.On(arg(0), nil)
		if err != nil {
			return nil, err
		}
		if resource.Err != nil {
			return nil, resource.Err
		}
		values, sources := object{}, object{}
		for _, c := range resource.Configs {
			values[c.Key] = c.Value
			sources[c.Key] = c.Source.String()
		}
		return object{"configs": values, "sources": sources}, nil
	case "offsets":
		topic, partition := arg(0), int32(atoi(arg(1)))
		var listed kadm.ListedOffsets
		var err error
		switch spec := arg(2); spec {
		case "earliest":
			listed, err = adm.ListStartOffsets(ctx, topic)
		case "latest":
			listed, err = adm.ListEndOffsets(ctx, topic)
		case "max":
			listed, err = adm.ListMaxTimestampOffsets(ctx, topic)
		default:
			ms, parseErr := strconv.ParseInt(spec, 10, 64)
			if parseErr != nil {
				usage("not a timestamp: " + spec)
			}
			listed, err = adm.ListOffsetsAfterMilli(ctx, ms, topic)
		}
		if err != nil {
			return nil, err
		}
		if missing, ok := listed[topic][-1]; ok { // kadm's mark of a topic that does not exist
			return nil, missing.Err
		}
		o, ok := listed[topic][partition]
		if !ok {
			return nil, fmt.Errorf("%w %d of %s", errNotListed, partition, topic)
		}
		if o.Err != nil {
			return nil, o.Err
		}
		return object{"offset": o.Offset, "timestamp": o.Timestamp}, nil
	case "produce":
		partition := int32(atoi(arg(1)))
		record := &kgo.Record{Topic: arg(0), Partition: partition, Value: []byte(strings.Repeat("x", atoi(arg(2))))}
		produced, err := producer(partition >= 0).ProduceSync(ctx, record).First()
		if err != nil {
			return nil, err
		}
		return object{"partition": produced.Partition, "offset": produced.Offset}, nil
	case "groups":
		listed, err := adm.ListGroups(ctx)
		if err != nil {
			return nil, err
		}
		groups := object{}
		for _, g := range listed {
			groups[g.Group] = g.State
		}
		return object{"groups": groups}, nil
	case "describe-group":
		described, err := adm.DescribeGroups(ctx, arg(0))
		if err != nil {
			return nil, err
		}
		group := described[arg(0)]
		if group.Err != nil {
			return nil, group.Err
		}
		members := []object{}
		for _, m := range group.Members {
			partitions := []int32{}
			if assignment, ok := m.Assigned.AsConsumer(); ok {
				for _, t := range assignment.Topics {
					partitions = append(partitions, t.Partitions...)
				}
			}
			sort.Slice(partitions, func(i, j int) bool { return partitions[i] < partitions[j] })
			members = append(members, object{"client_id": m.ClientID, "host": m.ClientHost, "partitions": partitions})
		}
		return object{"state": group.State, "assignor": group.Protocol, "members": members}, nil
	case "group-offsets":
		fetched, err := adm.FetchOffsets(ctx, arg(0))
		if err != nil {
			return nil, err
		}
		if err := fetched.Error(); err != nil {
			return nil, err
		}
		offsets := object{}
		fetched.Each(func(o kadm.OffsetResponse) {
			offsets[fmt.Sprintf("%s:%d", o.Topic, o.Partition)] = o.At
		})
		return object{"offsets": offsets}, nil
	case "producers":
		topic, partition := arg(0), int32(atoi(arg(1)))
		described, err := adm.DescribeProducers(ctx, kadm.TopicsSet{topic: {partition: {}}})
		if err != nil {
			return nil, err
		}
		p, ok := described[topic].Partitions[partition]
		if !ok {
			return nil, fmt.Errorf("DescribeProducers answered nothing for %s[%d]", topic, partition)
		}
		if p.Err != nil {
			return nil, p.Err
		}
		producers := []object{}
		for _, d := range p.ActiveProducers.Sorted() {
			producers = append(producers, object{
				"producer_id": d.ProducerID, "epoch": d.ProducerEpoch, "last_sequence": d.LastSequence,
			})
		}
		return object{"producers": producers}, nil
	}
	usage("unknown op " + name)
	panic("unreachable")
}

// ---- group-member: compat/clients/members.py's JSON-lines member ---------------------------------------------

// groupMember is groupConsume (poll, print, commit, then allow a rebalance) with kgo's default balancer and the
// output every JSON-lines member of compat/clients/members.py prints.
func groupMember(brokers []string, topic, group string) {
	var mu sync.Mutex
	owned := map[int32]bool{}
	change := func(add bool) func(context.Context, *kgo.Client, map[string][]int32) {
		return func(_ context.Context, _ *kgo.Client, partitions map[string][]int32) {
			mu.Lock()
			defer mu.Unlock()
			for _, p := range partitions[topic] {
				if add {
					owned[p] = true
				} else {
					delete(owned, p)
				}
			}
			all := []int32{}
			for p := range owned {
				all = append(all, p)
			}
			sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
			stdout.line(object{"assigned": all})
			stdout.flush()
		}
	}
	revoke := change(false)
	cl := client(brokers,
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(change(true)),
		kgo.OnPartitionsRevoked(revoke),
		kgo.OnPartitionsLost(func(ctx context.Context, c *kgo.Client, partitions map[string][]int32) {
			stdout.line(object{"error": fmt.Sprintf("partitions lost: %v", partitions)})
			revoke(ctx, c, partitions)
		}),
	)
	ctx, stop := context.WithCancel(context.Background())
	go func() {
		io.Copy(io.Discard, os.Stdin) // until stdin closes: the test's signal to leave
		stop()
	}()
	for {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		fetches.EachError(func(t string, p int32, err error) {
			stdout.line(object{"error": fmt.Sprintf("fetch %s[%d]: %v", t, p, err)})
		})
		count := 0
		fetches.EachRecord(func(r *kgo.Record) {
			stdout.line(object{"partition": r.Partition, "offset": r.Offset, "value": r.Value})
			count++
		})
		if count > 0 {
			commitCtx, cancel := context.WithTimeout(context.Background(), requestTimeout)
			if err := cl.CommitUncommittedOffsets(commitCtx); err != nil {
				stdout.line(object{"commit_failed": err.Error()})
			} else {
				stdout.line(object{"committed": count})
			}
			cancel()
		}
		cl.AllowRebalance()
		stdout.flush()
	}
	cl.CloseAllowingRebalance()
	stdout.line(object{"closed": true})
}

// ---- transactions --------------------------------------------------------------------------------------------

func txnCopy(brokers []string, in, outTopic, group, transactionalID string, count int) {
	sess, err := kgo.NewGroupTransactSession(options(brokers,
		kgo.TransactionalID(transactionalID),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(in),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.HeartbeatInterval(500*time.Millisecond),
		kgo.SessionTimeout(10*time.Second),
	)...)
	if err != nil {
		fail("kgo.NewGroupTransactSession: %v", err)
	}
	defer sess.Close()
	copied, transactions := 0, 0
	deadline := time.Now().Add(2 * time.Minute)
	for copied < count && time.Now().Before(deadline) {
		pollCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		fetches := sess.PollFetches(pollCtx)
		cancel()
		fetches.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				fail("fetch %s-%d: %v", t, p, err)
			}
		})
		records := fetches.Records()
		if len(records) == 0 {
			continue
		}
		if err := sess.Begin(); err != nil {
			fail("Begin: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		for _, r := range records {
			value := append([]byte("copy:"), r.Value...)
			sess.Produce(ctx, &kgo.Record{Topic: outTopic, Key: r.Key, Value: value}, func(_ *kgo.Record, err error) {
				if err != nil {
					stdout.line(object{"produce_error": err.Error()})
				}
			})
		}
		committed, err := sess.End(ctx, kgo.TryCommit)
		cancel()
		if err != nil {
			fail("End: %v", err)
		}
		transactions++
		if committed {
			copied += len(records)
		}
		stdout.line(object{"committed": committed, "copied": copied})
	}
	stdout.line(object{"done": copied, "transactions": transactions})
}
