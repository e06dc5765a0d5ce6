#!/usr/bin/env bash
# shapematch-view end to end under Xvfb (llvmpipe and PoCL in CI):
#   viewer_test.sh VIEW CHECK_IMAGE SCENES DATA OUT CASE
# CASE headless: paper384 for 60 frames with no X display (--frames without DISPLAY: EGL): the
#               screenshot shows objects, the report says headless
#      render:  paper384 for 120 frames: the screenshot shows objects, and the fallback path is reported
#      drag:    a scripted pick and drag pulls the picked particle to the target and the object follows
#      lock:    two locked springs hold the stick stretched (Henriques & Wuensche, figure 2); removing
#               them lets it spring back
#      keys:    every key and the push tool, scripted, on the CPU reference: the viewer keeps running
#      interop: --interop on fails with a clear message where the device lacks cl_khr_gl_sharing
#      surface: a duck mesh with its skinned surface over a box and a sphere collider: the surface
#               (not its particles) and the colliders are drawn; M (particles) changes the picture
#      cut:     the scissors (X) over a box tossed spinning, turned 45 degrees with shift+wheel, cut it
#               in two with a click: two objects of all its particles, drawn in two colours, flying
#               apart; the same for a box with a skinned surface on the ground, whose upper piece
#               slides off the lower one,
#               whose pieces are drawn as surfaces sealed along the cut
#      scenecut: the scene's scripted cuts (hw2007_cut), taken from the world's record of them:
#               logged and reported with the pieces' ids
#      script:  every kind of malformed --script line is refused before a window opens, with an
#               error naming the file and the line, and the text it quotes (and the file's name)
#               made printable: no terminal escape reaches the output
#      overlay: the overlay fits windows of 640x360 and 960x540 (its box and text stay off the
#               right and bottom edges, long lines broken), with the help; the draw mode is shown
#               only for a world with skinned surfaces
#      follow:  a cube thrown sideways at 20 m/s stays in the picture (the camera follows it) and
#               leaves it with following turned off (T) or after a zoom; runs are reproducible
set -euo pipefail
view=$1 check_image=$2 scenes=$3 data=$4 out=$5 case=$6
py=/usr/bin/python3
if ! command -v xvfb-run > /dev/null; then
    echo "xvfb-run is missing: apt-get install xvfb xauth" >&2
    exit 1
fi
mkdir -p "$out"
# $SM_VIEW_PRELOAD: libraries preloaded into the viewer alone, not into xvfb-run and Xvfb (the
# sanitized build's tests/sanitize/run.sh keeps the OpenGL driver loaded until LeakSanitizer's
# check at exit: unloaded, its globals no longer point at what it allocated)
run() {
    if [ -n "${SM_VIEW_PRELOAD:-}" ]; then
        xvfb-run -a -s "-screen 0 1280x720x24" env LD_PRELOAD="$SM_VIEW_PRELOAD" "$view" "$@"
    else
        xvfb-run -a -s "-screen 0 1280x720x24" "$view" "$@"
    fi
}

# Prints a report's numbers and checks a Python expression over it (r: the report).
check() {
    local report=$1 expression=$2 what=$3
    if ! "$py" - "$report" "$expression" << 'PY'; then
import json, math, sys
r = json.load(open(sys.argv[1]))
def dist(a, b): return math.dist(a, b)
ok = eval(sys.argv[2])
sys.exit(0 if ok else 1)
PY
        echo "FAILED: $what ($expression)" >&2
        exit 1
    fi
    echo "ok: $what"
}

case "$case" in
headless)
    # no X at all: --frames without DISPLAY draws through EGL (Mesa's software device here)
    env -u DISPLAY -u WAYLAND_DISPLAY ${SM_VIEW_PRELOAD:+LD_PRELOAD="$SM_VIEW_PRELOAD"} "$view" "$scenes/paper384.json" \
        --frames 60 --screenshot "$out/headless.png" --report "$out/headless.json" | tee "$out/headless.log"
    grep -q "headless: EGL" "$out/headless.log"
    echo "ok: the log names the EGL context"
    check "$out/headless.json" "r['headless'] and r['frames'] == 60 and len(r['objects']) == 384 and r['frames_per_second'] > 0" "60 frames of 384 objects without a window system"
    "$check_image" "$out/headless.png" 0.02 0.60 6
    # and --headless is refused without --frames
    if "$view" "$scenes/paper384.json" --headless > "$out/refused.log" 2>&1; then
        echo "FAILED: --headless without --frames ran" >&2
        exit 1
    fi
    grep -q -- "--headless needs --frames" "$out/refused.log"
    echo "ok: --headless without --frames is refused"
    ;;
