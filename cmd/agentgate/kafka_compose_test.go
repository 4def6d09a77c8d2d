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
	Volumes  map[string]any `yaml:"volumes"`
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Build       any               `yaml:"build"`
		Ports       []string          `yaml:"ports"`
		Environment map[string]string `yaml:"environment"`
		Command     []string          `yaml:"command"`
		Volumes     []string          `yaml:"volumes"`
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

// Issue 11 item 17: Kafka's log (agentgate.events, the gate's commit
// point) and the gate's data dir are both in named volumes, so `docker
// compose down` and a recreate keep them together. apache/kafka writes to
// KAFKA_LOG_DIRS, by default /tmp/kraft-combined-logs: outside any volume.
func TestComposeKafkaLogAndGateDataInNamedVolumes(t *testing.T) {
	b, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var cf composeFile
	if err := yaml.Unmarshal(b, &cf); err != nil {
		t.Fatalf("docker-compose.yml does not parse: %v", err)
	}
	// inVolume reports whether dir is at or under the target of one of
	// svc's named-volume mounts ("name:/target").
	inVolume := func(svc, dir string) bool {
		for _, v := range cf.Services[svc].Volumes {
			name, target, ok := strings.Cut(v, ":")
			if !ok || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "/") {
				continue // a bind mount, not a named volume
			}
			if _, declared := cf.Volumes[name]; !declared {
				continue
			}
			target, _, _ = strings.Cut(target, ":")
			if dir == target || strings.HasPrefix(dir, strings.TrimSuffix(target, "/")+"/") {
				return true
			}
		}
		return false
	}
	k := cf.Services["kafka"].Environment
	logDirs := k["KAFKA_LOG_DIRS"]
	if logDirs == "" {
		t.Fatal("kafka sets no KAFKA_LOG_DIRS: apache/kafka then writes to /tmp/kraft-combined-logs, outside its volume")
	}
	for _, dir := range strings.Split(logDirs, ",") {
		if !inVolume("kafka", dir) {
			t.Errorf("kafka log dir %s is not in a named volume of the kafka service", dir)
		}
	}
	if k["CLUSTER_ID"] == "" {
		t.Error("kafka has no fixed CLUSTER_ID: a recreated container must accept the storage formatted in its volume")
	}
	data := cf.Services["agentgate"].Environment["AGENTGATE_DATA"]
	if data == "" || !inVolume("agentgate", data) {
		t.Errorf("the gate's data dir %q is not in a named volume", data)
	}
}
