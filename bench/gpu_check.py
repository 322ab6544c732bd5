"""The GPU check (issue 18): the engine's tests on CuPy, then minigrad against PyTorch CUDA.

``bash bench/gpu_check.sh`` runs both steps and keeps the log; this module is what it calls:

    python -m bench.gpu_check tests [--cpu]           # the namespace-parametrised tests
    python -m bench.gpu_check bench [--cpu] [--out F]  # the training steps, timed

**tests** runs every engine test that takes an array namespace on CuPy (the ``ns``-parametrised
tests of the files that import :mod:`engine_helpers`, with ``MINIGRAD_TEST_NAMESPACES=cupy``),
and all of ``tests/engine/test_gpu.py``.

**bench** trains three networks in float32 with minigrad on CuPy and with PyTorch CUDA eager,
from the same initial weights on the same batches (the models of :mod:`bench.impl_minigrad`
and :mod:`bench.impl_torch`):

* ``moons``: the 2-16-16-2 MLP on the 1000 moons points, SGD;
* ``lenet``: LeNet-5 on 32x32 images at batch 256, SGD with momentum;
* ``mlp4096``: a 1024-4096-4096-10 MLP at batch 1024, SGD.

The first :data:`AGREE_STEPS` losses of both must agree within :data:`LOSS_RTOL` (relative,
``|a - b| <= LOSS_RTOL * max(1, |b|)``), with TF32 off on both sides: PyTorch's matmul and
cuDNN flags, and ``CUPY_TF32=0``. Then both are timed in alternating rounds (the GPU
synchronized after each round) and the medians and their ratio printed, against the targets
of issue 18 (the MLP within 1.5x of PyTorch, LeNet-5 within 2x).

``--cpu`` is the rehearsal: the same steps on NumPy and PyTorch CPU, on any machine.
"""
from __future__ import annotations

import os

os.environ.setdefault("CUPY_TF32", "0")  # read when CuPy is imported: before minigrad is

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import signal  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

LOSS_RTOL = 1e-4   # float32, TF32 off: the losses of the first steps agree to this
AGREE_STEPS = 3    # steps from the same weights on the same batches whose losses are compared


@dataclass(frozen=True)
class GpuCase:
    """One network of the check, with the largest allowed minigrad / PyTorch ratio."""

    name: str
    title: str
    kind: str                 # "mlp" or "lenet"
    batch: int
    sizes: tuple[int, ...] = ()
    lr: float = 0.1
    momentum: float = 0.0
    target: float | None = None


CASES = [
    GpuCase("moons", "moons MLP 2-16-16-2, batch 1000", "mlp", 1000, (2, 16, 16, 2)),
    GpuCase("lenet", "LeNet-5, 1x32x32, batch 256", "lenet", 256, lr=0.05, momentum=0.9,
            target=2.0),
    GpuCase("mlp4096", "MLP 1024-4096-4096-10, batch 1024", "mlp", 1024, (1024, 4096, 4096, 10),
            lr=0.01, target=1.5),
]


# ---------------------------------------------------------------------------------------------
# Step 1: the tests


def _namespace_test_files() -> list[str]:
    """The test files whose tests take an array namespace (they import engine_helpers), and
    those with GPU tests of their own (they ask ``cupy_available``); not
    tests/engine/test_gpu.py."""
    files = sorted(p for p in (ROOT / "tests").rglob("test_*.py") if p.name != "test_gpu.py"
                   and ("engine_helpers import" in p.read_text()
                        or "cupy_available" in p.read_text()))
    return [str(p.relative_to(ROOT)) for p in files]


def namespace_test_ids(collected: str, ns: str) -> list[str]:
    """The test ids in ``pytest --collect-only -q`` output that run on namespace ``ns``.

    ``tests/engine/test_tensor_ops.py::test_unary_vjp[exp-cupy]`` runs on cupy: one of the dash-
    separated parameters in brackets is the namespace's name. On cupy, the GPU tests of other
    files are taken too: those with "gpu" or "cuda" in their name.
    """
    ids = []
    for line in collected.splitlines():
        if "::" not in line:
            continue
        name, _, params = line.partition("[")
        if ns in params[:-1].split("-") or (
                ns == "cupy" and any(w in name.split("::")[-1] for w in ("gpu", "cuda"))):
            ids.append(line)
    return ids


