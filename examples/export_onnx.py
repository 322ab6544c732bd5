"""Export the two-moons network to ONNX and check that ONNX Runtime computes what minigrad does.

    python examples/export_onnx.py                          # train briefly, write moons.onnx
    python examples/export_onnx.py --out model.onnx --dtype float64
    python examples/train_moons.py --save moons.npz         # train fully, then export that:
    python examples/export_onnx.py --load moons.npz

The network is the one of ``train_moons.py``: Linear(2, 16) - ReLU - Linear(16, 16) - ReLU -
Linear(16, 2). Without ``--load`` the script trains it for a few epochs; with ``--load`` it
reads a state dict saved by ``minigrad.save`` (converted to ``--dtype``). It then exports the
model with ``minigrad.export.onnx.export``, loads the file in ONNX Runtime, runs it on all the points
(a batch of another size than the example: the batch axis is dynamic), and prints the largest
difference from minigrad's own output. It needs the onnx extra:
``pip install "minigrad-course[onnx]"``.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

import minigrad as mg
from minigrad.data import moons
from minigrad.export.onnx import INSTALL_HINT, export

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the network and training of
from train_moons import build_model, train  # train_moons.py, written once


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--out", default="moons.onnx", help="where to write the ONNX file")
    parser.add_argument("--load", metavar="NPZ",
                        help="a state dict saved by train_moons.py --save (instead of training)")
    parser.add_argument("--epochs", type=int, default=20, help="epochs of training (no --load)")
    parser.add_argument("--hidden", type=int, nargs="+", default=[16, 16],
                        help="sizes of the hidden layers (as the saved model has them)")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32",
                        help="dtype of the exported model")
    parser.add_argument("--seed", type=int, default=0, help="seed of data, init and shuffling")
    args = parser.parse_args(argv)
    try:
        import onnxruntime as ort
    except ImportError:
        sys.exit(f"this example runs the exported model in ONNX Runtime: {INSTALL_HINT}")

    X, y = moons(1000, noise=0.1, seed=args.seed, dtype=args.dtype)
    model = build_model(args.hidden, args.seed, args.dtype)
    if args.load:
        model.load_state_dict(mg.load(args.load))  # values converted to the model's dtype
        print(f"loaded {args.load}")
    else:
        train(model, X, y, args.epochs, seed=args.seed)
        print(f"trained {args.epochs} epochs")
    model.eval()

    # The example input fixes the dtype and every axis but the first: 8 points of 2 numbers.
    export(model, X[:8], args.out)
    print(f"exported to {args.out}")

    session = ort.InferenceSession(args.out, providers=["CPUExecutionProvider"])
    (onnx_logits,) = session.run(None, {"input": X})  # all 1000 points at once
    with mg.no_grad():
        logits = model(mg.tensor(X)).numpy()
    difference = float(np.max(np.abs(onnx_logits - logits)))
    print(f"accuracy: minigrad {np.mean(logits.argmax(axis=1) == y):.4f}, "
          f"onnxruntime {np.mean(onnx_logits.argmax(axis=1) == y):.4f}")
    print(f"max difference onnxruntime vs minigrad over {len(X)} points: {difference:.3g}")
    tolerance = (1e-5 if args.dtype == "float32" else 1e-12) * max(1.0, np.abs(logits).max())
    if not difference <= tolerance:
        sys.exit(f"the exported model differs from minigrad by more than {tolerance:.3g}")
    return difference


if __name__ == "__main__":
    main()
