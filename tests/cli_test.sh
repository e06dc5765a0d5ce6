#!/usr/bin/env bash
# The shapematch command end to end: usage errors, info totals, trajectories that numpy loads,
# determinism, and an interrupted run that keeps its frames.
# usage: cli_test.sh SHAPEMATCH SCENES_DIR WORK_DIR
set -u
tool=$(realpath "$1") scenes=$(realpath "$2") work=$3
mkdir -p "$work" && cd "$work" || exit 1
python=/usr/bin/python3
[ -x "$python" ] || python=python3
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# expect STATUS PATTERN -- COMMAND...: runs COMMAND, checks its exit status and that its
# combined output matches the extended regular expression PATTERN
expect() {
    local status=$1 pattern=$2
    shift 3
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    [ "$rc" -eq "$status" ] || fail "'$*' exited $rc, expected $status: $out"
    echo "$out" | grep -Eq -- "$pattern" || fail "'$*' printed no match for /$pattern/: $out"
}

expect 0 'commands:' -- "$tool" --help
expect 2 'usage: shapematch' -- "$tool"
expect 2 "unknown command 'frobnicate'" -- "$tool" frobnicate
expect 2 'a scene file is required' -- "$tool" info
expect 2 "unknown option '--fast'" -- "$tool" info --fast "$scenes/paper384.json"
expect 0 'objects=N clusters=N' -- "$tool" info --help
expect 0 '--every K' -- "$tool" run --help
expect 0 'profile: rotation +[0-9.]+ ms per solver step' -- "$tool" run "$scenes/linear_cube.json" --steps 2 --profile
# with --verbose, each kernel's milliseconds per solver step (bench/gpu.sh records them)
expect 0 'by kernel: sm_cluster_moments [0-9.]+ .*sm_grid_scan [0-9.]+ .*sm_grid_runs [0-9.]+ sm_find_contacts [0-9.]+ sm_collide [0-9.]+' -- \
    "$tool" run "$scenes/tower30.json" --steps 1 --profile --verbose --backend opencl
expect 2 "--steps needs an integer >= 0, got 'abc'" -- "$tool" run "$scenes/linear_cube.json" --steps abc
expect 2 "--every needs an integer >= 1, got '0'" -- "$tool" run "$scenes/linear_cube.json" --every=0
expect 2 "option '--out' needs a value" -- "$tool" run "$scenes/linear_cube.json" --out
expect 2 "unknown option '--stpes'" -- "$tool" run "$scenes/linear_cube.json" --stpes 3
expect 2 "unknown backend 'gpu'" -- "$tool" run "$scenes/linear_cube.json" --backend gpu
expect 2 "--device needs an index" -- "$tool" run "$scenes/linear_cube.json" --device=
expect 2 "--device: no OpenCL device matches 'no-such-device'" -- "$tool" run "$scenes/linear_cube.json" --backend opencl --device no-such-device
expect 2 "--device: OpenCL device 7 does not exist" -- "$tool" run "$scenes/linear_cube.json" --device 7
expect 2 "--device selects an OpenCL device; it does not apply to --backend cpu" -- \
    "$tool" run "$scenes/linear_cube.json" --backend cpu --device 0
expect 2 "option '--steps' is given twice" -- "$tool" run "$scenes/linear_cube.json" --steps 1 --steps 2
# an option without a value takes none, not even after '='
expect 2 "option '--profile' takes no value \(got '--profile=0'\)" -- "$tool" run "$scenes/linear_cube.json" --profile=0
expect 2 "option '--verbose' takes no value \(got '--verbose=no'\)" -- "$tool" compare "$scenes/linear_cube.json" --verbose=no
expect 0 '^0: .+' -- "$tool" devices
expect 0 'max_single_step_error=E1' -- "$tool" compare --help

# without any OpenCL platform: --backend opencl says what to install, the default falls back
expect 1 "no OpenCL platform is installed: install an OpenCL driver, e.g. 'apt-get install pocl-opencl-icd'" -- \
    env OCL_ICD_VENDORS=/nonexistent "$tool" run "$scenes/linear_cube.json" --steps 2 --backend opencl
