"""Scenes and worlds: the C API in Python's idiom. A Scene is a parsed scene (a file, a JSON
string or a dict in the scene format of scenes/README.md); a World is a simulation made from one,
stepped by the library and read and written as numpy arrays."""

import contextlib
import ctypes
import json
import numbers
import operator
import os
import sys
import threading
import time

import numpy as np

from . import _native as N

# ---- Errors --------------------------------------------------------------------------------


class ShapematchError(Exception):
    """A call into the library failed: `code` is its sm_result, `name` its constant's name and
    the message the library's sentence (sm_last_error()). Errors pickle and copy with their
    code, message and any attribute added to them (World.run's `frames`), so that they cross
    process boundaries (multiprocessing, Dask) as themselves."""

    def __init__(self, code, message):
        self.code = code
        self.name = N.RESULT_NAMES.get(code, "SM_ERROR_%d" % code)
        self.message = message
        super().__init__("%s: %s" % (self.name, message))

    def __reduce__(self):
        # remade from (code, message), then every attribute restored (name, frames, ...)
        return (type(self), (self.code, self.message), dict(self.__dict__))


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
    """`value` as a C int32 argument: an integer (a Python or numpy integer, not a float nor a
    bool) in [minimum, 2^31). ctypes would wrap a larger one into range without a word (object
    2^32 is object 0)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError("%s must be an integer, got a bool (%r)" % (what, value))
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError("%s must be an integer, got %r" % (what, value)) from None
    if not minimum <= v < 2**31:
        raise ValueError("%s must be an integer in [%d, %d], got %d" % (what, minimum, 2**31 - 1, v))
    return v


def _real(value, what):
    """`value` as a C double argument: a real number (Python's or numpy's); a string, a bool,
    None or a complex number is refused rather than converted."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError("%s must be a real number, got %r" % (what, value))
    return float(value)


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


