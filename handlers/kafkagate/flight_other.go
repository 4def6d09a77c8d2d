//go:build !unix

package kafkagate

import (
	"errors"
	"os"
)

// flightMap is unavailable without mmap: the Kafka gate needs a unix
// system to count the deaths of its partitions.
func flightMap(*os.File) ([]byte, error) {
	return nil, errors.New("the flight record needs mmap (unix)")
}

func flightUnmap([]byte) error { return nil }
