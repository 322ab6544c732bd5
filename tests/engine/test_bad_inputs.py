"""Bad input gets PyTorch's answer or a clear error (issue 22): one table, a row per call.

Each row is one call written once for both libraries, ``call(L)``: ``L.lib`` is ``minigrad``
or ``torch``, ``L.F`` their ``functional``, ``L.nn`` their ``nn``, and ``L.t(values, dtype)``
makes the same tensor in either (``strict=True``: in array-api-strict arrays on minigrad). What
a row expects is one of:

* ``Same(pinned)``: PyTorch returns a value, pinned here (:data:`PINNED`, by row name) as plain
  data: a tensor is ``{"dtype", "shape", "values"}``, a tuple a list. minigrad must return the
  same (NaN equals NaN; infinities, dtypes and shapes exactly).
* ``Raises(Error, fragment)``: PyTorch raises; minigrad must raise ``Error`` with a message
  that contains ``fragment`` (the argument, what was expected, what came).
* ``Only(Error, fragment, why)``: a minigrad-only call (its file format, array-api-strict
  arrays) that must raise so; ``why`` says why PyTorch has no answer to compare.

``python -m bench.torch_parity`` re-derives every pinned value and checks that PyTorch raises
on every ``Raises`` row. Tests never import torch.
"""
from __future__ import annotations

import math
import os
import threading
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from tests.support.torch_cases import differences

try:
    import pytest
except ModuleNotFoundError:  # bench.torch_parity imports the table where pytest may be missing
    pytest = None

inf, nan = math.inf, math.nan


@dataclass
class Same:
    """PyTorch returns a value: :data:`PINNED` holds it under the row's name."""


@dataclass
class Raises:
    """PyTorch raises; minigrad raises ``error`` with ``fragment`` in the message."""

    error: type
    fragment: str


@dataclass
class Only:
    """minigrad alone: it raises ``error`` with ``fragment``; ``why`` there is no PyTorch twin."""

    error: type
    fragment: str
    why: str


@dataclass
class Row:
    name: str
    call: Callable[[Any], Any]
    want: Same | Raises | Only


# ---------------------------------------------------------------------------------------------
# One spelling for both libraries


class Lib:
    """What a row's call needs from ``"minigrad"`` or ``"torch"``, spelled once."""

    def __init__(self, name: str) -> None:
        self.name = name
        if name == "torch":
            import torch
            import torch.nn as tnn
            import torch.nn.functional as tF
            self.lib, self.nn, self.F = torch, tnn, tF
            self.float64: Any = torch.float64
            self.int64: Any = torch.int64
        else:
            import minigrad
            import minigrad.functional as mF
            import minigrad.nn as mnn
            self.lib, self.nn, self.F = minigrad, mnn, mF
            self.float64, self.int64 = "float64", "int64"
        self.tmp = ""  # a folder for the rows that write files (set by the test)

    def t(self, values: Any, dtype: str = "float64", grad: bool = False,
          strict: bool = False) -> Any:
        """A tensor of ``values`` (a nested list or a NumPy array) in ``dtype``."""
        values = np.asarray(values, dtype=dtype)
        if self.name == "torch":
            return self.lib.tensor(values, requires_grad=grad)
        if strict:
            import array_api_strict as xp
            return self.lib.Tensor(xp.asarray(values), requires_grad=grad)
        return self.lib.tensor(values, requires_grad=grad)

    def layer(self, kind: str, *args: Any, **kwargs: Any) -> Any:
        """``nn.<kind>(*args)`` in float64 (the weights differ: rows compare shapes or errors)."""
        if self.name == "torch":
            return getattr(self.nn, kind)(*args, dtype=self.lib.float64, **kwargs)
        return getattr(self.nn, kind)(*args, seed=0, **kwargs)

    def grad_of(self, fn: Callable[[Any], Any], values: Any, **kw: Any) -> list[Any]:
        """``[fn(x), x.grad]`` after ``fn(x).sum().backward()``, for ``x = t(values)``."""
        x = self.t(values, grad=True, **kw)
        y = fn(x)
        y.sum().backward()
        return [y, x.grad]

    def clip(self, grads: list[list[float]], **kw: Any) -> list[Any]:
        """``clip_grad_norm_`` on parameters with these gradients: ``[norm, grads after]``."""
        params = [self.t(g, grad=True) for g in grads]
        for p, g in zip(params, grads):
            p.grad = self.t(g) if self.name == "torch" else np.array(g, dtype="float64")
        norm = self.nn.utils.clip_grad_norm_(params, **kw)
        return [norm, [p.grad for p in params]]


