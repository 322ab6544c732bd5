"""minigrad: a small, readable, PyTorch-shaped autodiff engine on NumPy (and CuPy).

>>> import minigrad as mg
>>> x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> (x * x).sum().backward()
>>> x.grad
array([2., 4., 6.])

Layout: this top level is the engine and library (tensor, the core, and the families of
operations it is given: elementwise, comparisons, reductions, reshaping, selection, shape_ops,
creation; backend, broadcast, functional, conv, nn, optim, graph, gradcheck, serialize, data),
and compile: a fast path next to the engine that records a training step's NumPy calls and
replays them. Imports: NumPy (in ``backend`` alone) and
array-api-compat; never ``minigrad.export`` or ``minigrad.course``, which sit on top of it.
"""
from .broadcast import unbroadcast
from .gradcheck import gradcheck
from .tensor import (Tensor, enable_grad, exp, is_grad_enabled, log, matmul, no_grad, op, relu,
                     tanh, transpose)
from .axes import AxisError
from .elementwise import (abs, ceil, clamp, clip, cos, expm1, floor, leaky_relu,  # noqa: A004
                          log1p, maximum, minimum, round, rsqrt, sigmoid, sign, sin, sqrt, tan,
                          where)
from .comparisons import isinf, isnan
from .reductions import argmax, argmin, cumsum, logsumexp, prod, std, var
from .reshaping import cat, concatenate, flatten, permute, squeeze, stack, unsqueeze
from .selection import gather, masked_fill, tril, triu
from .creation import (arange, eye, full, full_like, ones, ones_like, rand, randn, tensor,
                       zeros, zeros_like)
from .shape_ops import (all, any, chunk, einsum, flip, norm, repeat, sort,  # noqa: A004
                        split)
from . import functional, nn, optim, utils
from .serialize import load, save
from .compile import compile  # noqa: A004 - torch.compile's name; the module is compile.py

__version__ = "0.1.0"

__all__ = [
    "Tensor", "tensor", "op", "no_grad", "enable_grad", "is_grad_enabled", "unbroadcast",
    "gradcheck", "matmul", "maximum", "minimum", "where", "concatenate", "stack",
    "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "leaky_relu", "__version__",
    "functional", "nn", "optim", "save", "load", "compile",
    # PyTorch's operations (issue 12)
    "AxisError", "abs", "argmax", "argmin", "cat", "ceil", "clamp", "clip", "cos", "cumsum",
    "expm1", "flatten", "floor", "gather", "isinf", "isnan", "log1p", "logsumexp",
    "masked_fill", "permute", "prod", "round", "rsqrt", "sign", "sin", "squeeze", "std", "tan",
    "transpose", "tril", "triu", "unsqueeze", "var",
    "arange", "eye", "full", "full_like", "ones", "ones_like", "rand", "randn", "zeros",
    "zeros_like",
    # issue 29: tensor functions (minigrad/shape_ops.py) and minigrad.utils.data
    "all", "any", "chunk", "einsum", "flip", "norm", "repeat", "sort", "split", "utils",
]
