//go:build !race

package kafkagate_test

const raceEnabled = false
