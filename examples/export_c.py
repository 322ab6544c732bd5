"""Compile the moons network's training step to plain C, for training on a small device.

    python examples/export_c.py --out build/            # writes build/moons_train.c and .h
    python examples/export_c.py --out build/ --run      # ... then builds and runs the trainer

The network is Linear(2, 16) - ReLU - Linear(16, 16) - ReLU - Linear(16, 2), as in
``train_moons.py``, with the softmax cross-entropy loss and SGD with momentum. The C file
holds the whole training step, every number in one static buffer whose size is printed, and a
``main()`` (built with ``-DMINIGRAD_MAIN``) that trains on the moons compiled in as literals
and prints the loss of every epoch and the final training accuracy. Copy the two files to the
device's project, or build them anywhere with the printed command.
"""
from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from pathlib import Path

from minigrad.data import moons
from minigrad.export.c import build_command, compile_executable, compile_training_step

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the network of train_moons.py
from train_moons import build_model


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--out", default="moons_c", help="folder for moons_train.c and .h")
    parser.add_argument("--name", default="moons_train", help="prefix of the files and C names")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32",
                        help="C float or double (most microcontrollers have a float unit)")
    parser.add_argument("--batch-size", type=int, default=32, help="rows per training step")
    parser.add_argument("--lr", type=float, default=0.1, help="learning rate")
    parser.add_argument("--momentum", type=float, default=0.9, help="SGD momentum")
    parser.add_argument("--epochs", type=int, default=100, help="epochs of the demo trainer")
    parser.add_argument("--n", type=int, default=200, help="moons points compiled in")
    parser.add_argument("--seed", type=int, default=0, help="seed of the data and the weights")
    parser.add_argument("--run", action="store_true", help="build and run the trainer")
    args = parser.parse_args(argv)

    X, y = moons(args.n, noise=0.1, seed=args.seed, dtype=args.dtype)
    model = build_model([16, 16], args.seed, args.dtype)  # 2-16-16-2
    program = compile_training_step(
        model, loss="cross_entropy", batch_size=args.batch_size, lr=args.lr,
        momentum=args.momentum, dtype=args.dtype, name=args.name, train_data=(X, y),
        epochs=args.epochs)
    c_path, h_path = program.write(args.out)
    command = shlex.join(build_command(program, cc="gcc"))
    print(model)
    print(f"wrote {c_path} and {h_path}")
    print(f"buffer: {program.buffer_size.elements} {program.c_type} values = "
          f"{program.buffer_size.bytes} bytes (parameters, gradients, momentum, activations)")
    print(f"build the on-device trainer:  cd {shlex.quote(str(args.out))} && {command}")
    output = ""
    if args.run:
        executable = compile_executable(program, args.out)
        result = subprocess.run([str(executable.resolve())], capture_output=True, text=True,
                                check=True)
        output = result.stdout
        lines = output.splitlines()
        print("\n".join(lines[:3] + ["..."] + lines[-3:]) if len(lines) > 8 else output)
    return output


if __name__ == "__main__":
    main()
