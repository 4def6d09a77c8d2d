//go:build unix

package kafkagate

import (
	"os"
	"syscall"
)

// flightMap maps the flight record shared with the page cache, so that its
// stores outlive the process.
func flightMap(f *os.File) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, flightSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
}

func flightUnmap(mem []byte) error { return syscall.Munmap(mem) }
