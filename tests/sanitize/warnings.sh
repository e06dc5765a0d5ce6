#!/usr/bin/env bash
# The build is free of warnings beyond CI's own (GCC, RelWithDebInfo, -DSM_WERROR=ON): every target
# (library, command, viewer, tests) is built with -DSM_WERROR=ON by clang at -O2, by GCC at -O0
# (Debug) and by GCC at -O3 (Release), into WORK_DIR/clang, WORK_DIR/gcc-debug and WORK_DIR/gcc-o3.
#   tests/sanitize/warnings.sh [WORK_DIR]      (default: build-warnings, in the source tree)
# Needs clang (apt-get install clang) besides what the normal build needs; about 3 minutes on 2
# cores. Each build goes on past its first error (make -k) so that all of them are listed.
set -euo pipefail

cd "$(dirname "$0")/../.."
work=${1:-build-warnings}
mkdir -p "$work"
jobs=$(nproc 2> /dev/null || echo 2)
if ! command -v clang > /dev/null; then
    echo "warnings: clang is not installed (apt-get install clang)" >&2
    exit 1
fi
status=0
for config in clang:clang:RelWithDebInfo gcc-debug:gcc:Debug gcc-o3:gcc:Release; do
    IFS=: read -r name cc type <<< "$config"
    dir=$work/$name
    start=$SECONDS
    CC=$cc cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="$type" -DSM_WERROR=ON > "$work/$name.configure.log" 2>&1 || {
        cat "$work/$name.configure.log" >&2
        echo "warnings: FAILED: configuring $name" >&2
        status=1
        continue
    }
    if cmake --build "$dir" -j "$jobs" -- -k > "$work/$name.build.log" 2>&1; then
        echo "warnings: ok      $name ($cc, $type) ($((SECONDS - start)) s)"
    else
        grep -E -A3 'warning:|error:' "$work/$name.build.log" >&2 || tail -30 "$work/$name.build.log" >&2
        echo "warnings: FAILED  $name ($cc, $type): the build log is $work/$name.build.log" >&2
        status=1
    fi
done
exit $status
