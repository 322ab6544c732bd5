"""Turn the workers' results into ratios, target verdicts, a Markdown table and a figure."""
from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from bench.cases import CASES

NAMES = {"numpy": "NumPy (tuned)", "byhand": "byhand loop", "minigrad": "minigrad",
         "compiled": "minigrad compiled", "torch": "PyTorch"}
ORDER = ("numpy", "byhand", "minigrad", "compiled", "torch")
OURS = ("minigrad", "compiled")  # the contenders whose ratios to the others are reported
# The first losses of a contender must equal the tuned NumPy ones to this relative tolerance:
# the same weights and batches give the same numbers, up to the order of float operations.
LOSS_RTOL = {"float32": 1e-4, "float64": 1e-10}


def summarize(results: list[dict], targets: dict[tuple[str, str], float],
              clock: str = "wall") -> dict[str, Any]:
    """Medians by (threads, case, contender), ratios of minigrad (``ratios``) and of the
    compiled step (``compiled_ratios``) to each other contender, target verdicts for both.

    ``clock`` picks the times: ``"wall"`` (wall-clock) or ``"cpu"`` (the process's CPU time).
    """
    key = "median_s" if clock == "wall" else "cpu_median_s"
    per_process = "process_medians_s" if clock == "wall" else "process_cpu_medians_s"
    medians: dict[str, dict[str, dict[str, float]]] = {}
    processes: dict[tuple[str, str, str], list[float]] = {}
    losses: dict[str, dict[str, list[float]]] = {}
    for r in results:
        if "skipped" in r:
            continue
        medians.setdefault(r["threads"], {}).setdefault(r["case"], {})[r["contender"]] = r[key]
        processes[r["threads"], r["case"], r["contender"]] = r.get(per_process) or []
        losses.setdefault(r["case"], {}).setdefault(r["contender"], r["losses"])
    every: dict[str, dict[str, dict[str, dict[str, float]]]] = {ours: {} for ours in OURS}
    for threads, by_case in medians.items():
        for case, t in by_case.items():
            for ours in OURS:
                if ours in t:
                    every[ours].setdefault(threads, {})[case] = {
                        other: t[ours] / t[other] for other in t if other not in OURS}
    verdicts = []
    for ours in OURS:
        for (case, other), limit in targets.items():
            ratio = every[ours].get("1", {}).get(case, {}).get(other)
            if ratio is not None:
                verdicts.append({"case": case, "contender": ours, "versus": other,
                                 "threads": "1", "target": limit, "ratio": ratio,
                                 "met": ratio <= limit,
                                 "paired": paired_ratios(processes.get(("1", case, ours), []),
                                                         processes.get(("1", case, other), []))})
    agreement = {}
    for case, by_contender in losses.items():
        ref = by_contender.get("numpy")
        if ref is None:
            continue
        rtol = LOSS_RTOL[CASES[case].dtype]
        worst = {k: max(abs(a - b) / abs(b) for a, b in zip(v, ref))
                 for k, v in by_contender.items()}
        agreement[case] = {"max_rel_diff": worst, "rtol": rtol,
                           "agree": all(w <= rtol for w in worst.values())}
    return {"medians_s": medians, "ratios": every["minigrad"],
            "compiled_ratios": every["compiled"], "targets": verdicts,
            "loss_agreement": agreement}


def paired_ratios(mine: list[float], other: list[float]) -> dict[str, Any] | None:
    """The ratio of each process of ``mine`` to the process of ``other`` that ran next to it.

    ``python -m bench`` runs the contenders of a case one after another, process slot by
    process slot, so the k-th process of each contender ran within seconds of the k-th of
    every other. On a machine whose speed drifts (a shared host), such a pair saw nearly the
    same machine, and the spread of the pairs' ratios shows how far one ratio can be trusted.
    Returns the median, the smallest and largest ratio and their number, or None without
    per-process times.
    """
    if not mine or len(mine) != len(other):
        return None
    ratios = sorted(a / b for a, b in zip(mine, other))
    return {"median": statistics.median(ratios), "min": ratios[0], "max": ratios[-1],
            "n": len(ratios)}