render)
    run "$scenes/paper384.json" --frames 120 --screenshot "$out/paper384.png" --report "$out/render.json" | tee "$out/render.log"
    grep -q "interop: fallback: host copy into a mapped GL buffer (the device does not list cl_khr_gl_sharing)" "$out/render.log"
    echo "ok: the log names the fallback path"
    check "$out/render.json" "r['interop'] == 'fallback' and r['frames'] == 120 and len(r['objects']) == 384" "120 frames of 384 objects through the fallback"
    # the objects cover between 2% and 60% of the picture in at least 6 of 12 hues
    "$check_image" "$out/paper384.png" 0.02 0.60 6
    ;;
drag)
    run "$data/stick.json" --frames 200 --script "$data/drag.script" --report "$out/drag.json" > "$out/drag.log"
    "$py" -c "import json; r = json.load(open('$out/drag.json')); print(json.dumps({'picks': r['picks'], 'springs': r['springs'], 'objects': r['objects']}))"
    check "$out/drag.json" "len(r['picks']) == 1 and len(r['springs']) == 1 and not r['springs'][0]['locked']" "one particle picked and held"
    # the target went about 0.5 m up; the particle ends within 10% of that distance from it
    check "$out/drag.json" "dist(r['springs'][0]['position'], r['springs'][0]['target']) < 0.1 * dist(r['picks'][0]['position'], r['springs'][0]['target'])" "the picked particle reaches the target"
    # and the object follows: its centre moves up by more than half the target's rise
    check "$out/drag.json" "r['objects'][0]['centre_end'][1] - r['objects'][0]['centre_start'][1] > 0.5 * (r['springs'][0]['target'][1] - r['picks'][0]['position'][1])" "the object follows"
    ;;
lock)
    run "$data/stick.json" --frames 300 --script "$data/lock.script" --report "$out/lock.json" > "$out/lock.log"
    run "$data/stick.json" --frames 360 --script "$data/release.script" --report "$out/release.json" > "$out/release.log"
    for r in lock release; do
        "$py" -c "import json; r = json.load(open('$out/$r.json')); print('$r', json.dumps({'picks': r['picks'], 'objects': r['objects']}))"
    done
    check "$out/lock.json" "len(r['springs']) == 2 and all(s['locked'] for s in r['springs'])" "two springs locked"
    # held stretched: 4 s after the last lock the two picked particles are still over 10% farther
    # apart than at rest, and the stick's particles stay away from their goals
    span='dist(r["picks"][0]["position_end"], r["picks"][1]["position_end"]) / dist(r["picks"][0]["rest_position"], r["picks"][1]["rest_position"])'
    check "$out/lock.json" "$span > 1.10" "the locked springs hold the stick stretched"
    check "$out/lock.json" "r['objects'][0]['mean_goal_distance'] > 3e-4" "its particles are held off their goals"
    # released at 3 s, 3 s later the two particles are back within 2% of their distance at rest
    check "$out/release.json" "len(r['springs']) == 0 and abs($span - 1) < 0.02" "without the springs the stick springs back"
    ;;
keys)
    run "$data/stick.json" --backend cpu --frames 200 --script "$data/keys.script" --report "$out/keys.json" --record "$out/frames" > "$out/keys.log"
    cat "$out/keys.log"
    for expected in "push mode" "pick mode" "object 0: rigid" "object 0: quadratic, alpha 0.35" "beta 0.65" "drawing particles" \
        "dropped object 1" "scene reset" "paused" "running" "camera: following off" "camera: following the objects"; do
        grep -q "$expected" "$out/keys.log" || { echo "FAILED: the log lacks '$expected'" >&2; exit 1; }
    done
    echo "ok: every key acted"
    # the reset at the end leaves the scene's single object; 200 frames were recorded
    check "$out/keys.json" "len(r['objects']) == 1 and r['frames'] == 200" "reset restores the scene"
    count=$(ls "$out/frames" | grep -c '^frame_[0-9]\{5\}\.png$')
    [ "$count" -eq 200 ] || { echo "FAILED: $count recorded frames, expected 200" >&2; exit 1; }
    echo "ok: 200 frames recorded"
    ;;
