"""The optional ``main()`` of a generated program: a small trainer to run on the device.

It is compiled only with ``-DMINIGRAD_MAIN``, so the same file serves as a library (link it
into the device's firmware and call ``<name>_train_step``) and as a demo program. The demo
trains on a data set compiled in as literals (``train_data=`` of
:func:`~minigrad.export.c.compile_training_step`) or, without one, read from standard input,
one row per line: the ``n_in`` features, then the label (cross-entropy) or the ``n_out``
targets (MSE). Every epoch it shuffles the rows, trains on minibatches and prints the mean
loss; at the end it prints the accuracy (cross-entropy) or the mean squared error (MSE) on
the training set. It uses no heap either: its arrays are static.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .cfloat import CFloat

__all__ = ["harness"]


def _literals(values: np.ndarray, fmt: Callable[[Any], str]) -> list[str]:
    """Values as C literals, indented, as many to a line as fit."""
    lines, line = [], "   "
    for item in (fmt(v) for v in np.asarray(values).ravel()):
        if len(line) + len(item) > 92:
            lines.append(line.rstrip())
            line = "   "
        line += f" {item},"
    return lines + [line]


def harness(loss: str, name: str, t: CFloat,
            data: tuple[np.ndarray, np.ndarray] | None, epochs: int) -> list[str]:
    """The lines of the ``#ifdef MINIGRAD_MAIN`` section: data, helpers and ``main()``."""
    N = name.upper()
    ce = loss == "cross_entropy"
    lines = [
        "#ifdef MINIGRAD_MAIN",
        "/* ---------------------------------------------------------------------------------",
        " * A demo trainer, built only with -DMINIGRAD_MAIN: trains on a data set and prints",
        " * the loss of every epoch. */",
        "#include <stdio.h>",
        "",
        f"#ifndef {N}_EPOCHS",
        f"#define {N}_EPOCHS {epochs}",
        "#endif",
        "",
    ]
    lines += _compiled_in_set(ce, N, t, data) if data is not None else _stdin_set(ce, N, t)
    lines += _training_loop(ce, name, t)
    lines += _accuracy(name) if ce else _mean_squared_error(name)
    lines += ["    return 0;", "}", "#endif /* MINIGRAD_MAIN */", ""]
    return lines


def _target(ce: bool, N: str, t: CFloat) -> tuple[str, str]:
    """What one row's target is: a label (``int``), or ``<N>_OUT`` numbers."""
    return ("int", "") if ce else (t.name, f" * {N}_OUT")


def _compiled_in_set(ce: bool, N: str, t: CFloat,
                     data: tuple[np.ndarray, np.ndarray]) -> list[str]:
    """The training set as literals, and a ``load_train_set()`` that returns its size."""
    X, y = data
    tgt_type, tgt_size = _target(ce, N, t)
    return [
        f"/* The training set, compiled in: {len(X)} rows. */",
        f"#define TRAIN_CAPACITY {len(X)}",
        f"static const {t.name} train_x[TRAIN_CAPACITY * {N}_IN] = {{",
        *_literals(X, t.literal),
        "};",
        f"static const {tgt_type} train_t[TRAIN_CAPACITY{tgt_size}] = {{",
        *_literals(y, (lambda v: str(int(v))) if ce else t.literal),
        "};",
        "",
        "static int load_train_set(void)",
        "{",
        "    return TRAIN_CAPACITY;",
        "}",
    ]


def _stdin_set(ce: bool, N: str, t: CFloat) -> list[str]:
    """A ``load_train_set()`` that reads the rows from standard input and checks each: a
    number where one is due, at most ``<N>_MAX_TRAIN`` rows, labels in range."""
    T = t.name
    tgt_type, tgt_size = _target(ce, N, t)
    read_target = (
        ["        if (scanf(\"%d\", &train_t[rows]) != 1)",
         "            return -1;",
         f"        if (train_t[rows] < 0 || train_t[rows] >= {N}_OUT)",
         "            return -1;"] if ce else
        [f"        for (int k = 0; k < {N}_OUT; ++k)",
         f"            if (scanf(\"{t.scanf}\", &train_t[rows * {N}_OUT + k]) != 1)",
         "                return -1;"])
    return [
        "/* The training set, read from standard input: one row per line, the "
        f"{N}_IN features",
        " * then " + ("the label (0 to " + f"{N}_OUT - 1)" if ce else
                      f"the {N}_OUT targets") + ", separated by spaces. */",
        f"#ifndef {N}_MAX_TRAIN",
        f"#define {N}_MAX_TRAIN 10000",
        "#endif",
        f"#define TRAIN_CAPACITY {N}_MAX_TRAIN",
        f"static {T} train_x[TRAIN_CAPACITY * {N}_IN];",
        f"static {tgt_type} train_t[TRAIN_CAPACITY{tgt_size}];",
        "",
        "/* Returns the number of rows read, -1 for a malformed row, -2 for too many. */",
        "static int load_train_set(void)",
        "{",
        "    int rows = 0;",
        "    for (;;) {",
        f"        {T} first;",
        f"        const int got = scanf(\"{t.scanf}\", &first);",
        "        if (got == EOF)",
        "            return rows;",
        "        if (got != 1)",
        "            return -1;",
        "        if (rows == TRAIN_CAPACITY)",
        "            return -2;",
        f"        train_x[rows * {N}_IN] = first;",
        f"        for (int k = 1; k < {N}_IN; ++k)",
        f"            if (scanf(\"{t.scanf}\", &train_x[rows * {N}_IN + k]) != 1)",
        "                return -1;",
        *read_target,
        "        ++rows;",
        "    }",
        "}",
    ]


