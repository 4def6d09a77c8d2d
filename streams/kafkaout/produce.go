package kafkaout

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// Limits of a Producer.
const (
	// ProduceAttempts bounds the attempts of one produce request.
	ProduceAttempts = 5
	// produceBackoff is the pause before the second attempt (doubled at
	// each further one).
	produceBackoff = 10 * time.Millisecond
	// produceTimeout bounds one produce round trip.
	produceTimeout = 10 * time.Second
)

// Producer writes messages whose Topic and Partition are set, with
// acks=all, as one produce request per topic-partition, the partitions of
// one Write in parallel. It has no batching timer (kafka-go's Writer waits
// up to BatchTimeout for a partial batch before sending it): a write costs
// one round trip to the partition leader, and a caller batches by passing
// many messages to one Write. It is safe for concurrent use; the writes of
// one partition by concurrent callers are not ordered among themselves.
type Producer struct {
	cl        *kafka.Client
	transport *kafka.Transport

	mu         sync.Mutex
	partitions map[string]int
}

// NewProducer returns a producer to brokers.
func NewProducer(brokers []string) *Producer {
	tr := &kafka.Transport{}
	return &Producer{
		cl:        &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: produceTimeout, Transport: tr},
		transport: tr, partitions: map[string]int{},
	}
}

// Close releases the producer's connections.
func (p *Producer) Close() error {
	p.transport.CloseIdleConnections()
	return nil
}

// Partitions returns the partition count of topic (cached after the first
// look-up).
func (p *Producer) Partitions(ctx context.Context, topic string) (int, error) {
	p.mu.Lock()
	n, ok := p.partitions[topic]
	p.mu.Unlock()
	if ok {
		return n, nil
	}
	md, err := p.cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return 0, fmt.Errorf("reading the metadata of %s: %w", topic, err)
	}
	for _, t := range md.Topics {
		if t.Name != topic {
			continue
		}
		if t.Error != nil {
			return 0, fmt.Errorf("reading the metadata of %s: %w", topic, t.Error)
		}
		if len(t.Partitions) == 0 {
			return 0, fmt.Errorf("reading the metadata of %s: no partitions", topic)
		}
		p.mu.Lock()
		p.partitions[topic] = len(t.Partitions)
		p.mu.Unlock()
		return len(t.Partitions), nil
	}
	return 0, fmt.Errorf("reading the metadata of %s: the topic does not exist", topic)
}

// Write produces msgs (each with Topic and Partition set) and returns
// when the broker acknowledged every one (acks=all). The messages of one
// topic-partition go in one request, in the order given. On an error some
// partitions may have been written: the caller retries the whole write
// (the gate and its readers drop repeats).
func (p *Producer) Write(ctx context.Context, msgs ...kafka.Message) error {
	type tp struct {
		topic     string
		partition int
	}
	var order []tp
	groups := map[tp][]kafka.Message{}
	for _, m := range msgs {
		k := tp{m.Topic, m.Partition}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], m)
	}
	if len(order) == 1 {
		k := order[0]
		return p.produce(ctx, k.topic, k.partition, groups[k])
	}
	errs := make([]error, len(order))
	var wg sync.WaitGroup
	for i, k := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.produce(ctx, k.topic, k.partition, groups[k])
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// produce sends one partition's messages, retrying transient failures.
func (p *Producer) produce(ctx context.Context, topic string, partition int, msgs []kafka.Message) error {
	backoff := produceBackoff
	var err error
	recs := make([]kafka.Record, len(msgs))
	for attempt := 1; ; attempt++ {
		// A record's key and value are readers, consumed by a request:
		// new ones for each attempt.
		for i, m := range msgs {
			recs[i] = kafka.Record{Value: kafka.NewBytes(m.Value), Headers: m.Headers, Time: m.Time}
			if m.Key != nil {
				recs[i].Key = kafka.NewBytes(m.Key)
			}
		}
		var resp *kafka.ProduceResponse
		resp, err = p.cl.Produce(ctx, &kafka.ProduceRequest{
			Topic: topic, Partition: partition, RequiredAcks: kafka.RequireAll,
			Records: kafka.NewRecordReader(recs...),
		})
		if err == nil && resp.Error != nil {
			err = resp.Error
		}
		if err == nil {
			return nil
		}
		if attempt == ProduceAttempts || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff *= 2
	}
	return fmt.Errorf("producing %d messages to %s/%d: %w", len(msgs), topic, partition, err)
}
