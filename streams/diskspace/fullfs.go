package diskspace

import (
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// FullFS is a file system for tests that fills up on demand: once Fill is
// called, every write, file creation and preallocation fails with ENOSPC
// (as on a full disk; reads, syncs and removals still work) and the free
// space it reports is zero, until Free. FailWrites alone makes writes fail
// while the free space still looks sufficient: what happens when another
// process takes the last bytes between a Guard's check and a write.
type FullFS struct {
	*errorfs.FS
	full, failing atomic.Bool
	failed, asked atomic.Int64
}

// NewFullFS wraps inner (nil: the operating system's file system).
func NewFullFS(inner vfs.FS) *FullFS {
	if inner == nil {
		inner = vfs.Default
	}
	f := &FullFS{}
	f.FS = errorfs.Wrap(inner, errorfs.InjectorFunc(f.maybeFail))
	return f
}

func (f *FullFS) maybeFail(op errorfs.Op) error {
	if !f.full.Load() && !f.failing.Load() {
		return nil
	}
	switch op.Kind {
	case errorfs.OpCreate, errorfs.OpLink, errorfs.OpReuseForWrite, errorfs.OpMkdirAll,
		errorfs.OpFilePreallocate, errorfs.OpFileWrite, errorfs.OpFileWriteAt:
		f.failed.Add(1)
		return syscall.ENOSPC
	}
	return nil
}

// Fill makes the disk full: writes fail and no space is free.
func (f *FullFS) Fill() { f.full.Store(true) }

// Free gives the space back.
func (f *FullFS) Free() {
	f.full.Store(false)
	f.failing.Store(false)
}

// FailWrites makes writes fail with ENOSPC while the free space reported
// stays what the disk has.
func (f *FullFS) FailWrites() { f.failing.Store(true) }

// Failed returns how many operations failed with ENOSPC so far.
func (f *FullFS) Failed() int64 { return f.failed.Load() }

// GetDiskUsage reports no free space while the disk is full.
func (f *FullFS) GetDiskUsage(path string) (vfs.DiskUsage, error) {
	du, err := f.FS.GetDiskUsage(path)
	if err == nil && f.full.Load() {
		f.asked.Add(1)
		du.UsedBytes += du.AvailBytes
		du.AvailBytes = 0
	}
	return du, err
}

// FullReports returns how many times the free space was asked for and
// reported as none.
func (f *FullFS) FullReports() int64 { return f.asked.Load() }