def _json_default(value):
    """json's hook for what it does not know: numpy scalars as Python numbers, numpy arrays as
    (nested) lists; anything else is refused as json refuses it."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError("Object of type %s is not JSON serializable" % type(value).__name__)


def _dumps(data):
    return json.dumps(data, default=_json_default)


def _path(path, what="path"):
    """A path argument (str, bytes or os.PathLike) as a str; TypeError for anything else."""
    try:
        return os.fsdecode(os.fspath(path))
    except TypeError:
        raise TypeError("%s must be a str, bytes or os.PathLike path, got %r" % (what, path)) from None


def _scene_of(scene, what="scene"):
    """`scene` as a Scene: a Scene itself, a dict in the scene format, or the path of a scene
    file (str, bytes or os.PathLike); returns (scene, whether it was made here)."""
    if isinstance(scene, Scene):
        return scene, False
    if isinstance(scene, dict):
        return Scene.from_dict(scene), True
    if isinstance(scene, (str, bytes, os.PathLike)):
        return Scene.load(scene), True
    raise TypeError("%s must be a Scene, a dict in the scene format or a path, got %r" % (what, scene))


# ---- Scenes --------------------------------------------------------------------------------


class _Owned:
    """A handle of the library's, freed by close(), at the end of a `with` block, or when
    collected; `_free` is the library's function that frees it.

    Every native call on the handle runs inside `_using()`, which counts it; close() refuses new
    calls and waits for those in flight to return before it frees the handle, so that a close()
    from another thread (after a cancel(), say) never frees what a step is using. The object
    cannot be copied or pickled: the copy would share the handle, and free it twice."""

    _free = None
    _what = "object"

    def _own(self):
        self._handle = ctypes.c_void_p()
        self._guard = threading.Condition(threading.Lock())
        self._uses = 0
        self._closing = False

    @contextlib.contextmanager
    def _using(self, closed=None, while_closing=False):
        """The handle, counted as in use until the block ends; ValueError(`closed`, or "the ...
        is closed") when it is closed, or being closed (unless `while_closing`: cancel())."""
        guard = self._guard
        with guard:
            if not self._handle.value or (self._closing and not while_closing):
                raise ValueError(closed or "the %s is closed" % self._what)
            self._uses += 1
        try:
            yield self._handle
        finally:
            with guard:
                self._uses -= 1
                if not self._uses:
                    guard.notify_all()

    @property
    def closed(self):
        """True once close() has freed it."""
        return not getattr(self, "_handle", None) or not self._handle.value

    def close(self):
        """Frees it (a world: with its device buffers) now, once the calls other threads have in
        progress on it return; it cannot be used after. Closing twice does nothing."""
        guard = getattr(self, "_guard", None)
        if guard is None:  # (its __init__ failed before it held anything)
            return
        with guard:
            self._closing = True
            while self._uses:
                guard.wait()
            if self._handle.value:
                type(self)._free(self._handle)
                self._handle = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def _refuse_copy(self, *args):
        raise TypeError(
            "a shapematch.%s cannot be copied or pickled: it owns a handle of the library's that a copy "
            "would share (and free twice); %s" % (type(self).__name__, self._copy_hint)
        )

    __copy__ = __deepcopy__ = __reduce__ = __reduce_ex__ = __getstate__ = _refuse_copy
    _copy_hint = "make another"


class Scene(_Owned):
    """A scene: its objects, settings, springs and timed cuts, validated by the library.

    Scene.load(path), Scene.from_json(text) or Scene.from_dict(d); `dt`, `substeps`, `steps`
    and `object_count` as the scene gives them; `world()` makes a World of it. Use it as a context
    manager, or call close(), to free it at once; a world made of it needs it open to take the
    scene's steps. A Scene cannot be copied or pickled: pass its `text` (and `origin`) instead."""

    _free = staticmethod(N.sm_scene_destroy)
    _what = "scene"
    _copy_hint = "pass its text instead (Scene.from_json(scene.text)), or use with_overrides()"

    def __init__(self, text, origin="scene", path=None):
        """The scene of JSON `text` (`origin` names it in messages); with `path`, read by the library
        from that file instead, which resolves a mesh's relative path against the file's folder
        (the text is kept for copies with overrides, with_overrides())."""
        self._own()
        if isinstance(text, (bytes, bytearray)):
            text = _decode(bytes(text), origin if isinstance(origin, str) else "scene")
        if not isinstance(text, str):
            raise TypeError("a scene's text must be a str of JSON, got %r" % type(text).__name__)
        if not isinstance(origin, str):
            raise TypeError("origin must be a str, got %r" % (origin,))
        if path is not None:
            path = _path(path)
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
        """Reads a scene file (scenes/README.md): `path` a str, bytes or os.PathLike. The file is
        UTF-8 text (a byte order mark is skipped); one that is not raises SceneError."""
        path = _path(path)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as error:
            raise FileError(3, "cannot read %s: %s" % (path, error.strerror)) from error
        return cls(_decode(data, path), path, path=path)

    @classmethod
    def from_json(cls, text, origin="scene"):
        """A scene from JSON text in the scene format."""
        return cls(text, origin)

    @classmethod
    def from_dict(cls, data, origin="scene"):
        """A scene from a dict in the scene format: {"objects": [{"shape": "box", ...}], "gravity":
        [0, -9.81, 0], ...}. Fields left out take the library's defaults, as in a file. numpy
        scalars and arrays are taken as the numbers and lists they hold."""
        if not isinstance(data, dict):
            raise TypeError("from_dict needs a dict in the scene format, got %r" % type(data).__name__)
        return cls(_dumps(data), origin)

    def to_dict(self):
        """The scene's JSON as a dict."""
        return json.loads(self.text)

    def with_overrides(self, overrides):
        """A copy of the scene with `overrides` applied (apply_overrides()); the relative mesh
        paths of a scene loaded from a file (objects' and colliders') made absolute, so that the
        copy reads the same meshes."""
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


def _decode(data, origin):
    """A scene file's bytes as text: UTF-8, a byte order mark skipped; SceneError if not UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise SceneError(
            4, "%s: not UTF-8 text (byte 0x%02x at offset %d): a scene file is JSON in UTF-8"
            % (origin, data[error.start], error.start)
        ) from None


def apply_overrides(data, overrides):
    """Returns a copy of scene dict `data` with `overrides` set: a dict of dotted paths to values,
    list indices as numbers ({"gravity": [0, -5, 0], "objects.0.alpha": 0.3,
    "collisions.friction": 0.1}), or a function taking and returning the dict. numpy scalars and
    arrays among the values are taken as the numbers and lists they hold."""
    data = json.loads(_dumps(data))
    if callable(overrides):
        return overrides(data)
    if overrides is not None and not isinstance(overrides, dict):
        raise TypeError("overrides must be a dict of dotted paths to values, a function or None, got %r"
                        % type(overrides).__name__)
    for path, value in (overrides or {}).items():
        value = json.loads(_dumps(value))
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
    """`data` with the relative paths of its files made absolute against `folder`: the `mesh` of
    every object and of every collider (the scene format's only paths)."""
    for group in ("objects", "colliders"):
        entries = data.get(group) if isinstance(data, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and isinstance(entry.get("mesh"), str) and not os.path.isabs(entry["mesh"]):
                entry["mesh"] = os.path.join(folder, entry["mesh"])
    return data


def _describe(overrides):
    if callable(overrides):
        return getattr(overrides, "__name__", "a function")
    return ", ".join("%s=%s" % (k, _dumps(v)) for k, v in (overrides or {}).items()) or "no overrides"


# ---- Worlds --------------------------------------------------------------------------------


class World(_Owned):
    """A simulation of a scene. Arrays are numpy: positions, velocities, goals, forces and rest
    positions (n, 3) float64, targets (n, 4) (x, y, z, stiffness), masses (n,); float4() reads
    a device field as (n, 4) float32 straight from an OpenCL world's buffer.

    A world is used by one thread at a time, but cancel() and close() may come from another:
    close() waits for the call in progress (a step: cancel() first to cut it short) to return.
    The scene's steps (step() without dt, run()) need its scene open. A World cannot be copied
    or pickled (copy_state_from() copies a state into another world of the scene)."""

    _free = staticmethod(N.sm_world_destroy)
    _what = "world"
    _copy_hint = "make another with scene.world() and copy_state_from() this one"

    def __init__(self, scene, backend="default", device=None, profile=False, check_interval=None, opencl=None):
        self._own()
        if not isinstance(scene, Scene):
            raise TypeError("World needs a Scene, got %r" % type(scene).__name__)
        if backend not in N.BACKENDS:
            raise ValueError("backend must be one of %s, got %r" % (", ".join(N.BACKENDS), backend))
        self.scene = scene
        self._device = (
            device.encode("utf-8") if isinstance(device, str) else (b"%d" % _int32(device, "device", 0) if device is not None else None)
        )
        if check_interval is not None:
            check_interval = _int32(check_interval, "check_interval", 0)
        with scene._using("the scene is closed: a world cannot be made of it") as scene_handle:
            definition = N.sm_scene_world_def(scene_handle)
            definition.backend = N.BACKENDS[backend]
            definition.device = self._device
            definition.profile = bool(profile)
            if check_interval is not None:
                definition.check_interval = check_interval
            if opencl is not None:
                context, cl_device, queue = opencl
                definition.opencl.context, definition.opencl.device, definition.opencl.queue = context, cl_device, queue
            _check(N.sm_scene_create_world(scene_handle, ctypes.byref(definition), ctypes.byref(self._handle)))
        self._check_speed = definition.check_speed

    @classmethod
    def from_objects(cls, objects, backend="default", device=None, profile=False, check_interval=None, **fields):
        """A world of `objects` (dicts of the scene format's object fields: shape, size,
        resolution, position, mode, alpha, ...) and the scene fields given as keywords (gravity,
        ground, collisions, dt, substeps, ...): what is left out takes the library's defaults.
        backend, device, profile and check_interval as Scene.world() takes them."""
        scene = Scene.from_dict(dict(fields, objects=list(objects)), origin="World.from_objects")
        return cls(scene, backend=backend, device=device, profile=profile, check_interval=check_interval)

    def _scene_using(self):
        return self.scene._using(  # pylint: disable=protected-access
            "the world's scene is closed: its steps need it (step(dt=..., substeps=...) does not)"
        )

    # -- description

    @property
    def backend(self):
        """"cpu" or "opencl"."""
        with self._using() as h:
            return N.sm_world_backend_name(h).decode()

    @property
    def device(self):
        """The OpenCL device's name, "" on the CPU reference."""
        with self._using() as h:
            return N.sm_world_device_name(h).decode()

    @property
    def counts(self):
        with self._using() as h:
            c = N.sm_world_get_counts(h)
        return {"objects": c.objects, "clusters": c.clusters, "particles": c.particles, "memberships": c.memberships}

    @property
    def particle_count(self):
        with self._using() as h:
            return N.sm_world_get_counts(h).particles

    @property
    def time(self):
        """s: the simulated time."""
        with self._using() as h:
            return N.sm_world_get_time(h)

    @property
    def objects(self):
        """One dict per object: name, mass, first_particle, particle_count, contiguous,
        first_cluster, cluster_count, collides, particle_radius, ..."""
        out = []
        with self._using() as h:
            for o in range(N.sm_world_get_counts(h).objects):
                info = N.ObjectInfo()
                _check(N.sm_world_get_object(h, o, ctypes.byref(info)))
                d = {name: getattr(info, name) for name, _ in N.ObjectInfo._fields_}
                d["name"] = info.name.decode("utf-8", "replace") if info.name else ""
                d["id"] = o
                out.append(d)
        return out

    def object_particles(self, obj):
        """The particle indices of object `obj`, ascending (int32)."""
        obj = _int32(obj, "object")
        pointer, count = ctypes.POINTER(ctypes.c_int32)(), ctypes.c_int32()
        with self._using() as h:
            _check(N.sm_world_get_object_particles(h, obj, ctypes.byref(pointer), ctypes.byref(count)))
            return np.ctypeslib.as_array(pointer, shape=(count.value,)).copy() if count.value else np.zeros(0, np.int32)

    def particle_objects(self):
        """The object of every particle (int32, (n,))."""
        with self._using() as h:
            n = N.sm_world_get_counts(h).particles
            out = np.empty(n, np.int32)
            _check(N.sm_world_get_particle_objects(h, 0, n, out.ctypes.data_as(ctypes.POINTER(ctypes.c_int32))))
        return out

    # -- stepping

    def cancel(self):
        """sm_world_cancel(): the step in progress (another thread's) or the next raises Cancelled
        before its next solver step; safe to call from any thread, also while close() waits for
        that step."""
        with self._using(while_closing=True) as h:
            N.sm_world_cancel(h)

    def step(self, steps=1, dt=None, substeps=None):
        """Steps `steps` times: the scene's step (its springs applied, its dt and substeps) unless
        dt or substeps are given, then sm_world_step() with them."""
        steps = _int32(steps, "steps", 0)
        scene_step = dt is None and substeps is None
        dt = self.scene.dt if dt is None else _real(dt, "dt")
        substeps = _int32(self.scene.substeps if substeps is None else substeps, "substeps")
        for _ in range(steps):
            if scene_step:
                with self._using() as h, self._scene_using() as scene_handle:
                    _check(N.sm_scene_step(scene_handle, h))
            else:
                with self._using() as h:
                    _check(N.sm_world_step(h, dt, substeps))

    def run(self, steps=None, every=1, progress=None):
        """Runs `steps` scene steps (default: the scene's) and returns the trajectory, float64
        (frames, particles, 3): the state before the first step, then every `every` steps, as
        `shapematch run --out` writes it. progress: a tqdm bar (when tqdm is installed) or a line
        on stderr; None: only on a terminal.

        When a step fails (Diverged, NotFinite, Cancelled, ...) or the run is interrupted
        (KeyboardInterrupt), the exception carries the frames collected so far as `frames`
        (float64 (k, particles, 3): the first state and every `every` steps until then); the
        world keeps the state it reached."""
        steps = self.scene.steps if steps is None else _int32(steps, "steps", 0)
        every = _int32(every, "every", 1)
        frames = np.empty((steps // every + 1, self.particle_count, 3), np.float64)
        filled = 0
        bar = _progress(steps, progress)
        try:
            frames[0] = self.positions
            filled = 1
            for s in range(1, steps + 1):
                with self._using() as h, self._scene_using() as scene_handle:
                    _check(N.sm_scene_step(scene_handle, h))
                if s % every == 0:
                    frames[s // every] = self.positions
                    filled = s // every + 1
                bar.update(1)
        except BaseException as error:
            try:
                error.frames = frames[:filled]
            except AttributeError:  # (an exception that takes no attributes)
                pass
            raise
        finally:
            bar.close()
        return frames

    def _check_state(self, what):
        """The state check `shapematch run` makes at the end of a run, from the host: every
        position and velocity finite (else NotFinite), no particle faster than the world's
        check_speed (else Diverged)."""
        x, v = self.positions, self.velocities
        for name, values in (("position", x), ("velocity", v)):
            bad = np.flatnonzero(~np.isfinite(values).all(axis=1))
            if bad.size:
                p = int(bad[0])
                raise NotFinite(6, "%s: particle %d (object %d) has a non-finite %s at %g s"
                                % (what, p, self.particle_objects()[p], name, self.time))
        speeds = _norms(v)
        if self._check_speed > 0 and speeds.size and speeds.max() > self._check_speed:
            p = int(np.argmax(speeds))
            raise Diverged(7, "%s: particle %d (object %d) moves at %g m/s at %g s, faster than check_speed "
                           "(%g m/s): the simulation diverged"
                           % (what, p, self.particle_objects()[p], speeds[p], self.time, self._check_speed))

    # -- particle state

    def _get(self, function, width=3):
        with self._using() as h:
            n = N.sm_world_get_counts(h).particles
            out = np.empty((n, width), np.float64)
            _check(function(h, 0, n, out.ctypes.data_as(ctypes.POINTER(ctypes.c_double))))
        return out

    def _set(self, function, values, what="values"):
        with self._using() as h:
            n = N.sm_world_get_counts(h).particles
            values = _real_array(values, (n, 3), what)
            _check(function(h, 0, n, values.ctypes.data_as(ctypes.POINTER(ctypes.c_double))))

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
        """(n, 3) float64, N: the external force of every particle, applied in each step; settable,
        in one call (sm_world_set_forces(): on OpenCL one write to the device), refused whole
        (InvalidArgument, no force changed) when a value is not finite or, on OpenCL, beyond the
        float range."""
        return self._get(N.sm_world_get_forces)

    @forces.setter
    def forces(self, values):
        self._set(N.sm_world_set_forces, values, "forces")

    @property
    def targets(self):
        """(n, 4) float64: each particle's kinematic target x, y, z and stiffness (N/m; -1 pins,
        0 none)."""
        return self._get(N.sm_world_get_targets, 4)

    def set_target(self, particle, target, stiffness):
        """Pulls `particle` toward `target` with `stiffness` N/m (shapematch.PIN pins it, 0 frees it)."""
        particle, target, stiffness = _int32(particle, "particle"), _vec3(target, "target"), _real(stiffness, "stiffness")
        with self._using() as h:
            _check(N.sm_world_set_target(h, particle, target, stiffness))

    def float4(self, field="position"):
        """(n, 4) float32 of "position" (w: mass), "velocity" or "goal", read straight from an
        OpenCL world's device buffer (one copy, no conversion); on the CPU reference converted."""
        fields = {"position": N.FIELD_POSITION, "velocity": N.FIELD_VELOCITY, "goal": N.FIELD_GOAL}
        if field not in fields:
            raise ValueError("field must be one of %s, got %r" % (", ".join(fields), field))
        with self._using() as h:
            n = N.sm_world_get_counts(h).particles
            out = np.empty((n, 4), np.float32)
            _check(N.sm_world_get_float4(h, fields[field], 0, n, out.ctypes.data_as(ctypes.POINTER(ctypes.c_float))))
        return out

    # -- edits

    def reset_object(self, obj):
        """Puts object `obj` back at rest where it was created."""
        obj = _int32(obj, "object")
        with self._using() as h:
            _check(N.sm_world_reset_object(h, obj))

    def cut(self, obj, point, normal):
        """Cuts object `obj` in two along the plane through `point` with `normal`; returns what
        the cut did (sm_cut_info as a dict)."""
        info = N.CutInfo()
        obj = _int32(obj, "object")
        plane = N.Plane(_vec3(point, "point"), _vec3(normal, "normal"))
        with self._using() as h:
            _check(N.sm_world_cut(h, obj, plane, ctypes.byref(info)))
        return {name: getattr(info, name) for name, _ in N.CutInfo._fields_}

    def copy_state_from(self, other):
        """Takes the state of `other`, a world of the same scene (sm_world_copy_state())."""
        if not isinstance(other, World):
            raise TypeError("copy_state_from needs a World, got %r" % type(other).__name__)
        with self._using() as h, other._using("the world to copy from is closed") as source:
            _check(N.sm_world_copy_state(h, source))

    # -- measurements

    @property
    def profile(self):
        """Milliseconds per pass, the step total, steps, host transfers and kernel launches."""
        with self._using() as h:
            p = N.sm_world_get_profile(h)
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
        with self._using() as h:
            _check(N.sm_world_get_contact_stats(h, ctypes.byref(s)))
        return {name: getattr(s, name) for name, _ in N.ContactStats._fields_}


def _norms(v):
    """The Euclidean norm of every row of (n, 3) `v`, without overflow (np.linalg.norm squares:
    1e300 m/s would read inf)."""
    v = np.asarray(v, np.float64)
    if not v.size:
        return np.zeros(v.shape[0])
    return np.hypot(np.hypot(v[:, 0], v[:, 1]), v[:, 2])


PIN = N.TARGET_PIN


# ---- Progress ------------------------------------------------------------------------------


class _Line:
    """A progress line on stderr, at most four times a second, counting `unit`s (steps, runs)."""

    def __init__(self, total, unit="step"):
        self.total, self.done, self.start, self.last, self.unit = total, 0, time.monotonic(), 0.0, unit

    def update(self, k):
        self.done += k
        now = time.monotonic()
        if now - self.last >= 0.25 or self.done == self.total:
            rate = self.done / max(now - self.start, 1e-9)
            sys.stderr.write("\r%s %d/%d  %.1f %ss/s   " % (self.unit, self.done, self.total, rate, self.unit))
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


def _progress(total, progress, unit="step"):
    """A progress bar over `total` `unit`s: tqdm's where installed, else a line on stderr; none
    when `progress` is false, or None and stderr is no terminal."""
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress or total <= 0:
        return _Silent()
    try:
        from tqdm import tqdm  # pylint: disable=import-outside-toplevel

        return tqdm(total=total, unit=unit)
    except ImportError:
        return _Line(total, unit)


# ---- Both backends -------------------------------------------------------------------------


def compare(scene, steps=None, every=10, device=None):
    """Runs `scene` (a Scene, a dict in the scene format or the path of a scene file) on the CPU
    reference and on OpenCL side by side, as `shapematch compare` does: returns a list of
    {"step", "max", "mean"}, the largest and the mean distance between the two positions of each
    particle, every `every` steps and at the last, in metres."""
    scene, made = _scene_of(scene)
    try:
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
    finally:
        if made:
            scene.close()


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