def plain(result: Any) -> Any:
    """A result as plain data: tensors and arrays as dtype, shape and values; lists of them."""
    if isinstance(result, (list, tuple)):
        return [plain(r) for r in result]
    if hasattr(result, "detach"):  # a torch tensor
        result = result.detach().numpy()
    elif hasattr(result, "numpy") and callable(result.numpy):  # a minigrad tensor
        result = result.numpy()
    if hasattr(result, "shape") and hasattr(result, "dtype"):
        array = np.asarray(result)  # NumPy, or array-api-strict (it converts to NumPy)
        return {"dtype": str(array.dtype), "shape": list(array.shape), "values": array.tolist()}
    return result


def _fifo(tmp: str) -> str:
    path = os.path.join(tmp, "checkpoint.npz")
    os.mkfifo(path)
    return path


def _load_with_deadline(L: Lib, path: str) -> Any:
    """``load(path)``, failing (not hanging) if it has not returned within 10 s."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = L.lib.load(path)
        except Exception as exc:  # noqa: BLE001 - handed to the caller
            outcome["error"] = exc

    reader = threading.Thread(target=target, daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():
        raise AssertionError(f"load({path!r}) is still waiting after 10 s: it blocks on a FIFO")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


X3 = [1.0, 2.0, 3.0]
Z = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]  # logits (2, 3)
P = [[1.0, 0.0, 0.0], [0.2, 0.3, 0.5]]  # class probabilities (2, 3)
IMAGE = np.ones((1, 1, 4, 4))
XNAN = [nan, 1.0, -2.0, nan, 3.0]

ROWS = [
    # --- the issue's silent wrong answers ----------------------------------------------------
    Row("floordiv_int_by_zero_tensor",
        lambda L: L.t([5, 3], "int64") // L.t([0, 1], "int64"),
        Raises(ZeroDivisionError, "floordiv: integer division by zero")),
    Row("floordiv_int_by_zero_number", lambda L: L.t([5, 3], "int64") // 0,
        Raises(ZeroDivisionError, "integer division by zero")),
    Row("floordiv_number_by_int_zero", lambda L: 5 // L.t([0, 2], "int64"),
        Raises(ZeroDivisionError, "integer division by zero")),
    Row("mod_int_by_zero_number", lambda L: L.t([5, 3], "int64") % 0,
        Raises(ZeroDivisionError, "mod: integer modulo by zero")),
    Row("mod_int_by_zero_tensor", lambda L: L.t([5, 3], "int64") % L.t([0, 2], "int64"),
        Raises(ZeroDivisionError, "integer division by zero")),
    Row("floordiv_float_by_zero", lambda L: L.t([5.0, -3.0, 0.0]) // 0.0, Same()),
    Row("mod_float_by_zero", lambda L: L.t([5.0, -3.0, 0.0]) % 0.0, Same()),
    Row("round_decimals_not_an_int", lambda L: L.t([1.234]).round(decimals=1.5),
        Raises(TypeError, "round: decimals must be an int; got 1.5")),
    Row("round_decimals_negative", lambda L: L.t([1234.5, 15.0]).round(decimals=-1), Same()),
    Row("round_decimals_of_integers", lambda L: L.t([1234, 15], "int64").round(decimals=1),
        Raises(TypeError, "needs a floating-point tensor")),
    Row("var_correction_equal_to_n", lambda L: L.t(X3).var(correction=3), Same()),
    Row("var_correction_above_n", lambda L: L.t(X3).var(correction=5), Same()),
    Row("var_correction_nan", lambda L: L.t(X3).var(correction=nan), Same()),
    Row("var_correction_of_constant", lambda L: L.t([2.0, 2.0]).var(correction=2), Same()),
    Row("std_correction_equal_to_n", lambda L: L.t(X3).std(correction=3), Same()),
    Row("var_correction_equal_to_n_gradient",
        lambda L: L.grad_of(lambda x: x.var(dim=0, correction=3), X3), Same()),
    Row("std_correction_equal_to_n_gradient",
        lambda L: L.grad_of(lambda x: x.std(dim=0, correction=3), X3), Same()),
    Row("sign_of_nan", lambda L: L.grad_of(lambda x: x.sign(), [nan, -2.0, 0.0, 3.0, inf]),
        Same()),
    Row("cumsum_0d_axis_out_of_range", lambda L: L.t(2.0).cumsum(dim=1),
        Raises(IndexError, "cumsum: axis 1 is out of range")),
    Row("cumsum_0d", lambda L: L.t(2.0).cumsum(dim=-1), Same()),
    Row("max_axis_and_dim", lambda L: L.t(Z).max(axis=0, dim=1),
        Raises(TypeError, "give axis= or dim=")),
    Row("full_with_none", lambda L: L.lib.full((2,), None),
        Raises(TypeError, "full: fill_value must be a number; got NoneType")),
    Row("full_with_a_list", lambda L: L.lib.full((2,), [1.0, 2.0]),
        Raises(TypeError, "fill_value must be a number; got list")),
    Row("full_with_nan", lambda L: L.lib.full((2,), nan, dtype=L.float64), Same()),
    Row("cross_entropy_probabilities_ignore_index",
        lambda L: L.F.cross_entropy(L.t(Z), L.t(P), ignore_index=1),
        Raises(ValueError, "ignore_index=1 applies to class-index targets")),
    Row("cross_entropy_probabilities_default_ignore_index",
        lambda L: L.F.cross_entropy(L.t(Z), L.t(P), ignore_index=-100), Same()),
    Row("clip_grad_norm_minus_inf", lambda L: L.clip([[3.0, 4.0]], max_norm=1.0,
                                                      norm_type=-inf), Same()),
    Row("clip_grad_norm_order_0", lambda L: L.clip([[3.0, 4.0], [0.0]], max_norm=1.0,
                                                    norm_type=0), Same()),
    Row("clip_grad_norm_max_norm_nan", lambda L: L.clip([[3.0, 4.0]], max_norm=nan), Same()),
    Row("clip_grad_norm_nan_gradient",
        lambda L: L.clip([[3.0, 4.0], [nan, 1.0], [1.0]], max_norm=1.0), Same()),
    Row("clip_grad_norm_inf_gradient",
        lambda L: L.clip([[3.0, 4.0], [inf, 1.0]], max_norm=1.0), Same()),
    Row("reshape_minus_2", lambda L: L.t([1.0] * 6).reshape(-2, 3),
        Raises(ValueError, "reshape: invalid size -2 at index 0")),
    Row("reshape_two_inferred", lambda L: L.t([1.0] * 6).reshape(-1, -1),
        Raises(ValueError, "only one size can be -1")),
    # --- the issue's crashes ------------------------------------------------------------------
    Row("rnn_empty_sequence", lambda L: L.layer("RNN", 3, 4)(L.t(np.zeros((0, 2, 3)))),
        Raises(ValueError, "RNN: expected a sequence of at least one step")),
    Row("lstm_empty_sequence_batch_first",
        lambda L: L.layer("LSTM", 3, 4, batch_first=True)(L.t(np.zeros((2, 0, 3)))),
        Raises(ValueError, "LSTM: expected a sequence of at least one step")),
    Row("lstm_state_not_a_pair",
        lambda L: L.layer("LSTM", 3, 4)(L.t(np.zeros((2, 2, 3))), L.t(np.zeros((1, 2, 4)))),
        Raises(TypeError, "LSTM: the state must be a pair (h_0, c_0) or None; got a Tensor")),
    Row("lstm_state_of_three",
        lambda L: L.layer("LSTM", 3, 4)(L.t(np.zeros((2, 2, 3))),
                                        (L.t(np.zeros((1, 2, 4))),) * 3),
        Raises(TypeError, "got a tuple of 3")),
    Row("lstm_cell_state_not_a_pair",
        lambda L: L.layer("LSTMCell", 3, 4)(L.t(np.zeros((2, 3))), L.t(np.zeros((2, 4)))),
        Raises(TypeError, "LSTMCell: the state must be a pair (h, c)")),
    Row("clip_grad_norm_order_0_all_zero", lambda L: L.clip([[0.0, 0.0]], max_norm=1.0,
                                                             norm_type=0), Same()),
    Row("conv2d_of_an_ndarray",
        lambda L: L.F.conv2d(IMAGE, L.t(np.ones((2, 1, 3, 3)))),
        Raises(TypeError, "conv2d: expected a Tensor; got numpy.ndarray")),
    Row("gelu_of_an_ndarray", lambda L: L.F.gelu(np.ones(3)),
        Raises(TypeError, "gelu: expected a Tensor; got numpy.ndarray")),
    Row("clamp_bound_of_the_wrong_shape", lambda L: L.t(X3).clamp(L.t([0.0, 1.0])),
        Raises(ValueError, "clamp (x, min and max): shapes (3,) and (2,) do not broadcast")),
    Row("pos_weight_of_the_wrong_shape",
        lambda L: L.F.binary_cross_entropy_with_logits(L.t([[1.0, 2.0]]), L.t([[1.0, 0.0]]),
                                                       pos_weight=L.t(X3)),
        Raises(ValueError, "pos_weight: shapes (3,) and (1, 2) do not broadcast")),
    Row("linear_on_the_wrong_number_of_features",
        lambda L: L.layer("Linear", 3, 2)(L.t(np.ones((4, 5)))),
        Raises(ValueError, "linear: input has 5 features (shape (4, 5)) but weight expects 3")),
    Row("masked_fill_with_a_list_mask", lambda L: L.t([1.0, 2.0]).masked_fill([True, False], 0.0),
        Raises(TypeError, "masked_fill: mask must be a boolean tensor or array; got a list")),
    Row("eye_of_minus_1", lambda L: L.lib.eye(-1),
        Raises(ValueError, "eye: n must be non-negative; got -1")),
    Row("ones_of_an_unknown_dtype", lambda L: L.lib.ones(2, dtype="float8"),
        Raises(TypeError, "unknown dtype 'float8'")),
    Row("index_with_a_mask_backward_on_array_api_strict",
        lambda L: L.grad_of(lambda x: x[L.t([[True, False, True], [False, True, False]], "bool",
                                            strict=True)], Z, strict=True), Same()),
    Row("linear_float32_given_float64",
        lambda L: L.F.linear(L.t(np.ones((4, 3))), L.t(np.ones((2, 3)), "float32")),
        Raises(TypeError, "linear: input has dtype float64 but weight has dtype float32; mixed "
                          "dtypes are refused")),
    Row("save_a_key_with_nul",
        lambda L: L.lib.save({"layer\x00.weight": np.ones(2)}, os.path.join(L.tmp, "a.npz")),
        Only(ValueError, r"the key 'layer\x00.weight' at the top holds a NUL character",
             "torch.save pickles any key; an .npz member's name cannot hold a NUL")),
    Row("load_a_fifo", lambda L: _load_with_deadline(L, _fifo(L.tmp)),
        Only(ValueError, "it is a FIFO (named pipe), not a regular file",
             "minigrad's loader; torch.load on a FIFO would wait for a writer")),
    Row("max_dim_of_empty_rows", lambda L: L.t(np.zeros((0, 3))).max(dim=1), Same()),
    Row("max_dim_of_size_0", lambda L: L.t(np.zeros((0, 3))).max(dim=0),
        Raises(ValueError, "max: cannot reduce over axis 0 of size 0")),
    Row("softmax_over_an_empty_axis", lambda L: L.F.softmax(L.t(np.zeros((2, 0))), dim=1),
        Same()),
    Row("index_with_an_empty_list", lambda L: L.grad_of(lambda x: x[[]], Z), Same()),
    # --- the sweep: the same kinds of mistake elsewhere -----------------------------------------
    # a container, an array or a number where a tensor (or a list of them) is expected
    Row("cat_of_one_tensor", lambda L: L.lib.cat(L.t(Z)),
        Raises(TypeError, "concatenate: expected a list or tuple of tensors; got a Tensor")),
    Row("stack_of_one_tensor", lambda L: L.lib.stack(L.t(Z)),
        Raises(TypeError, "stack: expected a list or tuple of tensors")),
    Row("exp_of_a_list", lambda L: L.lib.exp([1.0]),
        Raises(TypeError, "exp: expected a Tensor; got builtins.list")),
    Row("relu_layer_on_an_ndarray", lambda L: L.nn.ReLU()(np.ones(2)),
        Raises(TypeError, "relu: expected a Tensor; got numpy.ndarray")),
    Row("dropout_on_an_ndarray", lambda L: L.nn.Dropout(0.5)(np.ones(2)),
        Raises(TypeError, "Dropout: expected a Tensor")),
    Row("max_pool2d_of_an_ndarray", lambda L: L.F.max_pool2d(IMAGE, 2),
        Raises(TypeError, "max_pool2d: expected a Tensor")),
    Row("softmax_of_an_ndarray", lambda L: L.F.softmax(np.ones(3), dim=0),
        Raises(TypeError, "softmax: expected a Tensor")),
    Row("tensor_from_a_ragged_list", lambda L: L.lib.tensor([[1.0, 2.0], [3.0]]),
        Raises(ValueError, "the nested lists have different lengths")),
    # wrong shapes
    Row("compare_shapes_that_do_not_broadcast", lambda L: L.t([1.0, 2.0]) < L.t(X3),
        Raises(ValueError, "lt: shapes (2,) and (3,) do not broadcast")),
    Row("where_condition_of_the_wrong_shape",
        lambda L: L.lib.where(L.t([True, False], "bool"), L.t(X3), L.t(0.0)),
        Raises(ValueError, "where (condition, a and b): shapes (2,) and (3,)")),
    Row("stack_of_different_shapes", lambda L: L.lib.stack([L.t([1.0]), L.t([1.0, 2.0])]),
        Raises(ValueError, "stack: expected tensors of one shape; got (1,) (tensor 0) and (2,)")),
    Row("stack_axis_out_of_range", lambda L: L.lib.stack([L.t([1.0]), L.t([1.0])], dim=3),
        Raises(IndexError, "stack: axis 3 is out of range")),
    Row("cat_of_0d_tensors", lambda L: L.lib.cat([L.t(1.0), L.t(2.0)]),
        Raises(ValueError, "0-d tensors have no axis to join along")),
    Row("linear_bias_of_the_wrong_shape",
        lambda L: L.F.linear(L.t(np.ones((4, 3))), L.t(np.ones((2, 3))), L.t(X3)),
        Raises(ValueError, "linear: expected bias of shape (2,), one per output feature; got "
                           "shape (3,)")),
    Row("linear_on_a_0d_tensor", lambda L: L.layer("Linear", 3, 2)(L.t(1.0)),
        Raises(ValueError, "linear: expected input of shape (..., 3); got a 0-d tensor")),
    Row("bce_weight_of_the_wrong_shape",
        lambda L: L.F.binary_cross_entropy(L.t([[0.1, 0.2]]), L.t([[1.0, 0.0]]), weight=L.t(X3)),
        Raises(ValueError, "binary_cross_entropy: weight: shapes (3,) and (1, 2)")),
    Row("squeeze_axis_out_of_range", lambda L: L.t([[1.0]]).squeeze(3),
        Raises(IndexError, "squeeze: axis 3 is out of range")),
    Row("softmax_axis_out_of_range", lambda L: L.F.softmax(L.t(Z), dim=2),
        Raises(IndexError, "softmax: axis 2 is out of range")),
    Row("softmax_over_two_axes", lambda L: L.F.softmax(L.t(Z), dim=(0, 1)),
        Raises(TypeError, "softmax: an axis must be an int; got (0, 1)")),
    Row("max_of_empty_rows_over_all", lambda L: L.t(np.zeros((0, 3))).max(),
        Raises(ValueError, "max: cannot reduce an empty tensor of shape (0, 3)")),
    Row("amax_of_empty_rows", lambda L: L.t(np.zeros((0, 3))).amax(dim=1)
        if L.name == "torch" else L.t(np.zeros((0, 3))).max(axis=1), Same()),
    Row("argmax_of_empty_rows", lambda L: L.t(np.zeros((0, 3))).argmax(dim=1), Same()),
    Row("argmax_over_an_empty_axis", lambda L: L.t(np.zeros((0, 3))).argmax(dim=0),
        Raises(ValueError, "argmax: cannot reduce over axis 0 of size 0")),
    Row("log_softmax_over_an_empty_axis", lambda L: L.F.log_softmax(L.t(np.zeros((3, 0))), dim=1),
        Same()),
    Row("index_with_an_empty_list_of_rows", lambda L: L.t(Z)[[]], Same()),
    Row("cumsum_over_two_axes", lambda L: L.t(Z).cumsum(dim=(0, 1)),
        Raises(TypeError, "cumsum: an axis must be an int; got (0, 1)")),
    Row("leaky_relu_slope_none", lambda L: L.F.leaky_relu(L.t(Z), None),
        Raises(TypeError, "leaky_relu: the slope (negative_slope) must be a number; got None")),
    Row("elu_alpha_a_string", lambda L: L.F.elu(L.t(Z), "a"),
        Raises(TypeError, "elu: alpha must be a number; got 'a'")),
    # NaN: the gradient at a NaN input, as PyTorch's rules give it
    Row("maximum_gradient_at_nan",
        lambda L: L.grad_of(lambda x: L.lib.maximum(x, L.t([1.0, nan, 0.0, 2.0, 3.0])), XNAN),
        Same()),
    Row("minimum_gradient_at_nan",
        lambda L: L.grad_of(lambda x: L.lib.minimum(x, L.t([1.0, nan, 0.0, 2.0, 3.0])), XNAN),
        Same()),
    Row("relu_gradient_at_nan", lambda L: L.grad_of(lambda x: x.relu(), XNAN + [0.0, -inf]),
        Same()),
    Row("abs_gradient_at_nan", lambda L: L.grad_of(lambda x: x.abs(), XNAN + [0.0]), Same()),
    Row("hardtanh_gradient_at_nan",
        lambda L: L.grad_of(lambda x: L.F.hardtanh(x), XNAN + [-1.0, 1.0]), Same()),
    Row("elu_gradient_at_nan", lambda L: L.grad_of(lambda x: L.F.elu(x), XNAN + [0.0]), Same()),
    # wrong dtypes
    Row("linear_on_integers", lambda L: L.F.linear(L.t([[1, 2, 3]], "int64"),
                                                   L.t(np.ones((2, 3)))),
        Raises(TypeError, "linear: input has dtype int64 but weight has dtype float64")),
    Row("softmax_of_integers", lambda L: L.F.softmax(L.t([1, 2], "int64"), dim=0),
        Raises(TypeError, "softmax: expected a floating-point tensor; got dtype int64")),
    Row("tril_with_a_float_diagonal", lambda L: L.t(Z).tril(0.5),
        Raises(TypeError, "tril: diagonal must be an int; got 0.5")),
    Row("zeros_of_an_unknown_dtype", lambda L: L.lib.zeros(2, dtype="float8"),
        Raises(TypeError, "unknown dtype 'float8'")),
    Row("cross_entropy_of_integer_logits",
        lambda L: L.F.cross_entropy(L.t([[1, 2]], "int64"), L.t([0], "int64")),
        Raises(TypeError, "cross_entropy: logits must be floating point; got dtype int64")),
    Row("nll_loss_of_integers", lambda L: L.F.nll_loss(L.t([[1, 2]], "int64"), L.t([0], "int64")),
        Raises(TypeError, "nll_loss: log_probs must be floating point")),
    Row("linear_input_of_another_array_library",
        lambda L: L.F.linear(L.t(np.ones((2, 3)), strict=True), L.t(np.ones((2, 3)))),
        Only(RuntimeError, "linear: expected both tensors on one device",
             "array-api-strict arrays exist in minigrad only")),
    Row("module_to_an_integer_dtype", lambda L: L.layer("Linear", 2, 2).to(dtype=L.int64),
        Raises(TypeError, "Linear.to: dtype must be a floating-point dtype")),
    # negative, fractional or non-finite sizes and ranges
    Row("one_hot_of_minus_2_classes", lambda L: L.F.one_hot(L.t([0, 1], "int64"), -2),
        Raises(ValueError, "one_hot: num_classes must be a non-negative int, or -1")),
    Row("embedding_padding_idx_a_float", lambda L: L.layer("Embedding", 4, 2, padding_idx=1.5),
        Raises(ValueError, "Embedding: padding_idx must be an int in [-4, 4); got 1.5")),
    Row("expand_to_a_float_size", lambda L: L.t([1.0]).expand(2.5),
        Raises(TypeError, "expand: sizes must be ints; got 2.5")),
    Row("unsqueeze_at_true", lambda L: L.t([1.0]).unsqueeze(True),
        Raises(IndexError, "unsqueeze: dim must be an int")),
    Row("eye_columns_minus_1", lambda L: L.lib.eye(2, -1),
        Raises(ValueError, "eye: m must be non-negative; got -1")),
    Row("eye_of_a_float", lambda L: L.lib.eye(2.5), Raises(TypeError, "eye: n must be an int")),
    Row("zeros_of_a_numpy_int", lambda L: L.lib.zeros(np.int64(2), dtype=L.float64), Same()),
    Row("rand_of_minus_1", lambda L: L.lib.rand(-1),
        Raises(ValueError, "rand: sizes must be non-negative ints")),
    Row("arange_to_nan", lambda L: L.lib.arange(0, nan),
        Raises(ValueError, "arange: end must be finite; got nan")),
    Row("arange_against_the_step", lambda L: L.lib.arange(5, 0),
        Raises(ValueError, "the range from 5 to 0 goes against the step 1")),
    Row("arange_of_a_string", lambda L: L.lib.arange("a"),
        Raises(TypeError, "arange: end must be a number; got str")),
    Row("arange_empty", lambda L: L.lib.arange(3, 3), Same()),
    Row("reshape_float_size", lambda L: L.t([1.0] * 6).reshape((2.0, 3)),
        Raises(TypeError, "reshape: sizes must be ints; got 2.0 at index 0")),
    # NaN where a probability is expected
    Row("binary_cross_entropy_of_nan",
        lambda L: L.F.binary_cross_entropy(L.t([nan, 0.5]), L.t([1.0, 0.0])),
        Raises(ValueError, "binary_cross_entropy: input must hold probabilities in [0, 1]")),
]

# PyTorch 2.13.0's answer to each Same row; python -m bench.torch_parity re-derives them.
PINNED: dict[str, Any] = {
 'floordiv_float_by_zero': {'dtype': 'float64', 'shape': [3], 'values': [inf, -inf, nan]},
 'mod_float_by_zero': {'dtype': 'float64', 'shape': [3], 'values': [nan, nan, nan]},
 'round_decimals_negative': {'dtype': 'float64', 'shape': [2], 'values': [1230.0, 20.0]},
 'var_correction_equal_to_n': {'dtype': 'float64', 'shape': [], 'values': inf},
 'var_correction_above_n': {'dtype': 'float64', 'shape': [], 'values': inf},
 'var_correction_nan': {'dtype': 'float64', 'shape': [], 'values': inf},
 'var_correction_of_constant': {'dtype': 'float64', 'shape': [], 'values': nan},
 'std_correction_equal_to_n': {'dtype': 'float64', 'shape': [], 'values': inf},
 'var_correction_equal_to_n_gradient': [{'dtype': 'float64', 'shape': [], 'values': inf},
                                        {'dtype': 'float64',
                                         'shape': [3],
                                         'values': [-inf, nan, inf]}],
 'std_correction_equal_to_n_gradient': [{'dtype': 'float64', 'shape': [], 'values': inf},
                                        {'dtype': 'float64',
                                         'shape': [3],
                                         'values': [nan, nan, nan]}],
 'sign_of_nan': [{'dtype': 'float64', 'shape': [5], 'values': [0.0, -1.0, 0.0, 1.0, 1.0]},
                 {'dtype': 'float64', 'shape': [5], 'values': [0.0, 0.0, 0.0, 0.0, 0.0]}],
 'cumsum_0d': {'dtype': 'float64', 'shape': [], 'values': 2.0},
 'full_with_nan': {'dtype': 'float64', 'shape': [2], 'values': [nan, nan]},
 'cross_entropy_probabilities_default_ignore_index': {'dtype': 'float64',
                                                      'shape': [],
                                                      'values': 1.7859919530321906},
 'clip_grad_norm_minus_inf': [{'dtype': 'float64', 'shape': [], 'values': 3.0},
                              [{'dtype': 'float64',
                                'shape': [2],
                                'values': [0.9999996666667778, 1.333332888889037]}]],
 'clip_grad_norm_order_0': [{'dtype': 'float64', 'shape': [], 'values': 1.0},
                            [{'dtype': 'float64',
                              'shape': [2],
                              'values': [2.9999970000030003, 3.9999960000040002]},
                             {'dtype': 'float64', 'shape': [1], 'values': [0.0]}]],
 'clip_grad_norm_max_norm_nan': [{'dtype': 'float64', 'shape': [], 'values': 5.0},
                                 [{'dtype': 'float64', 'shape': [2], 'values': [nan, nan]}]],
 'clip_grad_norm_nan_gradient': [{'dtype': 'float64', 'shape': [], 'values': nan},
                                 [{'dtype': 'float64', 'shape': [2], 'values': [nan, nan]},
                                  {'dtype': 'float64', 'shape': [2], 'values': [nan, nan]},
                                  {'dtype': 'float64', 'shape': [1], 'values': [nan]}]],
 'clip_grad_norm_inf_gradient': [{'dtype': 'float64', 'shape': [], 'values': inf},
                                 [{'dtype': 'float64', 'shape': [2], 'values': [0.0, 0.0]},
                                  {'dtype': 'float64', 'shape': [2], 'values': [nan, 0.0]}]],
 'clip_grad_norm_order_0_all_zero': [{'dtype': 'float64', 'shape': [], 'values': 0.0},
                                     [{'dtype': 'float64',
                                       'shape': [2],
                                       'values': [0.0, 0.0]}]],
 'index_with_a_mask_backward_on_array_api_strict': [{'dtype': 'float64',
                                                     'shape': [3],
                                                     'values': [0.5, 2.0, 0.25]},
                                                    {'dtype': 'float64',
                                                     'shape': [2, 3],
                                                     'values': [[1.0, 0.0, 1.0],
                                                                [0.0, 1.0, 0.0]]}],
 'max_dim_of_empty_rows': [{'dtype': 'float64', 'shape': [0], 'values': []},
                           {'dtype': 'int64', 'shape': [0], 'values': []}],
 'softmax_over_an_empty_axis': {'dtype': 'float64', 'shape': [2, 0], 'values': [[], []]},
 'index_with_an_empty_list': [{'dtype': 'float64', 'shape': [0, 3], 'values': []},
                              {'dtype': 'float64',
                               'shape': [2, 3],
                               'values': [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]}],
 'amax_of_empty_rows': {'dtype': 'float64', 'shape': [0], 'values': []},
 'argmax_of_empty_rows': {'dtype': 'int64', 'shape': [0], 'values': []},
 'log_softmax_over_an_empty_axis': {'dtype': 'float64',
                                    'shape': [3, 0],
                                    'values': [[], [], []]},
 'index_with_an_empty_list_of_rows': {'dtype': 'float64', 'shape': [0, 3], 'values': []},
 'zeros_of_a_numpy_int': {'dtype': 'float64', 'shape': [2], 'values': [0.0, 0.0]},
 'arange_empty': {'dtype': 'int64', 'shape': [0], 'values': []},
 'maximum_gradient_at_nan': [
     {'dtype': 'float64', 'shape': [5], 'values': [nan, nan, 0.0, nan, 3.0]},
     {'dtype': 'float64', 'shape': [5], 'values': [1.0, 1.0, 0.0, 1.0, 0.5]}],
 'minimum_gradient_at_nan': [
     {'dtype': 'float64', 'shape': [5], 'values': [nan, nan, -2.0, nan, 3.0]},
     {'dtype': 'float64', 'shape': [5], 'values': [1.0, 1.0, 1.0, 1.0, 0.5]}],
 'relu_gradient_at_nan': [
     {'dtype': 'float64', 'shape': [7], 'values': [nan, 1.0, 0.0, nan, 3.0, 0.0, 0.0]},
     {'dtype': 'float64', 'shape': [7], 'values': [1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0]}],
 'abs_gradient_at_nan': [
     {'dtype': 'float64', 'shape': [6], 'values': [nan, 1.0, 2.0, nan, 3.0, 0.0]},
     {'dtype': 'float64', 'shape': [6], 'values': [0.0, 1.0, -1.0, 0.0, 1.0, 0.0]}],
 'hardtanh_gradient_at_nan': [
     {'dtype': 'float64', 'shape': [7], 'values': [nan, 1.0, -1.0, nan, 1.0, -1.0, 1.0]},
     {'dtype': 'float64', 'shape': [7], 'values': [1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]}],
 'elu_gradient_at_nan': [
     {'dtype': 'float64', 'shape': [6], 'values': [nan, 1.0, -0.8646647167633873, nan, 3.0, 0.0]},
     {'dtype': 'float64', 'shape': [6], 'values': [1.0, 1.0, 0.1353352832366127, 1.0, 1.0, 1.0]}]}


def _each_row(test: Callable[..., None]) -> Callable[..., None]:
    return test if pytest is None else \
        pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])(test)


@_each_row
def test_bad_input_gets_pytorchs_answer_or_a_clear_error(row, tmp_path):
    L = Lib("minigrad")
    L.tmp = str(tmp_path)
    if isinstance(row.want, Same):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # x / 0: as PyTorch, no noise
            got = plain(row.call(L))
        want = PINNED[row.name]
        assert same(got, want), f"{row.name}: got {got}, PyTorch gives {want}"
        return
    with pytest.raises(row.want.error) as info:
        row.call(L)
    assert row.want.fragment in str(info.value), \
        f"{row.name}: the message should say {row.want.fragment!r}; got {info.value}"


def test_every_same_row_is_pinned():
    names = {row.name for row in ROWS}
    assert len(names) == len(ROWS), "row names repeat"
    assert sorted(PINNED) == sorted(row.name for row in ROWS if isinstance(row.want, Same))


def same(got: Any, want: Any) -> bool:
    """Plain results agree: dtypes and shapes exactly, values as :func:`differences` says."""
    if isinstance(want, dict) and isinstance(got, dict):
        return (got["dtype"] == want["dtype"] and got["shape"] == want["shape"]
                and not differences(got["values"], want["values"]))
    if isinstance(want, list) and isinstance(got, list):
        return len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    if isinstance(want, (dict, list)) or isinstance(got, (dict, list)):
        return False
    return not differences(got, want)
