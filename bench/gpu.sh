#!/usr/bin/env bash
# The whole GPU measurement in one command, for the day a GPU is at hand:
#   bench/gpu.sh [OUT_DIR]        (default: bench/gpu-<date>)
# Builds shapematch (tool only) in build-gpu/, lists the OpenCL devices, then on the first GPU:
#   - paper384 with and without contact (target: 10,000 steps/s without), per pass, floor, memory;
#     without contact also at one solver step per frame (the paper's measure; the scene has 3);
#     each `bench scene` also prints the kernel launches per solver step (12 with contact); and
#     both again with every cluster of 32 members or more summed by a work-group
#     (SM_LARGE_CLUSTER=32: whether that path would speed up sm_cluster_moments there);
#   - 1,000,000 particles in one quadratic box of 8 clusters (target: 2,000 steps/s, and at least
#     half the copy bandwidth in the shape-matching passes: the "floor" line);
#   - contact's worst case, 1,000 boxes spawned at one point (bench/spawn1000.json), on the GPU
#     and on the CPU reference;
#   - the milliseconds of each kernel per solver step, paper384 with contact and the spawn;
#   - the 30-box tower (scenes/tower30.json, 32 solver steps a frame): its speed, and its whole
#     10 s run (the summary's overlaps);
#   - the paper's Fig. 8 to 1,000,000 points on every OpenCL device (CSV and, with gnuplot, PNG);
#   - the viewer drawing paper384 on the GPU with no window system (--headless: EGL), with CL-GL
#     sharing where the GPU's OpenCL offers it and with the host copy, frames per second of each
#     (needs the viewer: SM_VIEW, or a build with it).
# Everything printed goes to OUT_DIR/*.txt too, and the ratios issue 29 sets targets for (contact
# against no contact on paper384, the spawn on the GPU against the CPU reference) to
# OUT_DIR/summary.txt; copy the figures into bench/RESULTS.md with the machine and the date.
#
# OpenCL: the build needs an ICD loader (libOpenCL) and the headers. Where they are missing it
# installs Debian's (ocl-icd-opencl-dev opencl-headers) when apt-get and root are available, and
# otherwise falls back on the ones of a CUDA toolkit (/usr/local/cuda), which ships both. The GPU's
# own driver (e.g. NVIDIA's, with /etc/OpenCL/vendors/nvidia.icd) must be installed.
#
# On a machine where nothing can be installed, build elsewhere and point at the programs:
#   SM_TOOL=path/to/shapematch [SM_VIEW=path/to/shapematch-view] bench/gpu.sh OUT_DIR
# skips the build (the shared libraries they need on LD_LIBRARY_PATH).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/bench/gpu-$(date -u +%Y-%m-%d)}
mkdir -p "$out"
cd "$root"

tool=${SM_TOOL:-}
view=${SM_VIEW:-}
if [ -z "$tool" ]; then
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DSM_BUILD_VIEWER=OFF -DSM_BUILD_TESTS=OFF)
have_loader() { ldconfig -p 2> /dev/null | grep -q 'libOpenCL.so' && [ -f /usr/include/CL/cl.h ]; }
if ! have_loader; then
    if command -v apt-get > /dev/null && [ "$(id -u)" -eq 0 ] &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ocl-icd-opencl-dev opencl-headers > "$out/apt.txt" 2>&1; then
        echo "gpu.sh: installed Debian's OpenCL ICD loader and headers"
    elif [ -f /usr/local/cuda/include/CL/cl.h ] && ls /usr/local/cuda/lib64/libOpenCL.so* > /dev/null 2>&1; then
        echo "gpu.sh: using the OpenCL loader and headers of /usr/local/cuda"
        cmake_args+=(-DOpenCL_INCLUDE_DIR=/usr/local/cuda/include "-DOpenCL_LIBRARY=$(ls /usr/local/cuda/lib64/libOpenCL.so* | head -1)")
    else
        echo "gpu.sh: no OpenCL ICD loader: install ocl-icd-opencl-dev and opencl-headers (or a CUDA toolkit)" >&2
        exit 1
    fi
fi
for dependency in libcjson-dev libassimp-dev; do
    if ! dpkg-query -W -f='${Status}' "$dependency" 2> /dev/null | grep -q "install ok installed"; then
        if command -v apt-get > /dev/null && [ "$(id -u)" -eq 0 ]; then
            DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$dependency" >> "$out/apt.txt" 2>&1
        fi
    fi