interop)
    set +e
    run "$data/stick.json" --frames 2 --interop on > "$out/interop.log" 2>&1
    code=$?
    set -e
    cat "$out/interop.log"
    [ "$code" -ne 0 ] || { echo "FAILED: --interop on succeeded without cl_khr_gl_sharing" >&2; exit 1; }
    grep -q -- "--interop on: CL-GL sharing is not available here: the device does not list cl_khr_gl_sharing" "$out/interop.log"
    echo "ok: --interop on fails and says why"
    ;;
surface)
    run "$data/surface.json" --frames 40 --screenshot "$out/surface.png" > "$out/surface.log"
    run "$data/surface.json" --frames 40 --script "$data/particles.script" --screenshot "$out/surface_particles.png" \
        > "$out/surface_particles.log"
    grep -q "drawing particles" "$out/surface_particles.log"
    echo "ok: M switches to the particles"
    # the duck in object 0's colour (palette 0), lit, and the colliders in steel blue, each over a
    # few percent of the picture (3.2% and 6.2% here; the first view frames the colliders too)
    "$check_image" --colour "$out/surface.png" 0.95 0.740 0.333 0.02 0.40
    "$check_image" --colour "$out/surface.png" 0.48 0.58 0.74 0.03 0.40
    "$check_image" --colour "$out/surface_particles.png" 0.48 0.58 0.74 0.03 0.40
    # the particles instead of the surface: spheres with gaps and highlights (about 13% differ)
    "$check_image" --differ "$out/surface.png" "$out/surface_particles.png" 0.03
    ;;
cut)
    run "$data/cut.json" --frames 240 --script "$data/cut.script" --report "$out/cut.json" --screenshot "$out/cut.png" \
        > "$out/cut.log"
    # the same, stopped before the click (at 0.4 s): the control picture
    run "$data/cut.json" --frames 20 --script "$data/cut.script" --screenshot "$out/cut_before.png" > "$out/cut_before.log"
    cat "$out/cut.log"
    "$py" -c "import json; r = json.load(open('$out/cut.json')); print(json.dumps({'cuts': r['cuts'], 'objects': r['objects']}))"
    for expected in "cut mode" "blades at 45 degrees"; do
        grep -q "$expected" "$out/cut.log" || { echo "FAILED: the log lacks '$expected'" >&2; exit 1; }
    done
    grep -Eq "cut object 0 into 0 and 1 \([0-9]+ \+ [0-9]+ particles\)" "$out/cut.log" || { echo "FAILED: the cut was not logged" >&2; exit 1; }
    echo "ok: the cut was logged"
    check "$out/cut.json" "len(r['objects']) == 2 and sum(o['particles'] for o in r['objects']) == 512 and all(o['particles'] >= 64 and o['piece_of'] == 0 for o in r['objects'])" \
        "two pieces of the box's 512 particles, each at least an eighth of it"
    check "$out/cut.json" "len(r['cuts']) == 1 and r['cuts'][0]['pieces'] == [0, 1] and r['cuts'][0]['particles'] == [o['particles'] for o in r['objects']]" \
        "the report's cut names the pieces and their particles"
    # the box spins as it falls, so its pieces fly apart: 3.6 s later their centres are over 0.3
    # m farther apart than at the cut (0.57 m then, 1.65 m at the end here), each piece whole (RMS
    # radius about that of the box, 0.50 m) and resting near its shape on the ground. (Cut as it
    # rests on the ground, the upper piece lies on the level tops of the lower one's steps of
    # particles and stays for seconds; it slid off while each membership weighed its particle's
    # whole mass.)
    check "$out/cut.json" "dist(r['objects'][0]['centre_end'], r['objects'][1]['centre_end']) > dist(r['cuts'][0]['back_centre'], r['cuts'][0]['front_centre']) + 0.3" \
        "the pieces fall apart"
    check "$out/cut.json" "all(o['rms_radius_end'] < 0.7 and o['mean_goal_distance'] < 0.05 and o['centre_end'][1] < 0.6 for o in r['objects'])" \
        "each piece stays whole and ends on the ground"
    # the picture: both pieces in their objects' colours (palette 0 and 1), over 2% of it each,
    # two hue bins; before the click, only the first colour and one hue
    "$check_image" --colour "$out/cut.png" 0.95 0.740 0.333 0.02 0.50
    "$check_image" --colour "$out/cut.png" 0.560 0.3325 0.95 0.02 0.50
    "$check_image" "$out/cut.png" 0.02 0.60 2
    "$check_image" --colour "$out/cut_before.png" 0.560 0.3325 0.95 0.0 0.001
    # a box mesh with a lattice of particles under its skinned surface, cut by the same script
    run "$data/cut_surface.json" --frames 240 --script "$data/cut.script" --report "$out/cut_surface.json" \
        --screenshot "$out/cut_surface.png" > "$out/cut_surface.log"
    cat "$out/cut_surface.log"
    "$py" -c "import json; r = json.load(open('$out/cut_surface.json')); print(json.dumps({'cuts': r['cuts'], 'objects': r['objects']}))"
    n=$(sed -n 's/.*: 1 objects, \([0-9]*\) particles.*/\1/p' "$out/cut_surface.log")
    grep -Eq "cut object 0 into 0 and 1 \([0-9]+ \+ [0-9]+ particles\)" "$out/cut_surface.log" || { echo "FAILED: the cut was not logged" >&2; exit 1; }
    check "$out/cut_surface.json" "len(r['objects']) == 2 and sum(o['particles'] for o in r['objects']) == $n and all(o['surface_triangles'] > 0 for o in r['objects'])" \
        "two pieces of the $n particles, each with a surface"
    # (its upper piece slides off: 0.49 m apart at the cut, 0.95 m at the end)
    check "$out/cut_surface.json" "r['cuts'][0]['cap_triangles'] > 0 and dist(r['objects'][0]['centre_end'], r['objects'][1]['centre_end']) > dist(r['cuts'][0]['back_centre'], r['cuts'][0]['front_centre']) + 0.15" \
        "the cross-section is sealed and the pieces fall apart"
    # both pieces' surfaces, lit in their objects' colours (8% and 9% here)
    "$check_image" --colour "$out/cut_surface.png" 0.95 0.740 0.333 0.02 0.50
    "$check_image" --colour "$out/cut_surface.png" 0.560 0.3325 0.95 0.02 0.50
    ;;
