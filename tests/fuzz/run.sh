#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, AddressSanitizer, UndefinedBehaviorSanitizer) in their own
# build tree and runs each for SECONDS seconds, one after the other, over a copy of its seed corpus
# (tests/fuzz/corpus/HARNESS, plus the inputs of tests/fuzz/regressions/HARNESS) in the build tree.
#   tests/fuzz/run.sh [SECONDS] [BUILD_DIR]      defaults: 60 and build-fuzz
# Exits non-zero when a harness finds a crash, a leak, undefined behaviour, a broken API promise,
# an input slower than 10 s or one that needs over 2 GiB, and prints the path of the input that
# reproduces it: `BUILD_DIR/tests/fuzz/fuzz_HARNESS PATH` runs it again. To keep it as a
# regression test, copy it into tests/fuzz/regressions/HARNESS/ once the library is fixed.
# Needs clang and libFuzzer (Debian 12: apt-get install clang libclang-rt-14-dev).
set -euo pipefail

seconds=${1:-60}
case "$seconds" in
'' | *[!0-9]*)
    echo "usage: $0 [SECONDS] [BUILD_DIR]" >&2
    exit 2
    ;;
esac
cd "$(dirname "$0")/../.."
build=${2:-build-fuzz}
cc=${CC:-clang}
if ! command -v "$cc" > /dev/null; then
    echo "fuzz: $cc not found: install clang and libclang-rt-14-dev (or set CC to a clang)" >&2
    exit 1
fi

mkdir -p "$build"
log="$build/fuzz-build.log"
if ! { CC=$cc cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSM_FUZZ=ON -DSM_BUILD_VIEWER=OFF \
    -DSM_OPENCL=OFF -DSM_BUILD_TESTS=OFF &&
    cmake --build "$build" -j "$(nproc 2> /dev/null || echo 2)" --target fuzz_scene fuzz_objects; } > "$log" 2>&1; then
    cat "$log" >&2
    echo "fuzz: the build failed (its output is above)" >&2
    exit 1
fi

# symbolized stacks in the reports: ASan looks for llvm-symbolizer on the PATH, Debian names it llvm-symbolizer-14
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && ! command -v llvm-symbolizer > /dev/null; then
    for s in llvm-symbolizer-14 /usr/lib/llvm-14/bin/llvm-symbolizer; do
        if command -v "$s" > /dev/null; then
            ASAN_SYMBOLIZER_PATH=$(command -v "$s")
            export ASAN_SYMBOLIZER_PATH
            break
        fi
    done
fi
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:allocator_may_return_null=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

status=0
for harness in scene objects; do
    work="$build/fuzz-runs/$harness"
    rm -rf "$work"
    mkdir -p "$work/corpus" "$work/artifacts"
    cp tests/fuzz/corpus/$harness/* "$work/corpus/"
    if [ -d tests/fuzz/regressions/$harness ] && [ -n "$(ls -A tests/fuzz/regressions/$harness)" ]; then
        cp tests/fuzz/regressions/$harness/* "$work/corpus/"
    fi
    args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/artifacts/")
    if [ $harness = scene ]; then
        args+=(-max_len=8192 -dict=tests/fuzz/scene.dict)
    else
        args+=(-max_len=2048)
    fi
    echo "fuzz: fuzz_$harness for $seconds s over $(ls "$work/corpus" | wc -l) seed inputs"
    rc=0
    "$build/tests/fuzz/fuzz_$harness" "${args[@]}" "$work/corpus" > "$work/fuzz.log" 2>&1 || rc=$?
    found=$(ls -A "$work/artifacts")
    if [ $rc -ne 0 ] || [ -n "$found" ]; then
        tail -n 60 "$work/fuzz.log" >&2
        echo "fuzz: fuzz_$harness failed (exit status $rc); its log: $work/fuzz.log" >&2
        for f in $found; do
            echo "fuzz: reproducer: $work/artifacts/$f (run: $build/tests/fuzz/fuzz_$harness $work/artifacts/$f)" >&2
        done
        status=1
    else
        # the final coverage line and the statistics
        grep -E '^#[0-9]+[[:space:]]+DONE' "$work/fuzz.log" | tail -n 1 || true
        grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$work/fuzz.log" || true
    fi
done
exit $status
