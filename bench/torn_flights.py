#!/usr/bin/env python3
"""Free flights of clusters torn through themselves: how much kinetic energy two disjoint
clusters of 20 random points each gain when scrambled by 30% of their size and thrown at random
(a normal velocity of 0.5 m/s an axis), flying free for 1,000 steps of 1/60 s at alpha and beta
0.5, in every mode, volume by the nearest fit or off, strain_limit 2 and 10, on the CPU
reference. Their fits invert, and an inverted cluster keeps the R of its last step
(docs/algorithm.md, step 2), which is not the nearest rotation: the goals are then no potential's
gradient, and the motion grows (docs/measured.md, "Where fits invert, energy can grow").

usage: torn_flights.py [--backend cpu|opencl] [--seeds N]

Prints, for each mode, volume treatment and limit, the largest kinetic energy over its start
for seeds 1 to N (default 3). Needs numpy and the Python package (python/shapematch, over
build/host/libshapematch.so).
"""
import argparse
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import shapematch  # noqa: E402  pylint: disable=wrong-import-position


def flight(seed, mode, volume, strain_limit, backend):
    """The largest kinetic energy over its start in one flight."""
    rng = np.random.default_rng(seed)
    points = np.c_[rng.uniform(-0.5, 0.5, 40), rng.uniform(-0.4, 0.4, 40), rng.uniform(-0.3, 0.3, 40)]
    masses = rng.uniform(0.5, 2.0, 40)
    body = {"shape": "points", "points": points.tolist(), "masses": masses.tolist(), "mode": mode, "alpha": 0.5,
            "beta": 0.5, "volume_preservation": volume, "strain_limit": strain_limit,
            "clusters": {"lists": [list(range(20)), list(range(20, 40))]}}
    world = shapematch.Scene.from_dict({"gravity": [0, 0, 0], "objects": [body]}).world(backend=backend)
    x = np.asarray(world.positions)
    size = np.ptp(x, axis=0).max()
    world.positions = x + rng.uniform(-0.3 * size, 0.3 * size, x.shape)
    world.velocities = rng.normal(0.0, 0.5, x.shape)
    m = np.asarray(world.masses)[:, None]

    def kinetic():
        v = np.asarray(world.velocities)
        return 0.5 * float((m * v * v).sum())

    start = most = kinetic()
    for _ in range(1000):
        world.step(1, dt=1.0 / 60.0, substeps=1)
        most = max(most, kinetic())
    world.close()
    return most / start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="cpu", choices=["cpu", "opencl"])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    for mode in ("rigid", "linear", "quadratic"):
        for volume in (True, False):
            for strain_limit in (2.0, 10.0):
                gains = [flight(seed, mode, volume, strain_limit, args.backend) for seed in range(1, args.seeds + 1)]
                print(f"{mode:9s} volume {str(volume):5s} strain_limit {strain_limit:4.1f}: "
                      + " ".join(f"{g:7.1f}" for g in gains), flush=True)


if __name__ == "__main__":
    main()
