"""The behaviours minigrad copies from PyTorch, as one table shared by the tests and the bench.

Each :class:`Case` is a small computation written once, ``fn(lib, F, *inputs)``, that runs
unchanged on ``lib = minigrad`` (``F = minigrad.functional``) and on ``lib = torch``
(``F = torch.nn.functional``), or with a separate ``torch_fn`` where the spelling differs.
PyTorch's answers (values, dtypes, gradients, or that it raises) are pinned in
``torch_values.json`` (data, one line a case; :func:`load_pinned` and :func:`write_pinned`):

* ``tests/engine/test_torch_parity.py`` runs every case on minigrad and compares with the pinned
  values (CI has no PyTorch);
* ``python -m bench.torch_parity`` (the ``bench`` extra has PyTorch) recomputes every case with
  PyTorch and fails on any value that differs from the pinned one; ``--write`` rewrites
  ``torch_values.json`` from PyTorch.

Inputs are given with explicit dtypes, so that the two libraries' default float dtypes
(PyTorch float32, minigrad float64) never enter.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

inf, nan = math.inf, math.nan


@dataclass
class Case:
    """One computation, its inputs, and what is compared.

    ``inputs``: ``(values, dtype, requires_grad)`` each. ``fn`` returns a tensor or a tuple of
    tensors; the first output (if it requires grad) is back-propagated with fixed weights.
    ``raises``: PyTorch raises here, and minigrad must raise a clear error mentioning ``match``.
    ``check_dtype``: compare the output dtypes too.
    """

    name: str
    fn: Callable[..., Any]
    inputs: list = field(default_factory=list)
    torch_fn: Callable[..., Any] | None = None
    raises: bool = False
    match: str = ""
    check_dtype: bool = True


def x64(values: Any, grad: bool = True) -> tuple:
    return (values, "float64", grad)


def x32(values: Any, grad: bool = True) -> tuple:
    return (values, "float32", grad)


def i64(values: Any) -> tuple:
    return (values, "int64", False)


def boolean(values: Any) -> tuple:
    return (values, "bool", False)


Z = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [-2.0, 3.0, 0.0], [0.0, 0.0, 0.0]]  # logits (4, 3)
X = [-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0]  # activation inputs
X_WIDE = [-30.0, -5.0, -1.0, 0.0, 1.0, 5.0, 25.0]

CASES = [
    # --- cross_entropy and nll_loss: targets, -inf, options -------------------------------------
    Case("cross_entropy", lambda lib, F, z, t: F.cross_entropy(z, t), [x64(Z), i64([0, 2, 1, 2])]),
    Case("cross_entropy_neg_inf_logit", lambda lib, F, z, t: F.cross_entropy(z, t),
         [x64([[0.0, -inf, 1.0], [2.0, 1.0, -inf]]), i64([0, 1])]),
    Case("cross_entropy_target_is_neg_inf", lambda lib, F, z, t: F.cross_entropy(z, t),
         [x64([[0.0, -inf, 1.0]]), i64([1])]),
    Case("cross_entropy_target_too_large", lambda lib, F, z, t: F.cross_entropy(z, t),
         [x64(Z), i64([0, 3, 1, 2])], raises=True, match="out of range"),
    Case("cross_entropy_target_negative", lambda lib, F, z, t: F.cross_entropy(z, t),
         [x64(Z), i64([0, -1, 1, 2])], raises=True, match="negative"),
    Case("cross_entropy_ignore_index", lambda lib, F, z, t: F.cross_entropy(z, t),
         [x64(Z), i64([0, -100, 1, -100])]),
    Case("cross_entropy_ignore_index_custom",
         lambda lib, F, z, t: F.cross_entropy(z, t, ignore_index=1), [x64(Z), i64([0, 1, 1, 2])]),
    Case("cross_entropy_all_ignored", lambda lib, F, z, t: F.cross_entropy(z, t),
         [x64(Z), i64([-100, -100, -100, -100])]),
    Case("cross_entropy_weight",
         lambda lib, F, z, t, w: F.cross_entropy(z, t, weight=w),
         [x64(Z), i64([0, 2, 1, 2]), x64([1.0, 2.0, 0.5], grad=False)]),
    Case("cross_entropy_sum", lambda lib, F, z, t: F.cross_entropy(z, t, reduction="sum"),
         [x64(Z), i64([0, 2, 1, 2])]),
    Case("cross_entropy_none", lambda lib, F, z, t: F.cross_entropy(z, t, reduction="none"),
         [x64(Z), i64([0, 2, 1, 2])]),
    Case("cross_entropy_label_smoothing",
         lambda lib, F, z, t: F.cross_entropy(z, t, label_smoothing=0.1),
         [x64(Z), i64([0, 2, 1, 2])]),
    Case("cross_entropy_everything",
         lambda lib, F, z, t, w: F.cross_entropy(z, t, weight=w, ignore_index=-100,
                                                 label_smoothing=0.2),
         [x64(Z), i64([0, -100, 1, 2]), x64([1.0, 2.0, 0.5], grad=False)]),
    Case("cross_entropy_everything_none",
         lambda lib, F, z, t, w: F.cross_entropy(z, t, weight=w, reduction="none",
                                                 label_smoothing=0.2),
         [x64(Z), i64([0, -100, 1, 2]), x64([1.0, 2.0, 0.5], grad=False)]),
    Case("cross_entropy_probabilities", lambda lib, F, z, p: F.cross_entropy(z, p),
         [x64(Z), x64([[1.0, 0.0, 0.0], [0.2, 0.3, 0.5], [0.0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]],
                      grad=False)]),
    Case("cross_entropy_probabilities_smoothing_weight",
         lambda lib, F, z, p, w: F.cross_entropy(z, p, weight=w, label_smoothing=0.1),
         [x64(Z), x64([[1.0, 0.0, 0.0], [0.2, 0.3, 0.5], [0.0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]],
                      grad=False), x64([1.0, 2.0, 0.5], grad=False)]),
    Case("nll_loss_weight", lambda lib, F, z, t, w: F.nll_loss(F.log_softmax(z, dim=1), t,
                                                               weight=w),
         [x64(Z), i64([0, 2, 1, 2]), x64([1.0, 2.0, 0.5], grad=False)]),
    Case("nll_loss_target_too_large", lambda lib, F, z, t: F.nll_loss(z, t),
         [x64(Z), i64([0, 5, 1, 2])], raises=True, match="out of range"),
    Case("log_softmax_neg_inf", lambda lib, F, z: F.log_softmax(z, dim=1),
         [x64([[0.0, -inf, 1.0]])]),
    # --- binary cross-entropy --------------------------------------------------------------------
    Case("binary_cross_entropy", lambda lib, F, p, t: F.binary_cross_entropy(p, t),
         [x64([0.1, 0.5, 0.9, 0.3]), x64([0.0, 1.0, 1.0, 0.5], grad=False)]),
    Case("binary_cross_entropy_at_0_and_1", lambda lib, F, p, t: F.binary_cross_entropy(p, t),
         [x64([0.0, 1.0, 0.0, 1.0]), x64([1.0, 0.0, 0.0, 1.0], grad=False)]),
    Case("binary_cross_entropy_weight_sum",
         lambda lib, F, p, t, w: F.binary_cross_entropy(p, t, weight=w, reduction="sum"),
         [x64([0.1, 0.5, 0.9]), x64([0.0, 1.0, 1.0], grad=False), x64([1.0, 2.0, 3.0], False)]),
    Case("binary_cross_entropy_outside_0_1", lambda lib, F, p, t: F.binary_cross_entropy(p, t),
         [x64([0.5, 1.5]), x64([0.0, 1.0], grad=False)], raises=True, match="[0, 1]"),
    Case("bce_with_logits", lambda lib, F, x, t: F.binary_cross_entropy_with_logits(x, t),
         [x64(X_WIDE), x64([0.0, 1.0, 1.0, 0.5, 0.0, 1.0, 0.0], grad=False)]),
    Case("bce_with_logits_pos_weight_none",
         lambda lib, F, x, t, pw: F.binary_cross_entropy_with_logits(x, t, pos_weight=pw,
                                                                     reduction="none"),
         [x64([[-2.0, 0.5], [3.0, -0.1]]), x64([[1.0, 0.0], [1.0, 1.0]], grad=False),
          x64([2.0, 0.5], grad=False)]),
    # --- activations -----------------------------------------------------------------------------
    Case("gelu", lambda lib, F, x: F.gelu(x), [x64(X_WIDE + [-2.5, 2.5, 0.3])]),
    Case("gelu_tanh", lambda lib, F, x: F.gelu(x, approximate="tanh"), [x64(X_WIDE)]),
    Case("silu", lambda lib, F, x: F.silu(x), [x64(X_WIDE)]),
    Case("elu", lambda lib, F, x: F.elu(x, alpha=0.7), [x64(X)]),
    Case("softplus", lambda lib, F, x: F.softplus(x), [x64(X_WIDE)]),
    Case("softplus_beta_threshold", lambda lib, F, x: F.softplus(x, beta=2.0, threshold=4.0),
         [x64(X + [1.9, 2.0, 2.1])]),
    Case("hardtanh_bounds", lambda lib, F, x: F.hardtanh(x), [x64(X)]),
    Case("logsigmoid", lambda lib, F, x: F.logsigmoid(x), [x64(X_WIDE + [-800.0, 800.0])]),
    Case("relu_at_0", lambda lib, F, x: F.relu(x), [x64(X)]),
    Case("leaky_relu_at_0", lambda lib, F, x: F.leaky_relu(x, 0.1), [x64(X)]),
    Case("sigmoid", lambda lib, F, x: lib.sigmoid(x), [x64(X_WIDE)]),
    Case("softmax", lambda lib, F, z: F.softmax(z, dim=0), [x64(Z)]),
    # --- elementwise -------------------------------------------------------------------------------
    Case("sin", lambda lib, F, x: lib.sin(x), [x64(X)]),
    Case("cos", lambda lib, F, x: lib.cos(x), [x64(X)]),
    Case("tan", lambda lib, F, x: lib.tan(x), [x64([-1.0, -0.3, 0.0, 0.4, 1.2])]),
    Case("log1p", lambda lib, F, x: lib.log1p(x), [x64([-0.5, 0.0, 1e-10, 3.0])]),
    Case("expm1", lambda lib, F, x: lib.expm1(x), [x64([-2.0, 0.0, 1e-10, 3.0])]),
    Case("rsqrt", lambda lib, F, x: lib.rsqrt(x), [x64([0.25, 1.0, 4.0, 0.0])]),
    Case("sqrt_at_0", lambda lib, F, x: lib.sqrt(x), [x64([0.0, 4.0])]),
    Case("abs_at_0", lambda lib, F, x: lib.abs(x), [x64(X)]),
    Case("sign", lambda lib, F, x: lib.sign(x), [x64(X)]),
    Case("floor", lambda lib, F, x: lib.floor(x), [x64([-1.5, -0.5, 0.0, 0.5, 2.7])]),
    Case("ceil", lambda lib, F, x: lib.ceil(x), [x64([-1.5, -0.5, 0.0, 0.5, 2.7])]),
    Case("round_half_even", lambda lib, F, x: lib.round(x),
         [x64([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.6])]),
    Case("round_decimals", lambda lib, F, x: lib.round(x, decimals=1),
         [x64([1.25, 1.35, -0.04, 2.0])]),
    Case("isnan", lambda lib, F, x: lib.isnan(x), [x64([0.0, nan, inf, -inf], grad=False)]),
    Case("isinf", lambda lib, F, x: lib.isinf(x), [x64([0.0, nan, inf, -inf], grad=False)]),
    Case("clamp_bounds_pass_gradient", lambda lib, F, x: x.clamp(-1.0, 1.0), [x64(X)]),
    Case("clamp_min_only", lambda lib, F, x: lib.clamp(x, min=0.5), [x64(X)]),
    Case("clamp_min_above_max", lambda lib, F, x: x.clamp(min=1.0, max=-1.0), [x64(X)]),
    Case("floordiv", lambda lib, F, a, b: a // b,
         [x64([5.5, -3.0, 7.0, -7.0], grad=False), x64([2.0, 2.0, -2.0, 3.0], grad=False)]),
    Case("remainder", lambda lib, F, a, b: a % b,
         [x64([5.5, -3.0, 7.0, -7.0]), x64([2.0, 2.0, -2.0, 3.0])]),
    Case("remainder_scalar", lambda lib, F, a: a % 2.5, [x64([5.5, -3.0, 7.0])]),
    Case("maximum_tie_splits", lambda lib, F, a, b: lib.maximum(a, b),
         [x64([1.0, 2.0, 3.0]), x64([1.0, 5.0, 0.0])]),
    Case("maximum_of_two_numbers", lambda lib, F: lib.maximum(1.0, 2.0), [], raises=True,
         match="must be a Tensor"),
    Case("where_with_numbers", lambda lib, F, c: lib.where(c, 1.0, 0.0),
         [boolean([True, False, True])], check_dtype=False),
    Case("where_tensor_and_number", lambda lib, F, c, x: lib.where(c, x, 0.0),
         [boolean([True, False, True]), x64([1.0, 2.0, 3.0])]),
    # --- powers at 0 ------------------------------------------------------------------------------
    Case("pow_zero_exponent_at_0", lambda lib, F, x: x ** 0, [x64([0.0, 2.0, -1.0])]),
    Case("pow_half_at_0", lambda lib, F, x: x ** 0.5, [x64([0.0, 4.0])]),
    Case("pow_square_at_0", lambda lib, F, x: x ** 2, [x64([0.0, -3.0])]),
    Case("pow_tensor_at_0", lambda lib, F, x, e: x ** e,
         [x64([0.0, 0.0, 0.0, 2.0, 1.0]), x64([2.0, 0.0, 0.5, 0.0, 3.0])]),
    Case("pow_number_base_0", lambda lib, F, e: 0.0 ** e, [x64([2.0, 0.0, 1.5])]),
    Case("pow_number_base", lambda lib, F, e: 2.0 ** e, [x64([2.0, 0.0, -1.5])]),
    # --- reductions ----------------------------------------------------------------------------
    Case("max_full_ties_split", lambda lib, F, x: x.max(), [x64([[1.0, 3.0], [3.0, 0.0]])]),
    Case("min_full_ties_split", lambda lib, F, x: x.min(), [x64([0.0, 1.0, 0.0, 0.0])]),
    Case("max_full_nan", lambda lib, F, x: x.max(), [x64([1.0, nan, 3.0])]),
    Case("max_dim_values_indices", lambda lib, F, x: x.max(dim=1),
         [x64([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])]),
    Case("min_dim_keepdim", lambda lib, F, x: x.min(dim=0, keepdim=True),
         [x64([[1.0, 3.0, 3.0], [1.0, 2.0, 0.0]])]),
    Case("amax_ties_split", lambda lib, F, x: x.max(axis=1),
         [x64([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])], torch_fn=lambda lib, F, x: lib.amax(x, dim=1)),
    Case("amin_tuple_axis", lambda lib, F, x: x.min(axis=(0, 2)),
         [x64([[[1.0, 0.0], [2.0, 5.0]], [[0.0, 4.0], [7.0, 2.0]]])],
         torch_fn=lambda lib, F, x: lib.amin(x, dim=(0, 2))),
    Case("argmax_first_tie", lambda lib, F, x: x.argmax(dim=1),
         [x64([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], grad=False)]),
    Case("argmin_flat", lambda lib, F, x: lib.argmin(x),
         [x64([[1.0, 0.0, 3.0], [0.0, 2.0, 0.0]], grad=False)]),
    Case("sum_dim_list", lambda lib, F, x: x.sum(dim=[0, 2]),
         [x64([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]])]),
    Case("mean_dim_keepdim", lambda lib, F, x: x.mean(dim=-1, keepdim=True), [x64(Z)]),
    Case("mean_of_empty", lambda lib, F, x: x.mean(), [x64([])]),
    Case("var_default_correction", lambda lib, F, x: x.var(dim=1), [x64(Z)]),
    Case("var_correction_0", lambda lib, F, x: x.var(correction=0), [x64(Z)]),
    Case("std_dim", lambda lib, F, x: x.std(dim=0, keepdim=True), [x64(Z)]),
    Case("std_of_constant", lambda lib, F, x: x.std(), [x64([2.0, 2.0, 2.0])]),
    Case("var_of_one_value", lambda lib, F, x: x.var(), [x64([2.0])]),
    Case("logsumexp", lambda lib, F, x: lib.logsumexp(x, dim=1), [x64(Z)]),
    Case("logsumexp_neg_inf_row", lambda lib, F, x: x.logsumexp(dim=1),
         [x64([[-inf, -inf], [0.0, -inf], [1000.0, 1000.0]])]),
    Case("logsumexp_of_empty", lambda lib, F, x: x.logsumexp(dim=1), [x64([[], []])]),
    Case("prod_with_zeros", lambda lib, F, x: x.prod(dim=1),
         [x64([[2.0, 0.0, 3.0], [0.0, 0.0, 3.0], [1.5, -2.0, 4.0]])]),
    Case("prod_all", lambda lib, F, x: x.prod(), [x64([[2.0, 0.5], [3.0, -1.0]])]),
    Case("cumsum", lambda lib, F, x: x.cumsum(dim=1), [x64(Z)]),
    Case("cumsum_dim0", lambda lib, F, x: lib.cumsum(x, dim=0), [x64(Z)]),
    # --- shapes and selection ----------------------------------------------------------------------
    Case("transpose_two_axes_of_3d", lambda lib, F, x: x.transpose(0, 2),
         [x64([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]])]),
    Case("transpose_out_of_range", lambda lib, F, x: x.transpose(0, 5), [x64([[1.0, 2.0]])],
         raises=True, match="out of range"),
    Case("permute", lambda lib, F, x: x.permute(2, 0, 1),
         [x64([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]])]),
    Case("permute_not_a_permutation", lambda lib, F, x: x.permute(0, 0), [x64([[1.0, 2.0]])],
         raises=True, match="permutation"),
    Case("flatten_start_dim_out_of_range", lambda lib, F, x: x.flatten(start_dim=1),
         [x64([1.0, 2.0])], raises=True, match="out of range"),
    Case("flatten_start_after_end", lambda lib, F, x: x.flatten(2, 1),
         [x64([[[1.0]]])], raises=True, match="after"),
    Case("flatten_middle", lambda lib, F, x: x.flatten(1, 2),
         [x64([[[[1.0, 2.0]], [[3.0, 4.0]]]])]),
    Case("flatten_0d", lambda lib, F, x: x.flatten(), [x64(3.0)]),
    Case("unsqueeze", lambda lib, F, x: x.unsqueeze(-1), [x64([[1.0, 2.0]])]),
    Case("unsqueeze_out_of_range", lambda lib, F, x: x.unsqueeze(3), [x64([[1.0, 2.0]])],
         raises=True, match="unsqueeze"),
    Case("squeeze_all", lambda lib, F, x: x.squeeze(), [x64([[[1.0], [2.0]]])]),
    Case("squeeze_non_1_axis_is_kept", lambda lib, F, x: x.squeeze(1), [x64([[[1.0], [2.0]]])]),
    Case("expand", lambda lib, F, x: x.expand(2, -1, 3), [x64([[1.0], [2.0]])]),
    Case("expand_bad", lambda lib, F, x: x.expand(3, 3), [x64([[1.0], [2.0]])], raises=True,
         match="expand"),
    Case("view", lambda lib, F, x: x.view(3, -1), [x64(Z)]),
    Case("cat_dim", lambda lib, F, a, b: lib.cat([a, b], dim=1),
         [x64([[1.0], [2.0]]), x64([[3.0, 4.0], [5.0, 6.0]])]),
    Case("gather", lambda lib, F, x, i: x.gather(1, i),
         [x64(Z), i64([[0, 0], [2, 1], [1, 1], [0, 2]])]),
    Case("gather_smaller_index", lambda lib, F, x, i: lib.gather(x, 0, i),
         [x64(Z), i64([[3, 0], [1, 1]])]),
    Case("gather_out_of_range", lambda lib, F, x, i: x.gather(1, i), [x64(Z), i64([[3], [0],
                                                                                     [0], [0]])],
         raises=True, match="index"),
    Case("masked_fill", lambda lib, F, x, m: x.masked_fill(m, -inf),
         [x64(Z), boolean([False, True, False])]),
    Case("tril", lambda lib, F, x: x.tril(), [x64(Z)]),
    Case("triu_diagonal", lambda lib, F, x: lib.triu(x, diagonal=1), [x64(Z)]),
    Case("one_hot", lambda lib, F, t: F.one_hot(t, 4), [i64([0, 3, 1])]),
    Case("one_hot_inferred", lambda lib, F, t: F.one_hot(t), [i64([[0, 2], [1, 1]])]),
    Case("one_hot_too_large", lambda lib, F, t: F.one_hot(t, 3), [i64([0, 3])], raises=True,
         match="num_classes"),
    # --- dtypes --------------------------------------------------------------------------------
    Case("float32_times_numpy_float64", lambda lib, F, x: x * __import__("numpy").float64(2.0),
         [x32([1.0, 2.0])]),
    Case("float32_plus_int64_tensor", lambda lib, F, x, i: x + i, [x32([1.0, 2.0]), i64([1, 2])]),
    Case("float32_plus_0d_float64", lambda lib, F, x, s: x + s, [x32([1.0, 2.0]), x64(0.5)]),
    Case("float32_plus_float64", lambda lib, F, x, y: x + y, [x32([1.0, 2.0]), x64([0.5, 0.25])]),
    Case("int64_plus_0d_float64", lambda lib, F, i, s: i + s, [i64([1, 2]), x64(0.5, False)]),
    Case("int_tensor_from_list", lambda lib, F: lib.tensor([1, 2]) * 3, []),
    Case("tensor_from_string", lambda lib, F: lib.tensor("abc"), [], raises=True,
         match="expected numbers"),
    Case("tensor_from_none", lambda lib, F: lib.tensor(None), [], raises=True,
         match="expected numbers"),
    # --- pooling and convolution ---------------------------------------------------------------
    Case("avg_pool2d_padding", lambda lib, F, x: F.avg_pool2d(x, 3, 2, 1),
         [x64([[[[float(i * 5 + j) for j in range(5)] for i in range(5)]]])]),
    Case("avg_pool2d_overlap", lambda lib, F, x: F.avg_pool2d(x, 2, 1),
         [x64([[[[1.0, 2.0, 0.0], [3.0, -1.0, 2.0], [0.5, 0.0, 4.0]]]])]),
    Case("conv2d_dilation_groups", lambda lib, F, x, w, b: F.conv2d(x, w, b, 1, 1, 2, 2),
         [x64([[[[float((c * 31 + i * 7 + j * 3) % 11) - 5.0 for j in range(5)]
                 for i in range(5)] for c in range(4)]]),
          x64([[[[float((o * 13 + c * 5 + a * 3 + b) % 7) - 3.0 for b in range(3)]
                 for a in range(3)] for c in range(2)] for o in range(4)]),
          x64([0.5, -1.0, 0.0, 2.0])]),
    Case("conv2d_depthwise_stride", lambda lib, F, x, w: F.conv2d(x, w, None, 2, 0, 1, 3),
         [x64([[[[float((c + i * j) % 5) for j in range(5)] for i in range(5)]
                for c in range(3)]]),
          x64([[[[1.0, -1.0], [0.5, 2.0]]], [[[0.0, 1.0], [1.0, 0.0]]], [[[2.0, 0.0], [0.0, -2.0]]]])]),
]


# ---------------------------------------------------------------------------------------------
# Running a case on either library


def _weights(n: int) -> list[float]:
    """Fixed, irregular weights for back-propagating a non-scalar output."""
    return [1.0 + 0.5 * ((k * 7) % 5) for k in range(n)]


def run_case(case: Case, lib_name: str) -> dict:
    """Run ``case`` on ``"minigrad"`` or ``"torch"``; return what is pinned.

    ``{"raises": True}`` if it raised (with ``"message"``), else ``{"values": [...],
    "dtypes": [...], "grads": [...]}``: one value and dtype per output, one gradient (or None)
    per input.
    """
    import numpy as np

    if lib_name == "torch":
        import torch as lib
        import torch.nn.functional as F

        def make(values, dtype, grad):
            return lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=grad)

        def to_list(t):
            return t.detach().numpy().tolist()

        def backward(out, w):
            out.backward(lib.tensor(w, dtype=out.dtype).reshape(out.shape))
    else:  # "minigrad", or "minigrad-strict": inputs in array-api-strict arrays
        import minigrad as lib
        import minigrad.functional as F

        def make(values, dtype, grad):
            if lib_name == "minigrad-strict":
                import array_api_strict as xp
                data = xp.asarray(np.asarray(values, dtype=dtype))
                return lib.Tensor(data, requires_grad=grad)
            return lib.tensor(values, dtype=dtype, requires_grad=grad)

        def to_list(t):  # a Tensor, or a .grad array
            return lib.Tensor(t).numpy().tolist() if not isinstance(t, lib.Tensor) \
                else t.numpy().tolist()

        def backward(out, w):  # the weights in the output's own namespace and dtype
            weights = np.asarray(w, dtype=str(out.dtype).split(".")[-1]).reshape(out.shape)
            out.backward(out._xp.asarray(weights))

    fn = case.torch_fn if lib_name == "torch" and case.torch_fn is not None else case.fn
    inputs = [make(*spec) for spec in case.inputs]
    try:
        out = fn(lib, F, *inputs)
    except Exception as exc:  # noqa: BLE001 - the case says whether raising is right
        return {"raises": True, "message": f"{type(exc).__name__}: {exc}"}
    outs = list(out) if isinstance(out, tuple) else [out]
    result = {"values": [to_list(o) for o in outs],
              "dtypes": [str(o.dtype).split(".")[-1] for o in outs], "grads": []}
    first = outs[0]
    if first.requires_grad:
        size = int(np.prod(first.shape)) if first.shape else 1
        try:
            backward(first, _weights(size))
        except Exception as exc:  # noqa: BLE001
            result["backward_raises"] = f"{type(exc).__name__}: {exc}"
    result["grads"] = [to_list(t.grad) if spec[2] and t.grad is not None else None
                       for t, spec in zip(inputs, case.inputs)]
    return result


def differences(got: Any, want: Any, rtol: float = 1e-9, atol: float = 1e-12,
                where: str = "") -> list[str]:
    """Where two nested lists of numbers differ (NaN equals NaN, infinities must match)."""
    if isinstance(want, list) or isinstance(got, list):
        if not (isinstance(want, list) and isinstance(got, list)) or len(got) != len(want):
            return [f"{where}: shape differs: got {got!r}, want {want!r}"]
        out: list[str] = []
        for k, (g, w) in enumerate(zip(got, want)):
            out += differences(g, w, rtol, atol, f"{where}[{k}]")
        return out
    if want is None or got is None:
        return [] if want is got else [f"{where}: got {got!r}, want {want!r}"]
    if isinstance(want, bool) or isinstance(got, bool):
        return [] if got == want else [f"{where}: got {got!r}, want {want!r}"]
    if math.isnan(want) and math.isnan(got):
        return []
    if math.isinf(want) or math.isinf(got) or math.isnan(want) or math.isnan(got):
        return [] if got == want else [f"{where}: got {got!r}, want {want!r}"]
    if abs(got - want) <= atol + rtol * abs(want):
        return []
    return [f"{where}: got {got!r}, want {want!r}"]


def compare(case: Case, got: dict, want: dict) -> list[str]:
    """Every way ``got`` (one run) differs from ``want`` (the pinned PyTorch result)."""
    if want.get("raises") or got.get("raises"):
        if bool(want.get("raises")) != bool(got.get("raises")):
            return [f"raises: got {got.get('message', 'no error')}, PyTorch "
                    f"{want.get('message', 'no error')}"]
        return []
    float32 = "float32" in want["dtypes"]
    rtol = 1e-6 if float32 else 1e-9
    problems = differences(got["values"], want["values"], rtol=rtol, where="values")
    if case.check_dtype and got["dtypes"] != want["dtypes"]:
        problems.append(f"dtypes: got {got['dtypes']}, want {want['dtypes']}")
    problems += differences(got["grads"], want["grads"], rtol=rtol, where="grads")
    return problems


PINNED_FILE = Path(__file__).resolve().parent / "torch_values.json"


def load_pinned() -> tuple[str, dict[str, dict]]:
    """PyTorch's version and its pinned answers, ``{case name: {"values": ..., ...}}``."""
    pinned = json.loads(PINNED_FILE.read_text(encoding="utf-8"))  # NaN and Infinity read back
    return pinned["torch_version"], pinned["cases"]


def write_pinned(results: dict[str, dict], torch_version: str) -> None:
    """Write PyTorch's answers to ``torch_values.json``, one line a case (diffs show cases)."""
    lines = [f"  {json.dumps(name)}: {json.dumps(results[name], sort_keys=True)}"
             for name in sorted(results)]
    PINNED_FILE.write_text(f'{{"torch_version": {json.dumps(torch_version)},\n "cases": {{\n'
                           + ",\n".join(lines) + "\n}}\n", encoding="utf-8")


# Issue 29's rows (normalization, the new tensor functions, loss modules, Conv1d, pooling)
# are kept in their own table and appended here, so the test and the bench see one table.
from tests.support import torch_cases_issue29  # noqa: E402

CASES += torch_cases_issue29.make_cases()