expect 0 'warning: OpenCL is not available .*running the CPU reference instead' -- \
    env OCL_ICD_VENDORS=/nonexistent "$tool" run "$scenes/linear_cube.json" --steps 2
expect 0 'backend=cpu$' -- env OCL_ICD_VENDORS=/nonexistent "$tool" run "$scenes/linear_cube.json" --steps 2
expect 1 'no OpenCL platform is installed' -- env OCL_ICD_VENDORS=/nonexistent "$tool" devices
expect 1 'cannot open scene file missing.json' -- "$tool" run missing.json
printf '{"objects": [{"shape": "box", "alpah": 0.5}]}' > typo.json
expect 1 'typo.json: object 0: field "alpah": unknown field; did you mean "alpha"\?' -- "$tool" run typo.json
expect 1 'cannot write /nonexistent/x.npy' -- "$tool" run "$scenes/linear_cube.json" --steps 1 --out /nonexistent/x.npy
# a folder given as the scene is named as one
expect 1 'cannot read scene file .*scenes: Is a directory' -- "$tool" run "$scenes"
# a frame counts once the system took it: on a full device nothing is written and no summary
# claims a frame; on a file that cannot grow past 20 KiB (ulimit -f) the summary counts the
# frames the file holds, and the file loads with them
if [ -c /dev/full ]; then
    expect 1 'cannot write /dev/full: No space left on device' -- \
        "$tool" run "$scenes/linear_cube.json" --steps 3 --out /dev/full --backend cpu
    "$tool" run "$scenes/linear_cube.json" --steps 3 --out /dev/full --backend cpu 2> /dev/null | grep -q 'frames=' &&
        fail "a run that wrote no frame to /dev/full reports frames"
fi
rm -f limited.npy
out=$(trap '' XFSZ && ulimit -f 20 && "$tool" run "$scenes/linear_cube.json" --steps 50 --out limited.npy --backend cpu 2>&1)
rc=$?
[ "$rc" -eq 1 ] && echo "$out" | grep -q 'cannot write limited.npy: File too large' || fail "a file over its limit: $rc: $out"
frames=$(echo "$out" | sed -n 's/.*frames=\([0-9]*\).*/\1/p')
"$python" -c "
import numpy as np
a = np.load('limited.npy')
assert a.shape == (int('$frames' or -1), 125, 3) and np.isfinite(a).all(), (a.shape, '$frames')
" || fail "limited.npy does not hold the frames the summary reports: $out"

# the paper's massive scene has exactly its published totals, then one line per object
out=$("$tool" info "$scenes/paper384.json") || fail "info paper384 failed"
head -1 <<< "$out" | grep -Eq '^objects=384 clusters=2448 particles=55200 memberships=[0-9]+ collisions=on iterations=2 ' ||
    fail "paper384 totals: $(head -1 <<< "$out")"
[ "$(echo "$out" | grep -c '^object ')" -eq 384 ] || fail "paper384 should list 384 objects"

