"""The C library through ctypes: where it is found, the structs the Python API passes, and the
prototypes of the functions it calls. Nothing here computes physics: every call goes to
libshapematch, the same code the C API and the `shapematch` command run.

The structs mirror host/include/shapematch/shapematch.h field for field; tests/python/
test_layout.py checks their sizes and offsets against the compiler's (tests/python/layout.c).
"""

import ctypes
import ctypes.util
import os

# ---- Finding the library ---------------------------------------------------------------------

_HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    """Where libshapematch may be, in the order tried."""
    env = os.environ.get("SHAPEMATCH_LIBRARY")
    if env:
        yield env
    try:  # written by `cmake --install` next to the installed package
        from . import _location  # noqa: F401  pylint: disable=import-outside-toplevel

        yield _location.LIBRARY
    except ImportError:
        pass
    # the repository's build tree (python/shapematch/../../build/host), as the quick start makes it
    root = os.path.dirname(os.path.dirname(_HERE))
    for build in ("build", "build-release"):
        yield os.path.join(root, build, "host", "libshapematch.so")
    found = ctypes.util.find_library("shapematch")
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (missing)")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as error:
            tried.append("%s (%s)" % (path, error))
    raise ImportError(
        "shapematch: libshapematch was not found; build it (./cmake/bootstrap.sh) or install it "
        "(cmake --install), or set SHAPEMATCH_LIBRARY to the path of libshapematch.so. Tried: "
        + "; ".join(tried or ["nothing"])
    )


lib, LIBRARY_PATH = _load()

# ---- Constants -----------------------------------------------------------------------------

OK = 0
ERROR_INVALID_ARGUMENT = 1
RESULT_NAMES = {
    0: "SM_OK",
    1: "SM_ERROR_INVALID_ARGUMENT",
    2: "SM_ERROR_OUT_OF_MEMORY",
    3: "SM_ERROR_IO",
    4: "SM_ERROR_SCENE",
    5: "SM_ERROR_UNAVAILABLE",
    6: "SM_ERROR_NOT_FINITE",
    7: "SM_ERROR_DIVERGED",
    8: "SM_ERROR_CANCELLED",
}
BACKENDS = {"default": 0, "cpu": 1, "opencl": 2}
PASS_NAMES = [
    "cluster_moments",
    "rotation",
    "goal_transform",
    "blend_integrate",
    "collision_grid",
    "collide",
    "ground",
    "plasticity",
    "skin",
]
FIELD_POSITION, FIELD_VELOCITY, FIELD_GOAL = 0, 1, 2
TARGET_PIN = -1.0

# ---- Structs -------------------------------------------------------------------------------


class Vec3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_double), ("y", ctypes.c_double), ("z", ctypes.c_double)]


class Ground(ctypes.Structure):
    _fields_ = [
        ("enabled", ctypes.c_bool),
        ("height", ctypes.c_double),
        ("restitution", ctypes.c_double),
        ("friction", ctypes.c_double),
    ]


class Collisions(ctypes.Structure):
    _fields_ = [
        ("enabled", ctypes.c_bool),
        ("iterations", ctypes.c_int32),
        ("radius_scale", ctypes.c_double),
        ("restitution", ctypes.c_double),
        ("friction", ctypes.c_double),
        ("relaxation", ctypes.c_double),
        ("push_speed", ctypes.c_double),
    ]


class GlContext(ctypes.Structure):
    _fields_ = [("context", ctypes.c_void_p), ("display", ctypes.c_void_p), ("egl", ctypes.c_bool)]


class OpenclObjects(ctypes.Structure):
    _fields_ = [("context", ctypes.c_void_p), ("device", ctypes.c_void_p), ("queue", ctypes.c_void_p)]


LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)


class WorldDef(ctypes.Structure):
    _fields_ = [
        ("gravity", Vec3),
        ("ground", Ground),
        ("collisions", Collisions),
        ("backend", ctypes.c_int),
        ("device", ctypes.c_char_p),
        ("profile", ctypes.c_bool),
        ("check_interval", ctypes.c_int32),
        ("check_extent", ctypes.c_double),
        ("check_speed", ctypes.c_double),
        ("memory_budget", ctypes.c_int64),
        ("gl", GlContext),
        ("opencl", OpenclObjects),
        ("log", ctypes.c_void_p),
        ("log_user", ctypes.c_void_p),
        ("internal_value", ctypes.c_int32),
    ]


