#!/usr/bin/env python3
"""Generates the paper's piles of objects: scenes/paper384.json and scenes/paper/fig9_massive.json
(the massive scene of Fig. 9: exactly 384 objects, 2448 clusters and 55200 particles; fig9_massive
also draws its spheres with a skinned mesh surface) and scenes/paper/fig1_teaser.json (the teaser,
Fig. 1: exactly 145 objects, 1728 clusters and 24618 particles).

How it works:
  1. A catalogue of object types (procedural shapes with a cluster grid each).
  2. Each type's particle and cluster counts are measured by loading a temporary scene with
     `shapematch info`, so the counts always match the library's own sampling.
  3. Integer counts per type are solved so that the totals are exactly 384 objects, 2448
     clusters and 55200 particles, keeping every type between MIN_COUNT and MAX_COUNT and the
     mix as even as the totals allow.
  4. The objects are shuffled and laid out in 4 layers of a 12 x 8 grid of columns in the xz
     plane (cells wider than any object, layers 2 m apart, so nothing overlaps at the start),
     jittered within their cells, with random rotations, spins and modes (mostly quadratic,
     some linear), and a soft cap on the deformation. With contact between objects on, the
     four objects of a column fall onto each other and onto their neighbours: the scene
     settles into a pile.
The output is the same on every run for the same catalogue, seed and library.

Uses only the Python standard library. Run from anywhere:
  python3 scenes/tools/make_paper384.py [--figure paper384|fig9|fig1] [--shapematch build/shapematch] [--out FILE]
"""
import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
from fractions import Fraction

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TARGET_OBJECTS = 384
TARGET_CLUSTERS = 2448
TARGET_PARTICLES = 55200
MIN_COUNT = 16  # every type appears at least this often
MAX_COUNT = 48  # and at most this often (1/8 of the objects)
SEED = 384

GRID_X, GRID_Z, LAYERS = 12, 8, 4  # 384 cells, one object each (at least one per object)
SKINS = False  # spheres get a skinned mesh surface
CELL = 2.0  # m; wider than the largest object (bounding radius <= 0.87 m), also the layers' spacing
QUADRATIC_SHARE = 0.8  # the rest are linear

# name -> shape fields and cluster grid (the default overlap 0.25 unless given)
CATALOGUE = [
    ("box_small", {"shape": "box", "size": [0.5, 0.5, 0.5], "resolution": [4, 4, 4]}, {"grid": [1, 1, 1]}),
    ("box_medium", {"shape": "box", "size": [0.8, 0.8, 0.8], "resolution": [5, 5, 5]}, {"grid": [2, 2, 2]}),
    ("box_large", {"shape": "box", "size": [1.0, 1.0, 1.0], "resolution": [6, 6, 6]}, {"grid": [3, 3, 3], "overlap": 0.5}),
    ("plank", {"shape": "box", "size": [1.2, 0.3, 0.3], "resolution": [9, 3, 3]}, {"grid": [4, 1, 1]}),
    ("slab", {"shape": "box", "size": [1.0, 0.3, 1.0], "resolution": [7, 3, 7]}, {"grid": [2, 1, 2]}),
    ("brick", {"shape": "box", "size": [0.6, 0.6, 1.2], "resolution": [4, 4, 7]}, {"grid": [1, 1, 2]}),
    ("sphere_small", {"shape": "sphere", "radius": 0.3, "spacing": 0.1}, {"grid": [1, 1, 1]}),
    ("sphere_large", {"shape": "sphere", "radius": 0.5, "spacing": 0.125}, {"grid": [2, 2, 2]}),
    ("capsule_short", {"shape": "capsule", "radius": 0.15, "length": 0.6, "spacing": 0.1}, {"grid": [2, 1, 1]}),
    ("capsule_long", {"shape": "capsule", "radius": 0.15, "length": 1.2, "spacing": 0.1}, {"grid": [5, 1, 1]}),
    ("torus_small", {"shape": "torus", "major_radius": 0.4, "minor_radius": 0.15, "spacing": 0.1}, {"grid": [1, 1, 1]}),
    ("torus_large", {"shape": "torus", "major_radius": 0.6, "minor_radius": 0.2, "spacing": 0.125}, {"grid": [3, 1, 3]}),
]


