#!/usr/bin/env bash
# shapematch bench end to end, small: fig8 writes a CSV with every series on both backends (and
# the plot when gnuplot is installed); bench scene prints the speed, the per-pass table, the
# floor and the memory of the layout. Speed itself is measured in bench/RESULTS.md, not here.
# usage: bench_test.sh SHAPEMATCH SCENES_DIR WORK_DIR
set -euo pipefail
tool=$(realpath "$1") scenes=$(realpath "$2") work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$("$tool" bench fig8 --out "$work/fig8" --max-points 3200 --cpu-max-points 1800 2>&1) || fail "bench fig8 exited $?: $out"
csv="$work/fig8/fig8.csv"
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
    [ -s "$work/fig8/fig8.png" ] || fail "gnuplot is installed but no fig8.png: $out"
    echo "ok: the plot"
else
    echo "$out" | grep -q "gnuplot is not installed (apt-get install gnuplot-nox)" || fail "no word on the missing gnuplot: $out"
    echo "ok: without gnuplot the command says how to get the plot"
fi

out=$("$tool" bench scene "$scenes/linear_cube.json" --steps 5 --repeat 3 2>&1) || fail "bench scene exited $?: $out"
echo "$out"
echo "$out" | grep -Eq '^steps_per_second=[0-9.]+ ms_per_step=[0-9.]+ \(median of 3 runs of 5 steps' || fail "no speed line"
for pass in cluster_moments rotation goal_transform blend_integrate; do
    echo "$out" | grep -Eq "^$pass +[0-9.]+ +[0-9.]+%" || fail "no time for the pass $pass"
done
echo "$out" | grep -Eq '^floor: copy bandwidth [0-9.]+ GB/s' || fail "no floor line"
# the layout: 5 float4 per particle (position, its low half, velocity, goal, force) and 2 ints
echo "$out" | grep -q 'device memory: .* 88.0 bytes per particle' || fail "not 88 bytes per particle"
"$tool" bench scene "$scenes/linear_cube.json" --steps 0 > /dev/null 2>&1 && fail "--steps 0 was accepted"
# --substeps replaces the scene's: the profiled world then runs that many solver steps a step
out=$("$tool" bench scene "$scenes/linear_cube.json" --steps 4 --repeat 1 --substeps 7 2>&1) || fail "--substeps 7 exited $?: $out"
echo "$out" | grep -Eq '^objects=.* substeps=7 ' || fail "--substeps 7 not reported: $out"
"$tool" bench scene "$scenes/linear_cube.json" --substeps 0 > /dev/null 2>&1 && fail "--substeps 0 was accepted"
"$tool" bench nothing > /dev/null 2>&1 && fail "an unknown benchmark was accepted"
echo "ok: bench"