# every scene shipped loads
for scene in "$scenes"/*.json; do
    "$tool" info "$scene" > /dev/null || fail "info $scene"
done

# a trajectory: frame 0 is the initial state, then one frame every K steps
# on both backends: float64 from the CPU reference, float32 from OpenCL (the default), each
# run-to-run identical, and the two within float rounding of each other
expect 0 '^steps=20 substeps=1 frames=5 wall_s=[0-9.]+ steps_per_s=[0-9.]+ particles=125 backend=cpu$' -- \
    "$tool" run "$scenes/quadratic_cube.json" --steps 20 --every 5 --out a.npy --backend cpu
expect 0 '^steps=20 substeps=1 frames=5 wall_s=[0-9.]+ steps_per_s=[0-9.]+ particles=125 backend=opencl device=".+"$' -- \
    "$tool" run "$scenes/quadratic_cube.json" --steps 20 --every 5 --out gpu_a.npy
for backend in cpu opencl; do
    prefix=$([ $backend = cpu ] && echo "" || echo gpu_)
    "$tool" run "$scenes/quadratic_cube.json" --steps 20 --every=5 --out ${prefix}b.npy --backend $backend > /dev/null || fail "second run"
    cmp -s ${prefix}a.npy ${prefix}b.npy || fail "two $backend runs of one scene differ"
    "$tool" run "$scenes/quadratic_cube.json" --steps 0 --out ${prefix}initial.npy --backend $backend > /dev/null || fail "run --steps 0"
    "$tool" run "$scenes/quadratic_cube.json" --steps 15 --every 15 --out ${prefix}fifteen.npy --backend $backend > /dev/null ||
        fail "run --steps 15"
done
"$python" - <<'PY' || fail "numpy checks"
import numpy as np
for prefix, dtype in (("", "<f8"), ("gpu_", "<f4")):
    a = np.load(prefix + "a.npy")
    assert a.shape == (5, 125, 3), a.shape
    assert a.dtype == np.dtype(dtype), (prefix, a.dtype)
    assert np.isfinite(a).all()
    initial = np.load(prefix + "initial.npy")
    assert initial.shape == (1, 125, 3)
    assert (a[0] == initial[0]).all(), "frame 0 is the initial state"
    assert (a[3] == np.load(prefix + "fifteen.npy")[1]).all(), "frame 3 is the state after 15 steps"
    assert not (a[1] == a[0]).all(), "the cube moves"
cpu, gpu = np.load("a.npy"), np.load("gpu_a.npy")
error = np.abs(cpu - gpu).max()
assert error < 1e-5, error
PY

# --mesh-out: the skinned surface of a mesh object (the duck of Debian's assimp-testmodels, 1.65 m
# across as assimp reads it, halved here) as one binary PLY per frame, frame 0 the initial state
expect 0 '--mesh-out DIR' -- "$tool" run --help
expect 1 'the scene has no surfaces to write: .*linear_cube.json' -- "$tool" run "$scenes/linear_cube.json" --steps 1 --mesh-out m
[ -e m ] && fail "a refused --mesh-out created its folder"
expect 2 "option '--mesh-out' needs a value" -- "$tool" run "$scenes/linear_cube.json" --mesh-out
cat > duck.json <<'JSON'
{"dt": 0.016666666666666666, "ground": {"height": 0},
 "objects": [{"name": "duck", "shape": "mesh", "mesh": "/usr/share/assimp/models/Collada/duck.dae", "scale": 0.5,
              "particles": "lattice", "spacing": 0.08, "position": [0, 1, 0], "mode": "quadratic",
              "clusters": {"grid": [2, 2, 2]}}]}
JSON
expect 1 'cannot create the folder /nonexistent/meshes' -- "$tool" run duck.json --steps 1 --mesh-out /nonexistent/meshes
expect 1 'cannot write meshes into duck.json: not a folder' -- "$tool" run duck.json --steps 1 --mesh-out duck.json
# no output overwrites the scene or another output: --out among the --mesh-out frames (under any
# spelling of the folder), the scene itself, or the objects file written beside --out with cuts;
# a refused or failed run leaves no --mesh-out folder it made
rm -rf clash clash_out clash_link
expect 2 "--out clash/frame_000003.ply is one of the frames of --mesh-out clash" -- \
    "$tool" run duck.json --steps 5 --mesh-out clash --out clash/frame_000003.ply
[ -e clash ] && fail "a refused run left the --mesh-out folder it made"
mkdir clash && ln -s clash clash_link
expect 2 "--out clash_link/frame_000001.ply is one of the frames of --mesh-out ./clash" -- \
    "$tool" run duck.json --steps 5 --mesh-out ./clash --out clash_link/frame_000001.ply
expect 2 "--out duck.json is the scene file" -- "$tool" run duck.json --steps 1 --out duck.json
expect 1 'cannot write clash_out: Is a directory' -- "$tool" run duck.json --steps 1 --mesh-out clash_out --out clash_out
[ -e clash_out ] && fail "a failed run left the --mesh-out folder it made"
cp "$scenes/paper/hw2007_cut.json" cut.objects.npy
expect 2 "--out cut.npy: the objects file written beside it in a scene with cuts, cut.objects.npy, is the scene file" -- \
    "$tool" run cut.objects.npy --steps 1 --out cut.npy
cmp -s cut.objects.npy "$scenes/paper/hw2007_cut.json" || fail "the scene was overwritten by the objects file"
# nor a file the scene reads for its meshes (objects', surfaces', colliders' and the files they
# name), as --out or among the --mesh-out frames
mkdir -p reads/frames
cp "$scenes/meshes/bowl.obj" reads/bowl.obj
printf 'mtllib looks.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n' > reads/frames/frame_000001.ply.obj
printf 'newmtl grey\nKd 0.5 0.5 0.5\n' > reads/looks.mtl
printf 'ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\nelement face 4\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 2 1\n3 0 1 3\n3 0 3 2\n3 1 2 3\n' > reads/frames/frame_000002.ply
cp reads/frames/frame_000002.ply reads/surface.before
cat > reads/scene.json <<'JSON'
{"objects": [{"shape": "box", "surface": {"mesh": "frames/frame_000002.ply"}},
             {"shape": "mesh", "mesh": "bowl.obj", "position": [3, 0, 0]}],
 "colliders": [{"shape": "mesh", "mesh": "tetra.obj", "position": [0, -2, 0]}]}
JSON
cp reads/frames/frame_000001.ply.obj reads/tetra.obj
sed -i '1s|.*|mtllib looks.mtl|' reads/tetra.obj
for input in bowl.obj tetra.obj looks.mtl; do
    cp "reads/$input" "reads/$input.before"
    expect 2 "--out reads/$input is reads/$input, which the scene reads: choose another file" -- \
        "$tool" run reads/scene.json --steps 1 --backend cpu --out "reads/$input"
    cmp -s "reads/$input" "reads/$input.before" || fail "run --out overwrote $input, which the scene reads"
done
expect 2 "the scene reads reads/frames/frame_000002.ply is one of the frames of --mesh-out reads/frames" -- \
    "$tool" run reads/scene.json --steps 1 --backend cpu --mesh-out reads/frames
cmp -s reads/frames/frame_000002.ply reads/surface.before || fail "--mesh-out overwrote a surface the scene reads"
# a mesh file, or a file a mesh file names, that is a FIFO (or any file but a regular one) is
# refused at once, not waited on
rm -f reads/pipe.obj reads/pipe.mtl && mkfifo reads/pipe.obj reads/pipe.mtl
for field in '"mesh": "pipe.obj"' '"surface": {"mesh": "pipe.obj"}'; do
    shape=$([ "${field%%:*}" = '"mesh"' ] && echo mesh || echo box)
    printf '{"objects": [{"shape": "%s", %s}]}' "$shape" "$field" > reads/fifo.json
    expect 1 'mesh file "reads/pipe.obj": not a regular file' -- timeout 20 "$tool" info reads/fifo.json
done
printf '{"objects": [{"shape": "box"}], "colliders": [{"shape": "mesh", "mesh": "pipe.obj"}]}' > reads/fifo.json
expect 1 'collider 0: field "mesh": mesh file "reads/pipe.obj": not a regular file' -- timeout 20 "$tool" info reads/fifo.json
sed '1s|.*|mtllib pipe.mtl|' reads/tetra.obj > reads/names_pipe.obj
printf '{"objects": [{"shape": "mesh", "mesh": "names_pipe.obj"}]}' > reads/fifo.json
expect 0 'objects=1 ' -- timeout 20 "$tool" info reads/fifo.json
# a string holding \u0000 (a NUL character, which would end it early) is refused, where it is
printf '{"objects": [{"shape": "box\\u0000x"}]}' > nul.json
expect 1 'nul.json:1:28: a string holds \\u0000' -- "$tool" info nul.json
printf '{"name": "a\\\\u0000b", "objects": [{"shape": "box"}]}' > not_nul.json
expect 0 'objects=1 ' -- "$tool" info not_nul.json
# integers are digits only; bench refuses what run refuses
expect 2 "--steps needs an integer >= 0, got '\+10'" -- "$tool" run "$scenes/linear_cube.json" --steps +10
expect 2 "--steps needs an integer >= 0, got ' 10'" -- "$tool" run "$scenes/linear_cube.json" --steps " 10"
expect 2 'an option is given twice: --steps' -- "$tool" bench scene "$scenes/linear_cube.json" --steps 1 --steps 2
expect 2 '--device: OpenCL device 99 does not exist' -- "$tool" bench scene "$scenes/linear_cube.json" --device 99
expect 2 'does not apply to --backend cpu' -- "$tool" bench scene "$scenes/linear_cube.json" --backend cpu --device 0
expect 2 'does not apply to --backend cpu' -- "$tool" bench fig8 --backend cpu --device 99
# a frame that cannot be written stops the run, naming the file
rm -rf blocked && mkdir -p blocked/frame_000001.ply
expect 1 'cannot write blocked/frame_000001.ply: Is a directory' -- "$tool" run duck.json --steps 20 --every 10 --mesh-out blocked
rm -rf meshes cpu_meshes
expect 0 '^steps=20 substeps=1 frames=3 .*particles=286 backend=opencl' -- "$tool" run duck.json --steps 20 --every 10 --mesh-out meshes
expect 0 '^steps=20 substeps=1 frames=3 .*particles=286 backend=cpu$' -- \
    "$tool" run duck.json --steps 20 --every 10 --mesh-out cpu_meshes --backend cpu
for f in 0 1 2; do [ -f meshes/frame_00000$f.ply ] || fail "--mesh-out wrote no meshes/frame_00000$f.ply"; done
[ -e meshes/frame_000003.ply ] && fail "--mesh-out wrote more than 3 frames"
"$python" - <<'PY' || fail "PLY checks"
import numpy as np

def read_ply(path):
    data = open(path, "rb").read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    header = [line for line in data[:end].decode("ascii").split("\n") if line and not line.startswith("comment")]
    assert header[:2] == ["ply", "format binary_little_endian 1.0"], header
    assert header[2].startswith("element vertex ") and header[9].startswith("element face "), header
    assert header[3:9] == ["property float " + p for p in ("x", "y", "z", "nx", "ny", "nz")], header
    assert header[10:] == ["property list uchar int vertex_indices", "end_header"], header
    nv, nf = int(header[2].split()[2]), int(header[9].split()[2])
    vertices = np.frombuffer(data, "<f4", 6 * nv, end).reshape(nv, 6)
    faces = np.frombuffer(data, np.dtype([("n", "u1"), ("i", "<i4", 3)]), nf, end + 24 * nv)
    assert len(data) == end + 24 * nv + 13 * nf, "trailing bytes"
    return vertices, faces

first, faces = read_ply("meshes/frame_000000.ply")
assert first.shape == (2108, 6) and len(faces) == 4212, (first.shape, len(faces))
for name in ("meshes/frame_000001.ply", "meshes/frame_000002.ply", "cpu_meshes/frame_000002.ply"):
    v, f = read_ply(name)
    assert v.shape == (2108, 6) and np.isfinite(v).all(), name
    assert (f["n"] == 3).all() and f["i"].min() >= 0 and f["i"].max() < 2108, name
    assert (f == faces).all(), "the triangles are the same every frame"
    length = np.linalg.norm(v[:, 3:], axis=1)
    assert (np.abs(length[length > 0] - 1) < 1e-3).all(), (name, length.min(), length.max())
last, _ = read_ply("meshes/frame_000002.ply")
assert last[:, 1].max() < first[:, 1].max() - 0.1, "the duck fell"
assert np.abs(last[:, :3] - read_ply("cpu_meshes/frame_000002.ply")[0][:, :3]).max() < 1e-4, "OpenCL and CPU agree"
assert np.abs(first[:, :3] - read_ply("cpu_meshes/frame_000000.ply")[0][:, :3]).max() < 1e-6
PY

# cuts (hw2007_cut: the duck at 0.4 s, the box at 0.7 s): column i of --out is the same particle
# in every frame, FILE.objects.npy says which object each particle is in (the front pieces are the
# new objects 2 and 3), and each --mesh-out frame after a cut holds the pieces' surfaces, closed
for backend in opencl cpu; do
    rm -rf cut_meshes_$backend
    expect 0 '^steps=60 substeps=1 frames=61 ' -- "$tool" run "$scenes/paper/hw2007_cut.json" --steps 60 --every 1 \
        --backend $backend --out cut_$backend.npy --mesh-out cut_meshes_$backend
done
"$python" - <<'PY' || fail "trajectories and meshes across cuts"
import numpy as np

def read_faces(path):
    data = open(path, "rb").read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    header = data[:end].decode("ascii").split("\n")
    nv = int([l for l in header if l.startswith("element vertex")][0].split()[2])
    nf = int([l for l in header if l.startswith("element face")][0].split()[2])
    v = np.frombuffer(data, "<f4", 6 * nv, end).reshape(nv, 6)
    f = np.frombuffer(data, np.dtype([("n", "u1"), ("i", "<i4", 3)]), nf, end + 24 * nv)["i"]
    return v, f

for backend in ("opencl", "cpu"):
    x = np.load(f"cut_{backend}.npy")
    objects = np.load(f"cut_{backend}.objects.npy")
    assert x.shape[:2] == objects.shape == (61, x.shape[1]) and objects.dtype == np.int32, (x.shape, objects.shape)
    jump = np.linalg.norm(np.diff(x, axis=0), axis=2).max()
    assert jump < 0.4, f"{backend}: a particle jumped {jump:.3f} m between frames"  # (0.2 m; renumbered: 0.87 m)
    assert set(objects[0]) == {0, 1} and set(objects[-1]) == {0, 1, 2, 3}, (set(objects[0]), set(objects[-1]))
    # a particle changes object only from its object to that object's front piece: 0 -> 2, 1 -> 3
    changed = objects[-1] != objects[0]
    assert ((objects[0][changed] + 2) == objects[-1][changed]).all()
    assert 0 < changed.sum() < x.shape[1]
    # the duck whole at frame 0, in two pieces after its cut: closed (every edge in two
    # triangles), and as many connected surfaces as pieces (a stale triangle list would keep one)
    for frame, pieces in ((0, 1), (60, 2)):
        v, f = read_faces(f"cut_meshes_{backend}/frame_{frame:06d}.ply")
        edges = np.sort(np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]), axis=1)
        _, uses = np.unique(edges, axis=0, return_counts=True)
        assert (uses == 2).all(), f"{backend} frame {frame}: {np.sum(uses != 2)} open or shared edges"
        parent = list(range(len(v)))
        def root(a):
            while parent[a] != a:
                parent[a] = parent[parent[a]]
                a = parent[a]
            return a
        for a, b in edges:
            parent[root(a)] = root(b)
        components = len({root(a) for a in np.unique(f)})
        assert components == pieces, f"{backend} frame {frame}: {components} connected surfaces, expected {pieces}"
        if frame == 60:
            assert len(f) > before, "the caps are written"
        before = len(f)
    print(f"{backend}: largest jump between frames {jump:.3f} m, {changed.sum()} particles moved to front pieces,"
          f" {before} triangles after the cut")
PY

# the main job's scene: 600 steps (10 s) on OpenCL settle its 384 objects into a pile with
# every position finite (checked every 100 steps by the command, and in full at the end here)
# and no two objects overlapping by 5% of a particle radius (the summary's max_depth_ratio)
out=$("$tool" run "$scenes/paper384.json" --steps 600 --every 300 --out paper.npy --backend opencl) ||
    fail "paper384 run failed: $out"
echo "paper384: $out"
echo "$out" | grep -Eq '^steps=600 substeps=3 frames=3 .* backend=opencl device=".+" contacts=[0-9]+ max_depth_ratio=0\.0[0-4][0-9]* ' ||
    fail "paper384 after 600 steps: $out"
"$python" -c "
import numpy as np
a = np.load('paper.npy')
assert a.shape == (3, 55200, 3) and np.isfinite(a).all(), a.shape
assert a[2, :, 1].min() > -0.01, a[2, :, 1].min()  # nothing fell through the ground
assert a[2, :, 1].max() > 1.5, a[2, :, 1].max()  # objects rest on objects: a pile, not a layer
" || fail "paper384 after 600 steps"

# Sends SIGINT to the run $pid once FILE holds BYTES (however long start-up takes on a busy
# machine) and PAUSE more seconds have passed, and waits for it: its status in $rc, the seconds
# from the signal to its end in $took.
interrupt_when() {
    for _ in $(seq 1200); do
        [ "$(stat -c %s "$1" 2> /dev/null || echo 0)" -ge "$2" ] && break
        sleep 0.1
    done
    sleep "$3"
    local start
    start=$(date +%s.%N)
    kill -INT $pid
    wait $pid
    rc=$?
    took=$("$python" -c "print(round($(date +%s.%N) - $start, 2))")
}

# Ctrl-C stops a long run and keeps a loadable file holding the frames written so far
# (the signal is sent once a few frames are on disk, however long start-up takes on a busy machine)
rm -f interrupted.npy
"$tool" run "$scenes/paper384.json" --steps 1000000 --out interrupted.npy > interrupted.txt 2>&1 &
pid=$!
interrupt_when interrupted.npy $((128 + 3 * 55200 * 12 + 1)) 0
[ "$rc" -eq 130 ] || fail "an interrupted run should exit 130, got $rc: $(cat interrupted.txt)"
grep -q 'interrupted after' interrupted.txt || fail "no interruption message: $(cat interrupted.txt)"
frames=$(sed -n 's/.*frames=\([0-9]*\).*/\1/p' interrupted.txt)
"$python" -c "
import numpy as np
a = np.load('interrupted.npy')
assert a.shape == ($frames, 55200, 3) and $frames >= 1, a.shape
assert np.isfinite(a).all()
" || fail "interrupted.npy does not hold the $frames frames the summary reports"

