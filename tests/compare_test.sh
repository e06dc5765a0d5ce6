#!/usr/bin/env bash
# shapematch compare on every scene in scenes/ and scenes/paper/: one OpenCL step from the CPU reference's state
# lands within 1e-5 of the scene's diagonal, so the command exits 0; and a kernel with a
# deliberate error (gravity reversed) is caught: the command exits 1 and says by how much.
# usage: compare_test.sh SHAPEMATCH SCENES_DIR KERNELS_DIR WORK_DIR
set -u
tool=$(realpath "$1") scenes=$(realpath "$2") kernels=$(realpath "$3") work=$4
mkdir -p "$work" && cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

for scene in "$scenes"/*.json "$scenes"/paper/*.json; do
    # long enough for contact, deformation and plastic flow to set in, short enough for CI (the
    # pile's first layer lands after 30 steps; the CPU reference takes about a second a step there;
    # fig9_massive is paper384 with skinned spheres, fig1_teaser a smaller pile)
    case "$(basename "$scene")" in
    paper384.json) steps="--steps 60 --every 10" ;;
    fig9_massive.json | fig1_teaser.json) steps="--steps 12 --every 2" ;;
    *) steps="--steps 120 --every 20" ;;
    esac
    out=$("$tool" compare "$scene" $steps 2>&1)
    rc=$?
    last=$(echo "$out" | grep '^max_single_step_error=')
    echo "$(basename "$scene"): $last"
    [ "$rc" -eq 0 ] || fail "compare $(basename "$scene") exited $rc: $out"
    echo "$last" | grep -Eq '^max_single_step_error=[0-9.e+-]+ max_trajectory_error=[0-9.e+-]+$' ||
        fail "compare $(basename "$scene"): no summary line: $out"
    [ "$(echo "$out" | grep -c '^step=')" -eq 6 ] || fail "compare $(basename "$scene"): expected 6 sampled steps: $out"
done

# a cut through a layer of particles: the restarted device world divides them as the reference
# does, so the single steps still agree
cat > cut_layer.json << 'JSON'
{"dt": 0.0166666666666667, "ground": {}, "objects": [
  {"shape": "box", "resolution": [3, 3, 3], "position": [0, 0.8, 0], "clusters": {"grid": [2, 2, 2]}},
  {"shape": "box", "resolution": [9, 9, 9], "position": [3, 0.8, 0], "clusters": {"grid": [2, 2, 2]}}],
 "cuts": [{"time": 0.1, "object": 1, "point": [3, 0, 0], "normal": [1, 0, 0]},
          {"time": 0.35, "object": 0, "point": [0, 0, 0], "normal": [1, 0, 0]}]}
JSON
out=$("$tool" compare cut_layer.json --steps 40 --every 5 2>&1)
rc=$?
echo "cut_layer.json: $(echo "$out" | grep '^max_single_step_error=')"
[ "$rc" -eq 0 ] || fail "compare of a cut through a particle layer exited $rc: $out"

# a broken kernel is caught
mkdir -p broken && cp "$kernels"/* broken/
sed -i 's/v += (gravity.xyz + f.xyz \* f.w) \* h;/v -= (gravity.xyz + f.xyz * f.w) * h;/' broken/04_blend_integrate.cl
grep -q 'v -= (gravity' broken/04_blend_integrate.cl || fail "could not break the kernel (the test needs updating)"
out=$(SM_KERNEL_DIR="$work/broken" "$tool" compare "$scenes/linear_cube.json" --steps 5 --every 1 2>&1)
rc=$?
[ "$rc" -eq 1 ] || fail "compare with a broken kernel exited $rc, expected 1: $out"
echo "$out" | grep -Eq 'the single-step error [0-9.e+-]+ exceeds 1e-05' || fail "no error message: $out"

if [ "$failures" -gt 0 ]; then
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "compare: all checks passed"
