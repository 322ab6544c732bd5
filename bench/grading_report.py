"""How long the grader's report takes to write for a big class, and a one-student regrade into it.

    python -m bench.grading_report                 # 1,000 and 10,000 students x 4 lessons
    python -m bench.grading_report --students 1000 --timeout 600

A synthetic gradebook (every student hands in the four lessons; five exercises a lesson, one
check each; a failed check's message on one exercise in three) is written into a fresh report
folder with :func:`minigrad.course.grading.write_report`, with the journal a whole-class run
leaves beside it; then one student is regraded the way ``minigrad-grade --student NAME`` does
it, in a process that holds only that student's new grades: look at the journal, read
``grades.json``, merge, write the report again. Grading itself is not measured (about 0.9 s of
CPU a notebook, in its own sandbox).

To measure another version of the grader ("before"), put that version's ``minigrad`` first on
``PYTHONPATH``; a size that runs past ``--timeout`` seconds is reported as such (it runs in a
child process, which is then ended). The figures are in docs/guide/grading.md.
"""
from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import shutil
import sys
import tempfile
import time
from pathlib import Path

LESSONS = ["01_from_scalars_to_tensors", "02_matmul_reductions_broadcasting",
           "03_parameters_modules_optimizer", "04_train_and_check"]


def gradebook(students: int):
    """A graded class of ``students`` x 4 lessons (plain data; no notebook runs)."""
    from minigrad.course.grading.results import (CheckOutcome, ExerciseGrade, Gradebook,
                                                 LessonSummary, NotebookGrade)
    lessons = [LessonSummary(key=key, number=n + 1, max_points=5.0, digest="0" * 12,
                             exercises={f"{n + 1}.{e}": {"title": f"exercise {e}", "points": 1}
                                        for e in range(1, 6)})
               for n, key in enumerate(LESSONS)]
    notebooks = []
    for s in range(students):
        student = f"student{s:05d}"
        for n, key in enumerate(LESSONS):
            exercises = []
            for e in range(1, 6):
                failed = (s + n + e) % 3 == 0
                message = (f"matmul: the gradient for A is wrong at [1, 2]: expected {s}.25, "
                           f"got {s}.5 (shapes (3, 4) @ (4, 2))") if failed else "✓ agree"
                check = CheckOutcome(f"{n + 1}.{e}", not failed, "check" if failed else "passed",
                                     message if failed else "", output="" if failed else message,
                                     seconds=0.01)
                exercises.append(ExerciseGrade(f"{n + 1}.{e}", f"exercise {e}",
                                               0.0 if failed else 1.0, 1.0,
                                               "failed" if failed else "passed", message, [check]))
            notebooks.append(NotebookGrade(
                student=student, path=f"/submissions/{student}/{key}.ipynb", sha256="0" * 64,
                lesson=key, status="graded", score=sum(x.points for x in exercises),
                max_score=5.0, exercises=exercises, seconds=0.9))
    return Gradebook(lessons=lessons, notebooks=notebooks, seconds=1.0, jobs=1)


def _journal(book, out: Path) -> None:
    """The journal a whole-class run leaves in ``out`` (a header, a line a notebook, the end),
    written at once (a real run appends and flushes each line as its notebook finishes)."""
    lines = [json.dumps({"journal": 1, "started": "2026-12-01T09:00:00+00:00"})]
    lines += [json.dumps({"notebook": n.to_dict()}, ensure_ascii=False) for n in book.notebooks]
    lines.append(json.dumps({"done": "2026-12-01T10:00:00+00:00"}))
    (out / "journal.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _measure(students: int, results) -> None:   # (in a child process)
    from minigrad.course.grading import read_gradebook, write_report
    from minigrad.course.grading.batch import Journal
    book = gradebook(students)
    out = Path(tempfile.mkdtemp(prefix="grading-report-bench-"))
    try:
        start, cpu = time.perf_counter(), time.process_time()
        write_report(book, out)
        results.put(("write", (time.perf_counter() - start, time.process_time() - cpu)))
        _journal(book, out)
        one = [n for n in book.notebooks if n.student == "student00007"]
        regraded = type(book)(lessons=book.lessons, notebooks=one, seconds=1.0, jobs=1)
        del book          # a regrade's process holds only the regraded student's notebooks
        gc.collect()
        start, cpu = time.perf_counter(), time.process_time()
        # what `minigrad-grade --student student00007` does besides grading: look at the last
        # run's journal (to refuse to start over an interrupted one), read the report, merge
        state = getattr(Journal, "state", Journal.read)(Journal(out))
        assert state[0] == "complete", state[0]
        merged = read_gradebook(out).merged(regraded, ["student00007"])
        try:
            write_report(merged, out, changed=["student00007"])
        except TypeError:   # a grader from before changed=
            write_report(merged, out)
        results.put(("regrade", (time.perf_counter() - start, time.process_time() - cpu)))
    finally:
        shutil.rmtree(out, ignore_errors=True)


def measure(students: int, timeout: float) -> dict[str, tuple[float, float] | None]:
    """(wall, CPU) seconds to write the report and to regrade one student into it (None: past
    the timeout)."""
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    child = context.Process(target=_measure, args=(students, results))
    child.start()
    deadline = time.monotonic() + timeout
    found: dict[str, tuple[float, float] | None] = {"write": None, "regrade": None}
    while None in found.values() and time.monotonic() < deadline:
        try:
            what, seconds = results.get(timeout=max(0.1, min(1.0, deadline - time.monotonic())))
            found[what] = seconds
        except Exception:  # queue.Empty
            if not child.is_alive() and results.empty():
                break
    child.kill()
    child.join()
    return found


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--students", type=int, action="append",
                   help="class sizes (repeatable; default 1000 and 10000)")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="seconds one size may take (default: %(default)g)")
    args = p.parse_args(argv)
    import minigrad
    print(f"grader: {Path(minigrad.__file__).parent}")
    print("| students | notebooks | write the report (wall, CPU) | regrade one student "
          "(wall, CPU) |")
    print("|---:|---:|---:|---:|")
    for students in args.students or [1000, 10000]:
        found = measure(students, args.timeout)
        cells = [f"{v[0]:.1f} s, {v[1]:.1f} s" if v is not None else
                 f"> {args.timeout:g} s (stopped)" for v in (found["write"], found["regrade"])]
        print(f"| {students:,} | {4 * students:,} | {cells[0]} | {cells[1]} |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