class Counts(ctypes.Structure):
    _fields_ = [
        ("objects", ctypes.c_int32),
        ("clusters", ctypes.c_int32),
        ("particles", ctypes.c_int32),
        ("memberships", ctypes.c_int32),
    ]


class ObjectInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("shape", ctypes.c_int),
        ("mode", ctypes.c_int),
        ("mass", ctypes.c_double),
        ("first_particle", ctypes.c_int32),
        ("particle_count", ctypes.c_int32),
        ("contiguous", ctypes.c_bool),
        ("first_cluster", ctypes.c_int32),
        ("cluster_count", ctypes.c_int32),
        ("membership_count", ctypes.c_int32),
        ("collides", ctypes.c_bool),
        ("self_collides", ctypes.c_bool),
        ("spacing", ctypes.c_double),
        ("particle_radius", ctypes.c_double),
        ("first_surface_vertex", ctypes.c_int32),
        ("surface_vertex_count", ctypes.c_int32),
        ("surface_triangle_count", ctypes.c_int32),
    ]


class Plane(ctypes.Structure):
    _fields_ = [("point", Vec3), ("normal", Vec3)]


class CutInfo(ctypes.Structure):
    _fields_ = [
        ("cut", ctypes.c_bool),
        ("time", ctypes.c_double),
        ("back_object", ctypes.c_int32),
        ("front_object", ctypes.c_int32),
        ("back_particles", ctypes.c_int32),
        ("front_particles", ctypes.c_int32),
        ("kept_clusters", ctypes.c_int32),
        ("degraded_clusters", ctypes.c_int32),
        ("cap_triangles", ctypes.c_int32),
        ("open_loops", ctypes.c_int32),
    ]


class Profile(ctypes.Structure):
    _fields_ = [
        ("pass_ms", ctypes.c_double * len(PASS_NAMES)),
        ("step_ms", ctypes.c_double),
        ("steps", ctypes.c_int64),
        ("transfers", ctypes.c_int64),
        ("transfer_bytes", ctypes.c_int64),
        ("launches", ctypes.c_int64),
    ]


class SceneInfo(ctypes.Structure):
    _fields_ = [
        ("dt", ctypes.c_double),
        ("substeps", ctypes.c_int32),
        ("steps", ctypes.c_int32),
        ("object_count", ctypes.c_int32),
        ("cut_count", ctypes.c_int32),
    ]


class ContactStats(ctypes.Structure):
    _fields_ = [
        ("pairs", ctypes.c_int64),
        ("max_depth", ctypes.c_double),
        ("max_depth_ratio", ctypes.c_double),
        ("mean_depth_ratio", ctypes.c_double),
        ("dropped", ctypes.c_int64),
    ]


class DeviceInfo(ctypes.Structure):
    _fields_ = [
        ("index", ctypes.c_int32),
        ("name", ctypes.c_char * 128),
        ("platform", ctypes.c_char * 128),
        ("version", ctypes.c_char * 128),
        ("gpu", ctypes.c_bool),
        ("fp64", ctypes.c_bool),
    ]


class ClState(ctypes.Structure):
    _fields_ = [
        ("position", ctypes.c_void_p),
        ("position_low", ctypes.c_void_p),
        ("velocity", ctypes.c_void_p),
        ("goal", ctypes.c_void_p),
        ("surface_position", ctypes.c_void_p),
        ("surface_normal", ctypes.c_void_p),
        ("particle_count", ctypes.c_int32),
        ("surface_vertex_count", ctypes.c_int32),
    ]


class ClInputs(ctypes.Structure):
    _fields_ = [("forces", ctypes.c_void_p), ("targets", ctypes.c_void_p), ("internal_value", ctypes.c_int32)]


# ---- Prototypes ----------------------------------------------------------------------------

_P = ctypes.POINTER
_world = ctypes.c_void_p
_scene = ctypes.c_void_p
_int = ctypes.c_int32
_doubles = _P(ctypes.c_double)


def _proto(name, restype, *argtypes, optional=False):
    function = getattr(lib, name, None)
    if function is None:
        if optional:
            return None
        raise ImportError("shapematch: %s lacks %s: rebuild or reinstall the library" % (LIBRARY_PATH, name))
    function.restype = restype
    function.argtypes = list(argtypes)
    return function


