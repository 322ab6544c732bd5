"""Issue 29's rows of the pinned PyTorch table (tests/support/torch_cases.py appends them to CASES):
the normalization layers and functions, the new tensor functions, the loss modules with their
options, Conv1d, Conv2d(groups=, dilation=), adaptive and padded pooling.

Each ``fn(lib, F, *inputs)`` runs unchanged on minigrad and on PyTorch; a module is built with
its defaults (deterministic: ones, zeros, running statistics 0 and 1) or given its weights by
``load_state_dict`` (the state dict of PyTorch's keys and shapes, loaded unchanged), and its
state after the call (running statistics) is returned as extra outputs.
"""
from __future__ import annotations

import math
from typing import Any


inf, nan = math.inf, math.nan

A34 = [[0.5, -1.0, 2.0, 0.0], [1.5, 0.25, -0.75, 3.0], [-2.0, 3.0, 0.0, 1.0]]
TIES = [[3.0, 1.0, 3.0, -2.0, 1.0], [0.0, nan, -1.0, inf, 0.0]]
B43 = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [-2.0, 3.0, 0.0], [1.0, 0.0, 0.5]]
IMG = [[[[float((c * 7 + h * 5 + w * 3) % 11) - 5.0 for w in range(7)] for h in range(5)]
        for c in range(2)]]  # (1, 2, 5, 7)
SEQ = [[[float((n * 5 + c * 3 + t * 7) % 9) - 4.0 for t in range(9)] for c in range(4)]
       for n in range(2)]  # (2, 4, 9)
XSEQ = [[[float((t * 5 + n * 3 + c * 7) % 9) / 4 - 1.0 for c in range(3)] for n in range(2)]
        for t in range(4)]  # (L=4, N=2, 3)
BN3 = [[[float((n * 3 + c * 5 + t) % 7) - 3.0 for t in range(4)] for c in range(3)]
       for n in range(2)]  # (2, 3, 4)
BN4 = [[[[float((n * 2 + c * 5 + h * 3 + w) % 7) - 3.0 for w in range(3)] for h in range(2)]
        for c in range(3)] for n in range(2)]  # (2, 3, 2, 3)


def _like(lib, module, x):
    """``module`` with its parameters and buffers of ``x``'s dtype and array library (PyTorch:
    ``to(dtype=)``; minigrad: also array-api-strict's arrays when ``x`` holds them)."""
    if lib.__name__ == "torch":
        return module.to(dtype=x.dtype)
    from minigrad import backend
    for _, t in module._named_tensors():
        floating = backend.is_floating(t._xp, t.dtype)
        t.data = backend.copy_to(t.data, like=x.data, dtype=x.dtype if floating else None)
        t._xp = backend.namespace(t.data)
    return module


def _bn_module(lib, x, cls, steps=2, **options):
    """Train a default BatchNorm module on ``x`` and ``2 * x``, then evaluate it on ``x``."""
    m = _like(lib, getattr(lib.nn, cls)(x.shape[1], **options), x)
    out = m(x)
    for k in range(1, steps):
        out = out + m(x * (k + 1.0)) * 0.5
    m.eval()
    out = out + m(x) * 0.25
    stats = tuple(t for t in (m.running_mean, m.running_var, m.num_batches_tracked)
                  if t is not None)
    return (out,) + stats


def _rnn(lib, x, h, cls, **options):
    """A recurrent layer of ``cls`` given fixed irregular weights (the same state dict on
    both libraries, keys and shapes PyTorch's), run on ``x`` from the state ``h``."""
    m = _like(lib, getattr(lib.nn, cls)(x.shape[-1], 3, **options), x)
    state = {}
    for k, (name, p) in enumerate(m.named_parameters()):
        n = math.prod(p.shape)
        values = [0.4 * math.sin(1.7 * i + k) for i in range(n)]
        if lib.__name__ == "torch":
            state[name] = lib.tensor(values, dtype=x.dtype).reshape(tuple(p.shape))
        else:  # plain lists: load_state_dict converts them to the parameters' arrays
            state[name] = [values[i:i + p.shape[-1]] for i in range(0, n, p.shape[-1])] \
                if len(p.shape) == 2 else values
    m.load_state_dict(state)
    if cls == "LSTM":
        out, (h_n, c_n) = m(x, (h, h * 0.5))
        return out, h_n, c_n
    out, h_n = m(x, h)
    return out, h_n


