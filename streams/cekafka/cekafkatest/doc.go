// Package cekafkatest reads and writes the frozen Kafka message fixtures
// of schemas/testdata/ce_kafka_*.json, shared by the request fixtures
// (streams/cekafka) and the reply fixtures (handlers/kafkagate): a message
// described as JSON with its key and value as UTF-8 text and its headers
// in wire order. It is for tests only.
package cekafkatest
