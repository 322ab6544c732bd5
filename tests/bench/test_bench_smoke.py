"""The benchmark command works: a tiny ``--quick`` run, without PyTorch, as CI can afford.

No timing is asserted (timings belong to the benchmark, not to tests): only that every
contender ran in its own process, computed the same losses, and that the table, the JSON and
the figure are written.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTENDERS = ["numpy", "byhand", "minigrad"]


def _bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bench", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess,
                                                                   Path]:
    out = tmp_path_factory.mktemp("bench")
    proc = _bench("--quick", "--contenders", ",".join(CONTENDERS), "--out", str(out))
    return proc, out


def test_quick_run_succeeds_and_prints_the_table(quick_run):
    proc, _ = quick_run
    assert proc.returncode == 0, proc.stderr
    assert "| case | NumPy (tuned) | byhand loop | minigrad | minigrad / NumPy |" in proc.stdout
    for case in ("moons-32-f32", "moons-1000-f32"):
        assert f"| {case} |" in proc.stdout
    assert "1 thread" in proc.stdout and "default threads" in proc.stdout
    assert "First losses agree" in proc.stdout


def test_results_json_has_every_case_contender_and_thread_setting(quick_run):
    proc, out = quick_run
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "results.json").read_text())
    runs = {(r["case"], r["contender"], r["threads"]) for r in report["results"]}
    assert runs == {(c, k, t) for c in ("moons-32-f32", "moons-1000-f32")
                    for k in CONTENDERS for t in ("1", "default")}
    for r in report["results"]:
        assert r["median_s"] > 0 and r["cpu_median_s"] > 0
        assert len(r["times_s"]) == 3  # --quick: three timed repeats, one round
    for threads in ("1", "default"):
        for case in ("moons-32-f32", "moons-1000-f32"):
            ratios = report["ratios"][threads][case]
            assert set(ratios) == {"numpy", "byhand"}
    # the same weights and batches give the same losses in every contender
    assert all(a["agree"] for a in report["loss_agreement"].values()), report["loss_agreement"]
    assert {(v["case"], v["versus"]) for v in report["targets"]} == {
        ("moons-1000-f32", "numpy"), ("moons-32-f32", "numpy")}
    assert report["machine"]["numpy"] and report["machine"]["cpu"]
    for v in report["targets"]:  # --quick: one process per contender, so one pair
        mine = next(r for r in report["results"] if (r["case"], r["contender"], r["threads"])
                    == (v["case"], v["contender"], "1"))
        other = next(r for r in report["results"] if (r["case"], r["contender"], r["threads"])
                     == (v["case"], v["versus"], "1"))
        expected = mine["process_medians_s"][0] / other["process_medians_s"][0]
        assert v["paired"] == {"median": expected, "min": expected, "max": expected, "n": 1}


def test_paired_ratios_pair_the_processes_that_ran_side_by_side():
    from bench.report import paired_ratios
    # three slots; the machine got twice as slow for the second: the pairs still agree
    assert paired_ratios([1.1, 2.2, 1.2], [1.0, 2.0, 1.0]) == pytest.approx(
        {"median": 1.1, "min": 1.1, "max": 1.2, "n": 3})
    assert paired_ratios([1.0, 2.0], [1.0]) is None  # not the same processes: no pairs
    assert paired_ratios([], []) is None


def test_the_figure_is_written(quick_run):
    pytest.importorskip("matplotlib")
    proc, out = quick_run
    assert proc.returncode == 0, proc.stderr
    png = out / "results.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_threads_are_limited_in_the_one_thread_runs(quick_run):
    pytest.importorskip("threadpoolctl")
    _, out = quick_run
    report = json.loads((out / "results.json").read_text())
    for r in report["results"]:
        if r["threads"] == "1":
            pools = r["thread_info"]["pools"]
            assert all(p["threads"] == 1 for p in pools if p["api"] in ("openblas", "mkl")), pools


def test_unknown_case_is_refused_with_the_list_of_cases():
    proc = _bench("--cases", "moons-7", "--no-plot")
    assert proc.returncode != 0
    assert "unknown case 'moons-7'" in proc.stderr and "moons-32-f32" in proc.stderr


def test_worker_prints_one_json_result():
    proc = subprocess.run([sys.executable, "-m", "bench.worker", "moons-32-f32", "minigrad",
                           "--repeats", "2", "--min-time", "0", "--warmup", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["case"] == "moons-32-f32" and result["contender"] == "minigrad"
    assert len(result["times_s"]) == 2 and result["inner"] == 1
    assert 0.3 < result["losses"][0] < 1.5  # cross-entropy of 2 classes near ln 2 at the start
