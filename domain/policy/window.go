package policy

import (
	"slices"
	"strings"
	"time"
)

// horizon is how far ahead a release is looked for: every window recurs
// each week, so one that opens at all opens within eight days.
const horizonDays = 8

// open reports whether the wall clock of now, in the policy's zone, is
// inside one of its windows.
func (w *TimeWindow) open(loc *time.Location, now time.Time) bool {
	local := now.In(loc)
	day := dayNames[local.Weekday()]
	mins := local.Hour()*60 + local.Minute()
	for i := range w.Windows {
		win := &w.Windows[i]
		if mins >= parseClock(win.Start) && mins < parseClock(win.End) && slices.Contains(win.Days, day) {
			return true
		}
	}
	return false
}

// zoned is a time window policy with its zone.
type zoned struct {
	tw  *TimeWindow
	loc *time.Location
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
// overlap: both are tried), or a transition; release tries each in order
// of time. A window starting at 02:30 on a day whose clocks jump from 02:00
// to 03:00 opens at the jump (03:00 local); one starting at 01:30 on a day
// whose clocks go back from 02:00 to 01:00 opens at the first 01:30.
func release(ws []zoned, now time.Time) (time.Time, bool) {
	now = now.Truncate(time.Second)
	end := now.Add((horizonDays + 1) * Day)
	cands := []time.Time{now}
	for _, z := range ws {
		local := now.In(z.loc)
		y, m, d := local.Date()
		for k := -1; k <= horizonDays; k++ {
			date := time.Date(y, m, d+k, 12, 0, 0, 0, time.UTC) // the calendar day, read in UTC
			day := dayNames[date.Weekday()]
			for i := range z.tw.Windows {
				win := &z.tw.Windows[i]
				if !slices.Contains(win.Days, day) {
					continue
				}
				cands = appendWall(cands, z.loc, date, parseClock(win.Start))
			}
		}
		for t, n := local, 0; n < 64; n++ {
			_, next := t.ZoneBounds()
			if next.IsZero() || next.After(end) {
				break
			}
			cands = append(cands, next)
			t = next
		}
	}
	slices.SortFunc(cands, func(a, b time.Time) int { return a.Compare(b) })
	for _, c := range cands {
		if c.Before(now) || c.After(end) {
			continue
		}
		all := true
		for _, z := range ws {
			if !z.tw.open(z.loc, c) {
				all = false
				break
			}
		}
		if all {
			return c.UTC(), true
		}
	}
	return time.Time{}, false
}

// appendWall appends the instants whose wall clock in loc reads the
// calendar day of date (a UTC time) at mins minutes after midnight: none
// in a gap, one, or two in an overlap.
func appendWall(cands []time.Time, loc *time.Location, date time.Time, mins int) []time.Time {
	y, m, d := date.Date()
	naive := time.Date(y, m, d, mins/60, mins%60, 0, 0, time.UTC)
	var offs [3]int
	for i, probe := range []time.Duration{-2 * Day, 0, 2 * Day} {
		_, offs[i] = naive.Add(probe).In(loc).Zone()
	}
	n := len(cands)
	for _, off := range offs {
		t := naive.Add(-time.Duration(off) * time.Second)
		lt := t.In(loc)
		ly, lm, ld := lt.Date()
		if ly != y || lm != m || ld != d || lt.Hour()*60+lt.Minute() != mins || lt.Second() != 0 {
			continue
		}
		if !slices.ContainsFunc(cands[n:], t.Equal) {
			cands = append(cands, t)
		}
	}
	return cands
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
