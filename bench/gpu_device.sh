#!/usr/bin/env bash
# Runs bench/gpu.sh on a GPU machine where nothing can be installed, from the programs and
# libraries that bench/gpu_bundle.sh packed into .gpu/:
#   bench/gpu_device.sh OUT_DIR
# It unpacks libglvnd's EGL and GL dispatch libraries (the driver's own are not enough without
# them), points the OpenCL ICD loader and EGL at NVIDIA's driver where the system does not, then
# runs bench/gpu.sh with the packed programs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: bench/gpu_device.sh OUT_DIR}
cd "$root"
[ -x .gpu/bin/shapematch ] || { echo "gpu_device.sh: no .gpu/bin/shapematch: run bench/gpu_bundle.sh first" >&2; exit 1; }
mkdir -p "$out" /tmp/sm-gl
for deb in .gpu/debs/*.deb; do dpkg-deb -x "$deb" /tmp/sm-gl; done
export LD_LIBRARY_PATH="$root/.gpu/lib:/tmp/sm-gl/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
driver=$(ls -d /usr/local/nvidia/lib64 /usr/local/nvidia/lib 2> /dev/null | head -1 || true)
[ -n "$driver" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$driver"
# the system's OpenCL drivers, and NVIDIA's where they do not list it
if ! grep -qs nvidia /etc/OpenCL/vendors/*.icd && [ -n "$driver" ] && [ -e "$driver/libnvidia-opencl.so.1" ]; then
    mkdir -p /tmp/sm-icd
    cp /etc/OpenCL/vendors/*.icd /tmp/sm-icd/ 2> /dev/null || true
    echo "$driver/libnvidia-opencl.so.1" > /tmp/sm-icd/nvidia.icd
    export OCL_ICD_VENDORS=/tmp/sm-icd
fi
for f in /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json /usr/share/glvnd/egl_vendor.d/10_nvidia.json; do
    if [ -f "$f" ]; then
        export __EGL_VENDOR_LIBRARY_FILENAMES=$f
        break
    fi
done
export SM_CACHE_DIR=${SM_CACHE_DIR:-/tmp/sm-cache}
# test_cut's duck from the bundle (the machine has no assimp test models)
if [ -d .gpu/models ]; then export SM_ASSIMP_MODELS=$root/.gpu/models; fi
# the bundled checks first (their verdict in OUT_DIR/tests.txt; a failure does not stop the figures)
for check in test_opencl test_cut "test_step --backend opencl" "test_collisions --backend opencl"; do
    read -r test args <<< "$check"
    [ -x ".gpu/bin/$test" ] || continue
    echo "gpu_device.sh: $check" | tee -a "$out/tests.txt"
    # shellcheck disable=SC2086 # (the words of args)
    SM_DEVICE=${SM_DEVICE:-0} ".gpu/bin/$test" $args >> "$out/tests.txt" 2>&1 && echo "gpu_device.sh: $check passed" | tee -a "$out/tests.txt" ||
        echo "gpu_device.sh: $check FAILED" | tee -a "$out/tests.txt"
done
SM_TOOL=.gpu/bin/shapematch SM_VIEW=.gpu/bin/shapematch-view bench/gpu.sh "$out"
