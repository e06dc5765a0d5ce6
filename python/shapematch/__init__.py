"""shapematch: soft bodies by meshless shape matching (Mueller et al. 2005), from Python.

A thin layer over libshapematch (ctypes): the library computes every step, on the CPU reference or
on an OpenCL device, and this package hands its state over as numpy arrays.

    import shapematch
    with shapematch.Scene.load("scenes/paper384.json") as scene, scene.world(backend="cpu") as world:
        trajectory = world.run(steps=120, every=10)     # (13, 55200, 3) float64

    world = shapematch.World.from_objects([{"shape": "box", "position": [0, 1, 0]}], ground={})
    world.step(60)
    print(world.positions.mean(axis=0))

shapematch.run_batch() runs many variants of a scene on a Dask cluster; shapematch.opencl runs a
world on a pyopencl context and exposes its device state as pyopencl arrays.
"""

from ._native import LIBRARY_PATH
from .batch import run_batch, run_one
from .core import (
    PIN,
    Cancelled,
    Diverged,
    FileError,
    InvalidArgument,
    NotFinite,
    OutOfMemory,
    Scene,
    SceneError,
    ShapematchError,
    Unavailable,
    World,
    apply_overrides,
    compare,
    devices,
)

__all__ = [
    "LIBRARY_PATH",
    "PIN",
    "Cancelled",
    "Diverged",
    "FileError",
    "InvalidArgument",
    "NotFinite",
    "OutOfMemory",
    "Scene",
    "SceneError",
    "ShapematchError",
    "Unavailable",
    "World",
    "apply_overrides",
    "compare",
    "devices",
    "run_batch",
    "run_one",
]