# Fig. 1 has about twice the clusters per particle of Fig. 9: the same shapes, finer cluster grids
CATALOGUE_TEASER = [
    ("box_small", {"shape": "box", "size": [0.5, 0.5, 0.5], "resolution": [4, 4, 4]}, {"grid": [2, 1, 1]}),
    ("box_medium", {"shape": "box", "size": [0.8, 0.8, 0.8], "resolution": [5, 5, 5]}, {"grid": [2, 2, 2]}),
    ("box_large", {"shape": "box", "size": [1.0, 1.0, 1.0], "resolution": [6, 6, 6]}, {"grid": [2, 2, 2]}),
    ("plank", {"shape": "box", "size": [1.2, 0.3, 0.3], "resolution": [9, 3, 3]}, {"grid": [6, 1, 1]}),
    ("slab", {"shape": "box", "size": [1.0, 0.3, 1.0], "resolution": [7, 3, 7]}, {"grid": [3, 1, 3]}),
    ("sphere_large", {"shape": "sphere", "radius": 0.5, "spacing": 0.125}, {"grid": [3, 3, 3], "overlap": 0.5}),
    ("capsule_long", {"shape": "capsule", "radius": 0.15, "length": 1.2, "spacing": 0.1}, {"grid": [8, 1, 1]}),
    ("torus_large", {"shape": "torus", "major_radius": 0.6, "minor_radius": 0.2, "spacing": 0.125}, {"grid": [4, 1, 4]}),
]

# The sphere mesh of Debian's assimp-testmodels (radius 0.01 m as assimp loads it, centred), drawn
# as the skinned surface of the spheres of fig9_massive.
SPHERE_MESH = "/usr/share/assimp/models/Collada/sphere.dae"
SPHERE_MESH_RADIUS = 0.01

FIGURES = {
    "paper384": {"objects": 384, "clusters": 2448, "particles": 55200, "catalogue": CATALOGUE, "min": 16, "max": 48,
                 "grid": (12, 8, 4), "seed": 384, "name": "paper384", "out": "scenes/paper384.json", "skins": False},
    "fig9": {"objects": 384, "clusters": 2448, "particles": 55200, "catalogue": CATALOGUE, "min": 16, "max": 48,
             "grid": (12, 8, 4), "seed": 384, "name": "fig9_massive", "out": "scenes/paper/fig9_massive.json", "skins": True},
    "fig1": {"objects": 145, "clusters": 1728, "particles": 24618, "catalogue": CATALOGUE_TEASER, "min": 1, "max": 48,
             "grid": (8, 6, 4), "seed": 145, "name": "fig1_teaser", "out": "scenes/paper/fig1_teaser.json", "skins": False},
}


def bounding_radius(shape):
    """Radius of a sphere about the object's origin that holds the whole shape, m."""
    kind = shape["shape"]
    if kind == "box":
        return 0.5 * math.sqrt(sum(s * s for s in shape["size"]))
    if kind == "sphere":
        return shape["radius"]
    if kind == "capsule":
        return 0.5 * shape["length"] + shape["radius"]
    if kind == "torus":
        return shape["major_radius"] + shape["minor_radius"]
    raise ValueError(kind)


def type_object(name, shape, clusters):
    obj = {"name": name}
    obj.update(shape)
    if clusters != {"grid": [1, 1, 1]}:
        obj["clusters"] = clusters
    return obj


