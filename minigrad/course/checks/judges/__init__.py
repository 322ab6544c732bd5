"""The judges of the lessons' checks: where the expected values are computed.

One module per lesson, beside the lesson's checks (:mod:`minigrad.course.checks.lesson1` ...),
which hold the probes and the runs. A check names its judge with
:func:`minigrad.course.checks.judged`, so that the runs import without this package: the
grader's sandbox does not hold it (:data:`minigrad.course.grading.sandbox.GRADER_ONLY_FOLDERS`),
and no code that computes an expected value is there to call.

A judge imports its lesson's checks, the engine, the scalar ``Var`` and ``byhand``; the runs
never import a judge (a test imports every run with this package refused).
"""
