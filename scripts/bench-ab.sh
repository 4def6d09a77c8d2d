#!/usr/bin/env bash
# bench-ab.sh BASE HEAD — an A/B comparison of the gate's hot paths between two revisions.
#
# Checks BASE and HEAD out into temporary worktrees, builds each hot-path benchmark's test binary
# once per revision (`go test -c`), then runs the benchmarks COUNT rounds, interleaved: in each
# round every benchmark runs on BASE then on HEAD, so that both sides share the machine's noise
# (other jobs, thermal state). Prints the machine, the date, the load and benchstat's comparison.
#
#   scripts/bench-ab.sh BASE HEAD            # e.g. scripts/bench-ab.sh main~5 main
#   COUNT=3 scripts/bench-ab.sh HEAD~1 HEAD  # fewer rounds, for a quick look
#   make bench-ab BASE=<rev> [HEAD=<rev>]    # the same through make (HEAD defaults to HEAD)
#
# Environment: COUNT (rounds, default 10), BENCH (a regexp: run only the benchmarks whose label
# or name matches it), OUT (a directory to keep the raw results and the report in; default a
# temporary one, printed), GO (default go), BENCH_GC (the collector settings both sides run
# under, as `agentgate` runs: default the Makefile's BENCH_GC, GOGC=1000 GOMEMLIMIT=4GiB).
#
# Duration: with COUNT=10 about 23 minutes on a 2-core machine under a load average of 36, less
# when it is quiet, plus the two builds (4 to 11 minutes with a warm build cache, more cold).
# Each benchmark runs with a fixed -benchtime chosen for that (a fixed iteration count where a
# run sets up a gate, a broker or a log first, so no time goes into b.N's ramp): see BENCHMARKS.
#
# A benchmark is found by its function name in each revision, wherever its package lives then
# (packages move), so BASE and HEAD may differ in layout; one missing in a revision is reported
# and left out of that side. benchstat compares by benchmark name, so the package line of each
# result is replaced by a fixed one.
set -euo pipefail

GO=${GO:-go}
COUNT=${COUNT:-10}
BENCH=${BENCH:-.}
BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

# label | benchmark function | package hint (a path element, for a name defined in several packages)
# | -benchtime | sub-benchmarks (a -bench pattern below the function; - for all)
BENCHMARKS="
decide           | BenchmarkDecideVerifyAction  | domain    | 500ms   | -
decide-a2a       | BenchmarkDecideA2A           | domain    | 200000x | -
event-encode     | BenchmarkEncodeEvent         | eventjson | 500ms   | ./encoder=AppendEvent
event-decode     | BenchmarkDecodeEvent         | eventjson | 500ms   | -
log-append       | BenchmarkAppend              | pebblelog | 500ms   | -
projections-apply| BenchmarkApply               | projections | 1000x | -
audit-chain      | BenchmarkVerifyChain         | audit     | 5x      | -
embedded-durable | BenchmarkDurablePath         | embedded  | 50000x  | -
replay-apply     | BenchmarkReplay              | embedded  | 3x      | -
http-verify      | BenchmarkHTTPVerify          | httpapi   | 20000x  | -
kafka-reqreply   | BenchmarkKafkaRequestReply   | kafkagate | 2000x   | -
kafka-async      | BenchmarkKafkaAsyncDecisions | kafkagate | 20000x  | -
kafka-http       | BenchmarkKafkaHTTPVerify     | kafkagate | 1000x   | -
"

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ $# -eq 2 ] || usage
case $COUNT in '' | *[!0-9]* | 0) echo "COUNT must be a positive integer" >&2; exit 2 ;; esac

repo=$(git rev-parse --show-toplevel)
BENCH_GC=${BENCH_GC:-$(sed -n 's/^BENCH_GC *:*= *//p' "$repo/Makefile" 2>/dev/null)}
BENCH_GC=${BENCH_GC:-GOGC=1000 GOMEMLIMIT=4GiB}
base=$(git -C "$repo" rev-parse --verify "$1^{commit}")
head=$(git -C "$repo" rev-parse --verify "$2^{commit}")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-ab.XXXXXX")
out=${OUT:-$tmp/out}
mkdir -p "$out" "$tmp/bin"
cleanup() {
	git -C "$repo" worktree remove --force "$tmp/a" >/dev/null 2>&1 || true
	git -C "$repo" worktree remove --force "$tmp/b" >/dev/null 2>&1 || true
	rm -rf "$tmp/a" "$tmp/b" "$tmp/bin" "$tmp/plan"
	if [ -z "${OUT:-}" ]; then echo "raw results: $out" >&2; else rmdir "$tmp" 2>/dev/null || true; fi
}
trap cleanup EXIT
git -C "$repo" worktree add --detach "$tmp/a" "$base" >/dev/null 2>&1
git -C "$repo" worktree add --detach "$tmp/b" "$head" >/dev/null 2>&1

