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
    """A World of `scene` (a Scene, a dict in the scene format or the path of a scene file) on
    `where`: a pyopencl CommandQueue (the world enqueues its steps on it; it must execute in
    order, pyopencl's default) or a Context (the world makes a queue of its own on the context's
    first device)."""
    if not isinstance(where, (cl.CommandQueue, cl.Context)):
        raise TypeError("world_on needs a pyopencl CommandQueue or Context, got %r" % (where,))
    scene, _ = core._scene_of(scene)  # pylint: disable=protected-access
    if isinstance(where, cl.CommandQueue):
        handles = (where.context.int_ptr, where.device.int_ptr, where.int_ptr)
    else:
        handles = (where.int_ptr, where.devices[0].int_ptr, None)
    world = core.World(scene, backend="opencl", profile=profile, opencl=handles)
    world._queue = where if isinstance(where, cl.CommandQueue) else None  # pylint: disable=protected-access
    world._inputs = None  # pylint: disable=protected-access
    queue(world)  # on a Context: the world's own queue, as a pyopencl object
    return world


def queue(world):
    """The pyopencl CommandQueue the world enqueues its steps on: any OpenCL world's (its own
    queue unless world_on() gave it yours); ValueError for a world on the CPU reference."""
    if not isinstance(world, core.World):
        raise TypeError("needs a shapematch World, got %r" % type(world).__name__)
    found = getattr(world, "_queue", None)
    if found is None:
        with world._using() as h:  # pylint: disable=protected-access
            handle = N.sm_world_get_cl_queue(h) if N.sm_world_backend_name(h) == b"opencl" else None
        if not handle:
            raise ValueError("the world runs on the CPU reference: it has no OpenCL queue (make it with "
                             "shapematch.opencl.world_on(), or with backend=\"opencl\")")
        found = world._queue = cl.CommandQueue.from_int_ptr(handle, retain=True)  # pylint: disable=protected-access
    return found


def _array(queue_, handle, count):
    if not handle or count == 0:
        return None
    buffer = cl.MemoryObject.from_int_ptr(handle, retain=True)
    return cl.array.Array(queue_, (count, 4), np.float32, data=buffer)


def state(world):
    """The world's device state as pyopencl arrays over its own buffers (float4 per particle):
    position (w: mass), position_low (the low parts of the double-float positions), velocity,
    goal, and surface_position, surface_normal per surface vertex (None without surfaces).
    Valid until objects are added or the world is cut; your kernels may read them, and write
    velocity (and position, with position_low zeroed) between steps."""
    on = queue(world)
    s = N.ClState()
    with world._using() as h:  # pylint: disable=protected-access
        core._check(N.sm_world_get_cl_state(h, ctypes.byref(s)))  # pylint: disable=protected-access
    return {
        "position": _array(on, s.position, s.particle_count),
        "position_low": _array(on, s.position_low, s.particle_count),
        "velocity": _array(on, s.velocity, s.particle_count),
        "goal": _array(on, s.goal, s.particle_count),
        "surface_position": _array(on, s.surface_position, s.surface_vertex_count),
        "surface_normal": _array(on, s.surface_normal, s.surface_vertex_count),
    }


def _handle(buffer, what, particles, context):
    """The cl_mem of an input: a pyopencl Array of float32 and shape (particles, 4), contiguous
    and at offset 0, or a Buffer of at least 16 bytes per particle, of the world's context."""
    if buffer is None:
        return None
    if isinstance(buffer, cl.array.Array):
        if buffer.dtype != np.float32:
            raise TypeError("%s must be an array of float32 (a float4 per particle), got %s" % (what, buffer.dtype))
        if buffer.shape != (particles, 4):
            raise ValueError("%s must be an array of shape (%d, 4) (a float4 per particle), got %s"
                             % (what, particles, buffer.shape))
        if not buffer.flags.c_contiguous or buffer.offset:
            raise ValueError("%s must be a contiguous array at offset 0 of its buffer" % what)
        memory = buffer.base_data
    elif isinstance(buffer, cl.MemoryObjectHolder):
        if buffer.size < 16 * particles:
            raise ValueError("%s: a buffer of %d bytes is too small for a float4 per particle (%d bytes)"
                             % (what, buffer.size, 16 * particles))
        memory = buffer
    else:
        raise TypeError("%s must be a pyopencl Array (float32, (n, 4)) or Buffer of the world's context, got %s "
                        "(a numpy array: upload it with pyopencl.array.to_device(queue, a))" % (what, type(buffer).__name__))
    if memory.context.int_ptr != context:
        raise ValueError("%s belongs to another OpenCL context than the world's" % what)
    return memory.int_ptr


def set_inputs(world, forces=None, targets=None):
    """Makes the following steps read `forces` (float4 per particle, N, w ignored) and `targets`
    (float4: x, y, z and the stiffness, shapematch.PIN pins): pyopencl Arrays of float32 and
    shape (particles, 4), contiguous, or Buffers of at least 16 bytes per particle, of the
    world's context (TypeError for another dtype or kind of object, such as a numpy array;
    ValueError for another shape, size or context); None removes one. The world keeps them
    alive."""
    inputs = N.sm_cl_inputs_default()
    with world._using() as h:  # pylint: disable=protected-access
        particles = N.sm_world_get_counts(h).particles
        context = N.sm_world_get_cl_context(h) if N.sm_world_backend_name(h) == b"opencl" else None
        if not context:
            raise ValueError("the world runs on the CPU reference: it takes no OpenCL inputs")
        inputs.forces = _handle(forces, "forces", particles, context)
        inputs.targets = _handle(targets, "targets", particles, context)
        core._check(N.sm_world_set_cl_inputs(h, ctypes.byref(inputs)))  # pylint: disable=protected-access
    world._inputs = (forces, targets)  # pylint: disable=protected-access


def step(world, steps=1, dt=None, substeps=None, wait_for=None):
    """Enqueues `steps` steps (the scene's dt and substeps unless given) on the world's queue
    after the events `wait_for` (a list of pyopencl Events, or one), without waiting, and
    returns the event of the last; with steps 0, the event of a marker enqueued after
    `wait_for` (it completes when they have)."""
    scene = world.scene
    dt = scene.dt if dt is None else core._real(dt, "dt")  # pylint: disable=protected-access
    substeps = core._int32(scene.substeps if substeps is None else substeps, "substeps")  # pylint: disable=protected-access
    steps = core._int32(steps, "steps", 0)  # pylint: disable=protected-access
    waits = [wait_for] if isinstance(wait_for, cl.Event) else list(wait_for or [])
    for e in waits:
        if not isinstance(e, cl.Event):
            raise TypeError("wait_for must be pyopencl Events, got %r" % (e,))
    on = queue(world)
    if steps == 0:
        return cl.enqueue_marker(on, wait_for=waits or None)
    event = None
    for _ in range(steps):
        array = (ctypes.c_void_p * max(len(waits), 1))(*[e.int_ptr for e in waits])
        out = ctypes.c_void_p()
        with world._using() as h:  # pylint: disable=protected-access
            core._check(  # pylint: disable=protected-access
                N.sm_world_step_cl(h, dt, substeps, len(waits), array if waits else None, ctypes.byref(out))
            )
        event = cl.Event.from_int_ptr(out.value, retain=False)
        waits = []
    return event
