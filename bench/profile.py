"""Where the time of one minigrad training step goes: a profile and a same-run ratio.

    python -m bench.profile                         # moons at batch 32 and at 1000 points
    python -m bench.profile --cases lenet-f32 --steps 20 --top 25
    python -m bench.profile --fused --no-profile    # also: fused SGD against per-parameter
    python -m bench.profile --compiled --no-profile # also: minigrad.compile against the tuned loop
    python -m bench.profile --calls --cases lenet-f32 --no-profile  # each replayed call's time

For each case it times the minigrad step and the tuned NumPy step in this one process,
interleaved (so a burst of load on a busy machine lands on both), in CPU time of the process
with one BLAS thread, prints their ratio, then
runs the minigrad step under :mod:`cProfile` and prints the functions that take the most
time of their own. The ratio is a quick signal for deciding between two versions of the
code; the figures of record come from ``python -m bench`` on a quiet machine.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import time
from collections.abc import Callable

from .cases import CASES, init_params, make_data, sgd_step

__all__ = ["fused_ratio", "interleaved", "main", "profile", "ratio"]


def _time(step: Callable[[], object], n: int) -> float:
    """CPU seconds of this process per call: steadier than wall-clock time on a busy machine."""
    t0 = time.process_time()
    for _ in range(n):
        step()
    return (time.process_time() - t0) / n


def interleaved(first: Callable[[], object], second: Callable[[], object], rounds: int,
                n: int) -> tuple[float, float, float]:
    """(seconds per call of ``first``, of ``second``, their ratio): medians of ``rounds``
    blocks of ``n`` calls each, the two alternating, after three untimed calls of each."""
    for _ in range(3):
        first(), second()
    a, b = [], []
    for _ in range(rounds):
        a.append(_time(first, n))
        b.append(_time(second, n))
    ratios = sorted(x / y for x, y in zip(a, b))
    return statistics.median(a), statistics.median(b), statistics.median(ratios)


def ratio(case_name: str, rounds: int = 7, n: int = 200,
          compiled: bool = False) -> tuple[float, float, float]:
    """(minigrad seconds per step, NumPy seconds per step, their ratio), medians of rounds;
    ``compiled``: minigrad's step in ``minigrad.compile``."""
    from . import impl_minigrad, impl_numpy
    case = CASES[case_name]
    data, params = make_data(case), init_params(case)
    return interleaved(impl_minigrad.make_step(case, data, params, compiled=compiled),
                       impl_numpy.make_step(case, data, params), rounds, n)


def fused_ratio(case_name: str, rounds: int = 7, n: int = 200) -> tuple[float, float, float]:
    """(fused seconds per step, per-parameter seconds per step, their ratio): the whole
    minigrad step with ``optim.SGD(fused=None)`` against ``fused=False``, interleaved."""
    from . import impl_minigrad
    case = CASES[case_name]
    data, params = make_data(case), init_params(case)
    return interleaved(impl_minigrad.make_step(case, data, params, fused=None),
                       impl_minigrad.make_step(case, data, params, fused=False), rounds, n)


