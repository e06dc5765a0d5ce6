#!/usr/bin/env bash
# shapematch bench end to end, small: fig8 writes a CSV with every series on both backends (and
# the plot when gnuplot is installed); bench scene prints the speed, the per-pass table, the
# floor and the memory of the layout. Speed itself is measured in bench/RESULTS.md, not here.
# usage: bench_test.sh SHAPEMATCH SCENES_DIR WORK_DIR
set -euo pipefail
tool=$(realpath "$1") scenes=$(realpath "$2") work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
# (the checks read the output from a here-string: in `echo "$out" | grep -q`, grep may stop
# reading early and fail the pipe under pipefail, a check failing on a line that is there)

# the folder's name holds a quote and shell syntax: it reaches neither a shell nor gnuplot's
# script (gnuplot runs in the folder, the script names its files there)
dir="fig8 q'; touch PWNED; echo '"
out=$(cd "$work" && "$tool" bench fig8 --out "$dir" --max-points 3200 --cpu-max-points 1800 2>&1) || fail "bench fig8 exited $?: $out"
[ -e "$work/PWNED" ] && fail "the --out folder's name ran as a shell command: $out"
csv="$work/$dir/fig8.csv"
[ -f "$csv" ] || fail "no $csv"
head -1 "$csv" | grep -qx 'backend,device,variant,mode,clusters,points,ms_per_step' || fail "bad CSV header: $(head -1 "$csv")"
/usr/bin/python3 - "$csv" << 'PY' || fail "the CSV lacks series or has bad timings"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
series = {(r['backend'], r['variant'], r['mode'], r['clusters']) for r in rows}
expected = {(b, 'one', m, c) for b in ('cpu', 'opencl') for m in ('linear', 'quadratic') for c in ('1', '8', '64')}
expected |= {('cpu', 'many', 'linear', '8'), ('opencl', 'many', 'linear', '8')}
missing = expected - series
assert not missing, f"missing series {sorted(missing)}"
assert all(float(r['ms_per_step']) > 0 for r in rows), "a timing is not positive"
assert max(int(r['points']) for r in rows if r['backend'] == 'opencl') == 3162, "the sizes are not 1000 x 10^(k/4)"
assert max(int(r['points']) for r in rows if r['backend'] == 'cpu') == 1778, "--cpu-max-points is not kept"
print(f"ok: {len(rows)} rows, {len(series)} series")
PY
if command -v gnuplot > /dev/null; then
    [ -s "$work/$dir/fig8.png" ] || fail "gnuplot is installed but no fig8.png: $out"
    grep -qF "fig8: wrote $dir/fig8.png" <<< "$out" || fail "the plot is not reported: $out"
    echo "ok: the plot"
else
    grep -q "gnuplot is not installed (apt-get install gnuplot-nox)" <<< "$out" || fail "no word on the missing gnuplot: $out"
    echo "ok: without gnuplot the command says how to get the plot"
fi

# --device measures the OpenCL device it selects alone (a GPU machine's CPU device would take
# hours), and a selector that matches none is refused
out=$("$tool" bench fig8 --out "$work/one" --max-points 1000 --backend opencl --device 0 2>&1) || fail "--device 0: exit $?: $out"
devices=$(tail -n +2 "$work/one/fig8.csv" | cut -d, -f1,2 | sort -u)
[ "$(echo "$devices" | wc -l)" -eq 1 ] && grep -q '^opencl,' <<< "$devices" || fail "--device 0 measured: $devices"
rc=0
out=$("$tool" bench fig8 --out "$work/none" --backend opencl --device no-such-device 2>&1) || rc=$?
[ "$rc" -eq 2 ] && grep -q "no OpenCL device matches 'no-such-device'" <<< "$out" || fail "--device no-such-device: exit $rc: $out"
echo "ok: --device"