def _training_loop(ce: bool, name: str, t: CFloat) -> list[str]:
    """The shuffle's random numbers, and ``main()`` up to the end of training: it checks that
    there is data, then each epoch shuffles the rows, trains on minibatches and prints the
    mean loss."""
    N, T = name.upper(), t.name
    tgt_type, tgt_size = _target(ce, N, t)
    return [
        "",
        "/* xorshift32: a small random number generator for the shuffle, the same on every",
        " * machine. */",
        "static unsigned long next_random(void)",
        "{",
        "    static unsigned long state = 2463534242UL;",
        "    state ^= (state << 13) & 0xFFFFFFFFUL;",
        "    state ^= state >> 17;",
        "    state ^= (state << 5) & 0xFFFFFFFFUL;",
        "    return state;",
        "}",
        "",
        "int main(void)",
        "{",
        "    static int order[TRAIN_CAPACITY];",
        f"    static {T} xb[{N}_BATCH * {N}_IN];  /* one minibatch, gathered in shuffled order */",
        f"    static {tgt_type} tb[{N}_BATCH{tgt_size}];",
        f"    static {T} out[{N}_BATCH * {N}_OUT];",
        "    const int n_train = load_train_set();",
        "    if (n_train < 1) {",
        "        fprintf(stderr, \"" + name + ": no training data (%s)\\n\", n_train == -2 ?",
        "                \"more rows than " + N + "_MAX_TRAIN\" : \"malformed or empty input\");",
        "        return 1;",
        "    }",
        f"    {name}_init();",
        "    for (int i = 0; i < n_train; ++i)",
        "        order[i] = i;",
        f"    for (int epoch = 1; epoch <= {N}_EPOCHS; ++epoch) {{",
        "        double total = 0.0;",
        "        for (int i = n_train - 1; i > 0; --i) {  /* shuffle (Fisher-Yates) */",
        "            const int j = (int)(next_random() % (unsigned long)(i + 1));",
        "            const int swap = order[i];",
        "            order[i] = order[j];",
        "            order[j] = swap;",
        "        }",
        f"        for (int start = 0; start < n_train; start += {N}_BATCH) {{",
        f"            const int n = n_train - start < {N}_BATCH ? n_train - start : {N}_BATCH;",
        "            for (int r = 0; r < n; ++r) {",
        "                const int row = order[start + r];",
        f"                memcpy(xb + r * {N}_IN, train_x + row * {N}_IN, sizeof xb[0] * {N}_IN);",
        ("                tb[r] = train_t[row];" if ce else
         f"                memcpy(tb + r * {N}_OUT, train_t + row * {N}_OUT, "
         f"sizeof tb[0] * {N}_OUT);"),
        "            }",
        f"            total += (double){name}_train_step(xb, tb, n) * n;",
        "        }",
        "        printf(\"epoch %d loss %.6f\\n\", epoch, total / n_train);",
        "    }",
    ]


def _accuracy(name: str) -> list[str]:
    """The end of ``main()`` for cross-entropy: the accuracy on the training set."""
    N = name.upper()
    return [
        "    {  /* accuracy: the class with the largest score is the prediction */",
        "        int correct = 0;",
        f"        for (int start = 0; start < n_train; start += {N}_BATCH) {{",
        f"            const int n = n_train - start < {N}_BATCH ? n_train - start : "
        f"{N}_BATCH;",
        f"            {name}_forward(train_x + start * {N}_IN, out, n);",
        "            for (int r = 0; r < n; ++r) {",
        "                int best = 0;",
        f"                for (int k = 1; k < {N}_OUT; ++k)",
        f"                    if (out[r * {N}_OUT + k] > out[r * {N}_OUT + best])",
        "                        best = k;",
        "                correct += best == train_t[start + r];",
        "            }",
        "        }",
        "        printf(\"train accuracy %.4f\\n\", (double)correct / n_train);",
        "    }",
    ]


def _mean_squared_error(name: str) -> list[str]:
    """The end of ``main()`` for the MSE loss: the mean squared error on the training set."""
    N = name.upper()
    return [
        "    {  /* the mean squared error on the whole training set */",
        "        double sum = 0.0;",
        f"        for (int start = 0; start < n_train; start += {N}_BATCH) {{",
        f"            const int n = n_train - start < {N}_BATCH ? n_train - start : "
        f"{N}_BATCH;",
        f"            {name}_forward(train_x + start * {N}_IN, out, n);",
        f"            for (int j = 0; j < n * {N}_OUT; ++j) {{",
        f"                const double diff = (double)out[j] - "
        f"(double)train_t[start * {N}_OUT + j];",
        "                sum += diff * diff;",
        "            }",
        "        }",
        f"        printf(\"train mse %.6f\\n\", sum / ((double)n_train * {N}_OUT));",
        "    }",
    ]