# Ctrl-C during contact's worst case (1,000 boxes spawned at one point: every particle overlaps
# thousands of others) ends the run after the step under way, which the limit of 32 contacts a
# particle keeps short (about a second here; 77 s a step before the limit), with its frames kept
"$python" -c "
import json
boxes = [{'shape': 'box', 'size': [0.1, 0.1, 0.1], 'resolution': [2, 2, 2], 'rotation': [7 * k % 360, 13 * k % 360, 0]}
         for k in range(1000)]
json.dump({'collisions': {}, 'ground': {}, 'objects': boxes}, open('spawn.json', 'w'))
"
rm -f spawn.npy
"$tool" run spawn.json --steps 1000000 --out spawn.npy > spawn.txt 2>&1 &
pid=$!
interrupt_when spawn.npy $((128 + 2 * 8000 * 12)) 0
echo "spawn: Ctrl-C ended the run in $took s: $(tail -1 spawn.txt)"
[ "$rc" -eq 130 ] || fail "an interrupted spawn run should exit 130, got $rc: $(cat spawn.txt)"
"$python" -c "assert $took < 10, 'Ctrl-C took $took s'" || fail "Ctrl-C took $took s to end the spawn run"
"$python" -c "
import numpy as np
a = np.load('spawn.npy')
assert a.shape[1:] == (8000, 3) and a.shape[0] >= 2 and np.isfinite(a).all(), a.shape
" || fail "spawn.npy does not hold the frames written"

