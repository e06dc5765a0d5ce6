#!/usr/bin/env bash
# valgrind memcheck over the CPU reference, on an existing build tree (CI's is build/):
#   tests/sanitize/valgrind.sh [BUILD_DIR]      (default: build)
# Runs under memcheck the test programs that do not use OpenCL and the shapematch command with
# --backend cpu on the scenes shipped, two at a time. Fails on any memcheck error (an invalid
# read or write, a jump on uninitialised memory, a bad free) and on any definite or indirect leak;
# each program's valgrind log is kept in BUILD_DIR/valgrind/. Needs valgrind
# (apt-get install valgrind); tests/sanitize/valgrind.supp suppresses one error of glibc's loader.
#
# Left out, to keep this under about 5 minutes on 2 cores (memcheck runs 30 to 100 times slower):
#   test_mesh lattice_volume_matches_closed_models: lattices of 30 points across inside the duck
#     and the sphere, O(points x triangles), 1.3 s natively and over 2 minutes here; the lattice
#     sampler runs in cube_lattice_is_exact and in the command's duck below
#   test_stability: its sweeps run 1,000 to 10,000 steps a case (40 s natively); only
#     volume_preservation_keeps_the_rest_state_stable runs
#   test_stress, test_determinism: 10,000-step sweeps and paper384 for 1,000 steps
#   test_collisions tower_of_thirty_boxes_stands: 19,200 solver steps of 1,920 particles (40 s
#     natively); the command runs tower30 for 2 steps below
#   the command on paper384, fig1_teaser and fig9_massive (25,000 to 55,200 particles, a few
#     seconds a step here): their passes are those of the smaller scenes; paper384 is loaded
#     (info) to build its 384 objects
#   the OpenCL tests and test_bad_input (both backends): PoCL's kernel compiler makes memcheck
#     both slow and noisy; the sanitized build (tests/sanitize/run.sh) covers them
set -euo pipefail

cd "$(dirname "$0")/../.."
src=$PWD
build=$(cd "${1:-build}" && pwd)
if ! command -v valgrind > /dev/null; then
    echo "valgrind: not installed (apt-get install valgrind)" >&2
    exit 1
fi
[ -x "$build/shapematch" ] || { echo "valgrind: $build/shapematch is missing: build $build first" >&2; exit 1; }
jobs=$(nproc 2> /dev/null || echo 2)
work=$build/valgrind
rm -rf "$work"
mkdir -p "$work/failed"
# test_scene asks for a device that does not exist: OpenCL's device list is read, in the build tree
export POCL_CACHE_DIR=$build/pocl-cache SM_CACHE_DIR=$build/sm-cache

# 99: a valgrind error, told apart from the program's own failure (the tests exit 1)
vg=(valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect
    --show-leak-kinds=definite,indirect --num-callers=40 --suppressions="$src/tests/sanitize/valgrind.supp")

# run_one NAME DIR COMMAND...: COMMAND under memcheck in DIR, logs in $work/NAME.*
run_one() {
    local name=$1 dir=$2 rc=0 begin=$SECONDS
    shift 2
    (cd "$dir" && "${vg[@]}" --log-file="$work/$name.valgrind" "$@" > "$work/$name.out" 2>&1) || rc=$?
    if [ $rc -eq 0 ]; then
        echo "valgrind: ok      $name ($((SECONDS - begin)) s)"
        return
    fi
    if [ $rc -eq 99 ]; then
        echo "valgrind: FAILED  $name: memcheck errors ($((SECONDS - begin)) s); its log:" >&2
        grep -v '^==[0-9]*== *$' "$work/$name.valgrind" | head -200 >&2
    else
        echo "valgrind: FAILED  $name: exit $rc without memcheck errors; its output:" >&2
        tail -50 "$work/$name.out" >&2
    fi
    touch "$work/failed/$name"
}

