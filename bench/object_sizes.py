#!/usr/bin/env python3
"""Per-frame size of every object in a trajectory, relative to its initial size.

usage: object_sizes.py SCENE.json TRAJECTORY.npy [--shapematch PATH]

The size of an object is the largest distance of its particles from their centre of mass.
Prints, for each frame, the largest ratio over the objects and how many exceed 1.5.
Needs numpy (apt-get install python3-numpy) and a built shapematch.
"""
import argparse
import subprocess

import numpy as np


def particle_counts(shapematch, scene):
    lines = subprocess.run([shapematch, "info", scene], check=True, capture_output=True, text=True).stdout.splitlines()
    return [int(line.split("particles=")[1].split()[0]) for line in lines[1:] if line.startswith("object ")]


def size(points):
    return np.linalg.norm(points - points.mean(axis=0), axis=1).max()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scene")
    parser.add_argument("trajectory")
    parser.add_argument("--shapematch", default="build/shapematch")
    args = parser.parse_args()
    x = np.load(args.trajectory)
    offsets = np.cumsum([0] + particle_counts(args.shapematch, args.scene))
    if offsets[-1] != x.shape[1]:
        raise SystemExit(f"the scene has {offsets[-1]} particles, the trajectory {x.shape[1]}")
    initial = [size(x[0, a:b]) for a, b in zip(offsets[:-1], offsets[1:])]
    for f in range(x.shape[0]):
        ratios = np.array([size(x[f, a:b]) / s for (a, b), s in zip(zip(offsets[:-1], offsets[1:]), initial)])
        print(f"frame {f:5d}: largest size ratio {ratios.max():.3f}, objects above 1.5: {(ratios > 1.5).sum()},"
              f" finite: {bool(np.isfinite(x[f]).all())}")


if __name__ == "__main__":
    main()