def run_tests(ns: str, limit: float) -> int:
    """Run the ``ns``-parametrised tests on namespace ``ns``, and tests/engine/test_gpu.py.

    The run is stopped after ``limit`` seconds, pytest's worker processes with it.
    """
    env = dict(os.environ, MINIGRAD_TEST_NAMESPACES=ns)
    env.setdefault("HYPOTHESIS_PROFILE", "ci")
    base = [sys.executable, "-m", "pytest", "-o", "addopts=", "-p", "no:cacheprovider"]
    files = _namespace_test_files()
    listed = subprocess.run(base + ["--collect-only", "-q", *files], env=env, cwd=ROOT,
                            capture_output=True, text=True)
    ids = namespace_test_ids(listed.stdout, ns)
    if listed.returncode != 0 or not ids:
        print(listed.stdout[-4000:], listed.stderr[-4000:])
        print(f"tests: collecting the {ns} tests failed (exit {listed.returncode}, "
              f"{len(ids)} found)")
        return listed.returncode or 1
    print(f"tests: {len(ids)} namespace tests on {ns} from {', '.join(files)}, "
          "and tests/engine/test_gpu.py", flush=True)
    workers: list[str] = []
    try:
        import xdist  # noqa: F401  (on the GPU machine: compile CuPy's kernels in parallel)
        workers = ["-n", "4"]
    except ImportError:
        pass
    run = subprocess.Popen(base + ["-q", "-rs", "--tb=short", *workers, "tests/engine/test_gpu.py", *ids], env=env,
                           cwd=ROOT, start_new_session=True)  # its own group: killed as one
    try:
        return run.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
        print(f"tests: stopped after {limit:.0f} s")
        return 124


# ---------------------------------------------------------------------------------------------
# Step 2: the training steps


def _data(case: GpuCase, seed: int = 0) -> tuple[list[tuple[np.ndarray, np.ndarray]],
                                                  list[np.ndarray]]:
    """Four batches and the initial weights (PyTorch's layout and init), float32."""
    from bench.cases import init_params

    rng = np.random.default_rng(seed)
    if case.name == "moons":
        from minigrad.data import moons
        X, y = moons(case.batch, noise=0.1, seed=seed, dtype="float32")
        batches = [(X, y)]
    else:
        shape = (case.batch, 1, 32, 32) if case.kind == "lenet" else (case.batch, case.sizes[0])
        classes = 10
        batches = [(rng.standard_normal(shape).astype(np.float32),
                    rng.integers(0, classes, case.batch)) for _ in range(4)]
    return batches, init_params(_bench_case(case), seed)


def _bench_case(case: GpuCase) -> Any:
    """The same network as a :class:`bench.cases.Case`, for the models of bench.impl_*."""
    from bench.cases import Case
    return Case(case.name, case.title, case.kind, "float32", case.batch, case.sizes, case.lr,
                case.momentum)


def _sgd_step(model: Any, opt: Any, data: list, cross_entropy: Callable) -> Callable[[int], Any]:
    """``step(i)``: one optimizer step of ``model`` on batch ``i`` of ``data`` (cyclic), in
    minigrad or PyTorch alike; returns the loss unread (reading it would wait for the device)."""
    from bench.cases import sgd_step
    train_step = sgd_step(model, opt, cross_entropy)

    def step(i: int) -> Any:
        return train_step(*data[i % len(data)])
    return step


def minigrad_step(case: GpuCase, batches: list, params: list, device: str
                  ) -> tuple[Callable[[int], float], Callable[[], None]]:
    """``step(i)`` trains on batch ``i`` and returns its loss (a Tensor), and ``sync()``."""
    import minigrad as mg
    import minigrad.functional as F
    from bench.impl_minigrad import _model
    from minigrad import optim

    model = _model(_bench_case(case), params).to(device)
    opt = optim.SGD(model.parameters(), lr=case.lr, momentum=case.momentum)
    data = [(mg.tensor(x, device=device), mg.tensor(y, device=device)) for x, y in batches]
    step = _sgd_step(model, opt, data, F.cross_entropy)
    if device == "cpu":
        return step, lambda: None
    import cupy
    return step, lambda: cupy.cuda.get_current_stream().synchronize()


