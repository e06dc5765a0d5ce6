#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and builds shapematch, then runs the main job or the tests.
#   cmake/bootstrap.sh run    install what is missing, build, run the paper's 384-object scene
#   cmake/bootstrap.sh test   install what is missing, build (warnings are errors), run every test,
#                             then the checks of tests/sanitize and tests/fuzz: static analysis
#                             (cppcheck), each libFuzzer harness for 60 s, valgrind memcheck on the
#                             CPU reference, and the test suite again under ASan + UBSan
# Packages are installed with apt-get, which needs root; nothing is installed when all are present.
set -euo pipefail

mode=${1:-}
case "$mode" in
run | test) ;;
*)
    echo "usage: $0 run|test" >&2
    exit 2
    ;;
esac
cd "$(dirname "$0")/.."

# compiler and build tools, the JSON library, OpenCL (the ICD loader, headers, and PoCL, which
# runs OpenCL on any CPU; a GPU's own OpenCL driver is used too when installed), the viewer's
# GLFW, glad 2 generator and stb headers, Xvfb for its tests, numpy for the trajectory checks, and
# assimp to read mesh files, with its test models (the mesh tests' inputs and the paper-figure scenes' meshes),
# and gnuplot for the plot of `shapematch bench fig8`; for the test command also the Python
# package's test modules, and clang with its
# libFuzzer and sanitizer runtimes (the fuzzers), cppcheck and valgrind
packages=(build-essential cmake pkg-config libcjson-dev ocl-icd-opencl-dev opencl-headers pocl-opencl-icd python3-numpy
    libglfw3-dev python3-glad libstb-dev xvfb xauth libassimp-dev assimp-testmodels gnuplot-nox)
# the Python package's tests: pyopencl, dask.distributed and tqdm
[ "$mode" = test ] && packages+=(python3-pyopencl python3-distributed python3-tqdm)
[ "$mode" = test ] && packages+=(clang libclang-rt-14-dev cppcheck valgrind)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "bootstrap: missing packages: ${missing[*]}; run as root or install them with apt-get" >&2
        exit 1
    fi
    echo "bootstrap: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    log=$(mktemp)
    if ! { apt-get update && apt-get install -y --no-install-recommends "${missing[@]}"; } > "$log" 2>&1; then
        cat "$log" >&2
        echo "bootstrap: apt-get failed (its output is above)" >&2
        exit 1
    fi
    rm -f "$log"
fi

jobs=$(nproc 2> /dev/null || echo 2)
werror=OFF
[ "$mode" = test ] && werror=ON
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSM_WERROR=$werror > /dev/null
cmake --build build -j "$jobs" > /dev/null

if [ "$mode" = run ]; then
    ./build/shapematch info scenes/paper384.json | sed -n 1p
    # the default backend: the first OpenCL GPU, else any OpenCL device (PoCL), else the CPU reference
    ./build/shapematch run scenes/paper384.json
else
    # every stage runs even when one before it failed, so that one run lists all that is wrong;
    # the exit status is that of the first failure
    status=0
    failed=()
    stage() {
        local name=$1 begin=$SECONDS rc=0
        shift
        echo "bootstrap: stage $name: $*"
        "$@" || rc=$?
        echo "bootstrap: stage $name: $([ $rc -eq 0 ] && echo passed || echo "FAILED (exit $rc)") in $((SECONDS - begin)) s"
        if [ $rc -ne 0 ]; then
            failed+=("$name")
            [ $status -ne 0 ] || status=$rc
        fi
    }
    stage tests ctest --test-dir build --output-on-failure -j "$jobs"
    stage analysis ./tests/sanitize/analyze.sh
    stage fuzz ./tests/fuzz/run.sh 60
    stage valgrind ./tests/sanitize/valgrind.sh build
    stage sanitizers ./tests/sanitize/run.sh build-asan
    if [ $status -ne 0 ]; then
        echo "bootstrap: FAILED stages: ${failed[*]}" >&2
        exit $status
    fi
    echo "bootstrap: every stage passed"
fi
