"""Batches of runs of one scene on a Dask cluster (dask.distributed): a parameter sweep or a data
set, each run on a worker, gathered with its trajectory and summary, failures reported per run.

    import shapematch
    results = shapematch.run_batch("scenes/pile.json", [{"objects.0.alpha": a} for a in (0.2, 0.5, 0.8)],
                                   steps=120, every=10)

With no `client` or `address` it starts a LocalCluster on this machine (one process per worker,
one thread each); `address="tcp://scheduler:8786"` runs on a cluster you already have. Every worker
needs this package and the library (the same versions). Where a machine has several OpenCL
devices its workers take one each (worker k device k, GPUs first); else a worker's device is
its default one ($SM_DEVICE in the worker's environment chooses another). Backend "default"
takes OpenCL where the worker has a device and the CPU reference where it has none."""

import functools
import os
import time
import traceback
import uuid

import numpy as np

from . import core


def run_one(scene_text, origin, overrides, steps, every, backend, index, out_dir=None, device=None):
    """One run of a batch, as a worker makes it: the scene with `overrides` applied, stepped
    `steps` times, the positions every `every` steps, the state checked every 60 steps and at the
    end (a non-finite or diverging state fails the run, as in `shapematch run`; at the end from
    the host: positions and velocities finite, no particle faster than the scene's check_speed).
    Never raises (KeyboardInterrupt aside): returns {"index", "ok", "error" (the library's message,
    or the exception's), "overrides", "summary", "trajectory" (float64 (frames, particles, 3), or
    None when written to `out_dir` as run_INDEX.npy: "path")}. The summary: backend, device,
    particles, steps done, simulated time, wall seconds, the largest speed at the end."""
    result = {"index": index, "ok": False, "error": None, "overrides": overrides, "summary": None, "trajectory": None}
    start = time.monotonic()
    try:
        if device is None and backend != "cpu":
            device = _worker_device()
        scenes = [core.Scene.from_json(scene_text, origin)]
        try:
            if overrides:
                scenes.append(scenes[0].with_overrides(overrides))
            scene = scenes[-1]
            # the state checked every 60 steps, as `shapematch run` does: a diverging run fails
            with scene.world(backend=backend, device=device, check_interval=60) as world:
                frames = world.run(steps=steps, every=every, progress=False)
                # and at the end, as `shapematch run` does, for the steps since the last check
                world._check_state(origin)  # pylint: disable=protected-access
                result["summary"] = {
                    "backend": world.backend,
                    "device": world.device,
                    "particles": world.particle_count,
                    "steps": scene.steps if steps is None else int(steps),
                    "time": world.time,
                    "wall_s": time.monotonic() - start,
                    "max_speed": float(core._norms(world.velocities).max(initial=0.0)),  # pylint: disable=protected-access
                }
        finally:
            for made in scenes:
                made.close()
        if out_dir:
            path = os.path.join(out_dir, "run_%04d.npy" % index)
            np.save(path, frames)
            result["path"] = path
        else:
            result["trajectory"] = frames
        result["ok"] = True
    except core.ShapematchError as error:
        result["error"] = str(error)
    except Exception as error:  # pylint: disable=broad-except
        # a bad override (KeyError), a full disk: this run fails, the batch goes on
        result["error"] = "%s: %s\n%s" % (type(error).__name__, error, traceback.format_exc(limit=3))
    return result


@functools.lru_cache(maxsize=1)
def _worker_device():
    """On a Dask worker of a machine with several OpenCL devices, one device per worker: the
    worker of name k (LocalCluster names them 0, 1, ...) takes device k modulo their count, the
    GPUs first when there are any; else None (the library's default, $SM_DEVICE). Found once per
    worker process."""
    try:
        from dask.distributed import get_worker  # pylint: disable=import-outside-toplevel

        name = get_worker().name
    except (ImportError, ValueError):
        return None
    found = core.devices()
    gpus = [d for d in found if d["gpu"]]
    pool = gpus or found
    if len(pool) < 2 or not str(name).isdigit():
        return None
    return str(pool[int(name) % len(pool)]["index"])


