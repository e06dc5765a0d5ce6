#!/usr/bin/env bash
# Renders each scene of scenes/paper/ headlessly with shapematch-view (under Xvfb) into
# docs/gallery/NAME.png, the pictures docs/figures.md shows. Run from anywhere after building:
#   scenes/tools/gallery.sh [BUILD_DIR]      (default: build)
# Needs xvfb-run (apt-get install xvfb xauth). Each picture is the frame after the number of
# time steps below, chosen for what the figure shows.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${1:-$root/build}")
view="$build/shapematch-view"
[ -x "$view" ] || { echo "gallery: $view is not built" >&2; exit 1; }
out="$root/docs/gallery"
mkdir -p "$out"
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-$build/pocl-cache} SM_CACHE_DIR=${SM_CACHE_DIR:-$build/sm-cache}
# scene and frames: the modes mid-impact, the plastic cubes after unloading, the sticks pulled,
# the piles settled, the Wuson hit by the ball, the duck back after its squeeze, the capped
# and uncapped cubes on the wall, the duck and the box after their cuts
shots=(fig4_modes:75 fig6_plasticity:300 fig7_sticks:120 fig1_teaser:240 fig9_massive:240 fig10_head:60
    fig11_duck:300 hw2007_cap:20 hw2007_cut:100)
for shot in "${shots[@]}"; do
    name=${shot%%:*} frames=${shot##*:}
    start=$SECONDS
    xvfb-run -a -s "-screen 0 1280x720x24" "$view" "$root/scenes/paper/$name.json" --frames "$frames" \
        --max-steps 1 --size 960x540 --screenshot "$out/$name.png" > /dev/null
    printf "gallery: %-16s %4d frames  %4d s\n" "$name" "$frames" $((SECONDS - start))
done