def _loaded(module, **state):
    module.load_state_dict(state)
    return module


def make_cases() -> list:
    """The cases (called by tests/support/torch_cases.py once its Case and input helpers exist)."""
    from tests.support.torch_cases import Case, boolean, i64, x64

    return [
        # --- split, chunk, repeat, flip ------------------------------------------------------
        Case("split_sections", lambda lib, F, x: lib.cat(
            [p * (k + 1.0) for k, p in enumerate(lib.split(x, [1, 3], dim=1))], dim=1), [x64(A34)]),
        Case("split_size_uneven", lambda lib, F, x: lib.cat(
            [p * (k + 1.0) for k, p in enumerate(x.split(2, dim=0))], dim=0), [x64(A34)]),
        Case("split_sections_wrong_sum", lambda lib, F, x: lib.split(x, [1, 2], dim=1)[0],
             [x64(A34)], raises=True, match="add up"),
        Case("chunk_fewer_pieces", lambda lib, F, x: lib.cat(
            [p * (k + 1.0) for k, p in enumerate(lib.chunk(x, 2, dim=1))], dim=1), [x64(A34)]),
        Case("chunk_rows", lambda lib, F, x: lib.cat(
            [p * (k + 1.0) for k, p in enumerate(x.chunk(3))], dim=0), [x64(B43)]),
        Case("repeat_new_axis", lambda lib, F, x: x.repeat(2, 1, 3), [x64(A34)]),
        Case("repeat_rows", lambda lib, F, x: x.repeat(3, 1), [x64(A34)]),
        Case("repeat_too_few_sizes", lambda lib, F, x: x.repeat(2), [x64(A34)], raises=True,
             match="at least as many"),
        Case("flip_both", lambda lib, F, x: lib.flip(x, (0, 1)), [x64(A34)]),
        Case("flip_method_last", lambda lib, F, x: x.flip(-1), [x64(A34)]),
        # --- sort ---------------------------------------------------------------------------------
        Case("sort_ascending_ties_nan_inf", lambda lib, F, x: lib.sort(x, dim=1),
             [x64(TIES)], torch_fn=lambda lib, F, x: lib.sort(x, dim=1, stable=True)),
        Case("sort_descending_ties_nan_inf", lambda lib, F, x: x.sort(dim=1, descending=True),
             [x64(TIES)], torch_fn=lambda lib, F, x: x.sort(dim=1, descending=True, stable=True)),
        Case("sort_dim0", lambda lib, F, x: lib.sort(x, dim=0), [x64(A34)],
             torch_fn=lambda lib, F, x: lib.sort(x, dim=0, stable=True)),
        Case("sort_int_descending", lambda lib, F, x: lib.sort(x, descending=True),
             [i64([3, 1, 2, 3, -5])],
             torch_fn=lambda lib, F, x: lib.sort(x, descending=True, stable=True)),
        # --- norm, any, all ----------------------------------------------------------------------
        Case("norm_fro", lambda lib, F, x: lib.norm(x), [x64(A34)]),
        Case("norm_p1_dim", lambda lib, F, x: x.norm(p=1, dim=1), [x64(A34)]),
        Case("norm_inf_ties", lambda lib, F, x: lib.norm(x, p=inf, dim=0),
             [x64([[1.0, -3.0], [-1.0, 3.0], [0.5, 2.0]])]),
        Case("norm_neg_inf", lambda lib, F, x: lib.norm(x, p=-inf, dim=1), [x64(A34)]),
        Case("norm_p3_keepdim", lambda lib, F, x: lib.norm(x, p=3, dim=1, keepdim=True),
             [x64(A34)]),
        Case("norm_p0", lambda lib, F, x: lib.norm(x, p=0, dim=1), [x64(A34, grad=False)]),
        Case("norm_of_zeros_grad_is_0", lambda lib, F, x: lib.norm(x, dim=1),
             [x64([[0.0, 0.0], [3.0, 4.0]])]),
        Case("any_dim", lambda lib, F, x: lib.any(x, dim=1), [x64(A34, grad=False)]),
        Case("all_keepdim", lambda lib, F, x: lib.all(x, dim=0, keepdim=True),
             [x64(A34, grad=False)]),
        Case("any_all_bool", lambda lib, F, m: (m.any(), m.all(), lib.all(m, dim=1)),
             [boolean([[True, False], [True, True]])]),
        # --- softmax methods, einsum --------------------------------------------------------------
        Case("softmax_method", lambda lib, F, x: x.softmax(dim=1), [x64(A34)]),
        Case("log_softmax_method", lambda lib, F, x: x.log_softmax(dim=0), [x64(A34)]),
        Case("einsum_matmul", lambda lib, F, a, b: lib.einsum("ij,jk->ik", a, b),
             [x64(A34), x64(B43)]),
        Case("einsum_batched_transpose", lambda lib, F, a, b: lib.einsum("bij,bkj->bki", a, b),
             [x64([A34, [[v * 0.5 for v in r] for r in A34]]),
              x64([[[1.0, 0.0, -1.0, 2.0]], [[0.5, 2.0, 1.0, -1.0]]])]),
        Case("einsum_outer_and_sum", lambda lib, F, a, b: lib.einsum("i,j->ij", a, b)
             + lib.einsum("ij->j", lib.einsum("i,j->ij", b, a)).sum(),
             [x64([1.0, -2.0, 0.5]), x64([3.0, 0.25])]),
        Case("einsum_implicit_output", lambda lib, F, a, b: lib.einsum("ji,jk", a, b),
             [x64(B43), x64(B43)]),
        Case("einsum_wrong_operand_count", lambda lib, F, a: lib.einsum("ij,jk->ik", a),
             [x64(A34)], raises=True, match="operands"),
        # --- pad ----------------------------------------------------------------------------------
        Case("pad_constant", lambda lib, F, x: F.pad(x, (1, 2)), [x64(A34)]),
        Case("pad_constant_value_two_axes", lambda lib, F, x: F.pad(x, (1, 0, 2, 1), value=-1.5),
             [x64(A34)]),
        Case("pad_constant_negative_crops", lambda lib, F, x: F.pad(x, (-1, 2)), [x64(A34)]),
        Case("pad_reflect", lambda lib, F, x: F.pad(x, (2, 3), mode="reflect"),
             [x64([A34])]),
        Case("pad_reflect_2d", lambda lib, F, x: F.pad(x, (1, 2, 2, 1), mode="reflect"),
             [x64([[A34]])]),
        Case("pad_replicate_2d", lambda lib, F, x: F.pad(x, (2, 1, 0, 3), mode="replicate"),
             [x64([[A34]])]),
        Case("pad_circular", lambda lib, F, x: F.pad(x, (2, 1), mode="circular"), [x64([A34])]),
        Case("pad_reflect_too_large", lambda lib, F, x: F.pad(x, (4, 0), mode="reflect"),
             [x64([A34])], raises=True, match="reflect"),
        Case("dropout_not_training", lambda lib, F, x: F.dropout(x, 0.5, training=False),
             [x64(A34)]),
        Case("dropout_p0", lambda lib, F, x: F.dropout(x, 0.0), [x64(A34)]),
        # --- layer_norm and batch_norm, functions ------------------------------------------------
        Case("layer_norm_affine", lambda lib, F, x, w, b: F.layer_norm(x, (3,), w, b),
             [x64(B43), x64([1.0, -0.5, 2.0]), x64([0.1, 0.0, -0.3])]),
        Case("layer_norm_two_axes_no_affine", lambda lib, F, x: F.layer_norm(x, (3, 4), eps=1e-3),
             [x64([A34, [[v * v for v in r] for r in A34]])]),
        Case("layer_norm_wrong_shape", lambda lib, F, x: F.layer_norm(x, (4,)), [x64(B43)],
             raises=True, match="normalized_shape"),
        Case("batch_norm_training", lambda lib, F, x, w, b: F.batch_norm(
            x, None, None, w, b, training=True), [x64(BN3), x64([1.0, -0.5, 2.0]),
                                                  x64([0.1, 0.0, -0.3])]),
        # the running statistics' update (no input requires grad: state kept between calls
        # runs eagerly under compile, see tests/engine/test_compile_tables.py)
        Case("batch_norm_training_running_stats", lambda lib, F, x, rm, rv, w, b: (
            F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3), rm, rv),
            [x64(BN3, grad=False), x64([0.0, 1.0, -1.0], grad=False),
             x64([1.0, 2.0, 0.5], grad=False), x64([1.0, -0.5, 2.0], grad=False),
             x64([0.1, 0.0, -0.3], grad=False)]),
        Case("batch_norm_eval", lambda lib, F, x, rm, rv, w, b: F.batch_norm(
            x, rm, rv, w, b, training=False, eps=1e-3),
            [x64(B43), x64([0.5, 1.0, -1.0], grad=False), x64([1.0, 2.0, 0.5], grad=False),
             x64([1.0, -0.5, 2.0]), x64([0.1, 0.0, -0.3])]),
        Case("batch_norm_one_value_per_channel", lambda lib, F, x: F.batch_norm(
            x, None, None, training=True), [x64([[1.0, 2.0, 3.0]])], raises=True,
            match="more than 1 value per channel"),
        # --- the normalization modules ------------------------------------------------------------
        Case("layernorm_module", lambda lib, F, x: _like(lib, lib.nn.LayerNorm(3), x)(x),
             [x64(B43)]),
        Case("layernorm_module_loaded", lambda lib, F, x, w, b: _loaded(
            _like(lib, lib.nn.LayerNorm([2, 3]), x), weight=w, bias=b)(x),
            [x64([B43[:2], B43[2:]]), x64([[1.0, 2.0, 0.5], [-1.0, 0.0, 3.0]], grad=False),
             x64([[0.0, 1.0, 0.0], [0.5, 0.5, -0.5]], grad=False)]),
        Case("batchnorm1d_train_then_eval", lambda lib, F, x: _bn_module(lib, x, "BatchNorm1d"),
             [x64(B43)]),
        Case("batchnorm1d_3d_momentum_none", lambda lib, F, x: _bn_module(
            lib, x, "BatchNorm1d", steps=3, momentum=None), [x64(BN3)]),
        Case("batchnorm1d_no_running_stats", lambda lib, F, x: _bn_module(
            lib, x, "BatchNorm1d", track_running_stats=False, affine=False), [x64(B43)]),
        Case("batchnorm2d_train_then_eval", lambda lib, F, x: _bn_module(
            lib, x, "BatchNorm2d", momentum=0.25, eps=1e-3), [x64(BN4)]),
        Case("batchnorm2d_loaded_eval", lambda lib, F, x, w, b, rm, rv, n: _loaded(
            _like(lib, lib.nn.BatchNorm2d(3), x), weight=w, bias=b, running_mean=rm,
            running_var=rv, num_batches_tracked=n).eval()(x),
            [x64(BN4), x64([1.0, 2.0, 0.5], grad=False), x64([0.0, -1.0, 1.0], grad=False),
             x64([0.5, 1.0, -1.0], grad=False), x64([1.0, 2.0, 0.25], grad=False), i64(7)]),
        Case("batchnorm1d_4d_input", lambda lib, F, x: _like(lib, lib.nn.BatchNorm1d(3), x)(x),
             [x64(BN4)], raises=True, match="expected 2D or 3D input"),
        # --- loss modules with their options -----------------------------------------------------
        Case("l1loss", lambda lib, F, p, t: lib.nn.L1Loss()(p, t),
             [x64([0.5, -1.0, 2.0, 1.0]), x64([0.0, -1.0, 1.0, 3.0], grad=False)]),
        Case("l1loss_none", lambda lib, F, p, t: lib.nn.L1Loss(reduction="none")(p, t),
             [x64([0.5, -1.0, 2.0, 1.0]), x64([0.0, -1.0, 1.0, 3.0], grad=False)]),
        Case("huberloss_delta_ties", lambda lib, F, p, t: lib.nn.HuberLoss(delta=0.5)(p, t),
             [x64([0.5, -1.0, 2.0, 1.0, 0.0]), x64([0.0, -1.0, 1.0, 3.0, 0.5], grad=False)]),
        Case("huberloss_sum", lambda lib, F, p, t: lib.nn.HuberLoss(reduction="sum")(p, t),
             [x64(A34), x64(A34[::-1], grad=False)]),
        Case("smoothl1loss_beta", lambda lib, F, p, t: lib.nn.SmoothL1Loss(beta=0.5)(p, t),
             [x64([0.5, -1.0, 2.0, 1.0, 0.0]), x64([0.0, -1.0, 1.0, 3.0, 0.5], grad=False)]),
        Case("mseloss_sum", lambda lib, F, p, t: lib.nn.MSELoss(reduction="sum")(p, t),
             [x64(A34), x64(A34[::-1], grad=False)]),
        Case("crossentropyloss_everything", lambda lib, F, z, t, w: lib.nn.CrossEntropyLoss(
            weight=w, ignore_index=1, reduction="sum", label_smoothing=0.1)(z, t),
            [x64(B43), i64([0, 1, 2, 2]), x64([1.0, 2.0, 0.5], grad=False)]),
        Case("crossentropyloss_none", lambda lib, F, z, t: lib.nn.CrossEntropyLoss(
            reduction="none")(z, t), [x64(B43), i64([0, 1, 2, 2])]),
        Case("nllloss_weight_none", lambda lib, F, z, t, w: lib.nn.NLLLoss(
            weight=w, reduction="none")(F.log_softmax(z, dim=1), t),
            [x64(B43), i64([0, 1, 2, 2]), x64([1.0, 2.0, 0.5], grad=False)]),
        Case("nllloss_ignore_index", lambda lib, F, z, t: lib.nn.NLLLoss(ignore_index=2)(
            F.log_softmax(z, dim=1), t), [x64(B43), i64([0, 1, 2, 2])]),
        Case("bceloss_weight", lambda lib, F, p, t, w: lib.nn.BCELoss(weight=w)(p, t),
             [x64([0.1, 0.5, 0.9, 0.3]), x64([0.0, 1.0, 1.0, 0.5], grad=False),
              x64([1.0, 2.0, 0.5, 1.0], grad=False)]),
        Case("bcewithlogitsloss_pos_weight", lambda lib, F, z, t, pw: lib.nn.BCEWithLogitsLoss(
            pos_weight=pw, reduction="sum")(z, t),
            [x64([[0.5, -2.0], [3.0, 0.0]]), x64([[1.0, 0.0], [1.0, 1.0]], grad=False),
             x64([2.0, 0.5], grad=False)]),
        # --- bidirectional recurrent layers ----------------------------------------------------
        Case("lstm_bidirectional_2_layers", lambda lib, F, x, h: _rnn(
            lib, x, h, "LSTM", num_layers=2, bidirectional=True),
            [x64(XSEQ), x64([[[0.1 * (i - j - n) for i in range(3)] for n in range(2)]
                             for j in range(4)])]),
        Case("gru_bidirectional_batch_first", lambda lib, F, x, h: _rnn(
            lib, x, h, "GRU", bidirectional=True, batch_first=True),
            [x64([[XSEQ[t][n] for t in range(4)] for n in range(2)]),
             x64([[[0.2, -0.1, 0.0]] * 2, [[0.0, 0.3, -0.2]] * 2])]),
        Case("rnn_relu_bidirectional_unbatched", lambda lib, F, x, h: _rnn(
            lib, x, h, "RNN", nonlinearity="relu", bidirectional=True, num_layers=2),
            [x64([XSEQ[t][0] for t in range(4)]), x64([[0.1, 0.0, -0.1]] * 4)]),
        Case("lstm_wrong_state_shape_bidirectional", lambda lib, F, x, h: _rnn(
            lib, x, h, "LSTM", bidirectional=True), [x64(XSEQ), x64([[[0.0] * 3] * 2])],
            raises=True, match="expected h_0 of shape"),
        # --- convolution and pooling -------------------------------------------------------------
        Case("conv1d_everything", lambda lib, F, x, w, b: F.conv1d(x, w, b, stride=2, padding=1,
                                                                   dilation=2, groups=2),
             [x64(SEQ), x64([[[1.0, -1.0, 0.5], [0.0, 2.0, 1.0]],
                             [[-1.0, 0.5, 0.0], [1.0, 1.0, -2.0]],
                             [[0.5, 0.0, 1.0], [2.0, -1.0, 0.0]],
                             [[0.0, 0.0, 1.5], [-0.5, 1.0, 1.0]]]),
              x64([0.5, -1.0, 0.0, 2.0])]),
        Case("conv1d_module_loaded", lambda lib, F, x, w, b: _loaded(
            _like(lib, lib.nn.Conv1d(4, 2, 2, padding=1), x), weight=w, bias=b)(x),
            [x64(SEQ), x64([[[0.5, -1.0], [1.0, 0.0], [0.0, 2.0], [-1.0, 1.0]],
                            [[1.0, 1.0], [-0.5, 0.5], [2.0, 0.0], [0.0, -1.0]]], grad=False),
             x64([0.25, -0.5], grad=False)]),
        Case("conv2d_module_groups_dilation", lambda lib, F, x, w, b: _loaded(
            _like(lib, lib.nn.Conv2d(2, 4, 2, dilation=2, groups=2, padding=1), x),
            weight=w, bias=b)(x),
            [x64(IMG), x64([[[[1.0, -1.0], [0.5, 2.0]]], [[[0.0, 1.0], [1.0, 0.0]]],
                            [[[2.0, 0.0], [0.0, -2.0]]], [[[0.5, 0.5], [-1.0, 1.0]]]], grad=False),
             x64([0.5, -1.0, 0.0, 2.0], grad=False)]),
        Case("adaptive_avg_pool2d_uneven", lambda lib, F, x: F.adaptive_avg_pool2d(x, (2, 3)),
             [x64(IMG)]),
        Case("adaptive_avg_pool2d_global", lambda lib, F, x: lib.nn.AdaptiveAvgPool2d(1)(x),
             [x64(IMG)]),
        Case("adaptive_avg_pool2d_none_larger", lambda lib, F, x: F.adaptive_avg_pool2d(
            x, (None, 9)), [x64(IMG)]),
        Case("max_pool2d_padding", lambda lib, F, x: F.max_pool2d(x, 3, 2, padding=1),
             [x64(IMG)]),
        Case("maxpool2d_module_padding", lambda lib, F, x: lib.nn.MaxPool2d(2, padding=1)(x),
             [x64(IMG)]),
        Case("max_pool2d_padding_too_large", lambda lib, F, x: F.max_pool2d(x, 2, padding=2),
             [x64(IMG)], raises=True, match="at most half"),
    ]


