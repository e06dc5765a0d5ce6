#!/usr/bin/env bash
# Static analysis of the library and the command (host/) with cppcheck:
#   tests/sanitize/analyze.sh
# Exits 1 on any finding, printing each as FILE:LINE: SEVERITY [ID] MESSAGE. Needs cppcheck
# (apt-get install cppcheck; Debian 12 has 2.10) and no build tree; about 10 s on 2 cores.
#
# The checks: cppcheck's errors (always on: out-of-bounds accesses, null dereferences, leaks,
# uninitialised variables, ...) and its warning, portability and performance classes. Its style
# class is left out: it asks for const locals and narrower scopes, and in this code base flags
# mostly false "always true" conditions.
# The configuration analysed is the build's: POSIX 2008, the OpenCL 1.2 headers' API and the
# command with its OpenCL options (SM_TOOL_OPENCL). The system's headers are not read (cppcheck
# knows the C and POSIX libraries through --library=posix), so their absence is not reported.
# A false positive is suppressed where it happens, with a comment that says why:
#   // cppcheck-suppress ID ; reason
# on the line before it (--inline-suppr). One at present: uninitvar in sm_sym_eigen (math3.c),
# where cppcheck assumes a loop over n * n entries may not run before one over n x n does.
set -euo pipefail

cd "$(dirname "$0")/../.."
if ! command -v cppcheck > /dev/null; then
    echo "analyze: cppcheck is not installed (apt-get install cppcheck)" >&2
    exit 1
fi
jobs=$(nproc 2> /dev/null || echo 2)
echo "analyze: $(cppcheck --version) on host/"
start=$SECONDS
status=0
cppcheck --enable=warning,portability,performance --std=c11 --library=posix --inline-suppr \
    --suppress=missingIncludeSystem --error-exitcode=1 --quiet -j "$jobs" \
    -D_POSIX_C_SOURCE=200809L -DCL_TARGET_OPENCL_VERSION=120 -DSM_TOOL_OPENCL \
    -I host/include -I host/src -I host/src/opencl \
    --template='{file}:{line}: {severity} [{id}] {message}' host/ || status=$?
if [ $status -ne 0 ]; then
    echo "analyze: FAILED: cppcheck has findings (above) ($((SECONDS - start)) s)" >&2
    exit 1
fi
echo "analyze: clean ($((SECONDS - start)) s)"
