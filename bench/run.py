"""Run the benchmarks: every case, every contender, one process each, and report.

    python -m bench                        # everything: about 15 minutes on two cores
    python -m bench --quick                # a smoke run: two small cases, a few repeats
    python -m bench --cases moons-32-f32 --contenders numpy,minigrad --threads 1

For each (case, threads) the contenders run one after another, each in a fresh Python
process (:mod:`bench.worker`); with ``--rounds 3`` the whole sweep runs three times,
interleaved, so that a burst of load on the machine lands on every contender alike. A cheap
case runs its contenders in several processes per round (``Case.processes``), since one
process's figure moves more than its repeats do. Times are medians over all the timed
repeats of all processes and rounds. The table goes to stdout; results go to
``bench/results.json`` and a figure to ``bench/results.png`` (``--out`` picks the folder).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: python bench/run.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "bench"

from bench.cases import CASES, TARGETS, save_inputs
from bench.report import plot, summarize, table
from bench.worker import CONTENDERS

ROOT = Path(__file__).resolve().parent.parent
QUICK_CASES = ("moons-32-f32", "moons-1000-f32")


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info: dict[str, Any] = {
        "cpu": cpu, "logical_cpus": os.cpu_count(), "platform": platform.platform(),
        "python": platform.python_version(),
    }
    from importlib.metadata import PackageNotFoundError, version
    for package in ("numpy", "torch", "threadpoolctl", "minigrad-course"):
        try:
            info[package] = version(package)
        except PackageNotFoundError:
            info[package] = None
    try:
        import numpy as np
        from threadpoolctl import threadpool_info
        info["blas"] = [f"{p.get('internal_api')} {p.get('version')} "
                        f"({p.get('threading_layer', '?')}, {p['num_threads']} threads by default)"
                        for p in threadpool_info() if p.get("user_api") == "blas"]
        del np
    except ImportError:
        pass
    return info


def _worker(case: str, contender: str, threads: str, args: argparse.Namespace,
            inputs: Path) -> dict:
    cmd = [sys.executable, "-m", "bench.worker", case, contender, "--threads", threads,
           "--warmup", str(args.warmup), "--seed", str(args.seed), "--inputs", str(inputs)]
    if args.repeats is not None:
        cmd += ["--repeats", str(args.repeats)]
    if args.min_time is not None:
        cmd += ["--min-time", str(args.min_time)]
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    if threads != "default" and importlib.util.find_spec("threadpoolctl") is None:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = threads  # no threadpoolctl: limit the pools before they start
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"bench.worker {case} {contender} --threads {threads} failed:\n"
                           f"{proc.stderr.strip()}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _merge(runs: list[dict]) -> dict:
    """One result from the same (case, contender, threads) measured in several processes (of
    one or more rounds)."""
    first = dict(runs[0])
    if "skipped" in first:
        return first
    times = [t for r in runs for t in r["times_s"]]
    cpu_times = [t for r in runs for t in r["cpu_times_s"]]
    first.update(times_s=times, median_s=statistics.median(times), min_s=min(times),
                 cpu_times_s=cpu_times, cpu_median_s=statistics.median(cpu_times),
                 processes=len(runs), process_medians_s=[r["median_s"] for r in runs],
                 process_cpu_medians_s=[r["cpu_median_s"] for r in runs])
    return first


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    p.add_argument("--cases", default=None,
                   help=f"comma-separated, of: {', '.join(CASES)} (default: all)")
    p.add_argument("--contenders", default=None,
                   help="comma-separated, of: numpy, byhand, minigrad, compiled (minigrad's "
                        "step in minigrad.compile), torch (default: all; "
                        "torch only where it is installed)")
    p.add_argument("--threads", default="1,default",
                   help="comma-separated thread settings: numbers and/or 'default'")
    p.add_argument("--rounds", type=int, default=None, help="sweeps over everything (3)")
    p.add_argument("--repeats", type=int, default=None, help="timed repeats per process")
    p.add_argument("--min-time", type=float, default=None,
                   help="seconds one timed repeat lasts at least")
    p.add_argument("--warmup", type=int, default=None, help="untimed units first (3)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true",
                   help="a smoke run: two small cases, 1 round, a few short repeats")
    p.add_argument("--out", default=str(ROOT / "bench"),
                   help="folder for results.json and results.png")
    p.add_argument("--no-plot", action="store_true", help="skip the figure")
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="what the table and targets use: wall-clock time (default), or the "
                        "process's CPU time, steadier on a busy machine (both are saved)")
    args = p.parse_args(argv)

    if args.quick:
        args.cases = args.cases or ",".join(QUICK_CASES)
        args.rounds = args.rounds or 1
        args.repeats = args.repeats or 3
        args.min_time = 0.02 if args.min_time is None else args.min_time
        args.warmup = 2 if args.warmup is None else args.warmup
    args.rounds = args.rounds or 3
    args.warmup = 3 if args.warmup is None else args.warmup
    cases = args.cases.split(",") if args.cases else list(CASES)
    for c in cases:
        if c not in CASES:
            p.error(f"unknown case {c!r}; the cases are: {', '.join(CASES)}")
    has_torch = importlib.util.find_spec("torch") is not None
    if args.contenders:
        contenders = args.contenders.split(",")
        for c in contenders:
            if c not in CONTENDERS:
                p.error(f"unknown contender {c!r}; the contenders are: {', '.join(CONTENDERS)}")
        if "torch" in contenders and not has_torch:
            p.error("torch is not installed: pip install -e '.[bench]', or leave torch out")
    else:
        contenders = [c for c in CONTENDERS if c != "torch" or has_torch]
        if not has_torch:
            print("note: torch is not installed; PyTorch is left out "
                  "(pip install -e '.[bench]')", file=sys.stderr)
    thread_settings = args.threads.split(",")

    jobs = [(c, t, k) for c in cases for t in thread_settings
            for _ in range(1 if args.quick else CASES[c].processes) for k in contenders]
    runs: dict[tuple[str, str, str], list[dict]] = {}
    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None
    start = time.time()
    total = len(jobs) * args.rounds
    done = 0
    about = machine()  # before scikit-learn (and SciPy's own BLAS) is imported below
    tmp = tempfile.TemporaryDirectory(prefix="minigrad-bench-")
    inputs = {}
    for case in cases:  # the data and weights, made once for every worker of the case
        inputs[case] = Path(tmp.name) / f"{case}.npz"
        save_inputs(CASES[case], args.seed, str(inputs[case]))
    for r in range(args.rounds):
        for case, threads, contender in jobs:
            result = _worker(case, contender, threads, args, inputs[case])
            runs.setdefault((case, threads, contender), []).append(result)
            done += 1
            shown = ("skipped: " + result["skipped"] if "skipped" in result
                     else f"{result['median_s'] * 1e3:9.3f} ms")
            print(f"[{done:3d}/{total}] round {r + 1} {case:15s} threads={threads:7s} "
                  f"{contender:8s} {shown}", file=sys.stderr, flush=True)

    tmp.cleanup()
    results = [_merge(v) for v in runs.values()]
    report = {
        "machine": about,
        "settings": {"cases": cases, "contenders": contenders, "threads": thread_settings,
                     "rounds": args.rounds, "repeats": args.repeats, "min_time": args.min_time,
                     "warmup": args.warmup, "seed": args.seed, "quick": args.quick,
                     "command": "python -m bench " + " ".join(argv if argv is not None
                                                                else sys.argv[1:])},
        "load_average": {"before": load_before,
                         "after": os.getloadavg() if hasattr(os, "getloadavg") else None},
        "seconds": round(time.time() - start, 1),
        "cases": {c: CASES[c].title for c in cases},
        "results": results,
    }
    report["clock"] = args.clock
    report.update(summarize(results, TARGETS, args.clock))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(report, indent=1) + "\n")
    print(table(report))
    if not args.no_plot:
        try:
            plot(report, out / "results.png")
        except ImportError:
            print("note: matplotlib is not installed; no figure", file=sys.stderr)
    print(f"\nwrote {out / 'results.json'}" + ("" if args.no_plot else
                                               f" and {out / 'results.png'}"))
    return report


if __name__ == "__main__":
    main()
