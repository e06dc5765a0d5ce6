#!/usr/bin/env bash
# Packs what bench/gpu.sh needs for a GPU machine on which nothing can be installed (no apt, no
# network): builds shapematch and shapematch-view (Release) here, then copies them and the shared
# libraries they need beyond glibc into .gpu/ (git-ignored), with the GL dispatch libraries
# (libglvnd's EGL and GL, as Debian packages to unpack there) under .gpu/debs/, and the test
# programs test_opencl, test_cut, test_step and test_collisions of build/ when they are built
# (with test_cut's duck, assimp's test model, under .gpu/models/).
#   bench/gpu_bundle.sh            then, on the GPU machine, from a copy of the tree with .gpu/:
#   bench/gpu_device.sh OUT_DIR    sets up NVIDIA's OpenCL and EGL, runs bench/gpu.sh into OUT_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cmake -S . -B build-bundle -DCMAKE_BUILD_TYPE=Release -DSM_BUILD_TESTS=OFF > /dev/null
cmake --build build-bundle -j "$(nproc)" --target shapematch_tool shapematch_view > /dev/null
rm -rf .gpu
mkdir -p .gpu/bin .gpu/lib .gpu/debs
cp build-bundle/shapematch build-bundle/shapematch-view .gpu/bin/
# the device-side checks, when the test build has them: each pass and step against the CPU
# reference, and contact, on the GPU (bench/gpu_device.sh runs them)
for test in test_opencl test_cut test_step test_collisions; do
    if [ -x "build/tests/$test" ]; then cp "build/tests/$test" .gpu/bin/ && cp -L build/host/libshapematch.so.0 .gpu/lib/; fi
done
# test_cut's duck, assimp's test model (assimp-testmodels), which a GPU machine lacks
if [ -f /usr/share/assimp/models/Collada/duck.dae ]; then
    mkdir -p .gpu/models/Collada
    cp /usr/share/assimp/models/Collada/duck.dae .gpu/models/Collada/
fi
# every library the programs load but glibc, the C++ runtime and zlib (a GPU machine has its own,
# newer ones, which its driver may need)
ldd build-bundle/shapematch build-bundle/shapematch-view | awk '/=> \// {print $3}' | sort -u |
    grep -Ev '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libz|ld-linux[^/]*)\.so' | xargs -r cp -L -t .gpu/lib/
# what GLFW opens at run time for a window on X (only a GLX run under a carried X server needs them)
for lib in libXrandr.so.2 libXinerama.so.1 libXcursor.so.1 libXi.so.6 libXxf86vm.so.1 libXext.so.6 \
    libXrender.so.1 libXfixes.so.3 libX11-xcb.so.1; do
    path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ {print $NF; exit}')
    if [ -n "$path" ]; then cp -L "$path" .gpu/lib/; fi # (a library missing here is left out)
done
(cd .gpu/debs && apt-get download libglvnd0 libegl1 libgl1 libglx0 libopengl0 > /dev/null)
du -sh .gpu
