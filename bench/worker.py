"""Time one contender on one case, in this process, and print the result as one JSON line.

The runner (:mod:`bench.run`) starts one such process per (case, contender, threads), so no
contender runs in a process another one warmed up, and a contender's imports (PyTorch's
thread pools) cannot slow the others down.

    python -m bench.worker moons-32-f32 minigrad --threads 1
"""
from __future__ import annotations

import argparse
import gc
import importlib
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

CONTENDERS = ("numpy", "byhand", "minigrad", "compiled", "torch")
_MODULES = {"numpy": "bench.impl_numpy", "byhand": "bench.impl_byhand",
            "minigrad": "bench.impl_minigrad", "compiled": "bench.impl_minigrad",
            "torch": "bench.impl_torch"}
# "compiled" is the minigrad step wrapped in minigrad.compile: its first call runs eagerly and
# the next two record the step, so it warms up with at least three units before the clock.
_MIN_WARMUP = {"compiled": 3}


def _limit_threads(threads: str, contender: str) -> dict[str, Any]:
    """Limit every BLAS/OpenMP pool (and PyTorch's) to ``threads``; say what is in force."""
    info: dict[str, Any] = {"requested": threads}
    torch = sys.modules.get("torch") if contender == "torch" else None
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:  # the runner then set OMP/OPENBLAS/MKL_NUM_THREADS for us
        threadpool_info = threadpool_limits = None
        info["via"] = "environment" if threads != "default" else "none"
    if threads != "default":
        n = int(threads)
        if threadpool_limits is not None:
            # BLAS pools only (OpenBLAS, MKL): limiting PyTorch's OpenMP pool from outside
            # makes its workers wait on each other (wall time doubles); PyTorch's own
            # set_num_threads sets its OpenMP and MKL threads instead.
            info["_keep"] = threadpool_limits(limits=n, user_api="blas")
            info["via"] = "threadpoolctl (blas)" + (" + torch.set_num_threads" if torch else "")
        if torch is not None:
            torch.set_num_threads(n)
    if threadpool_info is not None:
        info["pools"] = [{"api": p.get("internal_api"), "library": os.path.basename(p["filepath"]),
                          "version": p.get("version"), "threads": p["num_threads"]}
                         for p in threadpool_info()]
    if torch is not None:
        info["torch_threads"] = torch.get_num_threads()
    return info


def _as_float(loss: Any) -> float:
    return float(loss.item() if hasattr(loss, "item") else loss)


def measure(step: Callable[[], Any], repeats: int, min_time: float, warmup: int) -> dict:
    """Median time of one call of ``step`` over ``repeats`` timed blocks, after warm-up.

    A block runs ``step`` ``inner`` times, with ``inner`` chosen so that a block lasts at least
    ``min_time`` seconds (timer resolution and one-off hiccups then do not matter). The
    garbage collector stays on, as in a user's training loop. Wall-clock time is what counts;
    the process's CPU time is recorded too (with one thread it equals the wall-clock time on a
    quiet machine, and it is less disturbed by other processes on a busy one).
    """
    losses = [_as_float(step()), _as_float(step())]   # the first two also warm up
    t0 = time.perf_counter()
    for _ in range(warmup):
        step()
    elapsed = time.perf_counter() - t0
    per_call = elapsed / warmup if warmup else 0.0
    inner = max(1, math.ceil(min_time / per_call)) if per_call > 0 else 1
    times, cpu_times = [], []
    for _ in range(repeats):
        gc.collect()
        c0, t0 = time.process_time(), time.perf_counter()
        for _ in range(inner):
            step()
        times.append((time.perf_counter() - t0) / inner)
        cpu_times.append((time.process_time() - c0) / inner)
    return {"median_s": statistics.median(times), "min_s": min(times), "times_s": times,
            "cpu_median_s": statistics.median(cpu_times), "cpu_times_s": cpu_times,
            "inner": inner, "losses": losses}


def run(case_name: str, contender: str, threads: str, repeats: int | None,
        min_time: float | None, warmup: int, seed: int, inputs: str | None = None) -> dict:
    """Build ``contender`` for ``case_name``, limit its threads, time it; a JSON-ready dict."""
    if contender == "torch":
        import torch  # noqa: F401 -- before the limits, so that its pools are limited too
    module = importlib.import_module(_MODULES[contender])
    info = _limit_threads(threads, contender)
    from .cases import CASES, init_params, load_inputs, make_data
    case = CASES[case_name]
    if inputs is not None:
        data, params = load_inputs(inputs)
    else:
        data, params = make_data(case, seed), init_params(case, seed)
    result: dict[str, Any] = {"case": case_name, "contender": contender, "threads": threads}
    try:
        if contender == "compiled":
            step = module.make_step(case, data, params, compiled=True)
        else:
            step = module.make_step(case, data, params)
    except NotImplementedError as e:  # e.g. the byhand library has no convolution
        result["skipped"] = str(e)
        return result
    warmup = max(warmup, _MIN_WARMUP.get(contender, 0))
    result.update(measure(step, case.repeats if repeats is None else repeats,
                          case.min_time if min_time is None else min_time, warmup))
    result["thread_info"] = {k: v for k, v in info.items() if not k.startswith("_")}
    return result


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("case")
    p.add_argument("contender", choices=CONTENDERS)
    p.add_argument("--threads", default="1", help="a number, or 'default' (no limit)")
    p.add_argument("--repeats", type=int, default=None)
    p.add_argument("--min-time", type=float, default=None)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--inputs", default=None,
                   help="an .npz from bench.cases.save_inputs (default: make the data here)")
    a = p.parse_args(argv)
    result = run(a.case, a.contender, a.threads, a.repeats, a.min_time, a.warmup, a.seed,
                 a.inputs)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