def profile(case_name: str, steps: int, top: int) -> str:
    """The ``top`` functions by own time over ``steps`` minigrad steps of ``case_name``."""
    from . import impl_minigrad
    case = CASES[case_name]
    step = impl_minigrad.make_step(case, make_data(case), init_params(case))
    for _ in range(3):
        step()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        step()
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def replayed_calls(case_name: str, passes: int = 3, top: int = 40) -> str:
    """The time of each call of the compiled step's replay, measured in place.

    The replay's calls are made one by one, in order, as a replay makes them, over ``passes``
    passes through the case's batches (of the first batch's shape), each call timed on its
    own: the cost of a call in the middle of a step, with the caches as the step leaves them,
    rather than the cost of the same call repeated alone (which is often half). Reads the
    compiled step's internals (``minigrad.compile``'s program): a profiling tool only.
    """
    import numpy as np

    import minigrad as mg

    from . import impl_minigrad
    case = CASES[case_name]
    data, params = make_data(case), init_params(case)
    model = impl_minigrad._model(case, params)
    opt = mg.optim.SGD(model.parameters(), lr=case.lr, momentum=case.momentum)
    step = mg.compile(sgd_step(model, opt, mg.functional.cross_entropy))
    batches = [(mg.Tensor(x), y) for x, y in data.batches]
    shape = batches[0][0].shape
    batches = [(x, y) for x, y in batches if x.shape == shape]
    for _ in range(4):
        step(*batches[0])
    program = next(e.program for e in step.entries.values()
                   if e.program is not None and e.program.inputs[0].shape == shape)
    # head: the calls a replay makes before the optimizers' per-step numbers are refilled
    # (everything that may still stop a replay safely); tail: the rest
    calls = [("head", k, c) for k, c in enumerate(program.head)] + \
        [("tail", k, c) for k, c in enumerate(program.tail)]
    spent = np.zeros(len(calls))
    clock = time.perf_counter
    for _ in range(passes):
        for x, y in batches:
            for buffer, arg in zip(program.inputs, (x.data, y)):
                np.copyto(buffer, arg)
            for k, (part, _, (fn, args, kwargs)) in enumerate(calls):
                if k == len(program.head):
                    for prologue in program.prologues:
                        prologue()
                t0 = clock()
                fn(*args, **kwargs)
                spent[k] += clock() - t0
    spent /= passes * len(batches)
    lines = [f"{case_name}: {len(calls)} calls, {spent.sum() * 1e6:.0f} us per step in all "
             f"(wall-clock, each call timed alone; the {top} slowest):"]
    for k in np.argsort(-spent)[:top]:
        part, i, (fn, args, _) = calls[k]
        shapes = [tuple(a.shape) if hasattr(a, "shape") else type(a).__name__
                  for a in args[:3]]
        lines.append(f"  {spent[k] * 1e6:8.1f} us  {part} call {i:<3} "
                     f"{getattr(fn, '__name__', '?'):<14} {shapes}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.profile",
                                description=__doc__.splitlines()[0])
    p.add_argument("--cases", default="moons-32-f32,moons-1000-f32")
    p.add_argument("--steps", type=int, default=2000, help="profiled steps per case")
    p.add_argument("--top", type=int, default=18, help="functions listed per case")
    p.add_argument("--n", type=int, default=200, help="steps per timed block")
    p.add_argument("--rounds", type=int, default=7, help="timed blocks per contender")
    p.add_argument("--no-profile", action="store_true", help="only the ratio")
    p.add_argument("--fused", action="store_true",
                   help="also time the step with optim.SGD(fused=False) against the default")
    p.add_argument("--compiled", action="store_true",
                   help="also time the step in minigrad.compile against the tuned loop")
    p.add_argument("--calls", action="store_true",
                   help="also time each call of the compiled step's replay, in place")
    args = p.parse_args(argv)
    try:
        from threadpoolctl import threadpool_limits
        limits = threadpool_limits(limits=1, user_api="blas")
    except ImportError:
        limits = None
    for name in args.cases.split(","):
        mine, tuned, r = ratio(name, args.rounds, args.n)
        print(f"{name}: minigrad {mine * 1e6:.1f} us, tuned NumPy {tuned * 1e6:.1f} us per "
              f"{CASES[name].unit} (CPU time): {r:.2f}x (median of {args.rounds} interleaved "
              "rounds)")
        if args.compiled:
            mine, tuned, r = ratio(name, args.rounds, args.n, compiled=True)
            print(f"{name}: minigrad compiled {mine * 1e6:.1f} us, tuned NumPy "
                  f"{tuned * 1e6:.1f} us per {CASES[name].unit} (CPU time): {r:.2f}x")
        if args.fused:
            f, loop, r = fused_ratio(name, args.rounds, args.n)
            print(f"{name}: SGD fused {f * 1e6:.1f} us, per-parameter {loop * 1e6:.1f} us per "
                  f"{CASES[name].unit} (CPU time): {r:.3f}x")
        if args.calls:
            print(replayed_calls(name, top=args.top))
        if not args.no_profile:
            print(profile(name, args.steps, args.top))
    del limits


if __name__ == "__main__":
    main()
