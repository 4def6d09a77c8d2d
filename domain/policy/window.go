package policy

import (
	"math"
	"slices"
	"strings"
	"time"
)

// horizon is how far ahead a release is looked for: every window recurs
// each week, so one that opens at all opens within eight days.
const horizonDays = 8

// open reports whether the wall clock of now, in the policy's zone (loc),
// is inside one of its windows.
func (w *TimeWindow) open(loc *time.Location, now time.Time) bool {
	s := now.Unix()
	return w.openLocal(s + offsetAt(w.TimeZone, loc, s))
}

// zoned is a time window policy with its zone.
type zoned struct {
	tw  *TimeWindow
	loc *time.Location
}

// period is a stretch of instants [start, end) (Unix seconds) over which
// a zone's offset from UTC is off seconds.
type period struct{ start, end, off int64 }

// periodsOf returns the periods of loc that cover [from, to], in order.
func periodsOf(loc *time.Location, from, to time.Time) []period {
	var ps []period
	t := from.In(loc)
	for n := 0; n < 64; n++ {
		_, off := t.Zone()
		s, e := t.ZoneBounds()
		p := period{math.MinInt64, math.MaxInt64, int64(off)}
		if !s.IsZero() {
			p.start = s.Unix()
		}
		if !e.IsZero() {
			p.end = e.Unix()
		}
		ps = append(ps, p)
		if e.IsZero() || e.After(to) {
			break
		}
		t = e.In(loc)
	}
	return ps
}

// daySeconds is the length of a civil day.
const daySeconds = 86400

// floorDiv is a/b rounded toward minus infinity (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// openAt reports whether the wall clock at Unix second c, in a zone of
// periods ps, is inside one of the windows: the wall clock is c plus the
// offset of the period holding c.
func (w *TimeWindow) openAt(ps []period, c int64) bool {
	off := ps[len(ps)-1].off
	for _, p := range ps {
		if c < p.end {
			off = p.off
			break
		}
	}
	return w.openLocal(c + off)
}

// openLocal reports whether the wall clock local (the Unix second whose
// UTC reading is the wall clock's) is inside one of the windows; day 0 of
// the Unix epoch was a Thursday.
func (w *TimeWindow) openLocal(local int64) bool {
	day := floorDiv(local, daySeconds)
	wd := dayNames[(day%7+7+4)%7]
	mins := int((local - day*daySeconds) / 60)
	for i := range w.Windows {
		win := &w.Windows[i]
		if mins >= parseClock(win.Start) && mins < parseClock(win.End) && slices.Contains(win.Days, wd) {
			return true
		}
	}
	return false
}

// release returns the earliest instant at or after now at which every
// window policy of ws is open, and false when there is none within the
// horizon (windows of two policies that never meet, or a window that only
// a daylight-saving gap holds).
//
// Exactness. The wall clock of a zone moves with the instant except at a
// zone transition, where it jumps. A set of windows is open on a union of
// periods, each starting at an instant whose wall clock is a window's start
// or at a transition that jumps into a window. So the earliest open instant
// is one of: now, an instant whose wall clock reads a window's start on a
// day of the window (none in a spring-forward gap, two in a fall-back
// overlap), or a transition; release tries each in order of time. A
// window starting at 02:30 on a day whose clocks jump from 02:00 to 03:00
// opens at the jump (03:00 local); one starting at 01:30 on a day whose
// clocks go back from 02:00 to 01:00 opens at the first 01:30. The zone's
// periods are read once (a few ZoneBounds calls); the rest is integer
// arithmetic on Unix seconds.
func release(ws []zoned, now time.Time) (time.Time, bool) {
	from := now.Unix()
	to := from + (horizonDays+1)*daySeconds
	cands := []int64{from}
	zps := make([][]period, len(ws))
	for i, z := range ws {
		ps := periodsOf(z.loc, now.Add(-2*Day), time.Unix(to, 0).Add(2*Day))
		zps[i] = ps
		_, off := now.In(z.loc).Zone()
		today := floorDiv(from+int64(off), daySeconds)
		for day := today - 1; day <= today+horizonDays; day++ {
			wd := dayNames[(day%7+7+4)%7]
			for j := range z.tw.Windows {
				win := &z.tw.Windows[j]
				if !slices.Contains(win.Days, wd) {
					continue
				}
				wall := day*daySeconds + int64(parseClock(win.Start))*60
				for _, p := range ps { // the instants whose wall clock reads wall
					if c := wall - p.off; p.start <= c && c < p.end {
						cands = append(cands, c)
					}
				}
			}
		}
		for _, p := range ps {
			if p.start > from {
				cands = append(cands, p.start)
			}
		}
	}
	slices.Sort(cands)
	for _, c := range cands {
		if c < from || c > to {
			continue
		}
		all := true
		for i, z := range ws {
			if !z.tw.openAt(zps[i], c) {
				all = false
				break
			}
		}
		if all {
			return time.Unix(c, 0).UTC(), true
		}
	}
	return time.Time{}, false
}

// describe is a time window as people read it: "mon,tue 09:00-17:30;
// sat 10:00-12:00 Europe/Paris".
func (w *TimeWindow) describe() string {
	var b strings.Builder
	for i, win := range w.Windows {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(strings.Join(win.Days, ","))
		b.WriteString(" ")
		b.WriteString(win.Start)
		b.WriteString("-")
		b.WriteString(win.End)
	}
	b.WriteString(" ")
	b.WriteString(w.TimeZone)
	return b.String()
}
