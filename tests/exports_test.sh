#!/usr/bin/env bash
# The shared library exports the public API and nothing else.
#   exports_test.sh LIBSHAPEMATCH.so INCLUDE_DIR
# INCLUDE_DIR holds the public headers (shapematch.h, and shapematch_opencl.h once it exists), or
# is the directory above shapematch/. Fails when the library defines a dynamic symbol that no
# header declares with SM_API (a leak: internal code compiled without hidden visibility), or when
# an SM_API function is missing from the library: every one of shapematch.h, and of
# shapematch_opencl.h too when the library links OpenCL.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 LIBSHAPEMATCH.so INCLUDE_DIR" >&2
    exit 2
fi
lib=$1
inc=$2
[ -f "$inc/shapematch/shapematch.h" ] && inc=$inc/shapematch
if [ ! -f "$lib" ]; then
    echo "exports: FAILED: no library at $lib" >&2
    exit 1
fi
if [ ! -f "$inc/shapematch.h" ]; then
    echo "exports: FAILED: no shapematch.h in $inc" >&2
    exit 1
fi
for tool in nm readelf; do
    if ! command -v "$tool" > /dev/null; then
        echo "exports: FAILED: $tool not found (apt-get install binutils)" >&2
        exit 1
    fi
done

# The names declared with SM_API in a header: preprocessor lines and comments dropped, the rest
# joined into one line (a declaration may span lines), then the identifier before the first
# '(' (functions, whatever their return type, pointers included) or ';' (data) after each SM_API.
declared() {
    sed -e '/^[[:space:]]*#/d' -e 's://.*$::' "$1" | tr '\n\t' '  ' |
        sed -E 's:/\*([^*]|\*+[^*/])*\*+/: :g' |
        grep -oE '\bSM_API\b[^;(]*[;(]' |
        sed -E 's/[[:space:]]*[;(]$//; s/.*[^A-Za-z0-9_]//' |
        sort -u || true
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

headers=("$inc"/*.h)
: > "$work/public"
for h in "${headers[@]}"; do
    declared "$h" > "$work/$(basename "$h").names"
    if [ ! -s "$work/$(basename "$h").names" ]; then
        echo "exports: FAILED: no SM_API declaration found in $h (is the pattern out of date?)" >&2
        exit 1
    fi
    cat "$work/$(basename "$h").names" >> "$work/public"
done
sort -u -o "$work/public" "$work/public"

# Defined dynamic symbols, without the linker's own markers (older binutils export these).
nm -D --defined-only "$lib" | awk 'NF >= 3 { print $3 }' | sed 's/@.*//' |
    grep -vxE '_init|_fini|_edata|_end|__bss_start' | sort -u > "$work/exported" || true

# (read whole before grep: `readelf | grep -q` can fail under pipefail when grep stops early)
dynamic=$(readelf -d "$lib")
has_opencl=no
if grep -q 'NEEDED.*\[libOpenCL\.so' <<< "$dynamic"; then
    has_opencl=yes
fi

# What must be there: shapematch.h always; shapematch_opencl.h when the build has OpenCL.
cp "$work/shapematch.h.names" "$work/required"
if [ -f "$inc/shapematch_opencl.h" ]; then
    if [ "$has_opencl" = yes ]; then
        cat "$work/shapematch_opencl.h.names" >> "$work/required"
    else
        echo "exports: the library does not link OpenCL: shapematch_opencl.h's functions are not required"
    fi
fi
sort -u -o "$work/required" "$work/required"

leaked=$(comm -23 "$work/exported" "$work/public")
missing=$(comm -13 "$work/exported" "$work/required")

echo "exports: $(wc -l < "$work/exported") symbols exported by $lib; $(wc -l < "$work/public") declared with SM_API in ${headers[*]}; opencl=$has_opencl"
status=0
if [ -n "$leaked" ]; then
    echo "exports: FAILED: exported but not declared with SM_API in the public headers (hide them):" >&2
    mapfile -t names <<< "$leaked"
    printf '  %s\n' "${names[@]}" >&2
    status=1
fi
if [ -n "$missing" ]; then
    echo "exports: FAILED: declared with SM_API but not defined by the library:" >&2
    mapfile -t names <<< "$missing"
    printf '  %s\n' "${names[@]}" >&2
    status=1
fi
[ $status -eq 0 ] && echo "exports: ok"
exit $status
