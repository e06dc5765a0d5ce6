#!/usr/bin/env python3
"""Writes the seed inputs of fuzz_objects (tests/fuzz/corpus/objects): byte sequences in the
harness's format (fuzz_objects.c, fuzz_common.h) that build small valid worlds and call each
part of the API once, for the fuzzer to mutate from. Run it again after changing the format:

    python3 tests/fuzz/make_object_seeds.py tests/fuzz/corpus/objects
"""
import math
import os
import struct
import sys

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, 0.25, 2.0, 3.0, 4.0, 6.0, 10.0, 0.1, 1e-9, 1e-12, 1e-300, 5e-324,
           1e6, 1e12, 1e300, -1e300, 1.7976931348623157e308, math.inf, -math.inf, math.nan]
OPS = ["add_object", "step", "set_positions", "set_velocities", "set_force", "set_target", "set_params",
       "reset_object", "set_pusher", "add_collider", "cut", "query"]


class Seed:
    def __init__(self):
        self.out = bytearray()

    def u8(self, v):
        self.out.append(v & 0xFF)

    def u32(self, v):
        self.out += struct.pack("<I", v & 0xFFFFFFFF)

    def i32(self, v):
        self.out += struct.pack("<i", v)

    def small(self, v, lo=-1):
        """fuzz_int(): lo + (byte & 15)."""
        assert lo <= v <= lo + 15
        self.u8(v - lo)

    def double(self, v):
        """fuzz_double(): a multiple of 1/16 in [-5, 5) as one byte, a special value, else raw."""
        if v == v and -5 <= v < 5 and (v * 16).is_integer() and not (v == 0 and math.copysign(1, v) < 0):
            self.u8(int(144 + v * 16))
        elif v in SPECIAL and v == v:
            self.u8(SPECIAL.index(v))
        elif v != v:
            self.u8(23)
        else:
            self.u8(0xF0)
            self.out += struct.pack("<d", v)

    def vec3(self, v):
        for x in v:
            self.double(x)

    def op(self, name):
        self.u8(OPS.index(name))


def world(s, gravity=None, ground=None, collisions=None):
    flags = (1 if gravity else 0) | (2 if ground else 0) | (4 if collisions else 0)
    s.u8(flags)
    if gravity:
        s.vec3(gravity)
    if ground:
        s.vec3(ground)  # height, restitution, friction
    if collisions:
        # (the last: the skin, a setting since removed, which fuzz_objects.c reads and drops)
        iterations, radius_scale, restitution, friction, skin = collisions
        s.small(iterations)
        for x in (radius_scale, restitution, friction, skin):
            s.double(x)


def triangle_mesh(s, vertices, triangles):
    """A mesh as fill_shape() and fill_object_def()'s surface take it: the counts, the vertices, the corners."""
    s.u8(len(vertices))
    s.u8(len(triangles))
    for v in vertices:
        s.vec3(v)
    for t in triangles:
        for i in t:
            s.u8(i + 1)  # take_indices(): byte % (limit + 2) - 1


def object_def(s, shape, position=None, mode=None, clusters=None, plasticity=None, cap=None, fixed=None,
               surface=None, velocity=None, damping=None, name=None):
    """shape: ("box", size, resolution) | ("sphere"|"capsule"|"torus", radius, length, major, minor, spacing)
    | ("points", points, masses) | ("mesh", vertices, triangles, lattice_spacing or None)."""
    kind = shape[0]
    types = {"points": 0, "box": 1, "sphere": 2, "capsule": 3, "torus": 4, "mesh": 5}
    s.u8(types[kind])
    if kind == "box":
        s.u8(3)
        s.vec3(shape[1])
        for r in shape[2]:
            s.small(r)
    elif kind in ("sphere", "capsule", "torus"):
        s.u8(31)
        for x in shape[1:6]:
            s.double(x)
    elif kind == "points":
        points, masses = shape[1], shape[2]
        s.u8(6 if masses else 0)
        s.u8(len(points))
        for p in points:
            s.vec3(p)
        for m in masses or []:
            s.double(m)
    else:
        vertices, triangles, spacing = shape[1], shape[2], shape[3]
        fields = 8 if spacing else 0  # spacing, and mesh_particles (fields >> 1) % 3 = 1: the lattice
        s.u8(fields)
        triangle_mesh(s, vertices, triangles)
        if spacing:
            s.double(spacing)
    bits = ((1 << 0) if position else 0) | ((1 << 2) if velocity else 0) | ((1 << 5) if mode is not None else 0) \
        | ((1 << 10) if clusters else 0) | ((1 << 11) if plasticity else 0) | ((1 << 12) if cap else 0) \
        | ((1 << 13) if damping is not None else 0) | ((1 << 14) if fixed else 0) \
        | ((1 << 18) if surface else 0) | ((1 << 21) if name else 0)
    s.u32(bits)
    if position:
        s.vec3(position)
    if velocity:
        s.vec3(velocity)
    if mode is not None:
        s.u8(["rigid", "linear", "quadratic"].index(mode))
    if clusters:
        if clusters[0] == "grid":
            s.u8(2 | 4)
            for g in clusters[1]:
                s.small(g, 0)
            s.double(clusters[2])
        else:
            lists = clusters[1]
            flat = [i for l in lists for i in l]
            s.u8(1)
            s.u8(len(lists))
            s.u8(len(flat))
            for i in flat:
                s.u8(i + 1)
            for l in lists:
                s.u8(len(l))  # offset step (byte & 7)
    if plasticity:
        s.u8(1)
        for x in plasticity:
            s.double(x)
    if cap:
        s.u8(1)
        s.double(cap[0])
        s.double(cap[1])
    if damping is not None:
        s.double(damping)
    if fixed:
        s.u8(len(fixed))
        for i in fixed:
            s.u8(i + 1)
    if surface:
        triangle_mesh(s, *surface)
        s.u8(1)  # enabled
    if name:
        s.u8(len(name))
        for c in name.encode():
            s.u8(c)
    s.u8(1)  # receive the index


