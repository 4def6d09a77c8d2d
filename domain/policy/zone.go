package policy

import (
	"archive/zip"
	"bytes"
	_ "embed"
	"errors"
	"io"
	"sync"
	"time"
)

// zoneinfoZip is the IANA time zone database (release 2025c) as the Go
// toolchain ships it ($GOROOT/lib/time/zoneinfo.zip, public domain data).
// The gate reads zones from this copy only, never from the host's
// /usr/share/zoneinfo or from time/tzdata's fallback: which file
// time.LoadLocation reads depends on the host, and a time window must
// decide the same way on every host that replays the log. To update it,
// copy the file of a newer toolchain and say so in the commit (decisions
// recorded before then are re-decided under the new rules only if they
// differ, which replay --verify reports).
//
//go:embed zoneinfo.zip
var zoneinfoZip []byte

// zones caches the locations read from zoneinfoZip, by name.
var zones sync.Map // string -> *time.Location

// lastPeriods caches, by zone name, the period of the zone's offset last
// looked up: executes come at times close to each other, and reading an
// offset from the zone's rules (past its last listed transition, Go
// computes it from the rule each time) costs far more than a comparison.
// The cache holds values of the zone's rules only, so it changes no
// result.
var lastPeriods sync.Map // string -> *period

// offsetAt returns the offset from UTC, in seconds, of the zone name
// (location loc) at Unix second s.
func offsetAt(name string, loc *time.Location, s int64) int64 {
	if v, ok := lastPeriods.Load(name); ok {
		if p := v.(*period); p.start <= s && s < p.end {
			return p.off
		}
	}
	ps := periodsOf(loc, time.Unix(s, 0), time.Unix(s, 0))
	lastPeriods.Store(name, &ps[0])
	return ps[0].off
}

var (
	zoneIndexOnce sync.Once
	zoneIndex     map[string]*zip.File
	errNoZone     = errors.New("unknown time zone")
)

// zone returns the location of an IANA time zone name from the embedded
// database. "UTC" is time.UTC; "Local" and names not in the database are
// refused.
func zone(name string) (*time.Location, error) {
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location), nil
	}
	zoneIndexOnce.Do(func() {
		r, err := zip.NewReader(bytes.NewReader(zoneinfoZip), int64(len(zoneinfoZip)))
		if err != nil {
			panic("policy: the embedded zoneinfo.zip is unreadable: " + err.Error())
		}
		zoneIndex = make(map[string]*zip.File, len(r.File))
		for _, f := range r.File {
			zoneIndex[f.Name] = f
		}
	})
	f, ok := zoneIndex[name]
	if !ok || name == "Local" {
		return nil, errNoZone
	}
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	rc.Close()
	if err != nil {
		return nil, err
	}
	l, err := time.LoadLocationFromTZData(name, data)
	if err != nil {
		return nil, err
	}
	v, _ := zones.LoadOrStore(name, l)
	return v.(*time.Location), nil
}
