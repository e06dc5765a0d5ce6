"""Scenes and worlds: the C API in Python's idiom. A Scene is a parsed scene (a file, a JSON
string or a dict in the scene format of scenes/README.md); a World is a simulation made from one,
stepped by the library and read and written as numpy arrays."""

import ctypes
import json
import operator
import os
import sys
import time

import numpy as np

from . import _native as N

# ---- Errors --------------------------------------------------------------------------------


class ShapematchError(Exception):
    """A call into the library failed: `code` is its sm_result, `name` its constant's name and
    the message the library's sentence (sm_last_error())."""

    def __init__(self, code, message):
        self.code = code
        self.name = N.RESULT_NAMES.get(code, "SM_ERROR_%d" % code)
        self.message = message
        super().__init__("%s: %s" % (self.name, message))


class InvalidArgument(ShapematchError, ValueError):
    """SM_ERROR_INVALID_ARGUMENT: an argument or def field is out of range."""


class OutOfMemory(ShapematchError, MemoryError):
    """SM_ERROR_OUT_OF_MEMORY: the world would not fit its memory budget, or an allocation failed."""


class FileError(ShapematchError, OSError):
    """SM_ERROR_IO: a file could not be opened, read or written."""


class SceneError(ShapematchError, ValueError):
    """SM_ERROR_SCENE: a scene is malformed or holds a bad value (the message names the field)."""


class Unavailable(ShapematchError, RuntimeError):
    """SM_ERROR_UNAVAILABLE: the backend or device asked for is not available."""


class NotFinite(ShapematchError, FloatingPointError):
    """SM_ERROR_NOT_FINITE: the state check found a non-finite position or velocity."""


class Diverged(ShapematchError, FloatingPointError):
    """SM_ERROR_DIVERGED: the state check found a cluster or particle beyond its bounds."""


class Cancelled(ShapematchError, RuntimeError):
    """SM_ERROR_CANCELLED: sm_world_cancel() stopped a step between two of its solver steps."""


_ERRORS = {1: InvalidArgument, 2: OutOfMemory, 3: FileError, 4: SceneError, 5: Unavailable, 6: NotFinite, 7: Diverged,
           8: Cancelled}


def _check(result):
    if result != N.OK:
        message = N.sm_last_error()
        raise _ERRORS.get(result, ShapematchError)(result, message.decode("utf-8", "replace") if message else "")


def _int32(value, what, minimum=-(2**31)):
    """`value` as a C int32 argument: an integer (a Python or numpy integer, not a float) in
    [minimum, 2^31). ctypes would wrap a larger one into range without a word (object 2^32 is
    object 0)."""
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError("%s must be an integer, got %r" % (what, value)) from None
    if not minimum <= v < 2**31:
        raise ValueError("%s must be an integer in [%d, %d], got %d" % (what, minimum, 2**31 - 1, v))
    return v


def _real_array(values, shape, what):
    """`values` as a contiguous float64 array of `shape`: numbers only (complex values, strings and
    objects are refused rather than cast)."""
    array = np.asarray(values)
    if array.dtype.kind not in "biuf":
        raise TypeError("%s must hold real numbers, got an array of %s" % (what, array.dtype))
    array = np.ascontiguousarray(array, dtype=np.float64)
    if array.shape != shape:
        raise ValueError("%s: expected an array of shape %s, got %s" % (what, shape, array.shape))
    return array


def _vec3(value, what):
    v = np.asarray(value)
    if v.dtype.kind not in "biuf":
        raise TypeError("%s must be three real numbers, got %r" % (what, value))
    v = v.astype(np.float64).reshape(-1)
    if v.shape != (3,):
        raise ValueError("%s must be three numbers, got %r" % (what, value))
    return N.Vec3(float(v[0]), float(v[1]), float(v[2]))


# ---- Scenes --------------------------------------------------------------------------------


class _Owned:
    """A handle of the library's, freed by close(), at the end of a `with` block, or when
    collected; `_free` is the library's function that frees it."""

    _free = None

    def close(self):
        """Frees it (a world: with its device buffers) now."""
        if getattr(self, "_handle", None) and self._handle.value:
            type(self)._free(self._handle)
            self._handle = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


