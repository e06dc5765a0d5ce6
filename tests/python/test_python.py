"""The Python package (python/shapematch) against the library and the command: run by CTest
(label "python") with Debian's python3, numpy, pyopencl and dask.distributed. The environment
names what to test: SHAPEMATCH_LIBRARY (the library), SHAPEMATCH_TOOL (the `shapematch`
command), SM_PY_LAYOUT (tests/python/layout.c built), SM_SOURCE_DIR (the repository)."""

import _thread
import copy
import ctypes
import json
import os
import pathlib
import pickle
import subprocess
import tempfile
import threading
import time
import unittest
from unittest import mock

import numpy as np

import shapematch
from shapematch import _native as N

SOURCE = os.environ.get("SM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = os.environ.get("SHAPEMATCH_TOOL", "shapematch")
CUT_SCENE = os.path.join(SOURCE, "scenes", "paper", "hw2007_cut.json")

# three boxes falling onto the ground and onto each other, with contact
PILE = {
    "dt": 1 / 60,
    "substeps": 2,
    "steps": 60,
    "ground": {"restitution": 0.2, "friction": 0.4},
    "collisions": {},
    "objects": [
        {"shape": "box", "size": [0.5, 0.5, 0.5], "resolution": [3, 3, 3], "position": [0, 0.4 + 0.6 * k, 0.1 * k],
         "mode": "quadratic", "alpha": 0.5, "beta": 0.3}
        for k in range(3)
    ],
}

# a closed cube (8 vertices, 12 outward triangles), as an OBJ file
CUBE_OBJ = "".join("v %g %g %g\n" % (x, y, z) for z in (-0.25, 0.25) for y, x in ((-0.25, -0.25), (-0.25, 0.25), (0.25, 0.25), (0.25, -0.25))) + \
    "".join("f %d %d %d\n" % f for f in [(1, 4, 3), (1, 3, 2), (5, 6, 7), (5, 7, 8), (1, 2, 6), (1, 6, 5),
                                         (4, 8, 7), (4, 7, 3), (1, 5, 8), (1, 8, 4), (2, 3, 7), (2, 7, 6)])


def write_mesh_scene(folder):
    """A scene file in `folder` whose object and collider read meshes/cube.obj by a relative path."""
    os.makedirs(os.path.join(folder, "meshes"))
    with open(os.path.join(folder, "meshes", "cube.obj"), "w", encoding="utf-8") as f:
        f.write(CUBE_OBJ)
    path = os.path.join(folder, "mesh_scene.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"dt": 1 / 60, "steps": 10,
                   "colliders": [{"shape": "mesh", "mesh": "meshes/cube.obj", "position": [0, 0, 0], "scale": 4}],
                   "objects": [{"shape": "mesh", "mesh": "meshes/cube.obj", "position": [0, 1.5, 0]}]}, f)
    return path


class Layout(unittest.TestCase):
    def test_ctypes_mirrors_match_the_compilers_layout(self):
        """Every struct the package passes has the C size and field offsets."""
        layout = json.loads(subprocess.check_output([os.environ["SM_PY_LAYOUT"]]))
        mirrors = {
            "sm_world_def": N.WorldDef, "sm_collisions": N.Collisions, "sm_counts": N.Counts,
            "sm_object_info": N.ObjectInfo, "sm_cut_info": N.CutInfo, "sm_profile": N.Profile,
            "sm_scene_info": N.SceneInfo, "sm_contact_stats": N.ContactStats, "sm_device_info": N.DeviceInfo,
            "sm_plane": N.Plane, "sm_cl_state": N.ClState, "sm_cl_inputs": N.ClInputs,
        }
        for name, mirror in mirrors.items():
            self.assertIn(name, layout)
            self.assertEqual(ctypes.sizeof(mirror), layout[name]["size"], name)
            for field, offset in layout[name]["fields"].items():
                self.assertEqual(getattr(mirror, field).offset, offset, "%s.%s" % (name, field))
            self.assertEqual(len(mirror._fields_), len(layout[name]["fields"]), name + ": every field mirrored")