def measure(shapematch):
    """(particles, clusters) of every catalogue type, as the library samples them."""
    scene = {"objects": [type_object(n, s, c) for n, s, c in CATALOGUE]}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "catalogue.json")
        with open(path, "w") as f:
            json.dump(scene, f)
        run = subprocess.run([shapematch, "info", path], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit("make_paper384: shapematch info failed on the catalogue:\n" + run.stderr)
    sizes = {}
    for line in run.stdout.splitlines():
        m = re.match(r'object \d+ "([^"]+)" .*particles=(\d+) clusters=(\d+)', line)
        if m:
            sizes[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    missing = [n for n, _, _ in CATALOGUE if n not in sizes]
    if missing:
        sys.exit("make_paper384: no size for %s in:\n%s" % (missing, run.stdout))
    return [sizes[n] for n, _, _ in CATALOGUE]


def det3(m):
    return (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
            m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))


def solve3(m, rhs):
    """Cramer's rule in exact fractions."""
    d = det3(m)
    out = []
    for col in range(3):
        mc = [row[:] for row in m]
        for r in range(3):
            mc[r][col] = rhs[r]
        out.append(Fraction(det3(mc), d))
    return out


def solve_counts(sizes, rng, draws=100000, spread=6):
    """Integer counts per type with the exact totals, every count in [MIN_COUNT, MAX_COUNT];
    of the solutions found, the one closest to an even mix."""
    t = len(sizes)
    rows = [[1] * t, [c for _, c in sizes], [p for p, _ in sizes]]
    targets = [TARGET_OBJECTS, TARGET_CLUSTERS, TARGET_PARTICLES]
    even = Fraction(TARGET_OBJECTS, t)

    # the real-valued mix nearest to an even one: x = even + A^T (A A^T)^-1 (b - A even)
    gram = [[sum(Fraction(rows[i][k] * rows[j][k]) for k in range(t)) for j in range(3)] for i in range(3)]
    residual = [targets[i] - even * sum(rows[i]) for i in range(3)]
    y = solve3(gram, residual)
    ideal = [even + sum(rows[i][k] * y[i] for i in range(3)) for k in range(t)]
    if min(ideal) < MIN_COUNT or max(ideal) > MAX_COUNT:
        sys.exit("make_paper384: the catalogue cannot meet the totals with an even mix (ideal counts %s)" %
                 [round(float(v), 1) for v in ideal])

    # three "solver" types take up the remainder exactly: the triple whose 3x3 system has the
    # smallest determinant, so that many draws have an integer solution
    best = None
    for a in range(t):
        for b in range(a + 1, t):
            for c in range(b + 1, t):
                det = abs(det3([[rows[i][a], rows[i][b], rows[i][c]] for i in range(3)]))
                if det != 0 and (best is None or det < best[0]):
                    best = (det, (a, b, c))
    solver = best[1]
    matrix = [[rows[i][k] for k in solver] for i in range(3)]
    others = [k for k in range(t) if k not in solver]

    found = None
    for _ in range(draws):
        counts = [0] * t
        for k in others:
            counts[k] = min(MAX_COUNT, max(MIN_COUNT, round(ideal[k]) + rng.randint(-spread, spread)))
        rest = [targets[i] - sum(rows[i][k] * counts[k] for k in range(t)) for i in range(3)]
        solution = solve3(matrix, rest)
        if any(v.denominator != 1 or not MIN_COUNT <= v <= MAX_COUNT for v in solution):
            continue
        for k, v in zip(solver, solution):
            counts[k] = int(v)
        score = sum((n - even) ** 2 for n in counts)
        if found is None or score < found[0]:
            found = (score, counts)
    if found is None:
        sys.exit("make_paper384: no integer mix of the catalogue meets the totals; widen MIN_COUNT/MAX_COUNT")
    counts = found[1]
    for i in range(3):
        assert sum(rows[i][k] * counts[k] for k in range(t)) == targets[i]
    return counts


def r(x, digits=3):
    v = round(x, digits)
    return 0.0 if v == 0 else v


def build_objects(counts, sizes, rng):
    kinds = []
    for k, n in enumerate(counts):
        kinds += [k] * n
    rng.shuffle(kinds)
    objects = []
    serial = [0] * len(CATALOGUE)
    for cell, k in enumerate(kinds):
        name, shape, clusters = CATALOGUE[k]
        particles = sizes[k][0]
        radius = bounding_radius(shape)
        gx, gz, layer = cell % GRID_X, (cell // GRID_X) % GRID_Z, cell // (GRID_X * GRID_Z)
        slack = 0.5 * CELL - radius - 0.05  # jitter that keeps the object inside its cell
        x = (gx - (GRID_X - 1) / 2) * CELL + rng.uniform(-slack, slack)
        z = (gz - (GRID_Z - 1) / 2) * CELL + rng.uniform(-slack, slack)
        # the bounding sphere's lowest point starts 0.25 m up in the first layer, 2 m higher in each next
        y = radius + 0.25 + CELL * layer + rng.uniform(0.0, 0.2)
        quadratic = rng.random() < QUADRATIC_SHARE
        obj = {"name": "%s_%d" % (name, serial[k])}
        serial[k] += 1
        obj.update(shape)
        if clusters != {"grid": [1, 1, 1]}:
            obj["clusters"] = clusters
        obj["position"] = [r(x), r(y), r(z)]
        obj["rotation"] = [r(rng.uniform(0, 360), 1), r(rng.uniform(0, 360), 1), r(rng.uniform(0, 360), 1)]
        obj["angular_velocity"] = [r(rng.uniform(-1.5, 1.5), 2) for _ in range(3)]
        obj["mass"] = r(0.01 * particles, 2)  # 10 g per particle
        obj["mode"] = "quadratic" if quadratic else "linear"
        obj["alpha"] = r(rng.uniform(0.3, 0.8), 2)
        obj["beta"] = r(rng.uniform(0.2, 0.6), 2)
        # the soft cap on the linear fit keeps the hardest impacts from swelling an object
        # (without it a few dozen objects with volume preservation and beta > 0.5 do)
        obj["cap"] = {"soft": 4, "hard": 6}
        obj["damping"] = 0.75
        if SKINS and shape["shape"] == "sphere":
            obj["surface"] = {"mesh": SPHERE_MESH, "scale": r(shape["radius"] / SPHERE_MESH_RADIUS, 4)}
        objects.append(obj)
    return objects


def write_scene(path, objects, figure):
    what = {"paper384": "The massive scene of Mueller et al. 2005, Fig. 9",
            "fig9_massive": "The massive scene of Mueller et al. 2005, Fig. 9, its spheres drawn with a skinned mesh surface",
            "fig1_teaser": "The teaser of Mueller et al. 2005, Fig. 1"}[figure]
    head = {
        "name": figure,
        "description": ("%s: %d objects, %d clusters and %d particles, "
                        "mostly quadratic shape matching with a soft deformation cap, dropped in %s layers onto the ground and onto each other "
                        "with contact between objects on, so that they settle into a pile. "
                        "Generated by scenes/tools/make_paper384.py; do not edit by hand.")
        % (what, TARGET_OBJECTS, TARGET_CLUSTERS, TARGET_PARTICLES, {3: "three", 4: "four", 5: "five"}.get(LAYERS, LAYERS)),
        "dt": 1.0 / 60.0,
        # contact needs substeps: a heavy pile pushes more through a contact in one solver step
        # than two sweeps remove at 60 Hz (see docs/contact.md)
        "substeps": 3,
        "steps": 600,
        "gravity": [0, -9.81, 0],
        "ground": {"height": 0, "restitution": 0.2, "friction": 0.4},
        "collisions": {"iterations": 2, "radius_scale": 1.5, "restitution": 0.2, "friction": 0.4},
    }
    lines = ["{"]
    for key, value in head.items():
        lines.append("  %s: %s," % (json.dumps(key), json.dumps(value)))
    lines.append('  "objects": [')
    for i, obj in enumerate(objects):
        lines.append("    " + json.dumps(obj) + ("," if i + 1 < len(objects) else ""))
    lines.append("  ]")
    lines.append("}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--figure", choices=sorted(FIGURES), default="paper384", help="which scene (default paper384)")
    parser.add_argument("--shapematch", default=os.path.join(ROOT, "build", "shapematch"),
                        help="the built shapematch command (default: build/shapematch in the repository)")
    parser.add_argument("--out", help="scene file to write (default: the figure's file in scenes/)")
    parser.add_argument("--seed", type=int, help="random seed (default: the figure's)")
    args = parser.parse_args()
    global CATALOGUE, TARGET_OBJECTS, TARGET_CLUSTERS, TARGET_PARTICLES, MIN_COUNT, MAX_COUNT, GRID_X, GRID_Z, LAYERS, SKINS
    figure = FIGURES[args.figure]
    CATALOGUE = figure["catalogue"]
    TARGET_OBJECTS, TARGET_CLUSTERS, TARGET_PARTICLES = figure["objects"], figure["clusters"], figure["particles"]
    MIN_COUNT, MAX_COUNT = figure["min"], figure["max"]
    GRID_X, GRID_Z, LAYERS = figure["grid"]
    SKINS = figure["skins"]
    out = args.out or os.path.join(ROOT, figure["out"])
    seed = args.seed if args.seed is not None else figure["seed"]
    if not os.access(args.shapematch, os.X_OK):
        sys.exit("make_paper384: %s is not an executable; build the project or pass --shapematch PATH" % args.shapematch)

    sizes = measure(args.shapematch)
    rng = random.Random(seed)
    counts = solve_counts(sizes, rng)
    objects = build_objects(counts, sizes, rng)
    write_scene(out, objects, figure["name"])

    print("%-14s %5s %9s %8s" % ("type", "count", "particles", "clusters"))
    for (name, _, _), (p, c), n in zip(CATALOGUE, sizes, counts):
        print("%-14s %5d %9d %8d" % (name, n, p, c))
    print("wrote %s: objects=%d clusters=%d particles=%d" % (
        out, sum(counts), sum(n * c for n, (_, c) in zip(counts, sizes)),
        sum(n * p for n, (p, _) in zip(counts, sizes))))


if __name__ == "__main__":
    main()
