"""Benchmarks: minigrad (eager and compiled) against the tuned NumPy loop, the byhand loop and
PyTorch.

Run ``python -m bench`` from the repository root (``--help`` for the options). The package is
not installed with minigrad; it lives next to it and needs the ``bench`` extra for PyTorch:
``python -m pip install -e ".[bench]"``.

* :mod:`bench.cases` -- the cases, their data and initial weights, and the targets;
* :mod:`bench.impl_numpy`, :mod:`bench.impl_byhand`, :mod:`bench.impl_minigrad`,
  :mod:`bench.impl_torch` -- one training step per contender (``impl_minigrad`` also gives
  the "compiled" contender: the same step in ``minigrad.compile``);
* :mod:`bench.profile` -- same-process A/B ratios and a profile, for deciding changes;
* :mod:`bench.worker` -- times one contender on one case in its own process;
* :mod:`bench.run` -- runs them all and reports (:mod:`bench.report`).
"""