sm_last_error = _proto("sm_last_error", ctypes.c_char_p)
sm_scene_load_file = _proto("sm_scene_load_file", ctypes.c_int, ctypes.c_char_p, _P(_scene))
sm_scene_load_string = _proto("sm_scene_load_string", ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p, _P(_scene))
sm_scene_destroy = _proto("sm_scene_destroy", None, _scene)
sm_scene_get_info = _proto("sm_scene_get_info", SceneInfo, _scene)
sm_scene_world_def = _proto("sm_scene_world_def", WorldDef, _scene)
sm_scene_create_world = _proto("sm_scene_create_world", ctypes.c_int, _scene, _P(WorldDef), _P(_world))
sm_scene_step = _proto("sm_scene_step", ctypes.c_int, _scene, _world)
sm_world_destroy = _proto("sm_world_destroy", None, _world)
sm_world_step = _proto("sm_world_step", ctypes.c_int, _world, ctypes.c_double, _int)
sm_world_cancel = _proto("sm_world_cancel", None, _world)
sm_world_get_counts = _proto("sm_world_get_counts", Counts, _world)
sm_world_get_profile = _proto("sm_world_get_profile", Profile, _world)
sm_world_backend_name = _proto("sm_world_backend_name", ctypes.c_char_p, _world)
sm_world_device_name = _proto("sm_world_device_name", ctypes.c_char_p, _world)
sm_world_get_time = _proto("sm_world_get_time", ctypes.c_double, _world)
sm_world_get_object = _proto("sm_world_get_object", ctypes.c_int, _world, _int, _P(ObjectInfo))
sm_world_get_object_particles = _proto(
    "sm_world_get_object_particles", ctypes.c_int, _world, _int, _P(_P(_int)), _P(_int)
)
sm_world_get_particle_objects = _proto("sm_world_get_particle_objects", ctypes.c_int, _world, _int, _int, _P(_int))
for _field in ("positions", "velocities", "rest_positions", "goals", "masses", "forces", "targets"):
    globals()["sm_world_get_" + _field] = _proto("sm_world_get_" + _field, ctypes.c_int, _world, _int, _int, _doubles)
sm_world_set_positions = _proto("sm_world_set_positions", ctypes.c_int, _world, _int, _int, _doubles)
sm_world_set_velocities = _proto("sm_world_set_velocities", ctypes.c_int, _world, _int, _int, _doubles)
sm_world_set_force = _proto("sm_world_set_force", ctypes.c_int, _world, _int, Vec3)
sm_world_set_forces = _proto("sm_world_set_forces", ctypes.c_int, _world, _int, _int, _doubles)
sm_world_set_target = _proto("sm_world_set_target", ctypes.c_int, _world, _int, Vec3, ctypes.c_double)
sm_world_reset_object = _proto("sm_world_reset_object", ctypes.c_int, _world, _int)
sm_world_cut = _proto("sm_world_cut", ctypes.c_int, _world, _int, Plane, _P(CutInfo))
sm_world_get_float4 = _proto(
    "sm_world_get_float4", ctypes.c_int, _world, ctypes.c_int, _int, _int, _P(ctypes.c_float)
)
sm_world_get_contact_stats = _proto("sm_world_get_contact_stats", ctypes.c_int, _world, _P(ContactStats))
sm_world_copy_state = _proto("sm_world_copy_state", ctypes.c_int, _world, _world)
sm_opencl_devices = _proto("sm_opencl_devices", ctypes.c_int, _P(DeviceInfo), _int, _P(_int))
# the embedding API (shapematch_opencl.h), absent from a library built without OpenCL
sm_world_get_cl_state = _proto("sm_world_get_cl_state", ctypes.c_int, _world, _P(ClState), optional=True)
sm_cl_inputs_default = _proto("sm_cl_inputs_default", ClInputs, optional=True)
sm_world_set_cl_inputs = _proto("sm_world_set_cl_inputs", ctypes.c_int, _world, _P(ClInputs), optional=True)
sm_world_step_cl = _proto(
    "sm_world_step_cl",
    ctypes.c_int,
    _world,
    ctypes.c_double,
    _int,
    ctypes.c_uint32,
    _P(ctypes.c_void_p),
    _P(ctypes.c_void_p),
    optional=True,
)
sm_world_get_cl_queue = _proto("sm_world_get_cl_queue", ctypes.c_void_p, _world, optional=True)
sm_world_get_cl_context = _proto("sm_world_get_cl_context", ctypes.c_void_p, _world, optional=True)
