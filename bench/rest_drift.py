#!/usr/bin/env python3
"""How still an object at rest stays, at solver steps from 1e-2 to 1e-5 s: the speed of its
centre of mass and the largest speed of a particle after a second without gravity, on OpenCL
and on the CPU reference. At rest every rounding repeats every step, and alpha / h times it is
added to the velocities each step, so what float rounding is left shows here first
(docs/opencl.md, "Objects at rest").

usage: rest_drift.py [--backend opencl|cpu|both] [--seconds S]

Objects: a cloud of 30 points (seeded, 0.7 m across) in linear mode, as made and turned by 30 and
90 degrees about z (its positions, before the steps), and a box of 3 x 3 x 3 particles in
quadratic mode. Needs numpy and the Python package (python/shapematch, over
build/host/libshapematch.so).
"""
import argparse
import os
import random
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import shapematch  # noqa: E402  pylint: disable=wrong-import-position


def objects():
    """(name, object, degrees turned about z)"""
    rng = random.Random(3)
    cloud = {"shape": "points", "points": [[rng.uniform(-0.5, 0.5) for _ in range(3)] for _ in range(30)],
             "mode": "linear"}
    return [("cloud of 30, linear", cloud, 0), ("cloud of 30, linear, turned 30 deg", cloud, 30),
            ("cloud of 30, linear, turned 90 deg", cloud, 90),
            ("box 3x3x3, quadratic", {"shape": "box", "resolution": [3, 3, 3], "mode": "quadratic"}, 0)]


def turn(world, degrees):
    """Turns the world's particles about their centre by `degrees` about z."""
    x = world.positions
    c = x.mean(axis=0)
    a = np.radians(degrees)
    r = np.array([[np.cos(a), -np.sin(a), 0.0], [np.sin(a), np.cos(a), 0.0], [0.0, 0.0, 1.0]])
    world.positions = (x - c) @ r.T + c


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=["opencl", "cpu", "both"], default="both")
    parser.add_argument("--seconds", type=float, default=1.0)
    args = parser.parse_args()
    backends = ["opencl", "cpu"] if args.backend == "both" else [args.backend]
    print("| object | h (s) | backend | centre of mass (m/s) | fastest particle (m/s) |")
    print("|---|---|---|---|---|")
    for name, obj, degrees in objects():
        for h in (1e-2, 1e-3, 1e-4, 1e-5):
            substeps = max(1, int(round(0.01 / h)))
            steps = int(round(args.seconds / 0.01))
            for backend in backends:
                with shapematch.World.from_objects([obj], backend=backend, gravity=[0, 0, 0], dt=0.01,
                                                   substeps=substeps) as world:
                    if degrees:
                        turn(world, degrees)
                    world.step(steps)
                    v, m = world.velocities, world.masses
                    com = np.linalg.norm((m[:, None] * v).sum(axis=0) / m.sum())
                    fastest = np.linalg.norm(v, axis=1).max()
                    print("| %s | %g | %s | %.3g | %.3g |" % (name, h, backend, com, fastest), flush=True)


if __name__ == "__main__":
    main()