# --- state dicts and reprs of the modules (tests/nn/test_tutorial_layers.py) --------------------

# (how to build it, on torch.nn or minigrad.nn) -> PyTorch 2.13's state dict (key, shape, kind)
# and repr; ``python -m bench.torch_parity`` re-derives both (torch_state_dict_specs below).
STATE_DICTS: dict[str, tuple[str, list[tuple[str, list[int], str]], str]] = {
    "layernorm": ("nn.LayerNorm(4)", [("weight", [4], "float"), ("bias", [4], "float")],
                  "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)"),
    "layernorm_no_bias": ("nn.LayerNorm((2, 3), bias=False)", [("weight", [2, 3], "float")],
                          "LayerNorm((2, 3), eps=1e-05, elementwise_affine=True, bias=False)"),
    "layernorm_plain": ("nn.LayerNorm(3, elementwise_affine=False)", [],
                        "LayerNorm((3,), eps=1e-05, elementwise_affine=False, bias=False)"),
    "batchnorm1d": ("nn.BatchNorm1d(3)", [
        ("weight", [3], "float"), ("bias", [3], "float"), ("running_mean", [3], "float"),
        ("running_var", [3], "float"), ("num_batches_tracked", [], "int64")],
        "BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, "
        "track_running_stats=True)"),
    "batchnorm2d_no_affine": ("nn.BatchNorm2d(2, affine=False)", [
        ("running_mean", [2], "float"), ("running_var", [2], "float"),
        ("num_batches_tracked", [], "int64")],
        "BatchNorm2d(2, eps=1e-05, momentum=0.1, affine=False, bias=False, "
        "track_running_stats=True)"),
    "batchnorm1d_no_stats": ("nn.BatchNorm1d(3, track_running_stats=False)", [
        ("weight", [3], "float"), ("bias", [3], "float")],
        "BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, "
        "track_running_stats=False)"),
    "conv1d_groups": ("nn.Conv1d(4, 6, 3, groups=2)", [("weight", [6, 2, 3], "float"),
                                                      ("bias", [6], "float")],
                      "Conv1d(4, 6, kernel_size=(3,), stride=(1,), groups=2)"),
    "conv2d_groups_dilation": ("nn.Conv2d(4, 6, 3, groups=2, dilation=2, bias=False)",
                               [("weight", [6, 2, 3, 3], "float")],
                               "Conv2d(4, 6, kernel_size=(3, 3), stride=(1, 1), dilation=(2, 2), "
                               "groups=2, bias=False)"),
    "crossentropy_weight": ("nn.CrossEntropyLoss(weight=tensor([1.0, 2.0, 0.5]))",
                            [("weight", [3], "float")], "CrossEntropyLoss()"),
    "bce_logits_pos_weight": ("nn.BCEWithLogitsLoss(pos_weight=tensor([2.0, 0.5]))",
                              [("pos_weight", [2], "float")], "BCEWithLogitsLoss()"),
    "lstm_bidirectional": ("nn.LSTM(3, 2, num_layers=2, bidirectional=True)", [
        (f"{kind}_l{k}{sfx}", shape, "float") for k in range(2) for sfx in ("", "_reverse")
        for kind, shape in (("weight_ih", [8, 3 if k == 0 else 4]), ("weight_hh", [8, 2]),
                            ("bias_ih", [8]), ("bias_hh", [8]))],
        "LSTM(3, 2, num_layers=2, bidirectional=True)"),
    "gru_dropout": ("nn.GRU(3, 2, num_layers=2, dropout=0.25)", [
        (f"{kind}_l{k}", shape, "float") for k in range(2)
        for kind, shape in (("weight_ih", [6, 3 if k == 0 else 2]), ("weight_hh", [6, 2]),
                            ("bias_ih", [6]), ("bias_hh", [6]))],
        "GRU(3, 2, num_layers=2, dropout=0.25)"),
    "sequential_mixed": ("nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3, affine=False), "
                         "nn.Linear(3, 2))", [
                             ("0.weight", [3, 2], "float"), ("0.bias", [3], "float"),
                             ("1.running_mean", [3], "float"), ("1.running_var", [3], "float"),
                             ("1.num_batches_tracked", [], "int64"),
                             ("2.weight", [2, 3], "float"), ("2.bias", [2], "float")], None),
}


def _build(spec: str, lib: Any) -> Any:
    return eval(spec, {"nn": lib.nn, "tensor": lambda v: lib.tensor(v, dtype=lib.float64)
                       if lib.__name__ == "torch" else lib.tensor(v)})


def _kind(dtype: Any) -> str:
    name = str(dtype).split(".")[-1]
    return "float" if name.startswith("float") else name


def state_dict_spec(module: Any) -> list[tuple[str, list[int], str]]:
    return [(k, list(v.shape), _kind(v.dtype)) for k, v in module.state_dict().items()]


def torch_state_dict_specs() -> dict[str, tuple[list[tuple[str, list[int], str]], str | None]]:
    """PyTorch's answers for STATE_DICTS (the bench compares them with the pinned ones)."""
    import torch
    out = {}
    for name, (spec, _, text) in STATE_DICTS.items():
        module = _build(spec, torch)
        out[name] = (state_dict_spec(module), repr(module) if text is not None else None)
    return out