scenecut)
    # a scene's scripted cuts (hw2007_cut: the duck at 0.4 s, the box at 0.7 s), which the viewer
    # learns of from the world's record of them (sm_world_get_cuts()): both logged and reported
    # with the pieces' ids (the front pieces are the new objects 2 and 3), every particle kept
    run "$scenes/paper/hw2007_cut.json" --frames 60 --report "$out/scenecut.json" --screenshot "$out/scenecut.png" \
        > "$out/scenecut.log"
    cat "$out/scenecut.log"
    for expected in "scene: cut object 0 into 0 and 2" "scene: cut object 1 into 1 and 3"; do
        grep -q "$expected" "$out/scenecut.log" || { echo "FAILED: the log lacks '$expected'" >&2; exit 1; }
    done
    echo "ok: both cuts were logged"
    check "$out/scenecut.json" "[(c['by'], c['object'], c['pieces']) for c in r['cuts']] == [('scene', 0, [0, 2]), ('scene', 1, [1, 3])]" \
        "the report names each cut's pieces by id"
    check "$out/scenecut.json" "abs(r['cuts'][0]['time'] - 0.4) < 0.02 and abs(r['cuts'][1]['time'] - 0.7) < 0.02 and r['cuts'][0]['cap_triangles'] > 0" \
        "each at its time, the duck's sealed"
    check "$out/scenecut.json" "len(r['objects']) == 4 and [o.get('piece_of') for o in r['objects']] == [0, 1, 0, 1] and sum(o['particles'] for o in r['objects']) == sum(c['particles'][0] + c['particles'][1] for c in r['cuts'])" \
        "four pieces holding every particle"
    ;;