class Scene(_Owned):
    """A scene: its objects, settings, springs and timed cuts, validated by the library.

    Scene.load(path), Scene.from_json(text) or Scene.from_dict(d); `dt`, `substeps`, `steps`
    and `object_count` as the scene gives them; `world()` makes a World of it. Use it as a context
    manager, or call close(), to free it at once."""

    _free = staticmethod(N.sm_scene_destroy)

    def __init__(self, text, origin="scene", path=None):
        """The scene of JSON `text` (`origin` names it in messages); with `path`, read by the library
        from that file instead, which resolves a mesh's relative path against the file's folder
        (the text is kept for copies with overrides, with_overrides())."""
        self._handle = ctypes.c_void_p()
        self.text, self.origin, self.path = text, origin, path
        if path is None:
            _check(N.sm_scene_load_string(text.encode("utf-8"), origin.encode("utf-8"), ctypes.byref(self._handle)))
        else:
            _check(N.sm_scene_load_file(os.fsencode(path), ctypes.byref(self._handle)))
        info = N.sm_scene_get_info(self._handle)
        self.dt, self.substeps, self.steps = info.dt, info.substeps, info.steps
        self.object_count, self.cut_count = info.object_count, info.cut_count

    @classmethod
    def load(cls, path):
        """Reads a scene file (scenes/README.md)."""
        try:
            with open(path, "r", encoding="utf-8") as f:
                text = f.read()
        except OSError as error:
            raise FileError(3, "cannot read %s: %s" % (path, error.strerror)) from error
        return cls(text, path, path=path)

    @classmethod
    def from_json(cls, text, origin="scene"):
        """A scene from JSON text in the scene format."""
        return cls(text, origin)

    @classmethod
    def from_dict(cls, data, origin="scene"):
        """A scene from a dict in the scene format: {"objects": [{"shape": "box", ...}], "gravity":
        [0, -9.81, 0], ...}. Fields left out take the library's defaults, as in a file."""
        return cls(json.dumps(data), origin)

    def to_dict(self):
        """The scene's JSON as a dict."""
        return json.loads(self.text)

    def with_overrides(self, overrides):
        """A copy of the scene with `overrides` applied (apply_overrides())."""
        data = apply_overrides(self.to_dict(), overrides)
        if self.path:  # relative mesh paths stay relative to the scene file's folder
            data = _absolute_paths(data, os.path.dirname(os.path.abspath(self.path)))
        return Scene.from_dict(data, origin="%s with %s" % (self.origin, _describe(overrides)))

    def world(self, backend="default", device=None, profile=False, check_interval=None, opencl=None):
        """A World of this scene. backend: "default" (OpenCL when a device is there, else the CPU
        reference), "cpu" or "opencl"; device: an OpenCL device selector (an index or part of a
        name); profile: time every pass (OpenCL); check_interval: the state check's interval in
        sm_world_step() calls (0: never); opencl: (context, device, queue) handles of the
        caller's, as ints (pyopencl's `int_ptr`), to run on them (shapematch.opencl does this)."""
        return World(self, backend=backend, device=device, profile=profile, check_interval=check_interval, opencl=opencl)



def apply_overrides(data, overrides):
    """Returns a copy of scene dict `data` with `overrides` set: a dict of dotted paths to values,
    list indices as numbers ({"gravity": [0, -5, 0], "objects.0.alpha": 0.3,
    "collisions.friction": 0.1}), or a function taking and returning the dict."""
    data = json.loads(json.dumps(data))
    if callable(overrides):
        return overrides(data)
    for path, value in (overrides or {}).items():
        keys = str(path).split(".")
        node = data
        for i, key in enumerate(keys):
            last = i == len(keys) - 1
            if isinstance(node, list):
                try:
                    index = int(key)
                    node[index]  # pylint: disable=pointless-statement
                except (ValueError, IndexError):
                    raise KeyError("override %r: %r is not an index of a list of %d" % (path, key, len(node))) from None
                if last:
                    node[index] = value
                else:
                    node = node[index]
            elif isinstance(node, dict):
                if last:
                    node[key] = value
                else:
                    node = node.setdefault(key, {})
            else:
                raise KeyError("override %r: %r is not inside a dict or list" % (path, key))
    return data


def _absolute_paths(data, folder):
    for obj in data.get("objects", []):
        if isinstance(obj, dict) and isinstance(obj.get("mesh"), str) and not os.path.isabs(obj["mesh"]):
            obj["mesh"] = os.path.join(folder, obj["mesh"])
    return data


def _describe(overrides):
    if callable(overrides):
        return getattr(overrides, "__name__", "a function")
    return ", ".join("%s=%s" % (k, json.dumps(v)) for k, v in (overrides or {}).items()) or "no overrides"


