"""minigrad.export: a trained model, written out for other tools and other machines.

What lives here: :mod:`~minigrad.export.onnx` (a model as an ONNX file, for ONNX Runtime)
and :mod:`~minigrad.export.c` (a model's training step as one C99 file, for a device without
Python), and :mod:`~minigrad.export._walk`, the walk through a model's layers both share.
An exporter reads a model and never changes it; where it cannot write a faithful copy (an
unknown layer, a name clash, a size C cannot hold), it refuses, naming the problem.

Imports: the engine (``minigrad.nn``, ``minigrad.tensor``, ``minigrad.backend``, ...), and
optional packages (``onnx``) only inside the functions that need them. Never
``minigrad.course``; and the engine never imports this package.
"""