def torch_step(case: GpuCase, batches: list, params: list, device: str
               ) -> tuple[Callable[[int], Any], Callable[[], None]]:
    """The same for PyTorch eager on ``device``."""
    import torch
    import torch.nn.functional as F
    from bench.impl_torch import _model

    model = _model(_bench_case(case), params).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=case.lr, momentum=case.momentum)
    data = [(torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)) for x, y in batches]
    step = _sgd_step(model, opt, data, F.cross_entropy)
    if device == "cpu":
        return step, lambda: None
    return step, torch.cuda.synchronize


def losses_agree(a: list[float], b: list[float]) -> tuple[bool, float]:
    """Whether each loss of ``a`` is within LOSS_RTOL of ``b``'s; the largest relative gap."""
    gaps = [abs(x - y) / max(1.0, abs(y)) for x, y in zip(a, b)]
    return all(g <= LOSS_RTOL for g in gaps) and len(a) == len(b), max(gaps)


def time_pair(steps: dict[str, tuple[Callable, Callable]], budget: float, rounds: int
              ) -> dict[str, float]:
    """Median seconds per step of each contender, timed in alternating rounds.

    One warm-up step each, then ``rounds`` rounds; in each, every contender runs ``n`` steps
    back to back and the device is synchronized once at the end. ``n`` is chosen from the
    warm-up so that all rounds together take about ``budget`` seconds.
    """
    first = {}
    for name, (step, sync) in steps.items():
        sync()
        t0 = time.perf_counter()
        step(0)
        sync()
        first[name] = time.perf_counter() - t0
    per_round = budget / rounds
    n = max(1, min(50, int(per_round / max(sum(first.values()), 1e-6))))
    times: dict[str, list[float]] = {name: [] for name in steps}
    order = list(steps)
    for r in range(rounds):
        for name in (order if r % 2 == 0 else order[::-1]):
            step, sync = steps[name]
            sync()
            t0 = time.perf_counter()
            for i in range(n):
                step(i)
            sync()
            times[name].append((time.perf_counter() - t0) / n)
    return {name: statistics.median(t) for name, t in times.items()}


def environment(cpu: bool) -> dict[str, Any]:
    """Versions and the device, for the report."""
    import torch

    info: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "python": platform.python_version(), "numpy": np.__version__, "torch": torch.__version__,
        "machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
    }
    import array_api_compat
    info["array_api_compat"] = array_api_compat.__version__
    if not cpu:
        import cupy
        props = cupy.cuda.runtime.getDeviceProperties(0)
        name = props["name"]
        info.update(gpu=name.decode() if isinstance(name, bytes) else str(name),
                    cupy=cupy.__version__,
                    cupy_package=_cupy_package(),
                    cuda_runtime=cupy.cuda.runtime.runtimeGetVersion(),
                    cuda_driver=cupy.cuda.runtime.driverGetVersion(),
                    torch_cuda=torch.version.cuda, torch_gpu=torch.cuda.get_device_name(0),
                    CUPY_TF32=os.environ.get("CUPY_TF32"))
    return info


def _cupy_package() -> str:
    from importlib import metadata
    names = [d.metadata["Name"] for d in metadata.distributions()
             if (d.metadata["Name"] or "").lower().startswith("cupy")]
    return ", ".join(sorted(names)) or "unknown"


