#!/usr/bin/env python3
"""How much the particles of a scene move in single solver steps, frame by frame: the measure of
a pile's vibration, and of whether contact's candidate lists could be kept across the solver
steps of a frame: lists found with a margin, a skin, around each particle stay valid while no
particle moves more than half of it.

usage: pile_motion.py [SCENE.json] [--frames F ...] [--backend opencl|cpu] [--skin S]
       (default: scenes/paper384.json, frames 60 120 240 400, a skin of 0.5 times the largest
       particle radius)

At each frame F (after F steps of the scene) it runs the scene's solver steps of the next frame
one at a time and prints, for each: the largest move of a particle and the particles that moved
more than 0.01 m and more than half the skin; then the move over the whole frame. Needs numpy and
the Python package (python/shapematch, over build/host/libshapematch.so).
"""
import argparse
import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import shapematch  # noqa: E402  pylint: disable=wrong-import-position


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scene", nargs="?", default=os.path.join(ROOT, "scenes", "paper384.json"))
    parser.add_argument("--frames", type=int, nargs="+", default=[60, 120, 240, 400])
    parser.add_argument("--backend", default="opencl")
    parser.add_argument("--skin", type=float, default=0.5, help="the margin, times the largest particle radius")
    args = parser.parse_args()
    with open(args.scene, encoding="utf-8") as f:
        data = json.load(f)
    scene = shapematch.Scene.load(args.scene)
    world = scene.world(backend=args.backend)
    dt, substeps = data.get("dt", 1 / 60), data.get("substeps", 1)
    h = dt / substeps
    # the skin in metres
    largest = max(o["particle_radius"] for o in world.objects)
    skin = args.skin * largest
    print(f"{os.path.basename(args.scene)}: {world.particle_count} particles, {substeps} solver steps of {h:.5f} s a frame,"
          f" skin {skin:.4f} m, backend {world.backend}")
    done = 0
    for frame in sorted(args.frames):
        world.step(frame - done)
        start = world.positions.copy()
        moves = []
        for _ in range(substeps):
            before = world.positions.copy()
            world.step(1, dt=h, substeps=1)
            step = np.linalg.norm(world.positions - before, axis=1)
            moves.append(f"{step.max():.4f} m ({int((step > 0.01).sum())} > 0.01 m, {int((step > 0.5 * skin).sum())} > skin/2)")
        whole = np.linalg.norm(world.positions - start, axis=1)
        done = frame + 1
        print(f"frame {frame}: largest move per solver step " + "; ".join(moves) +
              f"; over the frame {whole.max():.4f} m, {int((whole > 0.5 * skin).sum())} particles > skin/2")


if __name__ == "__main__":
    main()
