#!/usr/bin/env bash
# The installed package works for a project outside this tree.
#   install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
# Installs BUILD_DIR into WORK_DIR/prefix, checks the files, then builds
# host/examples/out_of_tree against that prefix and runs it: through the CMake package with the
# shared library and with the static one (SM_EXAMPLE_STATIC=ON), and by hand through pkg-config,
# shared and static. Each program must exit 0. Runs exports_test.sh on the installed library too.
# $CFLAGS (CTest passes the build tree's CMAKE_C_FLAGS) compile the example in all four ways, so
# that a library built with sanitizers is linked into a program built with them.
set -euo pipefail

if [ $# -ne 3 ]; then
    echo "usage: $0 BUILD_DIR SOURCE_DIR WORK_DIR" >&2
    exit 2
fi
[ -f "$1/cmake_install.cmake" ] || { echo "install: FAILED: $1 is not a CMake build tree" >&2; exit 1; }
[ -d "$2/host/examples/out_of_tree" ] || { echo "install: FAILED: $2 is not shapematch's source tree" >&2; exit 1; }
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
mkdir -p "$3"
work=$(cd "$3" && pwd)
prefix=$work/prefix
example=$src/host/examples/out_of_tree
cmake=${CMAKE:-cmake} # CTest passes the CMake that configured the build

step=""
on_exit() {
    local rc=$?
    [ $rc -eq 0 ] || echo "install: FAILED at step: $step (exit $rc)" >&2
    exit $rc
}
trap on_exit EXIT
begin() {
    step=$1
    echo "install: $step"
}
fail() {
    echo "install: FAILED: $*" >&2
    exit 1
}

rm -rf "$prefix" "$work/oot-build" "$work/oot-static" "$work/pc" "$work"/oot-*.log
mkdir -p "$work/pc"

begin "cmake --install $build --prefix $prefix"
"$cmake" --install "$build" --prefix "$prefix" > "$work/install.log" 2>&1 || {
    cat "$work/install.log" >&2
    fail "cmake --install failed (its output is above)"
}

begin "the installed files"
# the library directory: lib, or lib/<multiarch> when the build was configured for /usr
libdir=$(dirname "$(find "$prefix" -name libshapematch.a -print -quit)")
[ "$libdir" != . ] || fail "libshapematch.a was not installed under $prefix"
expected=(
    include/shapematch/shapematch.h
    "${libdir#"$prefix"/}/libshapematch.a"
    "${libdir#"$prefix"/}/libshapematch.so.0.1.0"
    "${libdir#"$prefix"/}/libshapematch.so.0"
    "${libdir#"$prefix"/}/libshapematch.so"
    "${libdir#"$prefix"/}/cmake/shapematch/shapematchConfig.cmake"
    "${libdir#"$prefix"/}/cmake/shapematch/shapematchConfigVersion.cmake"
    "${libdir#"$prefix"/}/cmake/shapematch/shapematchTargets.cmake"
    "${libdir#"$prefix"/}/pkgconfig/shapematch.pc"
    bin/shapematch
)
[ -f "$src/host/include/shapematch/shapematch_opencl.h" ] && expected+=(include/shapematch/shapematch_opencl.h)
[ -f "$build/shapematch-view" ] && expected+=(bin/shapematch-view)
missing=()
for f in "${expected[@]}"; do
    [ -e "$prefix/$f" ] || missing+=("$f")
done
[ ${#missing[@]} -eq 0 ] || fail "not installed under $prefix: ${missing[*]}"
[ -L "$libdir/libshapematch.so.0" ] || fail "$libdir/libshapematch.so.0 is not a symbolic link"
[ "$(readlink "$libdir/libshapematch.so.0")" = libshapematch.so.0.1.0 ] ||
    fail "$libdir/libshapematch.so.0 points at $(readlink "$libdir/libshapematch.so.0"), not libshapematch.so.0.1.0"
soname=$(readelf -d "$libdir/libshapematch.so.0.1.0" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libshapematch.so.0 ] || fail "the soname is '$soname', not libshapematch.so.0"
for h in "$src"/host/include/shapematch/*.h; do
    cmp -s "$h" "$prefix/include/shapematch/$(basename "$h")" ||
        fail "include/shapematch/$(basename "$h") differs from the source tree's"
done

begin "the installed library's exports"
bash "$src/tests/exports_test.sh" "$libdir/libshapematch.so" "$prefix/include"

# Runs a built example, which must exit 0; with the installed library first on the search path.
run_example() {
    local program=$1
    "$program" || fail "$program exited $?"
}
# Fails unless PROGRAM loads libshapematch.so.0 from the installed prefix. (Outputs are read whole
# before grep: in `ldd | grep -q`, grep may stop reading early and fail the pipe under pipefail.)
loads_installed() {
    local program=$1 deps
    deps=$(ldd "$program") || fail "ldd $program failed"
    grep -q "libshapematch.so.0 => $libdir/" <<< "$deps" ||
        fail "$program does not load $libdir/libshapematch.so.0: $(grep shapematch <<< "$deps" || echo 'not linked to it')"
}
# Fails if PROGRAM needs libshapematch.so (it should contain libshapematch.a).
is_static() {
    local program=$1 dynamic
    dynamic=$(readelf -d "$program") || fail "readelf -d $program failed"
    if grep -q 'NEEDED.*libshapematch' <<< "$dynamic"; then
        fail "$program needs libshapematch.so instead of containing libshapematch.a"
    fi
}
# no LD_LIBRARY_PATH: a program linked against the prefix finds libshapematch.so by its RPATH
# (pkg-config's Libs carry -Wl,-rpath; CMake sets the build tree's)
unset LD_LIBRARY_PATH

# Configures and builds the example into DIR with the extra cache options given.
build_example() {
    local dir=$1 what=$2
    shift 2
    begin "configure the out-of-tree example ($what)"
    "$cmake" -S "$example" -B "$dir" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release "$@" \
        > "$dir.configure.log" 2>&1 || {
        cat "$dir.configure.log" >&2
        fail "configuring $example ($what) failed (its output is above)"
    }
    begin "build the out-of-tree example ($what)"
    "$cmake" --build "$dir" > "$dir.build.log" 2>&1 || {
        cat "$dir.build.log" >&2
        fail "building $example ($what) failed (its output is above)"
    }
}

build_example "$work/oot-build" "find_package, shapematch::shapematch"
begin "run the out-of-tree example (find_package, shapematch::shapematch)"
loads_installed "$work/oot-build/shapematch_example"
run_example "$work/oot-build/shapematch_example"

build_example "$work/oot-static" "find_package, shapematch::shapematch_static" -DSM_EXAMPLE_STATIC=ON
begin "run the out-of-tree example (find_package, shapematch::shapematch_static)"
is_static "$work/oot-static/shapematch_example"
run_example "$work/oot-static/shapematch_example"

pcdir=$(dirname "$(find "$prefix" -name shapematch.pc -print -quit)")
cc=${CC:-cc}
begin "compile main.c by hand with pkg-config (shared)"
flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs shapematch) || fail "pkg-config shapematch failed"
echo "install: pkg-config --cflags --libs shapematch: $flags"
# shellcheck disable=SC2086 # the flags are words
"$cc" ${CFLAGS:-} -std=c17 -Wall -Wextra -Werror "$example/main.c" -o "$work/pc/shapematch_example" $flags ||
    fail "$cc main.c \$(pkg-config --cflags --libs shapematch) failed"
begin "run the pkg-config example (shared)"
loads_installed "$work/pc/shapematch_example"
run_example "$work/pc/shapematch_example"

begin "compile main.c by hand with pkg-config --static (libshapematch.a)"
flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --static --cflags --libs shapematch) || fail "pkg-config --static shapematch failed"
echo "install: pkg-config --static --cflags --libs shapematch: $flags"
flags=${flags/-lshapematch/-Wl,-Bstatic -lshapematch -Wl,-Bdynamic}
# shellcheck disable=SC2086
"$cc" ${CFLAGS:-} -std=c17 -Wall -Wextra -Werror "$example/main.c" -o "$work/pc/shapematch_example_static" $flags ||
    fail "$cc main.c \$(pkg-config --static --cflags --libs shapematch) with libshapematch.a failed"
begin "run the pkg-config example (static)"
is_static "$work/pc/shapematch_example_static"
run_example "$work/pc/shapematch_example_static"

begin "import the installed Python package and step a world with it"
init=$(find "$prefix" -path '*dist-packages/shapematch/__init__.py' -print -quit)
[ -n "$init" ] && [ -f "$(dirname "$init")/_location.py" ] || fail "the Python package (with its _location.py) is not installed"
if [[ "${CFLAGS:-}" == *-fsanitize* ]]; then
    echo "install: not imported: a library built with sanitizers cannot be loaded into python3"
else
    (cd "$work" && env -u SHAPEMATCH_LIBRARY PYTHONPATH="$(dirname "$(dirname "$init")")" /usr/bin/python3 -c '
import sys, numpy, shapematch
assert shapematch.LIBRARY_PATH.startswith(sys.argv[1]), shapematch.LIBRARY_PATH
with shapematch.World.from_objects([{"shape": "box", "position": [0, 1, 0]}], backend="cpu", ground={}) as world:
    world.step(30)
    assert numpy.isfinite(world.positions).all() and world.positions[:, 1].min() < 1.0
print("install: the package loads", shapematch.LIBRARY_PATH)
' "$prefix") || fail "the installed Python package does not work"
fi

step="done"
echo "install: ok"