# ---- Worlds --------------------------------------------------------------------------------


class World(_Owned):
    """A simulation of a scene. Arrays are numpy: positions, velocities, goals, forces and rest
    positions (n, 3) float64, targets (n, 4) (x, y, z, stiffness), masses (n,); float4() reads
    a device field as (n, 4) float32 straight from an OpenCL world's buffer."""

    _free = staticmethod(N.sm_world_destroy)

    def __init__(self, scene, backend="default", device=None, profile=False, check_interval=None, opencl=None):
        if backend not in N.BACKENDS:
            raise ValueError("backend must be one of %s, got %r" % (", ".join(N.BACKENDS), backend))
        self.scene = scene
        self._handle = ctypes.c_void_p()
        definition = N.sm_scene_world_def(scene._handle)
        definition.backend = N.BACKENDS[backend]
        self._device = (
            device.encode("utf-8") if isinstance(device, str) else (b"%d" % _int32(device, "device", 0) if device is not None else None)
        )
        definition.device = self._device
        definition.profile = bool(profile)
        if check_interval is not None:
            definition.check_interval = _int32(check_interval, "check_interval", 0)
        if opencl is not None:
            context, cl_device, queue = opencl
            definition.opencl.context, definition.opencl.device, definition.opencl.queue = context, cl_device, queue
        _check(N.sm_scene_create_world(scene._handle, ctypes.byref(definition), ctypes.byref(self._handle)))

    @classmethod
    def from_objects(cls, objects, backend="default", device=None, profile=False, **fields):
        """A world of `objects` (dicts of the scene format's object fields: shape, size,
        resolution, position, mode, alpha, ...) and the scene fields given as keywords (gravity,
        ground, collisions, dt, substeps, ...): what is left out takes the library's defaults."""
        scene = Scene.from_dict(dict(fields, objects=list(objects)), origin="World.from_objects")
        return cls(scene, backend=backend, device=device, profile=profile)

    def _h(self):
        if not self._handle.value:
            raise ValueError("the world is closed")
        return self._handle

    # -- description

    @property
    def backend(self):
        """"cpu" or "opencl"."""
        return N.sm_world_backend_name(self._h()).decode()

    @property
    def device(self):
        """The OpenCL device's name, "" on the CPU reference."""
        return N.sm_world_device_name(self._h()).decode()

    @property
    def counts(self):
        c = N.sm_world_get_counts(self._h())
        return {"objects": c.objects, "clusters": c.clusters, "particles": c.particles, "memberships": c.memberships}

    @property
    def particle_count(self):
        return N.sm_world_get_counts(self._h()).particles

    @property
    def time(self):
        """s: the simulated time."""
        return N.sm_world_get_time(self._h())

    @property
    def objects(self):
        """One dict per object: name, mass, first_particle, particle_count, contiguous,
        first_cluster, cluster_count, collides, particle_radius, ..."""
        out = []
        for o in range(N.sm_world_get_counts(self._h()).objects):
            info = N.ObjectInfo()
            _check(N.sm_world_get_object(self._h(), o, ctypes.byref(info)))
            d = {name: getattr(info, name) for name, _ in N.ObjectInfo._fields_}
            d["name"] = info.name.decode("utf-8", "replace") if info.name else ""
            d["id"] = o
            out.append(d)
        return out

    def object_particles(self, obj):
        """The particle indices of object `obj`, ascending (int32)."""
        pointer, count = ctypes.POINTER(ctypes.c_int32)(), ctypes.c_int32()
        _check(N.sm_world_get_object_particles(self._h(), _int32(obj, "object"), ctypes.byref(pointer), ctypes.byref(count)))
        return np.ctypeslib.as_array(pointer, shape=(count.value,)).copy() if count.value else np.zeros(0, np.int32)

    def particle_objects(self):
        """The object of every particle (int32, (n,))."""
        n = self.particle_count
        out = np.empty(n, np.int32)
        _check(N.sm_world_get_particle_objects(self._h(), 0, n, out.ctypes.data_as(ctypes.POINTER(ctypes.c_int32))))
        return out

    # -- stepping

    def cancel(self):
        """sm_world_cancel(): the step in progress (another thread's) or the next raises Cancelled
        before its next solver step; safe to call from any thread."""
        N.sm_world_cancel(self._h())

    def step(self, steps=1, dt=None, substeps=None):
        """Steps `steps` times: the scene's step (its springs applied, its dt and substeps) unless
        dt or substeps are given, then sm_world_step() with them."""
        steps = _int32(steps, "steps", 0)
        scene_step = dt is None and substeps is None
        dt = float(self.scene.dt if dt is None else dt)
        substeps = _int32(self.scene.substeps if substeps is None else substeps, "substeps")
        for _ in range(steps):
            if scene_step:
                _check(N.sm_scene_step(self.scene._handle, self._h()))
            else:
                _check(N.sm_world_step(self._h(), dt, substeps))

    def run(self, steps=None, every=1, progress=None):
        """Runs `steps` scene steps (default: the scene's) and returns the trajectory, float64
        (frames, particles, 3): the state before the first step, then every `every` steps, as
        `shapematch run --out` writes it. progress: a tqdm bar (when tqdm is installed) or a line
        on stderr; None: only on a terminal."""
        steps = self.scene.steps if steps is None else _int32(steps, "steps", 0)
        every = _int32(every, "every", 1)
        n = self.particle_count
        frames = np.empty((steps // every + 1, n, 3), np.float64)
        frames[0] = self.positions
        bar = _progress(steps, progress)
        try:
            for s in range(1, steps + 1):
                _check(N.sm_scene_step(self.scene._handle, self._h()))
                if s % every == 0:
                    frames[s // every] = self.positions
                bar.update(1)
        finally:
            bar.close()
        return frames

    # -- particle state

    def _get(self, function, width=3):
        n = self.particle_count
        out = np.empty((n, width), np.float64)
        _check(function(self._h(), 0, n, out.ctypes.data_as(ctypes.POINTER(ctypes.c_double))))
        return out

    def _set(self, function, values):
        n = self.particle_count
        values = _real_array(values, (n, 3), "values")
        _check(function(self._h(), 0, n, values.ctypes.data_as(ctypes.POINTER(ctypes.c_double))))

    @property
    def positions(self):
        """(n, 3) float64, m. Setting it moves every particle (velocities kept)."""
        return self._get(N.sm_world_get_positions)

    @positions.setter
    def positions(self, values):
        self._set(N.sm_world_set_positions, values)

    @property
    def velocities(self):
        """(n, 3) float64, m/s; settable."""
        return self._get(N.sm_world_get_velocities)

    @velocities.setter
    def velocities(self, values):
        self._set(N.sm_world_set_velocities, values)

    @property
    def goals(self):
        """(n, 3) float64: the blended goals of the last step."""
        return self._get(N.sm_world_get_goals)

    @property
    def rest_positions(self):
        return self._get(N.sm_world_get_rest_positions)

    @property
    def masses(self):
        return self._get(N.sm_world_get_masses, 1).reshape(-1)

    @property
    def forces(self):
        """(n, 3) float64, N: the external force of every particle, applied in each step; settable."""
        return self._get(N.sm_world_get_forces)

    @forces.setter
    def forces(self, values):
        values = _real_array(values, (self.particle_count, 3), "forces")
        if not np.isfinite(values).all():
            # refused whole, before any particle's force changes (the library checks one at a time)
            bad = int(np.flatnonzero(~np.isfinite(values).all(axis=1))[0])
            raise InvalidArgument(N.ERROR_INVALID_ARGUMENT, "forces: particle %d's force must be finite (no force changed)" % bad)
        for i, f in enumerate(values):
            _check(N.sm_world_set_force(self._h(), i, N.Vec3(*f)))

    @property
    def targets(self):
        """(n, 4) float64: each particle's kinematic target x, y, z and stiffness (N/m; -1 pins,
        0 none)."""
        return self._get(N.sm_world_get_targets, 4)

    def set_target(self, particle, target, stiffness):
        """Pulls `particle` toward `target` with `stiffness` N/m (shapematch.PIN pins it, 0 frees it)."""
        _check(N.sm_world_set_target(self._h(), _int32(particle, "particle"), _vec3(target, "target"), float(stiffness)))

    def float4(self, field="position"):
        """(n, 4) float32 of "position" (w: mass), "velocity" or "goal", read straight from an
        OpenCL world's device buffer (one copy, no conversion); on the CPU reference converted."""
        fields = {"position": N.FIELD_POSITION, "velocity": N.FIELD_VELOCITY, "goal": N.FIELD_GOAL}
        if field not in fields:
            raise ValueError("field must be one of %s, got %r" % (", ".join(fields), field))
        n = self.particle_count
        out = np.empty((n, 4), np.float32)
        _check(N.sm_world_get_float4(self._h(), fields[field], 0, n, out.ctypes.data_as(ctypes.POINTER(ctypes.c_float))))
        return out

    # -- edits

    def reset_object(self, obj):
        """Puts object `obj` back at rest where it was created."""
        _check(N.sm_world_reset_object(self._h(), _int32(obj, "object")))

    def cut(self, obj, point, normal):
        """Cuts object `obj` in two along the plane through `point` with `normal`; returns what
        the cut did (sm_cut_info as a dict)."""
        info = N.CutInfo()
        plane = N.Plane(_vec3(point, "point"), _vec3(normal, "normal"))
        _check(N.sm_world_cut(self._h(), _int32(obj, "object"), plane, ctypes.byref(info)))
        return {name: getattr(info, name) for name, _ in N.CutInfo._fields_}

    def copy_state_from(self, other):
        """Takes the state of `other`, a world of the same scene (sm_world_copy_state())."""
        _check(N.sm_world_copy_state(self._h(), other._h()))

    # -- measurements

    @property
    def profile(self):
        """Milliseconds per pass, the step total, steps, host transfers and kernel launches."""
        p = N.sm_world_get_profile(self._h())
        return {
            "pass_ms": {name: p.pass_ms[i] for i, name in enumerate(N.PASS_NAMES)},
            "step_ms": p.step_ms,
            "steps": p.steps,
            "transfers": p.transfers,
            "transfer_bytes": p.transfer_bytes,
            "launches": p.launches,
        }

    @property
    def contact_stats(self):
        s = N.ContactStats()
        _check(N.sm_world_get_contact_stats(self._h(), ctypes.byref(s)))
        return {name: getattr(s, name) for name, _ in N.ContactStats._fields_}


PIN = N.TARGET_PIN


# ---- Progress ------------------------------------------------------------------------------


class _Line:
    """A progress line on stderr, at most four times a second."""

    def __init__(self, total):
        self.total, self.done, self.start, self.last = total, 0, time.monotonic(), 0.0

    def update(self, k):
        self.done += k
        now = time.monotonic()
        if now - self.last >= 0.25 or self.done == self.total:
            rate = self.done / max(now - self.start, 1e-9)
            sys.stderr.write("\rstep %d/%d  %.1f steps/s   " % (self.done, self.total, rate))
            sys.stderr.flush()
            self.last = now

    def close(self):
        sys.stderr.write("\r%60s\r" % "")
        sys.stderr.flush()


class _Silent:
    def update(self, k):
        pass

    def close(self):
        pass


def _progress(total, progress):
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress or total <= 0:
        return _Silent()
    try:
        from tqdm import tqdm  # pylint: disable=import-outside-toplevel

        return tqdm(total=total, unit="step")
    except ImportError:
        return _Line(total)


# ---- Both backends -------------------------------------------------------------------------


def compare(scene, steps=None, every=10, device=None):
    """Runs `scene` on the CPU reference and on OpenCL side by side, as `shapematch compare` does:
    returns a list of {"step", "max", "mean"}, the largest and the mean distance between the two
    positions of each particle, every `every` steps and at the last, in metres."""
    if isinstance(scene, str):
        scene = Scene.load(scene)
    steps = scene.steps if steps is None else _int32(steps, "steps", 0)
    every = _int32(every, "every", 1)
    rows = []
    with scene.world(backend="cpu") as cpu, scene.world(backend="opencl", device=device) as gpu:
        for s in range(1, steps + 1):
            cpu.step()
            gpu.step()
            if s % every == 0 or s == steps:
                d = np.linalg.norm(cpu.positions - gpu.positions, axis=1)
                rows.append({"step": s, "max": float(d.max(initial=0.0)), "mean": float(d.mean()) if d.size else 0.0})
    return rows


def devices():
    """The OpenCL devices the library sees: a list of {"index", "name", "platform", "version",
    "gpu", "fp64"}; empty when there is none."""
    count = ctypes.c_int32()
    infos = (N.DeviceInfo * 64)()
    if N.sm_opencl_devices(infos, 64, ctypes.byref(count)) != N.OK:
        return []
    return [
        {
            "index": d.index,
            "name": d.name.decode(),
            "platform": d.platform.decode(),
            "version": d.version.decode(),
            "gpu": d.gpu,
            "fp64": d.fp64,
        }
        for d in infos[: min(count.value, 64)]
    ]
