"""Same-process A/B of the eager training step: this checkout against an older commit.

``python -m bench.ab_eager [--rev REV] [--new REV] [--rounds N] [--cases NAME ...]`` loads the
package as it was at ``REV`` (default ``HEAD~1``) under another name (``minigrad_ab``, as
:mod:`bench.ab_compile` does), and the new one from this checkout (or, with ``--new``, as it
was at that commit, as ``minigrad_ab_new``: so that others' uncommitted work stays out), builds
every benchmark case of :mod:`bench.cases` in both engines from the same initial weights and
batches, and times one unit of each (a step; an epoch for LeNet-5) in alternating rounds (A, B, B, A, ...) in one process, so that the machine's drift
falls on both alike. The step is the eager one a user writes (``zero_grad``, forward,
``backward``, ``step``; no ``minigrad.compile``), exactly as :mod:`bench.impl_minigrad` builds
it. It prints, per case, the median time of each and the median of the per-round ratios
new / old, with their range; issue 26's bar is a paired median within 10%.

Before timing, each case runs three units in both engines and checks that every loss agrees
bit for bit, so a faster step that computed something else cannot pass. NumPy's BLAS gets one
thread (``OPENBLAS_NUM_THREADS`` and the like default to 1, as for the benchmarks' targets): on
a shared machine several threads make the big cases' times swing by a factor of two.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before NumPy loads its BLAS

import argparse  # noqa: E402 - the imports below, after the thread count is set
import importlib  # noqa: E402
import importlib.util  # noqa: E402
import io  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tarfile  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402

from .ab_compile import load_rev  # noqa: E402
from .cases import (CASES, Case, Data, as_unit, init_params, make_data,  # noqa: E402
                    sgd_step, token_cross_entropy)
from .impl_minigrad import _model as _bench_model  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _modules(mg: Any) -> tuple[Any, Any, Any]:
    name = mg.__name__
    return (importlib.import_module(f"{name}.functional"), importlib.import_module(f"{name}.nn"),
            importlib.import_module(f"{name}.optim"))


def _gpt_module(mg: Any) -> Any:
    """examples/char_gpt.py written against the engine ``mg`` (its imports renamed)."""
    name = f"char_gpt_{mg.__name__}"
    if name not in sys.modules:
        source = (ROOT / "examples" / "char_gpt.py").read_text("utf-8")
        # (the ONNX registration is left out, for both engines: export/ imports minigrad by
        # its own name, and the training step needs no ONNX)
        source = source.replace("import minigrad", f"import {mg.__name__}") \
                       .replace("from minigrad", f"from {mg.__name__}") \
                       .replace("\nregister_onnx(", "\n(lambda *a, **k: None)(")
        sys.path.insert(0, str(ROOT / "examples"))
        spec = importlib.util.spec_from_loader(name, loader=None)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        module.__file__ = str(ROOT / "examples" / "char_gpt.py")
        sys.modules[name] = module
        exec(compile(source, str(ROOT / "examples" / "char_gpt.py"), "exec"),  # noqa: S102
             module.__dict__)
    return sys.modules[name]


def _model(mg: Any, case: Case, params: list[np.ndarray], vocab: int) -> Any:
    """The network of ``case`` in the engine ``mg``, as bench.impl_minigrad builds it."""
    _, nn, _ = _modules(mg)
    dt = case.dtype
    if case.kind == "gpt":
        blocks, width, heads, context = case.sizes
        model = _gpt_module(mg).GPT(vocab, context, width, heads, blocks, seed=0, dtype=dt)
        model.load_state_dict(dict(zip(model.state_dict(), params)))
        return model
    return _bench_model(case, params, nn)


def eager_unit(mg: Any, case: Case, data: Data, params: list[np.ndarray]) -> Callable[[], Any]:
    """One unit of ``case`` (a step, or an epoch) with the engine ``mg``, eagerly."""
    F, _, optim = _modules(mg)
    model = _model(mg, case, params, data.n_classes)
    if case.kind == "gpt":
        opt = optim.AdamW(model.parameters(), lr=case.lr)
        return as_unit(case, list(data.batches),
                       sgd_step(model, opt, token_cross_entropy(F.cross_entropy)))
    opt = optim.SGD(model.parameters(), lr=case.lr, momentum=case.momentum)
    batches = [(mg.Tensor(x), y) for x, y in data.batches]
    return as_unit(case, batches, sgd_step(model, opt, F.cross_entropy))


def _value(result: Any) -> bytes:
    return np.asarray(result.data if hasattr(result, "data") else result).tobytes()


def per_call(run: Callable[[], Any], calls: int) -> float:
    """CPU seconds per call of this process (less moved by other processes than wall time)."""
    start = time.process_time()
    for _ in range(calls):
        run()
    return (time.process_time() - start) / calls


def ab_case(old: Any, new: Any, case: Case, rounds: int, seconds: float) -> tuple[float, ...]:
    """(old median s, new median s, median ratio, lowest ratio, highest ratio) of one case."""
    data, params = make_data(case), init_params(case)
    run_old, run_new = eager_unit(old, case, data, params), eager_unit(new, case, data, params)
    for k in range(3):
        a, b = run_old(), run_new()
        assert _value(a) == _value(b), f"{case.name}: the losses of unit {k} differ"
    start = time.process_time()
    run_new()
    calls = max(1, round(seconds / max(time.process_time() - start, 1e-6)))
    olds: list[float] = []
    news: list[float] = []
    ratios: list[float] = []
    for r in range(rounds):
        pair = [(run_old, olds), (run_new, news)]
        for run, times in (pair if r % 2 == 0 else pair[::-1]):
            times.append(per_call(run, calls))
        ratios.append(news[-1] / olds[-1])
    return (statistics.median(olds), statistics.median(news), statistics.median(ratios),
            min(ratios), max(ratios))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rev", default="HEAD~1", help="the older commit (default HEAD~1)")
    parser.add_argument("--new", default=None, help="the newer commit (default: this checkout)")
    parser.add_argument("--rounds", type=int, default=9, help="alternating rounds per case")
    parser.add_argument("--seconds", type=float, default=0.2,
                        help="CPU seconds one timing of one engine lasts, about")
    parser.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES),
                        metavar="CASE", help=f"cases to run (default all: {', '.join(CASES)})")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        old = load_rev(args.rev, Path(tmp), "minigrad_ab")
        new = importlib.import_module("minigrad") if args.new is None else \
            load_rev(args.new, Path(tmp), "minigrad_ab_new")
        print(f"A/B of the eager step: {args.new or 'this checkout'} (new) against {args.rev} "
              f"(old), {args.rounds} rounds of about {args.seconds} s each")
        print(f"{'case':16s} {'old ms':>9s} {'new ms':>9s} {'new/old':>8s}  range")
        for name in args.cases:
            o, n, ratio, lo, hi = ab_case(old, new, CASES[name], args.rounds, args.seconds)
            print(f"{name:16s} {o * 1e3:9.3f} {n * 1e3:9.3f} {ratio:8.3f}  {lo:.3f}-{hi:.3f}",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