# Ctrl-C inside one long step (paper384 at 5,000 solver steps a step: minutes a step) ends the run
# within the solver step under way (sm_world_cancel()), on both backends, without counting the
# cancelled step, and frame 0 stays in the file
"$python" -c "
import json
scene = json.load(open('$scenes/paper384.json'))
scene['substeps'] = 5000
json.dump(scene, open('long_step.json', 'w'))
"
for backend in opencl cpu; do
    rm -f long_step.npy
    "$tool" run long_step.json --backend "$backend" --steps 10 --out long_step.npy > long_step.txt 2>&1 &
    pid=$!
    interrupt_when long_step.npy $((128 + 55200 * 12)) 2 # (2 s: inside the first step)
    echo "long step ($backend): Ctrl-C ended the run in $took s: $(tail -1 long_step.txt)"
    [ "$rc" -eq 130 ] || fail "an interrupted long step ($backend) should exit 130, got $rc: $(cat long_step.txt)"
    grep -q 'interrupted after 0 of 10 steps' long_step.txt || fail "the cancelled step was counted: $(cat long_step.txt)"
    "$python" -c "assert $took < 5, 'Ctrl-C took $took s'" || fail "Ctrl-C took $took s to end a long step ($backend)"
    "$python" -c "
import numpy as np
a = np.load('long_step.npy')
assert a.shape == (1, 55200, 3) and np.isfinite(a).all(), a.shape
" || fail "long_step.npy ($backend) does not hold frame 0"
done

