#!/bin/sh
# bench/walksplit.sh MALLOCWATCH PID [IDLE_PID] - where one snapshot of
# PID spends its CPU (issue 44 item 3): `perf record -F 10000` of
# `snapshot -p PID,IDLE_PID` (samples of 0.1 ms of CPU; no hardware
# counters in this VM, cpu-clock sampling), the samples of the thread
# that walks (the one with the most samples in mallocwatch's own code)
# and of the reader thread (src/live/procahead.c: the one with the most
# samples besides) split into: own (mallocwatch's code: the walk's work
# a chunk, and the libc's symbols read before it), copy (the kernel's
# process_vm_readv: _copy_to_iter, pinning the process's pages), faults
# (fresh buffer pages: clear_page*, fault handling, unmapping), other
# kernel, libs (libz, libdw: reading the libc's debug information, before
# the walk).  Prints one line:
#   SECONDS (load L)  walk: own N copy N faults N kernel-other N libs N | reader: copy N faults N other N
# Run as root, perf installed; PID idle (bench/walk.sh's fixtures).
set -eu
MW=$1 PID=$2 IDLE=${3:-}
OUT=${TMPDIR:-/tmp}/walksplit.$$
trap 'rm -f $OUT.data $OUT.json' EXIT
perf record -q -F 10000 -o $OUT.data -- "$MW" snapshot -p "$PID${IDLE:+,$IDLE}" --json $OUT.json \
	-o /dev/null --read-timeout 60 >/dev/null 2>&1
d=$(python3 -c 'import json,sys; p=[p for p in json.load(open(sys.argv[1]))["processes"] if p["pid"]==int(sys.argv[2])][0]; print(p["duration_ns"]/1e9)' $OUT.json "$PID")
perf script -i $OUT.data -F tid,ip,sym,dso 2>/dev/null | awk -v b="$(basename "$MW")" -v d="$d" \
	-v up="$(uptime | sed 's/.*average: //; s/,.*//')" '
{ tid = $1; dso = $NF; sym = $3; tot[tid]++
  if (dso ~ /kernel/) {
	if (sym ~ /clear_page|folio_zero|fault|do_anonymous|alloc_pages|get_page_from_freelist|rmqueue|prep_compound|zap|unmap|free_pages|release_pages|tlb/) c = "fault"
	else if (sym ~ /copy_to_iter|copy_page_to_iter|follow_page|get_user_pages|gup|pte_offset|vm_normal_page|process_vm|unpin|try_grab|pin_user|folio|mark_page|_raw_spin/) c = "copy"
	else c = "kother"
  } else if (index(dso, b)) c = "own"; else c = "libs"
  s[tid, c]++ }
END { for (x in tot) if (s[x, "own"] > mu) { mu = s[x, "own"]; w = x }
      for (x in tot) if (x != w && tot[x] > mr) { mr = tot[x]; r = x }
      printf "%.3f s (load %s)  walk: own %4d copy %4d faults %4d kernel-other %3d libs %3d | reader: copy %4d faults %4d other %3d\n",
	d, up, s[w, "own"], s[w, "copy"], s[w, "fault"], s[w, "kother"], s[w, "libs"], s[r, "copy"], s[r, "fault"],
	s[r, "kother"] + s[r, "own"] + s[r, "libs"] }'