script)
    # Each malformed script: LINE:EXPECTED|CONTENT (printf format). The viewer must exit 1 before
    # it opens a window or an EGL context (it never logs "OpenGL"), with "FILE:LINE: ..." naming
    # the fault.
    cases=(
        '2:the time '"'"'abc'"'"' is not a number|0.1 key P\nabc key P\n'
        '1:the time '"'"'nan'"'"' is not a number|nan key P\n'
        '1:the time '"'"'1e999'"'"' is not a number|1e999 key P\n'
        '1:the time -1 is negative|-1 key P\n'
        '3:the time 0.2 is before 0.5|# comment\n0.5 key P\n0.2 key P\n'
        '1:unknown event '"'"'jump'"'"'|0.1 jump 1\n'
        '1:no event after the time|0.1   # a time alone\n'
        '1:cursor needs 2 arguments, got 1|0.1 cursor 0.5\n'
        '1:unexpected '"'"'Q'"'"' after the key event|0.1 key P Q\n'
        '1:cursor: '"'"'half'"'"' is not a number|0.1 cursor 0.5 half\n'
        '1:cursor: 1.5 0.5 lies outside the window|0.1 cursor 1.5 0.5\n'
        '1:press: unknown button '"'"'thumb'"'"'|0.1 press thumb\n'
        '1:wheel: '"'"'lots'"'"' is not a number|0.1 wheel lots\n'
        '1:wheel: 1e+09 notches, at most 100|0.1 wheel 1e9\n'
        '1:key: unknown key '"'"'F13'"'"'|0.1 key F13\n'
        '1:release needs 1 argument, got 0|0.1 release\n'
        '1:mod: unknown modifier '"'"'ctrl'"'"'|0.1 mod ctrl on\n'
        '1:mod: '"'"'maybe'"'"' is neither on nor off|0.1 mod shift maybe\n'
        '2:the line holds a NUL byte|0.1 key P\n0.2 key P\0 0.3 key Q\n'
        '1:the line is longer than 1000 bytes|0.1 key P %01200d\n'
        '1:the time '"'"'\xc3\xa9'"'"' is not a number|\xc3\xa9 key P\n'
        '1:key: unknown key '"'"'\x1b]0;owned\x07\x1b[31mRED'"'"'|0.1 key \033]0;owned\007\033[31mRED\n'
    )
    i=0
    for entry in "${cases[@]}"; do
        i=$((i + 1))
        spec=${entry%%|*} content=${entry#*|}
        line=${spec%%:*} expected=${spec#*:}
        file="$out/bad_$i.script"
        # shellcheck disable=SC2059
        printf -- "$content" 0 > "$file"
        set +e
        env -u DISPLAY -u WAYLAND_DISPLAY "$view" "$data/stick.json" --frames 2 --script "$file" > "$out/bad_$i.log" 2>&1
        code=$?
        set -e
        if [ "$code" -ne 1 ] || ! grep -qF -- "$file:$line: $expected" "$out/bad_$i.log" || grep -q "OpenGL" "$out/bad_$i.log"; then
            echo "FAILED: script $i (exit $code), expected 1 and '$file:$line: $expected' before a window; the output:" >&2
            cat -v "$out/bad_$i.log" >&2
            exit 1
        fi
        # nothing but printable ASCII and newlines echoed
        if LC_ALL=C grep -q '[^ -~]' "$out/bad_$i.log"; then
            echo "FAILED: script $i: unprintable bytes in the output:" >&2
            cat -v "$out/bad_$i.log" >&2
            exit 1
        fi
        echo "ok: $(cat "$out/bad_$i.log")"
    done
    # the file's own name is made printable too
    file="$out/"$'name\033[2J.script'
    printf '0.1 key F13\n' > "$file"
    if env -u DISPLAY -u WAYLAND_DISPLAY "$view" "$data/stick.json" --frames 2 --script "$file" > "$out/bad_name.log" 2>&1; then
        echo "FAILED: a script with an unknown key ran" >&2
        exit 1
    fi
    grep -qF 'name\x1b[2J.script:1: key: unknown key' "$out/bad_name.log" && ! LC_ALL=C grep -q '[^ -~]' "$out/bad_name.log" ||
        { echo "FAILED: the file's name is not made printable:" >&2; cat -v "$out/bad_name.log" >&2; exit 1; }
    echo "ok: $(cat "$out/bad_name.log")"
    # and an unknown option
    if "$view" "$data/stick.json" $'--\033[2Jfoo' > "$out/bad_option.log" 2>&1; then
        echo "FAILED: an unknown option was taken" >&2
        exit 1
    fi
    grep -qF 'unknown option --\x1b[2Jfoo' "$out/bad_option.log" && ! LC_ALL=C grep -q '[^ -~]' "$out/bad_option.log" ||
        { echo "FAILED: the unknown option is not made printable:" >&2; cat -v "$out/bad_option.log" >&2; exit 1; }
    echo "ok: the unknown option is shown printable"
    # a well-formed script in any case of key names, with tabs, CRLF line ends and comments runs
    printf '# fine\r\n0.00\tkey\th\r\n0.01 key period   # a single step\r\n\r\n0.02 mod SHIFT on\n0.02 wheel -1.5\n' > "$out/good.script"
    # (on the CPU reference: the script is what is tested, and under the sanitizers a kernel that
    # PoCL had to compile would run the linker with the preloaded ASan runtime, which fails it)
    env -u DISPLAY -u WAYLAND_DISPLAY ${SM_VIEW_PRELOAD:+LD_PRELOAD="$SM_VIEW_PRELOAD"} "$view" "$data/stick.json" --frames 4 \
        --backend cpu --script "$out/good.script" > "$out/good.log"
    echo "ok: a well-formed script with tabs, CRLF line ends and comments runs"
    # the errors of the command line, the world and the screenshot name their culprit: --size
    # with anything after WxH is refused, a scene whose world cannot be built is named (as the
    # shapematch command names it), and a screenshot that cannot be written says why
    if "$view" "$data/stick.json" --size 64x64junk > "$out/bad_size.log" 2>&1; then
        echo "FAILED: --size 64x64junk was taken" >&2
        exit 1
    fi
    grep -qF 'bad or missing value for --size' "$out/bad_size.log" ||
        { echo "FAILED: --size 64x64junk:" >&2; cat -v "$out/bad_size.log" >&2; exit 1; }
    echo "ok: --size 64x64junk is refused"
    printf '{"objects": [{"shape": "points", "points": [[1e308, 0, 0], [-1e308, 0, 0], [0, 1, 0], [0, 0, 1]]}]}' > "$out/infinite.json"
    if env -u DISPLAY -u WAYLAND_DISPLAY "$view" "$out/infinite.json" --frames 1 --backend cpu > "$out/infinite.log" 2>&1; then
        echo "FAILED: a world that cannot be built ran" >&2
        exit 1
    fi
    grep -qF "$out/infinite.json: object 0: " "$out/infinite.log" ||
        { echo "FAILED: the world's error does not name the scene:" >&2; cat -v "$out/infinite.log" >&2; exit 1; }
    echo "ok: $(grep -F 'object 0: ' "$out/infinite.log")"
    mkdir -p "$out/shot_folder"
    if env -u DISPLAY -u WAYLAND_DISPLAY ${SM_VIEW_PRELOAD:+LD_PRELOAD="$SM_VIEW_PRELOAD"} "$view" "$data/stick.json" --frames 1 \
        --backend cpu --size 64x64 --screenshot "$out/shot_folder" > "$out/shot.log" 2>&1; then
        echo "FAILED: a screenshot into a folder succeeded" >&2
        exit 1
    fi
    grep -qF "cannot write $out/shot_folder: Is a directory" "$out/shot.log" ||
        { echo "FAILED: the screenshot's error gives no reason:" >&2; cat -v "$out/shot.log" >&2; exit 1; }
    echo "ok: $(grep -F 'cannot write' "$out/shot.log")"
    # no output overwrites what the viewer reads: the scene, its meshes or the script
    cp "$data/stick.json" "$out/victim.json"
    for option in --screenshot --report; do
        if env -u DISPLAY -u WAYLAND_DISPLAY "$view" "$out/victim.json" --frames 1 --backend cpu --size 64x64 \
            "$option" "$out/victim.json" > "$out/victim.log" 2>&1; then
            echo "FAILED: $option onto the scene ran" >&2
            exit 1
        fi
        grep -qF -- "$option $out/victim.json is $out/victim.json, which the viewer reads" "$out/victim.log" ||
            { echo "FAILED: $option onto the scene:" >&2; cat -v "$out/victim.log" >&2; exit 1; }
        cmp -s "$out/victim.json" "$data/stick.json" || { echo "FAILED: $option overwrote the scene" >&2; exit 1; }
    done
    echo "ok: --screenshot and --report onto the scene are refused, the scene intact"
    ;;
overlay)
    # a world with a skinned surface, a collider, contact and plasticity: every pass in the
    # overlay, and in cut mode with the blades turned its longest lines; the help on too
    for size in 640x360 960x540; do
        run "$data/overlay.json" --frames 40 --size "$size" --script "$data/overlay.script" --screenshot "$out/overlay_$size.png" \
            --report "$out/overlay_$size.json" > "$out/overlay_$size.log"
        # nothing within 6 pixels of the right or bottom edge; the text over at least 2% of the
        # picture (5% here)
        "$check_image" --overlay "$out/overlay_$size.png" 6 0.02
        check "$out/overlay_$size.json" "'draw: surfaces' in r['overlay'] and 'surface vertices' in r['overlay']" "the overlay shows the draw mode of the surfaces at $size"
    done
    # the draw mode and the surface counts only where there are surfaces
    run "$data/stick.json" --frames 4 --report "$out/overlay_stick.json" > "$out/overlay_stick.log"
    "$py" -c "import json; print(json.load(open('$out/overlay_stick.json'))['overlay'])"
    check "$out/overlay_stick.json" "'draw:' not in r['overlay'] and 'surface' not in r['overlay'] and 'objects 1 ' in r['overlay']" \
        "no draw mode or surface counts without surfaces"
    ;;
follow)
    # thrown sideways at 20 m/s: 18 m in 90 frames, where the first view spans about 3 m
    rm -rf "$out/follow_frames"
    run "$data/throw.json" --frames 90 --size 640x360 --screenshot "$out/follow.png" --report "$out/follow.json" \
        --record "$out/follow_frames" > "$out/follow.log"
    run "$data/throw.json" --frames 90 --size 640x360 --report "$out/follow_again.json" > "$out/follow_again.log"
    printf '0.00 key T\n' > "$out/fixed.script"
    run "$data/throw.json" --frames 90 --size 640x360 --script "$out/fixed.script" --screenshot "$out/fixed.png" \
        --report "$out/fixed.json" > "$out/fixed.log"
    printf '0.00 wheel 1\n' > "$out/zoom.script"
    run "$data/throw.json" --frames 90 --size 640x360 --script "$out/zoom.script" --screenshot "$out/zoom.png" \
        --report "$out/zoom.json" > "$out/zoom.log"
    for r in follow fixed zoom; do
        "$py" -c "import json; r = json.load(open('$out/$r.json')); print('$r', json.dumps({'camera': r['camera'], 'cube': r['objects'][0]['centre_end']}))"
    done
    check "$out/follow.json" "r['camera']['follow'] and r['objects'][0]['centre_end'][0] > 15 and r['camera']['target'][0] > 10" "the camera followed the cube"
    # the cube in its colour (palette 0) over at least 0.2% of the picture in every frame (2.1%
    # at the least here, 4.1% at the end)
    "$check_image" --colour "$out/follow.png" 0.95 0.740 0.333 0.002 0.5
    for frame in "$out"/follow_frames/frame_*.png; do
        "$check_image" --colour "$frame" 0.95 0.740 0.333 0.002 1 > "$out/frame.log" || { cat "$out/frame.log" >&2; exit 1; }
    done
    echo "ok: the cube is in every one of the $(ls "$out/follow_frames" | wc -l) frames"
    # the same run again moves the camera the same way, to the last digit
    "$py" -c "import json, sys; a, b = (json.load(open(f))['camera'] for f in sys.argv[1:]); sys.exit(a != b)" \
        "$out/follow.json" "$out/follow_again.json" || { echo "FAILED: two runs left the camera in different places" >&2; exit 1; }
    echo "ok: following is reproducible"
    # T turns following off, and a zoom does too (it says so): the cube leaves the picture
    grep -q "camera: following off" "$out/fixed.log"
    grep -q "camera: following off (T follows the objects again)" "$out/zoom.log"
    for r in fixed zoom; do
        check "$out/$r.json" "not r['camera']['follow'] and abs(r['camera']['target'][0]) < 1" "$r: the camera stayed"
        "$check_image" --colour "$out/$r.png" 0.95 0.740 0.333 0.0 0.0001
    done
    ;;
*)
    echo "unknown case $case" >&2
    exit 2
    ;;
esac