done
cmake -S . -B build-gpu "${cmake_args[@]}" > "$out/cmake.txt"
cmake --build build-gpu -j "$(nproc)" --target shapematch_tool > "$out/build.txt"
tool=build-gpu/shapematch
fi
export SM_CACHE_DIR=${SM_CACHE_DIR:-$root/build-gpu/sm-cache}

"$tool" devices | tee "$out/devices.txt"
gpu=$(awk -F: '/ gpu/ {print $1; exit}' "$out/devices.txt")
[ -n "$gpu" ] || { echo "gpu.sh: no GPU among the OpenCL devices (listed above)" >&2; exit 1; }
{
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2> /dev/null || true
    date -u
} | tee "$out/machine.txt"

# every measurement runs even when one before it failed or hung (each is interrupted, as by Ctrl-C,
# after SM_GPU_TIMEOUT seconds, default 300); the exit status says whether all ran
failed=()
measure() {
    local file=$1
    shift
    echo "gpu.sh: $*" >> "$out/commands.txt"
    timeout -s INT -k 15 "${SM_GPU_TIMEOUT:-300}" "$@" 2>&1 | tee -a "$out/$file" || failed+=("$*")
}
for args in "--collisions off --substeps 1" "--collisions off" "--collisions on"; do
    measure paper384.txt "$tool" bench scene scenes/paper384.json --device "$gpu" --steps 1000 --repeat 5 $args
done
measure paper384.txt "$tool" bench scene scenes/paper384.json --backend cpu --collisions off --steps 50 --repeat 3
# an experiment for a next change: paper384's clusters (about 50 members) summed by a work-group
# each instead of one work-item's loop (sm_cluster_moments, the largest kernel of its step)
for args in "--collisions off" "--collisions on"; do
    measure paper384_group.txt env SM_LARGE_CLUSTER=32 "$tool" bench scene scenes/paper384.json --device "$gpu" --steps 1000 --repeat 5 $args
done
measure million_quadratic.txt "$tool" bench scene bench/million_quadratic.json --device "$gpu" --steps 200 --repeat 5
# contact's worst case: 1,000 boxes spawned at one point, on the GPU and on the CPU reference
measure spawn1000.txt "$tool" bench scene bench/spawn1000.json --device "$gpu" --steps 20 --repeat 3
measure spawn1000.txt "$tool" bench scene bench/spawn1000.json --backend cpu --steps 5 --repeat 1
# the milliseconds of each kernel (a notice of --profile --verbose), with contact and in the spawn
measure kernels.txt "$tool" run scenes/paper384.json --device "$gpu" --steps 300 --profile --verbose
measure kernels.txt "$tool" run bench/spawn1000.json --device "$gpu" --steps 20 --profile --verbose
measure tower30.txt "$tool" bench scene scenes/tower30.json --device "$gpu" --steps 100 --repeat 3
measure tower30.txt "$tool" run scenes/tower30.json --device "$gpu"
if [ -n "$view" ]; then
    for interop in auto off; do
        measure viewer.txt "$view" scenes/paper384.json --headless --device "$gpu" --frames 600 --interop $interop \
            --report "$out/viewer-$interop.json" --screenshot "$out/viewer-$interop.png"
    done
else
    echo "gpu.sh: no viewer (set SM_VIEW): the drawing is not measured" | tee "$out/viewer.txt"
fi

# the two ratios issue 29 sets targets for, from the rates above (in the order measured)
rates() { grep -o 'steps_per_second=[0-9.]*' "$out/$1" 2> /dev/null | cut -d= -f2 || true; }
ratio() { # ratio FILE FIRST SECOND TEXT: rate number SECOND over rate number FIRST (from 1)
    rates "$1" | awk -v a="$2" -v b="$3" -v text="$4" \
        '{r[NR] = $1} END {if (r[a] > 0 && r[b] != "") printf "gpu.sh: %s: %.1f against %.1f steps/s, %.2f times\n", text, r[b], r[a], r[b] / r[a]}'
}
{
    ratio paper384.txt 2 3 "paper384 at its 3 substeps, with contact against without (the target: 0.5 or more)"
    ratio spawn1000.txt 2 1 "the 1,000-box spawn, the GPU against the CPU reference (the target: 5 or more)"
    ratio paper384_group.txt 1 2 "paper384, every cluster of 32 members or more summed by a work-group, with contact against without"
} | tee "$out/summary.txt"
# the Fig. 8 sweep last: the longest, and the figures above stand without it
measure fig8.txt "$tool" bench fig8 --backend opencl --device "$gpu" --out "$out"
echo "gpu.sh: the figures are in $out"
if [ ${#failed[@]} -gt 0 ]; then
    printf 'gpu.sh: failed: %s\n' "${failed[@]}" >&2
    exit 1
fi