# a gnuplot that fails, or that writes no plot, fails the command, which then claims no plot;
# without gnuplot the command says how to get it and succeeds
mkdir -p "$work/failing" "$work/silent" "$work/nothing"
printf '#!/bin/sh\nexit 3\n' > "$work/failing/gnuplot"
printf '#!/bin/sh\nexit 0\n' > "$work/silent/gnuplot"
chmod +x "$work/failing/gnuplot" "$work/silent/gnuplot"
small=(--max-points 1000 --cpu-max-points 1000 --backend cpu)
for stub in failing silent; do
    rc=0
    out=$(PATH="$work/$stub:$PATH" "$tool" bench fig8 --out "$work/$stub/out" "${small[@]}" 2>&1) || rc=$?
    [ "$rc" -eq 1 ] || fail "a $stub gnuplot: exit status $rc, expected 1: $out"
    grep -q "^fig8: wrote .*fig8.png" <<< "$out" && fail "a $stub gnuplot: the plot is reported written: $out"
    expected=$([ $stub = failing ] && echo "gnuplot failed on .*fig8.gp \(exit status 3\)" || echo "gnuplot ran .*fig8.gp but wrote no plot")
    grep -Eq "$expected" <<< "$out" || fail "a $stub gnuplot: no /$expected/: $out"
done
out=$(PATH="$work/nothing" "$tool" bench fig8 --out "$work/nothing/out" "${small[@]}" 2>&1) || fail "without gnuplot: exit $?: $out"
grep -q "gnuplot is not installed (apt-get install gnuplot-nox)" <<< "$out" || fail "no word on the missing gnuplot: $out"
echo "ok: gnuplot's failures"

# a --repeat too large for memory is refused with a message, not a crash (under a memory limit;
# under AddressSanitizer, which cannot start under one, its own allocation limit)
rc=0
# (ldd's output read whole before grep: in `ldd | grep -q`, grep may stop reading early and fail
# the pipe under pipefail, which sent an ASan build to the ulimit branch, where ASan cannot start)
deps=$(ldd "$tool" 2> /dev/null || true)
if grep -q libasan <<< "$deps"; then
    out=$(ASAN_OPTIONS="${ASAN_OPTIONS:-}:allocator_may_return_null=1:max_allocation_size_mb=1024" \
        "$tool" bench scene "$scenes/linear_cube.json" --backend cpu --repeat 1000000000 2>&1) || rc=$?
else
    out=$(ulimit -v 2000000 && "$tool" bench scene "$scenes/linear_cube.json" --backend cpu --repeat 1000000000 2>&1) || rc=$?
fi
[ "$rc" -eq 1 ] || fail "--repeat 1000000000: exit status $rc, expected 1: $out"
grep -q "out of memory for the times of 1000000000 runs (--repeat)" <<< "$out" || fail "--repeat 1000000000: $out"
# a folder given as the scene is named as one
rc=0
out=$("$tool" bench scene "$scenes" --backend cpu 2>&1) || rc=$?
[ "$rc" -eq 1 ] && grep -q "cannot read scene file .*: Is a directory" <<< "$out" || fail "a folder as the scene: $rc: $out"

out=$("$tool" bench scene "$scenes/linear_cube.json" --steps 5 --repeat 3 2>&1) || fail "bench scene exited $?: $out"
echo "$out"
grep -Eq '^steps_per_second=[0-9.]+ ms_per_step=[0-9.]+ \(median of 3 runs of 5 steps' <<< "$out" || fail "no speed line"
for pass in cluster_moments rotation goal_transform blend_integrate; do
    grep -Eq "^$pass +[0-9.]+ +[0-9.]+%" <<< "$out" || fail "no time for the pass $pass"
done
grep -Eq '^floor: copy bandwidth [0-9.]+ GB/s' <<< "$out" || fail "no floor line"
# the layout: 6 float4 per particle (position, its low half, velocity, goal, the velocity the
# solver step began with, force) and 2 ints
grep -q 'device memory: .* 104.0 bytes per particle' <<< "$out" || fail "not 104 bytes per particle"
"$tool" bench scene "$scenes/linear_cube.json" --steps 0 > /dev/null 2>&1 && fail "--steps 0 was accepted"
# --substeps replaces the scene's: the profiled world then runs that many solver steps a step
out=$("$tool" bench scene "$scenes/linear_cube.json" --steps 4 --repeat 1 --substeps 7 2>&1) || fail "--substeps 7 exited $?: $out"
grep -Eq '^objects=.* substeps=7 ' <<< "$out" || fail "--substeps 7 not reported: $out"
"$tool" bench scene "$scenes/linear_cube.json" --substeps 0 > /dev/null 2>&1 && fail "--substeps 0 was accepted"
"$tool" bench nothing > /dev/null 2>&1 && fail "an unknown benchmark was accepted"
echo "ok: bench"
