#!/usr/bin/env bash
# The long soak of "Stable under everything": COUNT scenes drawn at random (from seed FIRST,
# default 1000, past the CI's 1..48) run on the CPU reference and on OpenCL by
# test_random_stability, with a line per object and draw (its largest radius over the bound's
# scale, its radius after settling, and what was drawn), then a summary. WORDS go to
# test_random_stability: a backend ("cpu" or "opencl"; both when none), "sliding" (draws
# along the ground at long steps), "piles" (objects in contact at any step and speed),
# "colliding" (among colliders of every shape, static or moving) or "cutting" (objects cut 1 to
# 3 times during the run).
#   tests/soak.sh COUNT [FIRST] [BUILD_DIR] [WORDS...]
# Exits 1 when a draw broke a property; each failure prints the command that replays it.
set -u
count=${1:?usage: tests/soak.sh COUNT [FIRST] [BUILD_DIR] [WORDS...]}
first=${2:-1000}
build=${3:-build}
shift $(($# < 3 ? $# : 3))
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-$build/pocl-cache} SM_CACHE_DIR=${SM_CACHE_DIR:-$build/sm-cache}
log=$(mktemp)
"$build/tests/test_random_stability" soak "$count" "$first" report "$@" | tee "$log" | grep -v '^REPORT'
status=${PIPESTATUS[0]}
awk '/^REPORT/ {n++; if ($8 == 0 && $7 == 0 && $6 > 1.1) unsettled++}
     END {printf "soak: %d object runs; %d free objects not back within 1.1 rest radii after settling (checked only for one cluster)\n", n, unsettled}' "$log"
rm -f "$log"
exit "$status"