def _ms(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    ms = seconds * 1e3
    return f"{ms:.3f}" if ms < 1 else f"{ms:.2f}" if ms < 100 else f"{ms:.1f}"


def table(report: dict[str, Any]) -> str:
    """Markdown tables: times (ms, medians) and ratios per thread setting, then the targets."""
    contenders = report["settings"]["contenders"]
    order = [c for c in ORDER if c in contenders]
    ours = [c for c in OURS if c in order]
    ratio_keys = {"minigrad": "ratios", "compiled": "compiled_ratios"}
    lines = []
    for threads, by_case in report["medians_s"].items():
        label = "1 thread" if threads == "1" else (
            "default threads" if threads == "default" else f"{threads} threads")
        clock = "wall-clock" if report.get("clock", "wall") == "wall" else "CPU"
        lines.append(f"\n{clock} time in ms (median), {label}, per unit (a training step; an "
                     "epoch for LeNet-5)\n")
        head = ["case"] + [NAMES[c] for c in order]
        for mine in ours:
            head += [f"{mine} / {NAMES[c].split(' ')[0]}" for c in ("numpy", "torch")
                     if c in order]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
        for case in report["settings"]["cases"]:
            t = by_case.get(case, {})
            if not t:
                continue
            row = [case] + [_ms(t.get(c)) for c in order]
            for mine in ours:
                ratio = report.get(ratio_keys[mine], {}).get(threads, {}).get(case, {})
                row += [f"{ratio[c]:.2f}x" if c in ratio else "—" for c in ("numpy", "torch")
                        if c in order]
            lines.append("| " + " | ".join(row) + " |")
    if report["targets"]:
        lines.append("\nTargets (float32, 1 thread): minigrad / contender\n")
        lines.append("| case | minigrad | versus | target | measured | | paired processes: "
                     "median (range, pairs) |")
        lines.append("|---|---|---|---:|---:|---|---|")
        for v in report["targets"]:
            verdict = "met" if v["met"] else f"missed by {v['ratio'] / v['target'] - 1:.0%}"
            pairs = v.get("paired")
            spread = (f"{pairs['median']:.2f}x ({pairs['min']:.2f}-{pairs['max']:.2f}, "
                      f"{pairs['n']})" if pairs else "—")
            lines.append(f"| {v['case']} | {NAMES[v.get('contender', 'minigrad')]} | "
                         f"{NAMES[v['versus']]} | <= {v['target']:.2f}x | "
                         f"{v['ratio']:.2f}x | {verdict} | {spread} |")
        lines.append("\n(measured: the ratio of the medians; paired: the ratio of each process "
                     "to the one of the other contender that ran next to it)")
    bad = [c for c, a in report["loss_agreement"].items() if not a["agree"]]
    lines.append("\nFirst losses agree with the tuned NumPy loop in every case." if not bad else
                 f"\nWARNING: the first losses disagree with the tuned NumPy loop in {bad}: "
                 "some contender computes something else.")
    return "\n".join(lines)


def plot(report: dict[str, Any], path: Path) -> None:
    """Bars of each contender's time relative to the tuned NumPy loop, one panel per setting."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    settings = list(report["medians_s"])
    order = [c for c in ORDER if c in report["settings"]["contenders"]]
    colors = {"numpy": "#7f7f7f", "byhand": "#bcbd22", "minigrad": "#1f77b4",
              "compiled": "#17becf", "torch": "#d62728"}
    fig, axes = plt.subplots(1, len(settings), figsize=(6.5 * len(settings), 4.2), squeeze=False,
                             sharey=True)
    for ax, threads in zip(axes[0], settings):
        by_case = report["medians_s"][threads]
        cases = [c for c in report["settings"]["cases"] if "numpy" in by_case.get(c, {})]
        width = 0.8 / len(order)
        for k, contender in enumerate(order):
            xs, ys = [], []
            for i, case in enumerate(cases):
                t = by_case[case]
                if contender in t:
                    xs.append(i + (k - (len(order) - 1) / 2) * width)
                    ys.append(t[contender] / t["numpy"])
            bars = ax.bar(xs, ys, width, label=NAMES[contender], color=colors[contender])
            ax.bar_label(bars, labels=[f"{y:.2f}" for y in ys], fontsize=6, padding=1)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_yticks([0.25, 0.5, 1, 2, 4, 8])
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels(cases, rotation=20, ha="right", fontsize=8)
        ax.set_title("1 thread" if threads == "1" else f"threads: {threads}")
        ax.set_ylabel("time / tuned NumPy (lower is faster)")
    axes[0][0].legend(fontsize=8)
    m = report["machine"]
    fig.suptitle(f"minigrad vs NumPy vs PyTorch — {m['cpu']}, numpy {m.get('numpy')}, "
                 f"torch {m.get('torch') or 'not installed'}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def machine_line(report: dict[str, Any]) -> str:
    """One line naming the machine and the versions the numbers were measured with."""
    m = report["machine"]
    blas = "; ".join(m.get("blas") or []) or "BLAS unknown"
    return (f"{m['cpu']}, {m['logical_cpus']} logical CPUs, {m['platform']}; Python "
            f"{m['python']}, NumPy {m['numpy']} ({blas}), PyTorch {m.get('torch') or '—'}")


def main(argv: list[str] | None = None) -> None:
    """``python -m bench.report [results.json]``: print the tables of a saved run again."""
    import argparse
    import json

    p = argparse.ArgumentParser(prog="python -m bench.report", description=main.__doc__)
    p.add_argument("results", nargs="?", default=str(Path(__file__).parent / "results.json"))
    a = p.parse_args(argv)
    report = json.loads(Path(a.results).read_text())
    print(table(report))
    print(f"\nMachine: {machine_line(report)}")
    print(f"Command: {report['settings']['command']} ({report['seconds']:.0f} s, load average "
          f"{report['load_average']['before'][0]:.2f} before, "
          f"{report['load_average']['after'][0]:.2f} after)")


if __name__ == "__main__":
    main()
