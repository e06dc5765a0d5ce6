"""The Python package (python/shapematch) against the library and the command: run by CTest
(label "python") with Debian's python3, numpy, pyopencl and dask.distributed. The environment
names what to test: SHAPEMATCH_LIBRARY (the library), SHAPEMATCH_TOOL (the `shapematch`
command), SM_PY_LAYOUT (tests/python/layout.c built), SM_SOURCE_DIR (the repository)."""

import ctypes
import json
import os
import subprocess
import tempfile
import threading
import unittest

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


if __name__ == "__main__":
    unittest.main(verbosity=2)