runs=()
tests=$build/tests
for t in test_rotation test_modes test_momentum test_plasticity test_ground test_colliders test_paper \
    test_scene test_clusters test_cut_surface test_step test_interaction; do
    [ -x "$tests/$t" ] && runs+=("$t|$tests|$tests/$t")
done
export SM_STRESS_STEPS=100 # (test_colliders' pile in a bowl: its code paths in fewer steps)
export SM_BOUNCE_DRAWS=8   # (test_ground's drops: 700 on the CPU reference natively)
export SM_THROW_DRAWS=16  # (test_momentum's thrown objects: 1,500 on the CPU reference natively)
collisions=(two_boxes_come_to_rest_stacked stack_of_ten_soft_cubes_settles fast_object_does_not_tunnel
    self_collision_is_per_object radius_follows_the_lattice_spacing contact_stats_measure_overlaps
    overlapping_bodies_separate_at_the_push_speed)
runs+=("test_collisions|$tests|$tests/test_collisions ${collisions[*]}")
mesh=(models_of_each_format_load one_model_in_four_formats_welds_the_same duck_welds_into_a_closed_surface
    split_cube_welds_and_winds cube_lattice_is_exact bad_files_fail_naming_the_file)
runs+=("test_mesh|$tests|$tests/test_mesh ${mesh[*]}")
runs+=("test_stability|$tests|$tests/test_stability volume_preservation_keeps_the_rest_state_stable")
# the fuzz harnesses' corpora and regressions, when the build has them (all CPU)
for h in scene objects; do
    [ -x "$tests/replay_$h" ] &&
        runs+=("replay_$h|$tests|$tests/replay_$h $src/tests/fuzz/corpus/$h $src/tests/fuzz/regressions/$h")
done

# the command: every scene for 50 steps (a trajectory written every 10), the meshes' skinned
# surfaces written as PLY files, paper384 loaded, and the duck of tests/cli_test.sh
cli=$work/cli
mkdir -p "$cli"
cat > "$cli/duck.json" << 'JSON'
{"dt": 0.016666666666666666, "ground": {"height": 0},
 "objects": [{"name": "duck", "shape": "mesh", "mesh": "/usr/share/assimp/models/Collada/duck.dae", "scale": 0.5,
              "particles": "lattice", "spacing": 0.08, "position": [0, 1, 0], "mode": "quadratic",
              "clusters": {"grid": [2, 2, 2]}}]}
JSON
tool=$build/shapematch
runs+=("cli_info_paper384|$cli|$tool info $src/scenes/paper384.json")
runs+=("cli_duck|$cli|$tool run duck.json --steps 20 --every 10 --mesh-out duck_meshes --out duck.npy --backend cpu")
for scene in "$src"/scenes/*.json "$src"/scenes/paper/*.json; do
    name=$(basename "$scene" .json)
    case $name in paper384 | fig1_teaser | fig9_massive) continue ;; esac
    surfaces=""
    # (a mesh object has a skinned surface; a mesh collider has none)
    "$tool" info "$scene" 2> /dev/null | grep -q ' shape=mesh ' && surfaces="--mesh-out ${name}_meshes"
    steps=50
    [ "$name" = tower30 ] && steps=2 # (32 solver steps a frame)
    runs+=("cli_$name|$cli|$tool run $scene --steps $steps --every 10 --out $name.npy --backend cpu $surfaces")
done

echo "valgrind: ${#runs[@]} programs under memcheck, $jobs at a time (logs in $work)"
start=$SECONDS
for run in "${runs[@]}"; do
    IFS='|' read -r name dir command <<< "$run"
    read -ra words <<< "$command"
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    run_one "$name" "$dir" "${words[@]}" &
done
wait
failed=$(ls "$work/failed")
if [ -n "$failed" ]; then
    echo "valgrind: FAILED: $(echo "$failed" | tr '\n' ' ')($((SECONDS - start)) s)" >&2
    exit 1
fi
echo "valgrind: all ${#runs[@]} clean ($((SECONDS - start)) s)"
