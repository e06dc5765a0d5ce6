"""A world in your pyopencl pipeline (the C embedding API, shapematch_opencl.h): the world runs on
your context and queue, its device state is a set of pyopencl arrays over its own buffers (no
copy), your buffers feed its forces and targets, and steps chain by events, with no transfer
between host and device.

    import pyopencl as cl, shapematch, shapematch.opencl as smcl
    queue = cl.CommandQueue(cl.create_some_context())
    world = smcl.world_on(shapematch.Scene.load("scenes/pile.json"), queue)
    state = smcl.state(world)                 # state["position"]: pyopencl Array (n, 4) float32
    forces = cl.array.zeros(queue, (n, 4), numpy.float32)
    smcl.set_inputs(world, forces=forces)     # read by every following step
    event = smcl.step(world)                  # enqueued on your queue; returns its event
"""

import ctypes

import numpy as np

from . import _native as N
from . import core

try:
    import pyopencl as cl
    import pyopencl.array  # noqa: F401  pylint: disable=unused-import
except ImportError as _error:  # pragma: no cover - the tests install pyopencl
    raise ImportError("shapematch.opencl needs pyopencl (apt-get install python3-pyopencl, or pip install pyopencl)") from _error

if N.sm_world_get_cl_state is None:  # pragma: no cover
    raise ImportError("shapematch.opencl: %s was built without OpenCL" % N.LIBRARY_PATH)


def world_on(scene, where, profile=False):
    """A World of `scene` (a Scene, a path or a dict) on `where`: a pyopencl CommandQueue (the
    world enqueues its steps on it; it must execute in order, pyopencl's default) or a Context
    (the world makes a queue of its own on the context's first device)."""
    if isinstance(scene, dict):
        scene = core.Scene.from_dict(scene)
    elif not isinstance(scene, core.Scene):
        scene = core.Scene.load(scene)
    if isinstance(where, cl.CommandQueue):
        handles = (where.context.int_ptr, where.device.int_ptr, where.int_ptr)
    elif isinstance(where, cl.Context):
        handles = (where.int_ptr, where.devices[0].int_ptr, None)
    else:
        raise TypeError("world_on needs a pyopencl CommandQueue or Context, got %r" % (where,))
    world = core.World(scene, backend="opencl", profile=profile, opencl=handles)
    queue = where
    if isinstance(where, cl.Context):  # the world's own queue, as a pyopencl object
        queue = cl.CommandQueue.from_int_ptr(N.sm_world_get_cl_queue(world._h()), retain=True)  # pylint: disable=protected-access
    world._queue = queue  # pylint: disable=protected-access
    world._inputs = None  # pylint: disable=protected-access
    return world


def _array(queue, handle, count):
    if not handle or count == 0:
        return None
    buffer = cl.MemoryObject.from_int_ptr(handle, retain=True)
    return cl.array.Array(queue, (count, 4), np.float32, data=buffer)


def queue(world):
    """The pyopencl CommandQueue the world enqueues its steps on."""
    return world._queue  # pylint: disable=protected-access


def state(world):
    """The world's device state as pyopencl arrays over its own buffers (float4 per particle):
    position (w: mass), position_low (the low parts of the double-float positions), velocity,
    goal, and surface_position, surface_normal per surface vertex (None without surfaces).
    Valid until objects are added or the world is cut; your kernels may read them, and write
    velocity (and position, with position_low zeroed) between steps."""
    s = N.ClState()
    core._check(N.sm_world_get_cl_state(world._h(), ctypes.byref(s)))  # pylint: disable=protected-access
    queue = world._queue  # pylint: disable=protected-access
    return {
        "position": _array(queue, s.position, s.particle_count),
        "position_low": _array(queue, s.position_low, s.particle_count),
        "velocity": _array(queue, s.velocity, s.particle_count),
        "goal": _array(queue, s.goal, s.particle_count),
        "surface_position": _array(queue, s.surface_position, s.surface_vertex_count),
        "surface_normal": _array(queue, s.surface_normal, s.surface_vertex_count),
    }


def _handle(buffer):
    if buffer is None:
        return None
    data = getattr(buffer, "data", buffer)  # a pyopencl Array or a Buffer
    return data.int_ptr


def set_inputs(world, forces=None, targets=None):
    """Makes the following steps read `forces` (float4 per particle, N, w ignored) and `targets`
    (float4: x, y, z and the stiffness, shapematch.PIN pins), pyopencl Arrays or Buffers of the
    world's context; None removes one. The world keeps them alive."""
    inputs = N.sm_cl_inputs_default()
    inputs.forces = _handle(forces)
    inputs.targets = _handle(targets)
    core._check(N.sm_world_set_cl_inputs(world._h(), ctypes.byref(inputs)))  # pylint: disable=protected-access
    world._inputs = (forces, targets)  # pylint: disable=protected-access


def step(world, steps=1, dt=None, substeps=None, wait_for=None):
    """Enqueues `steps` steps (the scene's dt and substeps unless given) on the world's queue
    after the events `wait_for`, without waiting, and returns the event of the last."""
    scene = world.scene
    dt = scene.dt if dt is None else float(dt)
    substeps = core._int32(scene.substeps if substeps is None else substeps, "substeps")  # pylint: disable=protected-access
    waits = list(wait_for or [])
    event = None
    for _ in range(core._int32(steps, "steps", 0)):  # pylint: disable=protected-access
        array = (ctypes.c_void_p * max(len(waits), 1))(*[e.int_ptr for e in waits])
        out = ctypes.c_void_p()
        core._check(  # pylint: disable=protected-access
            N.sm_world_step_cl(world._h(), dt, substeps, len(waits), array if waits else None, ctypes.byref(out))  # pylint: disable=protected-access
        )
        event = cl.Event.from_int_ptr(out.value, retain=False)
        waits = []
    return event