def _check_arguments(overrides, steps, every, backend, workers):
    """run_batch()'s arguments checked before any cluster starts; returns the overrides as a list."""
    if isinstance(overrides, (dict, str, bytes)) or not hasattr(overrides, "__iter__"):
        raise TypeError("overrides must be a list with one entry per run (a dict of dotted paths to values, a "
                        "function, or None), got %r" % type(overrides).__name__)
    overrides = list(overrides)
    for i, o in enumerate(overrides):
        if not (o is None or isinstance(o, dict) or callable(o)):
            raise TypeError("overrides[%d] must be a dict of dotted paths to values, a function or None, got %r" % (i, o))
    if steps is not None:
        core._int32(steps, "steps", 0)  # pylint: disable=protected-access
    core._int32(every, "every", 1)  # pylint: disable=protected-access
    if backend not in core.N.BACKENDS:
        raise ValueError("backend must be one of %s, got %r" % (", ".join(core.N.BACKENDS), backend))
    if workers is not None:
        core._int32(workers, "workers", 1)  # pylint: disable=protected-access
    return overrides


def run_batch(
    scene,
    overrides,
    steps=None,
    every=1,
    backend="default",
    client=None,
    address=None,
    workers=None,
    out_dir=None,
    progress=None,
):
    """Runs `scene` (a path, a Scene or a dict) once per entry of `overrides` (a list of dicts of
    dotted paths to values, or of functions; None or {} for the scene as it is) on a Dask
    cluster, and returns the results in the order of `overrides` (run_one()'s dicts). A run
    that fails carries ok False and its message; the others complete. client: a
    dask.distributed Client to use; address: a scheduler's address to connect to; else a
    LocalCluster of `workers` processes (default: the CPU count, at most the runs) is started
    and closed. out_dir: write each trajectory there as run_INDEX.npy instead of returning it.
    progress: a bar over the runs as they finish (tqdm where installed; None: on a terminal).

    The arguments are checked before a cluster starts (TypeError, ValueError): steps None or
    >= 0, every >= 1, a known backend, workers >= 1. When the batch stops early (Ctrl-C's
    KeyboardInterrupt, or an error of the cluster's), the exception carries the runs that had
    finished as `results` (the list in the order of `overrides`, None for the others), and the
    runs not finished are cancelled on the cluster."""
    try:
        from dask.distributed import Client, LocalCluster, as_completed  # pylint: disable=import-outside-toplevel
    except ImportError as error:
        raise ImportError(
            "shapematch.run_batch needs dask.distributed (apt-get install python3-distributed, or pip install distributed)"
        ) from error
    overrides = _check_arguments(overrides, steps, every, backend, workers)
    scene, made = core._scene_of(scene)  # pylint: disable=protected-access
    try:
        text = scene.text
        origin = scene.origin
        if scene.path:  # the workers read the text: mesh paths made absolute, as the file had them
            folder = os.path.dirname(os.path.abspath(scene.path))
            text = core._dumps(core._absolute_paths(scene.to_dict(), folder))  # pylint: disable=protected-access
    finally:
        if made:
            scene.close()
    if out_dir:
        out_dir = os.path.abspath(core._path(out_dir, "out_dir"))  # pylint: disable=protected-access
        os.makedirs(out_dir, exist_ok=True)
    own_cluster = None
    if client is None:
        if address:
            client = Client(address)
        else:
            n = workers or min(len(overrides) or 1, os.cpu_count() or 1)
            own_cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None)
            client = Client(own_cluster)
    own_client = own_cluster is not None or address is not None
    batch = uuid.uuid4().hex  # keys of this batch's own: Dask returns a finished key's result to a later submit of it
    futures = []
    results = [None] * len(overrides)
    try:
        for i, o in enumerate(overrides):
            futures.append(client.submit(run_one, text, origin, o, steps, every, backend, i, out_dir,
                                         key="shapematch-run-%d-%s" % (i, batch), pure=False))
        index = {future.key: i for i, future in enumerate(futures)}
        bar = core._progress(len(futures), progress, unit="run")  # pylint: disable=protected-access
        try:
            for future in as_completed(futures):
                i = index[future.key]
                try:
                    r = future.result()
                except Exception as error:  # pylint: disable=broad-except
                    # the worker itself failed (killed, out of memory): this run fails alone
                    r = {"index": i, "ok": False, "error": "the worker failed: %s" % error, "overrides": overrides[i],
                         "summary": None, "trajectory": None}
                results[i] = r
                bar.update(1)
        finally:
            bar.close()
        return results
    except BaseException as error:
        # stopped early: the finished runs go with the exception, the others are cancelled
        unfinished = [f for f, r in zip(futures, results) if r is None]
        if unfinished and not own_client:
            try:
                client.cancel(unfinished)
            except Exception:  # pylint: disable=broad-except
                pass  # (a client that has failed: nothing left to cancel on)
        try:
            error.results = results
        except AttributeError:  # (an exception that takes no attributes)
            pass
        raise
    finally:
        if own_client:
            client.close()
        if own_cluster is not None:
            own_cluster.close()
