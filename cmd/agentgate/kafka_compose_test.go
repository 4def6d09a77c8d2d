package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/agentgate/agentgate/handlers/kafkagate"
)

type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Build       any               `yaml:"build"`
		Ports       []string          `yaml:"ports"`
		Environment map[string]string `yaml:"environment"`
		Command     []string          `yaml:"command"`
		DependsOn   map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
	} `yaml:"services"`
}

// Issue 3: docker-compose.yml runs Apache Kafka in KRaft mode, creates
// every topic of the gate before it starts, and runs the gate (built from
// the repo's Dockerfile) with environment variables that are real flags
// of serve. No Docker engine runs here: the file is parsed, not run.
func TestComposeKafkaKRaftAndGate(t *testing.T) {
	b, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var cf composeFile
	if err := yaml.Unmarshal(b, &cf); err != nil {
		t.Fatalf("docker-compose.yml does not parse: %v", err)
	}
	k, ok := cf.Services["kafka"]
	if !ok || !strings.HasPrefix(k.Image, "apache/kafka:") {
		t.Fatalf("kafka service image %q, want apache/kafka", k.Image)
	}
	if k.Environment["KAFKA_PROCESS_ROLES"] != "broker,controller" || k.Environment["KAFKA_CONTROLLER_QUORUM_VOTERS"] == "" {
		t.Fatalf("kafka is not in KRaft mode: %v", k.Environment)
	}
	if !slices.Contains(k.Ports, "9092:9092") || !strings.Contains(k.Environment["KAFKA_ADVERTISED_LISTENERS"], "localhost:9092") {
		t.Fatalf("kafka is not reachable from the host on 9092: ports %v", k.Ports)
	}
	kinit, ok := cf.Services["kafka-init"]
	if !ok || kinit.DependsOn["kafka"].Condition != "service_healthy" || len(kinit.Command) == 0 {
		t.Fatal("kafka-init must wait for a healthy kafka and create the topics")
	}
	for _, topic := range kafkagate.DefaultTopics().All() {
		if !strings.Contains(kinit.Command[0], "--topic "+topic+" ") {
			t.Errorf("kafka-init does not create %s", topic)
		}
	}
	if !strings.Contains(kinit.Command[0], "--topic agentgate.events --partitions 8 --replication-factor 1 --config retention.ms=-1") {
		t.Error("the events topic (the log) must keep every record: retention.ms=-1")
	}
	g, ok := cf.Services["agentgate"]
	if !ok || g.Build == nil || !slices.Contains(g.Ports, "8080:8080") {
		t.Fatalf("agentgate service: build %v ports %v", g.Build, g.Ports)
	}
	if g.DependsOn["kafka-init"].Condition != "service_completed_successfully" {
		t.Error("agentgate must start after the topics exist")
	}
	if g.Environment["AGENTGATE_KAFKA_BROKERS"] != "kafka:19092" || !strings.Contains(k.Environment["KAFKA_ADVERTISED_LISTENERS"], "PLAINTEXT://kafka:19092") {
		t.Errorf("agentgate brokers %q do not match kafka's internal listener", g.Environment["AGENTGATE_KAFKA_BROKERS"])
	}
	serve := serveCmd()
	for name := range g.Environment {
		flag := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(name, "AGENTGATE_")), "_", "-")
		if serve.Flags().Lookup(flag) == nil {
			t.Errorf("compose sets %s but serve has no --%s", name, flag)
		}
	}
	df, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(df), "go build") || !strings.Contains(string(df), "./cmd/agentgate") || !strings.Contains(string(df), `CMD ["serve"]`) {
		t.Error("the Dockerfile must build ./cmd/agentgate and run serve")
	}
}