class Scenes(unittest.TestCase):
    def run_command(self, scene, steps, every, backend="cpu"):
        with tempfile.TemporaryDirectory() as folder:
            out = os.path.join(folder, "t.npy")
            subprocess.run([TOOL, "run", scene, "--backend", backend, "--steps", str(steps), "--every", str(every),
                            "--out", out], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return np.load(out)

    def test_a_scene_run_equals_the_commands_trajectory_bit_for_bit(self):
        """On the CPU reference, World.run gives `shapematch run --out`'s trajectory exactly:
        a pile in contact, and a scene cut twice on the way."""
        with tempfile.TemporaryDirectory() as folder:
            pile = os.path.join(folder, "pile.json")
            with open(pile, "w", encoding="utf-8") as f:
                json.dump(PILE, f)
            for path, steps, every in ((pile, 60, 7), (CUT_SCENE, 50, 5)):
                expected = self.run_command(path, steps, every)
                with shapematch.Scene.load(path) as scene, scene.world(backend="cpu") as world:
                    got = world.run(steps=steps, every=every, progress=False)
                self.assertEqual(got.dtype, np.float64)
                self.assertEqual(got.shape, expected.shape)
                self.assertTrue(np.array_equal(got, expected), path)

    def test_objects_as_keywords_take_the_librarys_defaults(self):
        """World.from_objects builds the same world as the scene file of the same fields."""
        fields = {"ground": {}, "gravity": [0, -9.81, 0]}
        objects = [{"shape": "box", "position": [0, 1, 0]}, {"shape": "sphere", "radius": 0.3, "position": [2, 1, 0]}]
        with shapematch.World.from_objects(objects, backend="cpu", **fields) as a, \
                shapematch.Scene.from_json(json.dumps(dict(fields, objects=objects))) as scene, \
                scene.world(backend="cpu") as b:
            self.assertEqual(a.counts, b.counts)
            a.step(20)
            b.step(20)
            self.assertTrue(np.array_equal(a.positions, b.positions))
            info = a.objects
            self.assertEqual([o["id"] for o in info], [0, 1])
            self.assertEqual(info[1]["first_particle"], info[0]["particle_count"])
            self.assertTrue(np.array_equal(a.object_particles(1), np.arange(info[1]["first_particle"],
                                                                             info[1]["first_particle"] + info[1]["particle_count"])))

    def test_state_reads_and_writes_as_arrays(self):
        with shapematch.World.from_objects([{"shape": "box", "position": [0, 1, 0]}], backend="cpu", gravity=[0, 0, 0]) as w:
            n = w.particle_count
            x = w.positions + np.array([0.0, 2.0, 0.0])
            w.positions = x
            self.assertTrue(np.array_equal(w.positions, x))
            v = np.tile([1.0, 0.0, 0.0], (n, 1))
            w.velocities = v
            self.assertTrue(np.array_equal(w.velocities, v))
            w.set_target(0, [5, 5, 5], shapematch.PIN)
            self.assertTrue(np.array_equal(w.targets[0], [5, 5, 5, -1]))
            w.step(1)
            self.assertTrue(np.array_equal(w.positions[0], [5, 5, 5]))
            f = np.zeros((n, 3))
            f[:, 1] = 2.0
            w.forces = f
            self.assertTrue(np.array_equal(w.forces, f))
            self.assertEqual(w.masses.shape, (n,))
            self.assertEqual(w.float4("velocity").dtype, np.float32)
            with self.assertRaises(ValueError):
                w.positions = np.zeros((n + 1, 3))

    def test_a_cut_reports_its_pieces(self):
        with shapematch.World.from_objects([{"shape": "box", "resolution": [4, 4, 4]}], backend="cpu", gravity=[0, 0, 0]) as w:
            info = w.cut(0, [0, 0, 0], [1, 0, 0])
            self.assertTrue(info["cut"])
            self.assertEqual(info["back_particles"] + info["front_particles"], w.particle_count)
            self.assertEqual(len(w.objects), 2)
            owners = w.particle_objects()
            self.assertEqual(int((owners == 1).sum()), info["front_particles"])

    def test_profile_counts_steps(self):
        with shapematch.World.from_objects([{"shape": "box"}], backend="cpu") as w:
            w.step(3, substeps=2)
            p = w.profile
            self.assertEqual(p["steps"], 6)
            self.assertEqual(set(p["pass_ms"]), set(N.PASS_NAMES))

    def test_forces_are_set_in_one_call(self):
        """The forces setter hands the library the whole array at once (sm_world_set_forces()),
        not one call per particle; seeded random forces read back exactly."""
        rng = np.random.default_rng(23)
        with shapematch.World.from_objects([{"shape": "box", "resolution": [5, 5, 5]}], backend="cpu") as w:
            forces = rng.normal(size=(w.particle_count, 3)) * 10.0
            calls = []
            whole = N.sm_world_set_forces

            def counted(*args):
                calls.append(args[1:3])
                return whole(*args)

            with mock.patch.object(N, "sm_world_set_forces", counted), \
                    mock.patch.object(N, "sm_world_set_force", side_effect=AssertionError("one call per particle")):
                w.forces = forces
            self.assertEqual(calls, [(0, w.particle_count)])
            self.assertTrue(np.array_equal(w.forces, forces))

    def test_worlds_and_scenes_refuse_to_be_copied(self):
        """copy, deepcopy and pickle of a World or a Scene raise TypeError (a copy would share the
        library's handle: closing one would leave the other dangling, and both be freed twice)."""
        with shapematch.Scene.from_dict(PILE) as scene, scene.world(backend="cpu") as world:
            for owner in (scene, world):
                for duplicate in (copy.copy, copy.deepcopy, pickle.dumps):
                    with self.assertRaises(TypeError) as caught:
                        duplicate(owner)
                    self.assertIn("cannot be copied", str(caught.exception))
            world.step(2)  # both still work
            self.assertGreater(world.time, 0.0)

    def test_a_closed_scene_says_so(self):
        """A closed scene, and the scene steps of a world whose scene was closed, raise
        ValueError saying the scene is closed (not the library's NULL argument); steps of an
        explicit dt need no scene."""
        scene = shapematch.Scene.from_dict(PILE)
        world = scene.world(backend="cpu")
        scene.close()
        with self.assertRaisesRegex(ValueError, "scene is closed"):
            scene.world(backend="cpu")
        for call in (world.step, lambda: world.run(steps=3, progress=False)):
            with self.assertRaises(ValueError) as caught:
                call()
            self.assertIn("scene is closed", str(caught.exception))
            self.assertNotIn("NULL", str(caught.exception))
        world.step(2, dt=0.01, substeps=1)
        self.assertAlmostEqual(world.time, 0.02)
        self.assertTrue(scene.closed)
        world.close()
        self.assertTrue(world.closed)

    def test_paths_may_be_path_objects_and_relative_meshes_follow_the_file(self):
        """A scene file given as a pathlib.Path; its objects' and colliders' relative mesh paths
        are the file's folder's, in its copies with overrides too, wherever the working
        directory is; anything but a path is a TypeError."""
        cwd = os.getcwd()
        with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as elsewhere:
            path = pathlib.Path(write_mesh_scene(folder))
            os.chdir(elsewhere)
            try:
                with shapematch.Scene.load(path) as scene:
                    self.assertEqual(scene.origin, str(path))
                    with scene.with_overrides({"gravity": [0, -5, 0]}) as copied, copied.world(backend="cpu") as w:
                        data = copied.to_dict()
                        for entry in data["objects"] + data["colliders"]:
                            self.assertEqual(entry["mesh"], os.path.join(folder, "meshes", "cube.obj"))
                        w.step(2)
                        self.assertEqual(w.particle_count, 8)
            finally:
                os.chdir(cwd)
        for bad in (42, None, ["a.json"]):
            with self.assertRaises(TypeError):
                shapematch.Scene.load(bad)

    def test_numpy_values_in_scene_dicts_and_overrides(self):
        """numpy scalars and arrays in a scene dict or in overrides are the numbers and lists
        they hold (seeded random values): the same world as plain Python values gives."""
        rng = np.random.default_rng(31)
        for _ in range(3):
            alpha, y, g = rng.uniform(0.1, 0.9), rng.uniform(0.5, 2.0), rng.uniform(1.0, 10.0)
            plain = {"gravity": [0.0, -float(np.float32(g)), 0.0], "steps": 7,
                     "objects": [{"shape": "box", "alpha": float(np.float32(alpha)), "position": [0.0, y, 0.0]}]}
            numpy = {"gravity": np.array([0.0, -g, 0.0], np.float32), "steps": np.int64(7),
                     "objects": [{"shape": "box", "alpha": np.float32(alpha), "position": np.array([0.0, y, 0.0])}]}
            with shapematch.Scene.from_dict(plain) as a, shapematch.Scene.from_dict(numpy) as b:
                self.assertEqual(a.to_dict(), b.to_dict())
                self.assertEqual(b.steps, 7)
                with a.with_overrides({"objects.0.position": [0.0, 2 * y, 0.0]}) as a2, \
                        b.with_overrides({"objects.0.position": np.array([0.0, 2 * y, 0.0]), "steps": np.int32(7)}) as b2, \
                        a2.world(backend="cpu") as wa, b2.world(backend="cpu") as wb:
                    self.assertTrue(np.array_equal(wa.run(progress=False), wb.run(progress=False)))
            self.assertEqual(shapematch.apply_overrides(plain, {"objects.0.alpha": np.float64(alpha)})["objects"][0]["alpha"],
                             alpha)

    def test_a_byte_order_mark_is_skipped_and_other_encodings_refused(self):
        """A UTF-8 scene file with a byte order mark loads, and so do its copies with overrides;
        a file that is not UTF-8 raises SceneError."""
        with tempfile.TemporaryDirectory() as folder:
            bom = os.path.join(folder, "bom.json")
            with open(bom, "w", encoding="utf-8-sig") as f:
                json.dump(dict(PILE, name="caf\u00e9"), f, ensure_ascii=False)
            with shapematch.Scene.load(bom) as scene, scene.with_overrides({"steps": 5}) as copied:
                self.assertEqual(copied.steps, 5)
                self.assertEqual(scene.to_dict()["name"], "caf\u00e9")
                r = shapematch.run_one(scene.text, scene.origin, {"steps": 3}, 3, 1, "cpu", 0)
                self.assertTrue(r["ok"], r["error"])
            latin = os.path.join(folder, "latin.json")
            with open(latin, "wb") as f:
                f.write(json.dumps(dict(PILE, name="caf\u00e9"), ensure_ascii=False).encode("latin-1"))
            with self.assertRaises(shapematch.SceneError) as caught:
                shapematch.Scene.load(latin)
            self.assertIn("UTF-8", str(caught.exception))


class Errors(unittest.TestCase):
    def test_errors_are_exceptions_with_the_librarys_message(self):
        with self.assertRaises(shapematch.SceneError) as caught:
            shapematch.Scene.from_dict({"objects": [{"shape": "box", "alpha": 3}]})
        self.assertIn('field "alpha"', str(caught.exception))
        self.assertEqual(caught.exception.name, "SM_ERROR_SCENE")
        with self.assertRaises(shapematch.FileError):
            shapematch.Scene.load("/nonexistent/scene.json")
        with shapematch.World.from_objects([{"shape": "box"}], backend="cpu") as w:
            with self.assertRaises(shapematch.InvalidArgument) as caught:
                w.step(dt=-1.0)
            self.assertIn("dt", caught.exception.message)
            with self.assertRaises(shapematch.InvalidArgument):
                w.cut(0, [0, 0, 0], [0, 0, 0])
        with self.assertRaises(ValueError):
            w.positions  # pylint: disable=pointless-statement
        with self.assertRaises(shapematch.InvalidArgument):
            shapematch.World.from_objects([{"shape": "box"}], backend="cpu", device="no such device")
        with self.assertRaises(KeyError):
            shapematch.apply_overrides(PILE, {"objects.7.alpha": 0.1})


    def test_arguments_are_checked_before_they_reach_the_library(self):
        """Integers outside int32 (which ctypes would wrap: object 2^32 is object 0) and
        non-integers are refused for every index and count, seeded random ones included; complex
        arrays are refused rather than cast; a force array with one non-finite row changes no force."""
        rng = np.random.default_rng(17)
        beyond = [2**32, 2**32 + 1, -(2**31) - 1] + [int(v) * s for v in rng.integers(2**31, 2**62, 6) for s in (1, -1)]
        with shapematch.World.from_objects([{"shape": "box"}, {"shape": "sphere", "position": [3, 0, 0]}],
                                           backend="cpu", gravity=[0, 0, 0]) as w:
            before = (w.counts, w.positions, w.targets)
            for v in beyond:
                for call in (lambda: w.cut(v, [0, 0, 0], [1, 0, 0]), lambda: w.reset_object(v),
                             lambda: w.set_target(v, [0, 5, 0], 10.0), lambda: w.object_particles(v),
                             lambda: w.step(1, dt=0.01, substeps=v), lambda: w.step(v), lambda: w.run(steps=v)):
                    with self.assertRaises(ValueError, msg=v):
                        call()
            for v in (1.9, "1", None):
                with self.assertRaises(TypeError, msg=v):
                    w.set_target(v, [0, 5, 0], 10.0)
            for call in (lambda: w.step(-3), lambda: w.run(steps=-5), lambda: w.run(steps=5, every=0)):
                with self.assertRaises(ValueError):
                    call()
            self.assertEqual(w.counts, before[0])
            self.assertTrue(np.array_equal(w.positions, before[1]) and np.array_equal(w.targets, before[2]))
            self.assertEqual(w.time, 0.0)
            n = w.particle_count
            with self.assertRaises(TypeError):
                w.positions = np.zeros((n, 3), complex)
            with self.assertRaises(TypeError):
                w.set_target(0, [1j, 0, 0], 10.0)
            forces = np.ones((n, 3))
            forces[int(rng.integers(1, n))] = np.inf
            with self.assertRaises(shapematch.InvalidArgument):
                w.forces = forces
            self.assertTrue(np.array_equal(w.forces, np.zeros((n, 3))))
            w.step(np.int64(2), substeps=np.int32(2))  # numpy integers are integers
            self.assertGreater(w.time, 0.0)

    def test_cancel_stops_a_step_from_another_thread(self):
        with shapematch.World.from_objects([{"shape": "box"}], backend="cpu") as w:
            canceller = threading.Timer(0.05, w.cancel)
            canceller.start()
            with self.assertRaises(shapematch.Cancelled):
                w.step(dt=1.0, substeps=100000)  # (about a second of solver steps)
            canceller.join()
            done = round(w.time / 1e-5)
            self.assertTrue(0 <= done < 100000, done)
            w.step(dt=0.01, substeps=1)  # the next step runs
            self.assertAlmostEqual(w.time, done * 1e-5 + 0.01)

    def test_errors_pickle_and_copy_with_their_code_and_message(self):
        """Every error class round-trips through pickle, copy and deepcopy (as multiprocessing and
        Dask send it) with its class, code, message, str() and the attributes added to it."""
        rng = np.random.default_rng(41)
        letters = list("abcz \u00e9\"':\n")
        classes = [shapematch.ShapematchError, shapematch.InvalidArgument, shapematch.OutOfMemory, shapematch.FileError,
                   shapematch.SceneError, shapematch.Unavailable, shapematch.NotFinite, shapematch.Diverged,
                   shapematch.Cancelled]
        errors = [cls(int(rng.integers(0, 12)), "".join(rng.choice(letters, size=int(rng.integers(0, 30))))) for cls in classes]
        try:
            shapematch.Scene.from_dict({"objects": [{"shape": "box", "alpha": 3}]})
        except shapematch.SceneError as raised:
            errors.append(raised)
        for error in errors:
            error.frames = rng.normal(size=(2, 3, 3))
            for twin in (pickle.loads(pickle.dumps(error)), copy.copy(error), copy.deepcopy(error)):
                self.assertIs(type(twin), type(error))
                self.assertEqual((twin.code, twin.name, twin.message, str(twin), twin.args),
                                 (error.code, error.name, error.message, str(error), error.args))
                self.assertTrue(np.array_equal(twin.frames, error.frames))

    def test_close_from_another_thread_waits_for_the_step_in_progress(self):
        """close() from another thread while a step runs waits for it (after cancel() the step
        returns Cancelled at once, without it runs to its end); a scene closed while a world takes
        its step likewise; neither is used after it is freed."""
        def wait_until_busy(owner):
            deadline = time.monotonic() + 30
            while not owner._uses and time.monotonic() < deadline:  # pylint: disable=protected-access
                time.sleep(0.0005)

        for cancel in (True, False):
            scene = shapematch.Scene.from_dict({"dt": 1.0, "substeps": 100000 if cancel else 10000,
                                                "objects": [{"shape": "box"}]})
            world = scene.world(backend="cpu")
            outcome = []

            def stepper():
                try:
                    world.step()  # the scene's step: it uses the scene and the world
                    outcome.append("done")
                except (shapematch.Cancelled, ValueError) as error:
                    outcome.append(type(error).__name__)

            thread = threading.Thread(target=stepper)
            thread.start()
            wait_until_busy(world)
            if cancel:
                world.cancel()
                world.close()
            else:
                scene.close()  # waits for the step; the world goes on without its scene's steps
                self.assertTrue(scene.closed)
                with self.assertRaisesRegex(ValueError, "scene is closed"):
                    world.step()
                world.close()
            thread.join()
            self.assertEqual(outcome, ["Cancelled" if cancel else "done"])
            self.assertTrue(world.closed)
            world.close()  # twice: nothing
            with self.assertRaisesRegex(ValueError, "world is closed"):
                world.step(dt=0.01, substeps=1)
            scene.close()

    def test_a_failed_or_interrupted_run_keeps_its_frames(self):
        """World.run's exception carries the frames collected before it (`frames`): a diverging
        run's, a cancelled run's and a run interrupted by KeyboardInterrupt's."""
        with shapematch.World.from_objects([{"shape": "box", "velocity": [0, 0, 0]}], backend="cpu", gravity=[0, 0, 0],
                                           check_interval=4) as w:
            start = w.positions
            w.step(1, dt=1 / 60, substeps=1)  # check 1 of 4: the check comes at the fourth step from here
            w.velocities = np.tile([3e5, 0, 0], (w.particle_count, 1))
            w.positions = start
            with self.assertRaises(shapematch.Diverged) as caught:
                w.run(steps=10, every=1, progress=False)
            frames = caught.exception.frames
            self.assertEqual(frames.shape, (3, w.particle_count, 3))  # the start and steps 1 and 2
            self.assertTrue(np.array_equal(frames[0], start))
            self.assertAlmostEqual(frames[2][0][0] - start[0][0], 2 * 3e5 / 60, delta=1.0)
            w.cancel()
            with self.assertRaises(shapematch.Cancelled) as caught:
                w.run(steps=10, progress=False)
            self.assertEqual(caught.exception.frames.shape, (1, w.particle_count, 3))
        with shapematch.World.from_objects([{"shape": "box", "resolution": [2, 2, 2]}], backend="cpu", ground={}) as w:
            timer = threading.Timer(0.2, _thread.interrupt_main)
            timer.start()
            try:
                with self.assertRaises(KeyboardInterrupt) as caught:
                    w.run(steps=2**31 - 1, every=100000, progress=False)
            finally:
                timer.join()
            frames = caught.exception.frames
            self.assertGreaterEqual(len(frames), 1)
            self.assertTrue(np.isfinite(frames).all())

    def test_indices_and_numbers_are_refused_in_other_types(self):
        """A bool is not an index (cut(True) would cut object 1) and a string not a number
        (dt="0.01"): TypeError; World.from_objects takes check_interval as scene.world() does."""
        with shapematch.World.from_objects([{"shape": "box"}, {"shape": "box", "position": [3, 0, 0]}], backend="cpu") as w:
            for call in (lambda: w.cut(True, [0, 0, 0], [1, 0, 0]), lambda: w.reset_object(np.bool_(True)),
                         lambda: w.object_particles(False), lambda: w.set_target(True, [0, 0, 0], 1.0),
                         lambda: w.step(True), lambda: w.step(dt="0.01"), lambda: w.step(dt=None, substeps=2.0),
                         lambda: w.set_target(0, [0, 0, 0], "5"), lambda: w.step(dt=1j)):
                with self.assertRaises(TypeError):
                    call()
            self.assertEqual(w.time, 0.0)
            self.assertEqual(len(w.objects), 2)
        with shapematch.World.from_objects([{"shape": "box", "velocity": [2e5, 0, 0]}], backend="cpu", check_interval=1) as w:
            with self.assertRaises(shapematch.Diverged):
                w.step()


class OpenCL(unittest.TestCase):
    def test_both_backends_agree(self):
        """compare(): the OpenCL positions within 1e-4 m of the CPU reference's over 30 steps."""
        rows = shapematch.compare(shapematch.Scene.from_dict(PILE), steps=30, every=10)
        self.assertEqual([r["step"] for r in rows], [10, 20, 30])
        self.assertLess(max(r["max"] for r in rows), 1e-4)
        self.assertGreater(len(shapematch.devices()), 0)

    def test_a_pyopencl_kernel_feeds_the_steps_without_host_transfers(self):
        """A world on the caller's pyopencl queue: its state as pyopencl arrays, forces from the
        caller's kernel, steps chained by events, and no transfer between host and device."""
        import pyopencl as cl  # pylint: disable=import-outside-toplevel
        import shapematch.opencl as smcl  # pylint: disable=import-outside-toplevel

        context = cl.create_some_context(interactive=False)
        queue = cl.CommandQueue(context)
        scene = {"gravity": [0, 0, 0], "objects": [{"shape": "box", "resolution": [3, 3, 3]}]}
        world = smcl.world_on(scene, queue)
        still = smcl.world_on(scene, queue)
        n = world.particle_count
        state = smcl.state(world)
        self.assertEqual(state["position"].shape, (n, 4))
        self.assertEqual(state["position"].dtype, np.float32)
        forces = cl.array.zeros(queue, (n, 4), np.float32)
        program = cl.Program(context, """
            __kernel void lift(__global float4 *force, __global const float4 *position) {
                const int i = get_global_id(0);
                force[i] = (float4)(0.0f, position[i].w * 3.0f, 0.0f, 0.0f); /* 3 m/s^2 up */
            }""").build()
        smcl.set_inputs(world, forces=forces)
        smcl.step(world).wait()  # the first step uploads the world
        smcl.step(still).wait()
        transfers = world.profile["transfers"]
        event = None
        for _ in range(30):
            kernel_event = program.lift(queue, (n,), None, forces.data, state["position"].data,
                                        wait_for=[event] if event else None)
            event = smcl.step(world, wait_for=[kernel_event])
            smcl.step(still)
        event.wait()
        self.assertEqual(world.profile["transfers"], transfers)
        lifted = state["position"].get()[:, 1].mean() - smcl.state(still)["position"].get()[:, 1].mean()
        # 30 steps of h = 1/60 s at a = 3 m/s^2, semi-implicit Euler: h^2 a (1 + 2 + ... + 30) = 0.3875 m
        self.assertAlmostEqual(lifted, 0.3875, delta=1e-3)
        world.close()
        still.close()
        # on a context, the world makes its own queue
        with smcl.world_on(scene, context) as own:
            self.assertEqual(smcl.queue(own).context.int_ptr, context.int_ptr)
            smcl.step(own, steps=2).wait()
            self.assertEqual(smcl.state(own)["velocity"].shape, (n, 4))

    def test_pyopencl_inputs_are_checked(self):
        """set_inputs takes float32 (n, 4) pyopencl Arrays and Buffers of 16 bytes a particle
        of the world's context, and refuses another dtype, shape, size or kind (a numpy array)
        clearly; queue() of a CPU world says it has none; step(steps=0) returns an event too;
        forces beyond the float range are refused whole on OpenCL."""
        import pyopencl as cl  # pylint: disable=import-outside-toplevel
        import shapematch.opencl as smcl  # pylint: disable=import-outside-toplevel

        context = cl.create_some_context(interactive=False)
        queue = cl.CommandQueue(context)
        scene = {"gravity": [0, 0, 0], "objects": [{"shape": "box", "resolution": [3, 3, 3]}]}
        with smcl.world_on(scene, queue) as world:
            n = world.particle_count
            bad = [(TypeError, cl.array.zeros(queue, (n, 4), np.float64)), (ValueError, cl.array.zeros(queue, (n - 1, 4), np.float32)),
                   (ValueError, cl.array.zeros(queue, (n * 4,), np.float32)), (TypeError, np.zeros((n, 4), np.float32)),
                   (ValueError, cl.Buffer(context, cl.mem_flags.READ_WRITE, 16 * n - 16)), (TypeError, "forces")]
            for error, value in bad:
                for field in ("forces", "targets"):
                    with self.assertRaises(error, msg=(field, value)):
                        smcl.set_inputs(world, **{field: value})
            smcl.set_inputs(world, forces=cl.Buffer(context, cl.mem_flags.READ_WRITE, 16 * n),
                            targets=cl.array.zeros(queue, (n, 4), np.float32))
            smcl.set_inputs(world)
            event = smcl.step(world, steps=0)
            self.assertIsInstance(event, cl.Event)
            event = smcl.step(world, steps=0, wait_for=smcl.step(world))
            self.assertIsInstance(event, cl.Event)
            event.wait()
            self.assertGreater(world.time, 0.0)
            forces = np.zeros((n, 3))
            forces[n // 2, 1] = 1e300
            with self.assertRaises(shapematch.InvalidArgument):
                world.forces = forces
            self.assertTrue(np.array_equal(world.forces, np.zeros((n, 3))))
        with shapematch.World.from_objects([{"shape": "box"}], backend="cpu") as cpu:
            for call in (smcl.queue, smcl.state, smcl.step):
                with self.assertRaisesRegex(ValueError, "CPU reference"):
                    call(cpu)
        with shapematch.World.from_objects([{"shape": "box"}], backend="opencl") as own:
            self.assertEqual(smcl.state(own)["position"].shape, (own.particle_count, 4))

    def test_compare_takes_paths_and_dicts(self):
        with tempfile.TemporaryDirectory() as folder:
            path = pathlib.Path(folder) / "pile.json"
            path.write_text(json.dumps(PILE), encoding="utf-8")
            by_path = shapematch.compare(path, steps=4, every=2)
        by_dict = shapematch.compare(PILE, steps=4, every=2)
        self.assertEqual(by_path, by_dict)
        self.assertEqual([r["step"] for r in by_dict], [2, 4])
        with self.assertRaises(TypeError):
            shapematch.compare(42, steps=1)


class Batches(unittest.TestCase):
    def test_a_batch_on_two_workers_equals_the_runs_one_by_one(self):
        """Eight runs on a LocalCluster of two workers give the trajectories of the same eight run
        one by one, bit for bit; a bad run among them fails alone, with its message."""
        overrides = [{"objects.0.alpha": a, "objects.2.position": [0.05 * k, 1.8, 0.2]}
                     for k, a in enumerate((0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8))]
        overrides.insert(3, {"objects.1.alpha": 3.0})  # out of range: this run fails
        scene = shapematch.Scene.from_dict(PILE, origin="pile")
        results = shapematch.run_batch(scene, overrides, steps=20, every=5, backend="cpu", workers=2, progress=False)
        self.assertEqual(len(results), 8)
        bad = results[3]
        self.assertFalse(bad["ok"])
        self.assertIn('field "alpha"', bad["error"])
        for i, r in enumerate(results):
            if i == 3:
                continue
            self.assertTrue(r["ok"], r["error"])
            alone = shapematch.run_one(scene.text, scene.origin, overrides[i], 20, 5, "cpu", i)
            self.assertTrue(np.array_equal(r["trajectory"], alone["trajectory"]), i)
            self.assertEqual(r["summary"]["particles"], 81)
        # the runs differ from each other: the overrides reached them
        self.assertFalse(np.array_equal(results[0]["trajectory"], results[1]["trajectory"]))

    def test_a_batch_runs_on_a_cluster_at_an_address(self):
        """The same call on a cluster already running, given by its scheduler's address."""
        from dask.distributed import LocalCluster  # pylint: disable=import-outside-toplevel

        with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
            results = shapematch.run_batch(PILE, [{}, {"objects.1.beta": 0.9}], steps=4, every=2, backend="cpu",
                                           address=cluster.scheduler_address, progress=False)
        self.assertTrue(all(r["ok"] for r in results), [r["error"] for r in results])
        self.assertEqual(results[0]["trajectory"].shape, (3, 81, 3))

    def test_a_batch_writes_trajectories_to_a_folder(self):
        with tempfile.TemporaryDirectory() as folder:
            results = shapematch.run_batch(PILE, [{}, {"gravity": [0, -5, 0]}], steps=6, every=3, backend="cpu",
                                           workers=1, out_dir=folder, progress=False)
            self.assertTrue(all(r["ok"] for r in results))
            frames = np.load(results[1]["path"])
            self.assertEqual(frames.shape, (3, 81, 3))

    def test_a_batchs_arguments_are_checked_before_a_cluster_starts(self):
        from dask import distributed  # pylint: disable=import-outside-toplevel

        calls = [(TypeError, PILE, {"gravity": [0, -5, 0]}, {}), (TypeError, PILE, "objects.0.alpha", {}),
                 (TypeError, PILE, [{}, 0.5], {}), (TypeError, PILE, 3, {}), (ValueError, PILE, [{}], {"every": 0}),
                 (ValueError, PILE, [{}], {"steps": -1}), (TypeError, PILE, [{}], {"steps": 2.5}),
                 (ValueError, PILE, [{}], {"backend": "gpu"}), (ValueError, PILE, [{}], {"workers": 0}),
                 (TypeError, PILE, [{}], {"steps": True}), (TypeError, 42, [{}], {})]
        with mock.patch.object(distributed, "LocalCluster", side_effect=AssertionError("a cluster started")), \
                mock.patch.object(distributed, "Client", side_effect=AssertionError("a client started")):
            for error, scene, overrides, keywords in calls:
                with self.assertRaises(error, msg=(overrides, keywords)):
                    shapematch.run_batch(scene, overrides, progress=False, **keywords)

    def test_run_one_checks_the_state_at_the_end(self):
        """A run shorter than the check interval (60 steps) still fails when its state diverged
        (as `shapematch run` checks at its end); max_speed does not overflow."""
        rng = np.random.default_rng(53)
        for steps in (1, 59, int(rng.integers(2, 59))):
            scene = shapematch.Scene.from_dict({"objects": [{"shape": "box", "velocity": [1e300, 0, 0]}]})
            r = shapematch.run_one(scene.text, "fast", None, steps, steps, "cpu", 0)
            self.assertFalse(r["ok"])
            self.assertIn("SM_ERROR_DIVERGED", r["error"])
        v = rng.normal(size=(3,)) * 10
        scene = shapematch.Scene.from_dict({"gravity": [0, 0, 0], "objects": [{"shape": "box", "velocity": v.tolist()}]})
        r = shapematch.run_one(scene.text, "slow", None, 5, 5, "cpu", 0)
        self.assertTrue(r["ok"], r["error"])
        self.assertAlmostEqual(r["summary"]["max_speed"], float(np.linalg.norm(v)), delta=1e-9 * np.linalg.norm(v))
        big = np.array([[1e300, 1e300, 0.0], [3.0, 4.0, 0.0]])
        self.assertTrue(np.allclose(shapematch.core._norms(big), [np.sqrt(2) * 1e300, 5.0]))  # pylint: disable=protected-access

    def test_batches_on_one_client_keep_their_own_results_and_what_finished(self):
        """Batches on the client given: each with keys of its own (the same key would return an
        earlier batch's results); a scene file given as a Path, from another directory, with
        relative mesh paths and numpy overrides; and a batch stopped early (KeyboardInterrupt
        from its progress bar, which counts runs) keeps the runs that had finished in
        `results`, and cancels the others."""
        from dask.distributed import Client, LocalCluster  # pylint: disable=import-outside-toplevel

        scene = {"dt": 1 / 60, "objects": [{"shape": "box", "resolution": [2, 2, 2]}]}
        with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            submitted = []
            submit = client.submit

            def recording(*args, **keywords):
                submitted.append(submit(*args, **keywords))
                return submitted[-1]

            client.submit = recording
            text = shapematch.Scene.from_dict(scene).text
            for g in (-1.0, -2.0, -3.0):
                results = shapematch.run_batch(scene, [{"gravity": [0, g, 0]}] * 2, steps=6, every=6, backend="cpu",
                                               client=client, progress=False)
                alone = shapematch.run_one(text, "alone", {"gravity": [0, g, 0]}, 6, 6, "cpu", 0)
                for r in results:
                    self.assertTrue(r["ok"], r["error"])
                    self.assertTrue(np.array_equal(r["trajectory"], alone["trajectory"]), g)
                del results
            self.assertEqual(len({f.key for f in submitted}), len(submitted))

            cwd = os.getcwd()
            with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as elsewhere:
                path = pathlib.Path(write_mesh_scene(folder))
                os.chdir(elsewhere)
                try:
                    results = shapematch.run_batch(path, [{}, {"gravity": np.array([0.0, -2.0, 0.0])},
                                                          {"objects.0.position": [np.float32(0.5), np.int64(2), 0]}],
                                                   steps=np.int64(3), every=3, backend="cpu", client=client, progress=False)
                finally:
                    os.chdir(cwd)
            self.assertTrue(all(r["ok"] for r in results), [r["error"] for r in results])
            self.assertEqual(results[2]["trajectory"].shape, (2, 8, 3))

            units = []

            class Stop:  # a progress bar interrupted at the first run that finishes
                def __init__(self, total, progress, unit="step"):
                    units.append(unit)

                def update(self, k):
                    raise KeyboardInterrupt

                def close(self):
                    pass

            del submitted[:]
            slow = {"dt": 1.0, "substeps": 100000}
            with mock.patch.object(shapematch.core, "_progress", Stop):
                with self.assertRaises(KeyboardInterrupt) as caught:
                    shapematch.run_batch(scene, [{}, slow, slow], steps=2, every=1, backend="cpu", client=client)
            self.assertEqual(units, ["run"])
            kept = caught.exception.results
            self.assertEqual(len(kept), 3)
            self.assertEqual(sum(r is not None for r in kept), 1)
            for future, r in zip(submitted, kept):
                if r is None:
                    self.assertEqual(future.status, "cancelled")
                else:
                    self.assertTrue(r["ok"], r["error"])
                    self.assertEqual(r["trajectory"].shape, (3, 8, 3))


if __name__ == "__main__":
    unittest.main(verbosity=2)
