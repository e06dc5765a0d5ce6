#!/usr/bin/env python3
"""Free flights of clusters scrambled about: the energy the step keeps, and whether fits invert.
Two disjoint clusters of 20 random points each, scrambled by 30% of their size and thrown at random
(a normal velocity of 0.5 m/s an axis), fly free for 1,000 steps of 1/60 s at alpha and beta 0.5,
in every mode, volume preservation off, strain_limit 2 and 10, on the CPU reference.

The measure is the one symplectic Euler keeps for a pull of the step's stiffness (docs/measured.md,
"From scrambled starts"): sum of m (u^2 - alpha d.u + alpha P) with u = h v, d the distance from
the blended goal and P = (1 - beta) |x - g_R|^2 + beta |x - g_A|^2, g_R the placement by the
closest rotation and g_A by the least-squares fit (linear or quadratic): the potential whose pull
the goals are while the deformation limit does not act. Kinetic energy over its start would count
what the scramble stored as gained (117 to 224 times here).

usage: torn_flights.py [--seeds N]

Prints, for each mode and limit, the largest of that energy over its start for seeds 1 to N
(default 4), and the cluster steps whose match was inverted. Needs numpy and the Python package
(python/shapematch, over build/host/libshapematch.so).
"""
import argparse
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import shapematch  # noqa: E402  pylint: disable=wrong-import-position

CLUSTERS = (slice(0, 20), slice(20, 40))


def closest_rotation(a):
    """The proper rotation closest to a."""
    u, _, vt = np.linalg.svd(a)
    d = np.eye(3)
    d[2, 2] = np.sign(np.linalg.det(u @ vt))
    return u @ d @ vt


def quadratic_terms(q):
    x, y, z = q.T
    return np.c_[x, y, z, x * x, y * y, z * z, x * y, y * z, z * x]


def flight(seed, mode, strain_limit, alpha=0.5, beta=0.5, h=1.0 / 60.0):
    """The largest kept energy over its start, and the inverted cluster steps, in one flight."""
    rng = np.random.default_rng(seed)
    points = np.c_[rng.uniform(-0.5, 0.5, 40), rng.uniform(-0.4, 0.4, 40), rng.uniform(-0.3, 0.3, 40)]
    masses = rng.uniform(0.5, 2.0, 40)
    body = {"shape": "points", "points": points.tolist(), "masses": masses.tolist(), "mode": mode, "alpha": alpha,
            "beta": beta, "volume_preservation": False, "strain_limit": strain_limit,
            "clusters": {"lists": [list(range(20)), list(range(20, 40))]}}
    world = shapematch.Scene.from_dict({"gravity": [0, 0, 0], "objects": [body]}).world(backend="cpu")
    x = np.asarray(world.positions)
    rest = np.asarray(world.rest_positions)
    size = np.ptp(x, axis=0).max()
    world.positions = x + rng.uniform(-0.3 * size, 0.3 * size, x.shape)
    world.velocities = rng.normal(0.0, 0.5, x.shape)
    m = np.asarray(world.masses)
    fit_share = 0.0 if mode == "rigid" else beta

    def kept():
        x, v = np.asarray(world.positions), np.asarray(world.velocities)
        energy, inverted = 0.0, 0
        for idx in CLUSTERS:
            xs, vs, ms, q = x[idx], v[idx], m[idx], rest[idx]
            p = xs - (ms[:, None] * xs).sum(0) / ms.sum()
            q = q - (ms[:, None] * q).sum(0) / ms.sum()
            apq = (ms[:, None, None] * p[:, :, None] * q[:, None, :]).sum(0)
            inverted += np.linalg.det(apq) < 0
            d_rot = p - q @ closest_rotation(apq).T
            terms = quadratic_terms(q) if mode == "quadratic" else q
            terms = terms - (ms[:, None] * terms).sum(0) / ms.sum()
            w = np.sqrt(ms)[:, None]
            fit = np.linalg.lstsq(w * terms, w * p, rcond=None)[0]
            d_fit = p - terms @ fit
            u = h * vs
            d = (1 - fit_share) * d_rot + fit_share * d_fit
            potential = (1 - fit_share) * d_rot * d_rot + fit_share * d_fit * d_fit
            energy += (ms[:, None] * (u * u - alpha * d * u + alpha * potential)).sum()
        return energy, inverted

    start, inverted = kept()
    most = 0.0
    for _ in range(1000):
        world.step(1, dt=h, substeps=1)
        energy, inv = kept()
        most, inverted = max(most, energy / start), inverted + inv
    world.close()
    return most, inverted


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=4)
    args = parser.parse_args()
    for mode in ("rigid", "linear", "quadratic"):
        for strain_limit in (2.0, 10.0):
            runs = [flight(seed, mode, strain_limit) for seed in range(1, args.seeds + 1)]
            print(f"{mode:9s} strain_limit {strain_limit:4.1f}: kept energy at most "
                  + " ".join(f"{most:.5f}" for most, _ in runs) + " of its start; inverted cluster steps "
                  + " ".join(str(inv) for _, inv in runs), flush=True)


if __name__ == "__main__":
    main()
