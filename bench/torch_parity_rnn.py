"""Recurrent layers against PyTorch: the pinned values of ``tests/nn/test_rnn.py``, and speed.

    python -m bench.torch_parity_rnn              # recompute the pinned values, compare
    python -m bench.torch_parity_rnn --print      # ... and print tests/nn/rnn_values.json
    python -m bench.torch_parity_rnn --time       # char-RNN seconds per epoch, both engines

The tests cannot install PyTorch, so they carry PyTorch's outputs as literals. This script
recomputes them with ``torch`` (the ``bench`` extra) from the same recipe -- deterministic
weights, inputs and states written as formulas below -- and checks three things agree: the
literals in the test, PyTorch now, and minigrad now. With ``--time`` it trains the char-RNN of
``examples/char_rnn.py`` for one epoch in each engine, one thread each, and prints the ratio.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent



def load_test_module() -> Any:
    """tests/nn/test_rnn.py, which holds the recipe (CASES, case_arrays) and the pinned values."""
    spec = importlib.util.spec_from_file_location("test_rnn", ROOT / "tests" / "nn" / "test_rnn.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(ROOT))  # for its tests.support import
    spec.loader.exec_module(module)
    return module


def run_case(lib: Any, kind: str, kwargs: dict, arrays: dict[str, Any]) -> dict[str, np.ndarray]:
    """Run one case in ``torch.nn`` or ``minigrad.nn`` (``lib``); return the outputs as NumPy."""
    is_torch = lib.__name__.startswith("torch")
    if is_torch:
        import torch
        layer = getattr(lib, kind)(**kwargs).double()
        layer.load_state_dict({k: torch.from_numpy(v) for k, v in arrays["weights"].items()})
        wrap = torch.from_numpy

        def back(t: Any) -> np.ndarray:
            return t.detach().numpy()
    else:
        import minigrad as mg
        layer = getattr(lib, kind)(**kwargs, seed=0)
        layer.load_state_dict(arrays["weights"])
        wrap = mg.tensor

        def back(t: Any) -> np.ndarray:
            return t.numpy()
    x = wrap(arrays["x"])
    h = wrap(arrays["h"]) if arrays["h"] is not None else None
    c = wrap(arrays["c"]) if arrays["c"] is not None else None
    if kind == "LSTM":
        out, (h_n, c_n) = layer(x, (h, c)) if h is not None else layer(x)
        return {"output": back(out), "h_n": back(h_n), "c_n": back(c_n)}
    if kind == "LSTMCell":
        h1, c1 = layer(x, (h, c)) if h is not None else layer(x)
        return {"h": back(h1), "c": back(c1)}
    if kind.endswith("Cell"):
        return {"h": back(layer(x, h))}
    out, h_n = layer(x, h) if h is not None else layer(x)
    return {"output": back(out), "h_n": back(h_n)}


def parameter_shapes(kind: str, kwargs: dict) -> list[tuple[str, tuple[int, ...]]]:
    """Names and shapes of a layer's parameters, from minigrad (checked against PyTorch's)."""
    from minigrad import nn
    return [(n, p.shape) for n, p in getattr(nn, kind)(**kwargs, seed=0).named_parameters()]


def parity(print_literals: bool) -> bool:
    import torch
    from torch import nn as tnn

    from minigrad import nn as mnn
    torch.set_num_threads(1)
    recipe = load_test_module()
    pinned = recipe.PINNED
    ok, literals = True, []
    for name, kind, kwargs, x_shape, with_state in recipe.CASES:
        shapes = parameter_shapes(kind, kwargs)
        torch_shapes = [(n, tuple(p.shape)) for n, p in getattr(tnn, kind)(**kwargs)
                        .named_parameters()]
        if shapes != torch_shapes:
            print(f"{name}: parameter names/shapes differ:\n  minigrad {shapes}\n  torch "
                  f"{torch_shapes}")
            ok = False
        arrays = recipe.case_arrays(kind, kwargs, x_shape, with_state, shapes)
        expected = run_case(tnn, kind, kwargs, arrays)
        got = run_case(mnn, kind, kwargs, arrays)
        for key, value in expected.items():
            err_mg = float(np.max(np.abs(got[key] - value)))
            line = f"{name:26s} {key:7s} |minigrad - torch| {err_mg:.1e}"
            if name in pinned:
                err_pin = float(np.max(np.abs(np.asarray(pinned[name][key]) - value)))
                line += f"   |pinned - torch| {err_pin:.1e}"
                ok &= err_pin < 1e-10
            ok &= err_mg < 1e-10
            print(line)
        literals.append(f"  {json.dumps(name)}: "
                        + json.dumps({k: np.round(v, 12).tolist() for k, v in expected.items()}))
    if print_literals:  # the text of tests/nn/rnn_values.json
        print(f'{{"torch_version": {json.dumps(torch.__version__.split("+")[0])}, '
              '"dtype": "float64",\n "cases": {\n' + ",\n".join(literals) + "\n}}")
    print("parity:", "all agree" if ok else "MISMATCH")
    return ok


def time_char_rnn(seconds_text: int, threads: int = 1) -> None:
    """One epoch of the char-RNN in minigrad and in PyTorch, on the same text and sizes."""
    import torch
    from threadpoolctl import threadpool_limits
    torch.set_num_threads(threads)
    sys.path.insert(0, str(ROOT / "examples"))
    import char_rnn
    text = char_rnn.load_text(seconds_text)
    args = char_rnn.parse_args([])
    times = {}
    with threadpool_limits(threads):
        for compiled in (False, True):
            args.compile = compiled
            times["minigrad compiled" if compiled else "minigrad eager"] = \
                char_rnn.time_one_epoch(text, args)
    times["PyTorch"] = char_rnn.time_one_epoch_torch(text, args)
    print(f"char-RNN one epoch over {len(text):,} characters (hidden {args.hidden}, batch "
          f"{args.batch}, chunk {args.chunk}, {args.dtype}), {threads} thread(s):")
    for label, (seconds, loss) in times.items():
        print(f"  {label:<18} {seconds:7.2f} s   mean loss {loss:.3f}   "
              f"{seconds / times['PyTorch'][0]:.2f}x PyTorch")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--print", action="store_true", help="print the text of tests/nn/rnn_values.json")
    parser.add_argument("--time", action="store_true", help="time the char-RNN per epoch")
    parser.add_argument("--chars", type=int, default=100_000,
                        help="characters of text in the timed epoch (default 100000)")
    args = parser.parse_args(argv)
    ok = parity(args.print)
    if args.time:
        time_char_rnn(args.chars)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