# pkgdir SIDE NAME HINT: the directory (relative to the worktree) of the package that defines
# func NAME(b *testing.B), preferring one with HINT among its path elements when there are several.
pkgdir() {
	local hits
	hits=$(cd "$tmp/$1" && grep -rlE --include='*_test.go' "^func $2\(b \*testing\.B\)" . | xargs -r -n1 dirname | sort -u)
	[ -n "$hits" ] || return 1
	if [ "$(printf '%s\n' "$hits" | wc -l)" -gt 1 ]; then
		hits=$(printf '%s\n' "$hits" | grep -E "(^|/)$3(/|$)" | head -1)
	fi
	[ -n "$hits" ] && printf '%s\n' "$hits"
}

# The benchmarks selected, one "label name hint benchtime" line each.
selected=$(printf '%s\n' "$BENCHMARKS" | sed '/^[[:space:]]*$/d; s/[[:space:]]*|[[:space:]]*/ /g' |
	while read -r label name hint time sub; do
		if printf '%s %s\n' "$label" "$name" | grep -Eq -- "$BENCH"; then echo "$label $name $hint $time $sub"; fi
	done)
[ -n "$selected" ] || { echo "no benchmark matches BENCH=$BENCH" >&2; exit 2; }

# Build each side's test binaries, one per package.
echo "building the test binaries of $(git -C "$repo" rev-parse --short "$base") (BASE) and $(git -C "$repo" rev-parse --short "$head") (HEAD)…" >&2
build_start=$SECONDS
plan=$tmp/plan
: >"$plan"
while read -r label name hint time sub; do
	for side in a b; do
		if dir=$(pkgdir "$side" "$name" "$hint"); then
			bin=$tmp/bin/$side-$(printf '%s' "$dir" | tr -c 'A-Za-z0-9' '_').test
			if [ ! -x "$bin" ]; then
				(cd "$tmp/$side" && "$GO" test -c -o "$bin" "$dir") </dev/null >&2
			fi
			echo "$side $label $name $time $sub $dir $bin" >>"$plan"
		else
			echo "note: $name is not in $([ $side = a ] && echo BASE || echo HEAD); left out of that side" >&2
		fi
	done
done <<<"$selected"
echo "built in $((SECONDS - build_start)) s" >&2

machine() {
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: nproc $(nproc), CPU $(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -1), $("$GO" version | cut -d' ' -f3-)"
	echo "BASE $(git -C "$repo" log -1 --format='%h %s' "$base")"
	echo "HEAD $(git -C "$repo" log -1 --format='%h %s' "$head")"
	echo "collector: $BENCH_GC; -count 1 per round, $COUNT rounds, BASE then HEAD in each"
}
machine | tee "$out/report.txt"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/report.txt"

# run SIDE: one round of every planned benchmark of that side, appended to $out/SIDE.txt.
runone() { # side label name time sub dir bin
	local pattern="^$3\$"
	[ "$5" = - ] || pattern="$pattern/$5"
	local start=$SECONDS
	(cd "$tmp/$1/$6" && env $BENCH_GC "$7" -test.run '^$' -test.bench "$pattern" -test.benchtime "$4" -test.benchmem -test.count 1 </dev/null 2>>"$out/$1.log") |
		sed 's/^pkg: .*/pkg: agentgate/' >>"$out/$1.txt"
	local rc=${PIPESTATUS[0]}
	echo "$1 $2 $((SECONDS - start))" >>"$out/seconds.txt"
	return "$rc"
}
: >"$out/a.txt"
: >"$out/b.txt"
: >"$out/seconds.txt"
run_start=$SECONDS
for round in $(seq "$COUNT"); do
	echo "round $round/$COUNT ($((SECONDS - run_start)) s so far)" >&2
	while read -r label name hint time sub; do
		for side in a b; do
			line=$(grep -E "^$side $label " "$plan" || true)
			[ -n "$line" ] || continue
			read -r _ _ _ btime bsub dir bin <<<"$line"
			if ! runone "$side" "$label" "$name" "$btime" "$bsub" "$dir" "$bin"; then
				echo "note: $name failed on $([ $side = a ] && echo BASE || echo HEAD) in round $round" >&2
			fi
		done
	done <<<"$selected"
done
{
	echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg); ran $COUNT rounds in $((SECONDS - run_start)) s"
	echo "seconds per benchmark and side, summed over the rounds:"
	awk '{t[$2" "$1]+=$3} END {for (k in t) print "  " k, t[k]}' "$out/seconds.txt" | sort
	echo
	(cd "$tmp/b" && "$GO" run "$BENCHSTAT" BASE="$out/a.txt" HEAD="$out/b.txt")
} | tee -a "$out/report.txt"