def run_bench(cpu: bool, out: Path | None, only: list[str] | None = None) -> int:
    """Check the losses and time every case; print the table, write it (and JSON) to ``out``."""
    import torch

    device = "cpu" if cpu else "cuda"
    if not cpu:
        from minigrad.backend import cuda_problem
        problem = cuda_problem()
        if problem is not None:
            print(f"bench: minigrad cannot use the GPU: {problem}")
            return 2
        if not torch.cuda.is_available():
            print("bench: PyTorch sees no CUDA device")
            return 2
    torch.backends.cuda.matmul.allow_tf32 = False  # the comparison is float32 against float32
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    engine = "minigrad/NumPy" if cpu else "minigrad/CuPy"
    reference = "PyTorch CPU" if cpu else "PyTorch CUDA"
    info = environment(cpu)
    lines = [f"GPU check ({'--cpu rehearsal' if cpu else 'GPU'}), {info['date']}",
             "  " + ", ".join(f"{k} {v}" for k, v in info.items() if k != "date"),
             f"  float32; TF32 off; losses of the first {AGREE_STEPS} steps must agree within "
             f"rtol {LOSS_RTOL:g} (|a - b| <= {LOSS_RTOL:g} * max(1, |b|))", ""]
    print("\n".join(lines), flush=True)
    results, ok = [], True
    for case in CASES:
        if only and case.name not in only:
            continue
        t0 = time.perf_counter()
        try:  # a case that breaks is reported, and the others still run
            batches, params = _data(case)
            steps = {"minigrad": minigrad_step(case, batches, params, device),
                     "torch": torch_step(case, batches, params, device)}
            losses = {name: [float(step(i).item()) for i in range(AGREE_STEPS)]
                      for name, (step, _) in steps.items()}
            agree, gap = losses_agree(losses["minigrad"], losses["torch"])
            times = time_pair(steps, budget=4.0 if cpu else 3.0, rounds=3 if cpu else 5)
        except Exception:
            ok = False
            line = f"{case.name:8s} FAILED:\n{traceback.format_exc()}"
            lines.append(line)
            print(line, flush=True)
            continue
        ok &= agree
        ratio = times["minigrad"] / times["torch"]
        met = "" if case.target is None else ("met" if ratio <= case.target else "missed")
        results.append(dict(case=case.name, title=case.title, losses=losses, agree=agree,
                            max_rel_gap=gap, minigrad_ms=times["minigrad"] * 1e3,
                            torch_ms=times["torch"] * 1e3, ratio=ratio, target=case.target,
                            seconds=time.perf_counter() - t0))
        line = (f"{case.name:8s} {case.title:36s} losses {'agree' if agree else 'DIFFER'} "
                f"(max rel gap {gap:.1e}; {losses['minigrad'][0]:.6f} vs "
                f"{losses['torch'][0]:.6f})  {engine} {times['minigrad'] * 1e3:8.3f} ms  "
                f"{reference} {times['torch'] * 1e3:8.3f} ms  ratio {ratio:5.2f}x"
                + (f" (target <= {case.target}x: {met})" if case.target else ""))
        lines.append(line)
        print(line, flush=True)
        del steps
    table = ["", f"| case | {engine} ms | {reference} ms | ratio | target | losses agree |",
             "|---|---:|---:|---:|---:|---|"]
    for r in results:
        target = f"<= {r['target']}x" if r["target"] else "-"
        table.append(f"| {r['title']} | {r['minigrad_ms']:.3f} | {r['torch_ms']:.3f} | "
                     f"{r['ratio']:.2f}x | {target} | {'yes' if r['agree'] else 'NO'} "
                     f"({r['max_rel_gap']:.0e}) |")
    verdict = ("bench: losses agree on every case" if ok else
               "bench: FAILED: losses differ or a case broke (see above)")
    print("\n".join(table + ["", verdict]), flush=True)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("\n".join(lines + table + ["", verdict]) + "\n")
        out.with_suffix(".json").write_text(json.dumps(
            {"environment": info, "loss_rtol": LOSS_RTOL, "results": results}, indent=1))
        print(f"bench: written to {out} and {out.with_suffix('.json')}")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=["tests", "bench"])
    parser.add_argument("--cpu", action="store_true",
                        help="rehearsal: NumPy and PyTorch CPU instead of CuPy and PyTorch CUDA")
    parser.add_argument("--out", type=Path, help="write the bench table here (and .json)")
    parser.add_argument("--cases", help="comma-separated subset of " +
                        ",".join(c.name for c in CASES))
    parser.add_argument("--limit", type=float, default=140.0,
                        help="tests: stop the test run after this many seconds")
    args = parser.parse_args(argv)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    if args.step == "tests":
        return run_tests("numpy" if args.cpu else "cupy", args.limit)
    return run_bench(args.cpu, args.out, args.cases.split(",") if args.cases else None)


if __name__ == "__main__":
    sys.exit(main())