# SIGTERM stops a run like Ctrl-C, with the shell's status for it (128 + 15)
"$tool" run "$scenes/linear_cube.json" --steps 100000000 > terminated.txt 2>&1 &
pid=$!
sleep 1
kill -TERM $pid
wait $pid
rc=$?
[ "$rc" -eq 143 ] || fail "a terminated run should exit 143, got $rc: $(cat terminated.txt)"
grep -q 'interrupted after' terminated.txt || fail "no interruption message: $(cat terminated.txt)"

# text a user supplies is echoed with control bytes and invalid UTF-8 escaped, never raw
expect 1 'cannot open scene file x\\x1b\[31m\\xff\.json' -- "$tool" run $'x\e[31m\xff.json'
printf '{"objects": [{"shape": "box", "\033[2J\377": 1}]}' > escape.json
out=$("$tool" run escape.json --steps 1 2>&1)
case "$out" in *$'\e'*|*$'\xff'*) fail "raw control bytes reach the terminal: $out" ;; esac
echo "$out" | grep -q 'field "\\x1b\[2J\\xff": unknown field' || fail "the unknown field is not named escaped: $out"
printf '{"objects": [{"shape": "box", "name": "evil\\u001b]0;pwned\\u0007\\u001b[2J\\nX"}]}' > named.json
out=$("$tool" info named.json 2>&1)
case "$out" in *$'\e'*|*$'\a'*) fail "an object's name reaches the terminal raw: $out" ;; esac
echo "$out" | grep -q '^object 0 "evil\\x1b\]0;pwned\\x07\\x1b\[2J X" shape=box' || fail "the name is not printed escaped on one line: $out"
cp "$scenes/linear_cube.json" $'c\e[31m.json'
out=$("$tool" compare $'c\e[31m.json' --steps 1 2>&1)
case "$out" in *$'\e'*) fail "compare echoes the scene's path raw: $out" ;; esac

# the state check stops a run that diverges, naming the scene, the step and the particle
printf '{"gravity": [0, 0, 0], "objects": [{"name": "rocket", "shape": "box", "force": [1e9, 0, 0]}]}' > rocket.json
for backend in cpu opencl; do
    expect 1 'rocket.json: step 60: .*particle 0 \(object 0, rocket\) moves at .* m/s .*faster than check_speed' -- \
        "$tool" run rocket.json --backend $backend --steps 200
done

if [ "$failures" -gt 0 ]; then
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "cli: all checks passed"