def step(s, dt, substeps):
    s.op("step")
    s.double(dt)
    s.u8(substeps + 2)


CUBE_V = [(-0.5, -0.5, -0.5), (0.5, -0.5, -0.5), (0.5, 0.5, -0.5), (-0.5, 0.5, -0.5),
          (-0.5, -0.5, 0.5), (0.5, -0.5, 0.5), (0.5, 0.5, 0.5), (-0.5, 0.5, 0.5)]
CUBE_T = [(0, 2, 1), (0, 3, 2), (4, 5, 6), (4, 6, 7), (0, 1, 5), (0, 5, 4),
          (2, 3, 7), (2, 7, 6), (1, 2, 6), (1, 6, 5), (0, 4, 7), (0, 7, 3)]


def seeds():
    s = Seed()  # a box dropped on the ground
    world(s, ground=(0.0, 0.5, 0.25))
    s.op("add_object")
    object_def(s, ("box", (1.0, 1.0, 1.0), (4, 4, 4)), position=(0.0, 2.0, 0.0))
    for _ in range(3):
        step(s, 1 / 60, 1)
    yield "box_ground", s

    s = Seed()  # two colliding quadratic spheres with plasticity and a cap, cut and queried
    world(s, collisions=(2, 1.0, 0.25, 0.5, 0.5))
    s.op("add_object")
    object_def(s, ("sphere", 0.5, 1.0, 0.5, 0.25, 0.25), position=(0.0, 1.0, 0.0), mode="quadratic",
               clusters=("grid", (2, 2, 2), 0.25), plasticity=(0.1, 4.0, 0.5), cap=(4.0, 6.0))
    s.op("add_object")
    object_def(s, ("sphere", 0.5, 1.0, 0.5, 0.25, 0.25), position=(0.75, 2.0, 0.0), velocity=(0.0, -2.0, 0.0))
    step(s, 1 / 60, 2)
    s.op("cut")
    s.u8(0)
    s.vec3((0.0, 1.0, 0.0))
    s.vec3((1.0, 0.5, 0.25))
    s.u8(2)  # with a particle map and the info
    for q, args in ((0, [0]), (1, [0]), (2, [0]), (3, []), (4, [0, 0, 0]), (5, [0]), (6, [0]), (7, [0, 0, 0]), (10, [])):
        s.op("query")
        s.u8(q)
        for a in args:
            s.u8(a)  # the field, a first particle of 0 and the rest of the range
    step(s, 1 / 60, 1)
    yield "spheres_cut", s

    s = Seed()  # points with masses, explicit clusters, fixed particles, a target and a force
    world(s, gravity=(0.0, -2.0, 0.0))
    s.op("add_object")
    pts = [(0.0, 0.0, 0.0), (0.25, 0.0, 0.0), (0.0, 0.25, 0.0), (0.0, 0.0, 0.25), (0.25, 0.25, 0.25), (0.5, 0.0, 0.0)]
    object_def(s, ("points", pts, [1.0, 2.0, 1.0, 1.0, 0.5, 0.25]), clusters=("lists", [[0, 1, 2, 3], [1, 2, 3, 4, 5]]),
               fixed=[0], damping=0.5, name="pts")
    s.op("set_target")
    s.u8(4)
    s.vec3((0.0, 1.0, 0.0))
    s.double(10.0)
    s.op("set_force")
    s.u8(5)
    s.vec3((1.0, 0.0, 0.0))
    step(s, 0.01, 3)
    s.op("set_positions")
    s.u8(0)
    s.u8(0)  # the whole range
    for i in range(12):
        s.double(i / 16)
    step(s, 0.01, 1)
    yield "points_lists", s

    s = Seed()  # a closed mesh filled with a lattice, with its own surface, cut through
    world(s, ground=(-1.0, 0.25, 0.25))
    s.op("add_object")
    object_def(s, ("mesh", CUBE_V, CUBE_T, 0.25), mode="linear", clusters=("grid", (2, 1, 1), 0.25))
    step(s, 1 / 60, 1)
    s.op("cut")
    s.u8(0)
    s.vec3((0.0, 0.0, 0.0))
    s.vec3((1.0, 0.25, 0.0))
    s.u8(2)
    step(s, 1 / 60, 1)
    s.op("query")
    s.u8(5)
    s.u8(0)  # the surface triangles of object 0
    yield "mesh_lattice_cut", s

    s = Seed()  # a box under a hollow surface (a cube in a cube, the inner one turned inside out), cut across
    inner = [(x * 0.5, y * 0.5, z * 0.5) for x, y, z in CUBE_V]
    hollow_t = CUBE_T + [(c + 8, b + 8, a + 8) for a, b, c in CUBE_T]
    world(s)
    s.op("add_object")
    object_def(s, ("box", (1.0, 1.0, 1.0), (4, 4, 4)), mode="quadratic", clusters=("grid", (2, 2, 1), 0.25),
               surface=(CUBE_V + inner, hollow_t))
    for normal in ((0.125, 1.0, 0.0625), (1.0, 0.0, 0.0)):
        s.op("cut")
        s.u8(0)
        s.vec3((0.0, 0.0, 0.0))
        s.vec3(normal)
        s.u8(2)
    step(s, 1 / 60, 1)
    yield "hollow_surface_cut", s

    s = Seed()  # a capsule and a torus, a box with a skinned surface, colliders, a pusher, edits
    world(s, ground=(0.0, 0.5, 0.5))
    s.op("add_object")
    object_def(s, ("capsule", 0.25, 1.0, 0.5, 0.25, 0.25), position=(0.0, 1.0, 0.0), mode="rigid")
    s.op("add_object")
    object_def(s, ("torus", 0.5, 1.0, 0.5, 0.25, 0.125), position=(2.0, 1.0, 0.0))
    s.op("add_object")
    object_def(s, ("box", (1.0, 1.0, 1.0), (3, 3, 3)), position=(-2.0, 1.0, 0.0),
               surface=(CUBE_V, CUBE_T))
    s.op("add_collider")
    s.u8(0)  # plane
    s.u8(2)
    s.vec3((0.0, 1.0, 0.25))
    s.op("add_collider")
    s.u8(1)  # box with linear motion
    s.u8(1 | 8 | 64)
    s.vec3((0.0, 2.0, 0.0))
    s.vec3((2.0, 0.25, 2.0))
    s.u8(1 | (3 << 2))
    for t, o in ((0.0, (0.0, 0.0, 0.0)), (0.5, (0.0, -1.0, 0.0)), (1.0, (0.0, 0.0, 0.0))):
        s.double(t)
        s.vec3(o)
    s.vec3((0.0, 0.0, 0.0))
    s.double(0.0)
    s.double(0.0)
    s.op("add_collider")
    s.u8(2)  # sphere with sinusoidal motion
    s.u8(16 | 64)
    s.double(0.5)
    s.u8(2)
    s.vec3((0.5, 0.0, 0.0))
    s.double(2.0)
    s.double(0.0)
    s.op("set_pusher")
    s.vec3((0.0, 1.0, 0.0))
    s.double(0.5)
    s.vec3((1.0, 0.0, 0.0))
    step(s, 1 / 60, 2)
    s.op("set_params")
    s.u8(0)
    s.u8(1 | 2 | 64)
    s.u8(2)  # quadratic
    s.double(0.25)
    step(s, 1 / 60, 1)
    s.op("reset_object")
    s.u8(1)
    step(s, 1 / 60, 1)
    yield "shapes_colliders", s


if __name__ == "__main__":
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "objects")
    os.makedirs(folder, exist_ok=True)
    for name, seed in seeds():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(bytes(seed.out))
