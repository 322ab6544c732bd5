"""Export a trained minigrad model to an ONNX file, to run it with ONNX Runtime and other tools.

>>> import minigrad.nn as nn
>>> from minigrad.export.onnx import export
>>> model = nn.Sequential(nn.Linear(2, 16, seed=0), nn.ReLU(), nn.Linear(16, 2, seed=1))
>>> export(model, example_input, "moons.onnx")                        # doctest: +SKIP

The file can then be run without minigrad (or Python)::

    import onnxruntime as ort
    session = ort.InferenceSession("moons.onnx", providers=["CPUExecutionProvider"])
    logits, = session.run(None, {"input": X})     # X: an (N, 2) array of the model's dtype

How it works: :func:`export` walks the module tree, as ``torch.onnx.export`` traces a model,
and writes one ONNX operator (or two) per layer:

==================  =====================================================================
minigrad            ONNX
==================  =====================================================================
``Sequential``      its layers, in order (nested Sequentials too)
``Linear``          ``Gemm`` with ``transB=1`` (``x @ W.T + b``) for an (N, in) input;
                    ``Transpose``, ``MatMul``, ``Add`` for other ranks
``Conv2d``          ``Conv`` (``kernel_shape``, ``strides``, ``pads``)
``MaxPool2d``       ``MaxPool`` (``kernel_shape``, ``strides``)
``AvgPool2d``       ``AveragePool`` (``kernel_shape``, ``strides``, ``pads``,
                    ``count_include_pad=1``)
``ReLU``            ``Relu``
``LeakyReLU``       ``LeakyRelu`` (``alpha`` = ``negative_slope``)
``Sigmoid``         ``Sigmoid``
``Tanh``            ``Tanh``
``Flatten``         ``Flatten`` (``axis=1``) for the default ``Flatten()``; ``Reshape``
                    for other ``start_dim``/``end_dim``
``Dropout``         nothing: the model is exported as in ``eval()``, where it passes its
                    input through
==================  =====================================================================

The attention layers (``MultiheadAttention`` as self-attention, ``TransformerEncoderLayer``,
``Embedding``, ``GELU``) are translated in :mod:`minigrad.export.onnx_transformer`; a model with
its own ``forward`` can be taught with :func:`register` (``examples/char_gpt.py`` registers its
GPT).

Parameters become the graph's *initializers*, named as in ``model.state_dict()``
(``"0.weight"``) and stored in the model's dtype (float32 or float64). Any other module is an
error that names it: a module with its own ``forward()`` can compute anything, and only the
layers above are translated.

The ``onnx`` package is an optional dependency: ``pip install "minigrad-course[onnx]"``
installs it and ONNX Runtime. Importing :mod:`minigrad` does not import it; :func:`export`
does, when called.
"""
from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from minigrad import backend, nn
from minigrad._utils import pair
from minigrad.export import _walk, onnx_transformer
from minigrad.nn.convolution import AdaptiveAvgPool2d, Conv1d
from minigrad.nn.normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from minigrad.tensor import Tensor, no_grad

if TYPE_CHECKING:  # the real import happens inside export(): onnx is an optional extra
    from onnx import ModelProto

__all__ = ["SUPPORTED_MODULES", "export", "register"]

INSTALL_HINT = 'pip install "minigrad-course[onnx]"'
MIN_OPSET = 11  # Gemm with an optional bias (C) needs opset 11
BATCH = "batch"  # the name of the batch dimension when dynamic_batch=True


def export(model: nn.Module, example_input: Any, path: str | os.PathLike[str] | IO[bytes],
           input_name: str = "input", output_name: str = "output", opset: int = 17,
           dynamic_batch: bool = True) -> ModelProto:
    """Write ``model`` to ``path`` as an ONNX model (modelled on ``torch.onnx.export``).

    Long because this docstring is the reference of every parameter: the code itself is about
    30 lines, one helper per stage.

    Parameters
    ----------
    model : nn.Module
        An ``nn.Sequential`` (nested ones too) of the layers listed in
        :data:`SUPPORTED_MODULES`, or one such layer. It is exported as in ``eval()`` mode
        (Dropout passes its input through) and left in the mode it was in.
    example_input : Tensor or array
        One input of the shape and dtype the model takes, e.g. a batch of 8 samples
        ``(8, 2)`` or images ``(8, 1, 32, 32)``. The model runs on it once: the run gives every
        layer's output shape, and fails early, with minigrad's own message, on a bad shape.
    path : str, path or binary file
        Where to write the ``.onnx`` file.
    input_name, output_name : str
        The names of the graph's input and output: the keys of ONNX Runtime's ``run()``.
    opset : int
        The ONNX operator set version (11 or later).
    dynamic_batch : bool
        If True, the first axis of the input and output is a named dimension ``"batch"``,
        so the exported model takes any batch size; if False, exactly the example's shape.

    Returns
    -------
    onnx.ModelProto
        The model written, with the shapes of its intermediate values filled in.

    Raises
    ------
    ImportError
        If the ``onnx`` package is not installed (the message says how to install it).
    TypeError
        If the model holds a module without a translation (the message names its path and
        type, and lists the supported ones), or the input's and the parameters' dtypes differ.
    ValueError
        For bad names or opset, or ``dynamic_batch`` with an input that has no batch axis;
        and for an ``input_name`` or ``output_name`` that is also a parameter's name (the
        graph would then read the parameter where the input is meant, or the reverse).

    Notes
    -----
    ONNX Runtime's CPU provider runs float32 models of every layer above, but has no float64
    ``Conv``: a float64 model with ``Conv2d`` layers exports and passes the ONNX checker, but
    ONNX Runtime refuses to load it (``NOT_IMPLEMENTED``). Convert such a model with
    ``model.to(dtype="float32")`` before exporting it for ONNX Runtime.

    ONNX stores operator attributes as float32, LeakyRelu's ``alpha`` too: in a float64
    model, a ``negative_slope`` that float32 cannot hold exactly (0.01, 0.2) is rounded to
    about 8 digits; 0.25 or 0.125 stay exact.
    """
    onnx = _import_onnx()
    _check_arguments(model, input_name, output_name, opset, onnx)
    layers = _layers(model)
    _check_names(model, input_name, output_name)
    x = example_input if isinstance(example_input, Tensor) else Tensor(example_input)
    _check_batch_axis(x, dynamic_batch)
    # token ids in (an Embedding or a model that starts with one): the floats are the model's
    ids_input = bool(layers) and layers[0][2] in _INTEGER_INPUT
    floats: Tensor
    if ids_input:
        elem_type = _ids_elem_type(x, onnx)
        floats = next(model.parameters())
    else:
        elem_type, floats = _elem_type(x, "the example input", onnx), x
    _check_dtypes(model, floats)

    graph = _GraphBuilder(model, onnx, reserved={input_name, output_name})
    graph.opset, graph.dtype = opset, _dtype_name(floats)
    shape, batch_kept = _translate(graph, model, layers, x, input_name, dynamic_batch)
    graph.nodes[-1].output[0] = output_name

    in_dims = [BATCH if dynamic_batch else x.shape[0], *x.shape[1:]] if x.ndim else []
    out_dims: list[Any] = list(shape)
    if dynamic_batch and out_dims:
        out_dims[0] = BATCH if batch_kept else None  # None: a dimension of unknown size
    out_type = _elem_type(floats, "the model", onnx) if ids_input else elem_type
    proto = _model_proto(graph, model, onnx, (input_name, elem_type, in_dims),
                         (output_name, out_type, out_dims))
    onnx.save_model(proto, path)
    return proto


def _check_batch_axis(x: Tensor, dynamic_batch: bool) -> None:
    """With ``dynamic_batch``, refuse an example input that has no batch axis."""
    if dynamic_batch and x.ndim == 0:
        raise ValueError("export: dynamic_batch=True needs an input with a batch axis "
                         "(axis 0); got a scalar. Pass dynamic_batch=False.")
    if dynamic_batch and x.ndim == 1:
        raise ValueError(f"export: dynamic_batch=True makes axis 0 the batch, but the example "
                         f"input has shape {x.shape}: one sample, no batch axis. Add one "
                         f"(x.reshape(1, -1)) or pass dynamic_batch=False.")


def _translate(graph: _GraphBuilder, model: nn.Module,
               layers: list[tuple[str, nn.Module, type[Any]]], x: Tensor, input_name: str,
               dynamic_batch: bool) -> tuple[tuple[int, ...], bool]:
    """Run the model on ``x`` in eval() mode, layer by layer, adding each layer's operators
    to ``graph``; the model's modes are restored after. Returns the output's shape and
    whether its axis 0 is still the batch axis."""
    value, shape = input_name, tuple(x.shape)
    batch_kept = dynamic_batch  # is axis 0 of the current value still the batch axis?
    was_training = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with no_grad():
            y = x
            for path_, layer, kind in layers:
                y = _forward(layer, kind, y)
                translate = _TRANSLATIONS[kind]
                value = translate(graph, path_, layer, value, shape, tuple(y.shape))
                if isinstance(layer, nn.Flatten) and _axis(layer.start_dim, len(shape)) == 0:
                    batch_kept = False  # the batch axis is merged with others
                shape = tuple(y.shape)
            _check_same_as_model(model, x, y)
    finally:
        for module, mode in was_training:
            module.training = mode
    if value == input_name:  # no operator at all (only Dropouts): the output is the input
        graph.node("Identity", [value], "")
    return shape, batch_kept


def _model_proto(graph: _GraphBuilder, model: nn.Module, onnx: Any,
                 graph_input: tuple[str, int, list[Any]],
                 graph_output: tuple[str, int, list[Any]]) -> ModelProto:
    """The checked ONNX model of the graph, its shapes inferred; ``graph_input`` and
    ``graph_output`` are (name, element type, dimensions)."""
    from onnx import helper

    onnx_graph = helper.make_graph(
        graph.nodes, _graph_name(model),
        inputs=[helper.make_tensor_value_info(*graph_input)],
        outputs=[helper.make_tensor_value_info(*graph_output)],
        initializer=graph.initializers)
    opset_ids = [helper.make_opsetid("", graph.opset)]
    proto = helper.make_model(
        onnx_graph, opset_imports=opset_ids, producer_name="minigrad",
        producer_version=_version(),
        # The oldest IR version that has this opset: the newest the onnx package knows may be
        # newer than the ONNX Runtime that will load the file.
        ir_version=helper.find_min_ir_version_for(opset_ids))
    proto.doc_string = f"Exported by minigrad.export.onnx.export from:\n{model!r}"

    # The checker also runs strict shape inference: every operator's shapes and types must
    # agree with each other and with the declared output shape.
    onnx.checker.check_model(proto, full_check=True)
    proto = onnx.shape_inference.infer_shapes(proto, check_type=True, strict_mode=True)
    written: ModelProto = proto
    return written


# ---------------------------------------------------------------------------------------------
# The translations, one per layer type. Each adds the layer's operators to the graph and
# returns the name of the value its last operator outputs.


def _linear(graph: _GraphBuilder, path: str, layer: nn.Linear, x: str,
            in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> str:
    weight = graph.initializer(layer.weight)
    bias = [graph.initializer(layer.bias)] if layer.bias is not None else []
    if len(in_shape) == 2:  # (N, in) @ (out, in).T + (out,): exactly what Gemm computes
        return graph.node("Gemm", [x, weight, *bias], path, transB=1)
    # Gemm takes matrices only; MatMul broadcasts like numpy.matmul, as Linear does.
    weight_t = graph.node("Transpose", [weight], path, perm=[1, 0])
    y = graph.node("MatMul", [x, weight_t], path)
    return graph.node("Add", [y, *bias], path) if bias else y


def _conv2d(graph: _GraphBuilder, path: str, layer: Any, x: str,
            in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> str:
    (kh, kw), (sh, sw) = layer.kernel_size, layer.stride  # Conv2d keeps them as pairs
    ph, pw = layer.padding
    dh, dw = layer.dilation
    inputs = [x, graph.initializer(layer.weight)]
    if layer.bias is not None:
        inputs.append(graph.initializer(layer.bias))
    options: dict[str, Any] = {}  # the defaults (dilation 1, one group) left out, as before
    if (dh, dw) != (1, 1):
        options["dilations"] = [dh, dw]
    if layer.groups != 1:
        options["group"] = layer.groups
    return graph.node("Conv", inputs, path, kernel_shape=[kh, kw], strides=[sh, sw],
                      pads=[ph, pw, ph, pw],  # pads: begin of H, W, then end of H, W
                      **options)


def _conv1d(graph: _GraphBuilder, path: str, layer: Any, x: str,
            in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> str:
    inputs = [x, graph.initializer(layer.weight)]
    if layer.bias is not None:
        inputs.append(graph.initializer(layer.bias))
    (p,) = layer.padding
    return graph.node("Conv", inputs, path, kernel_shape=list(layer.kernel_size),
                      strides=list(layer.stride), pads=[p, p], dilations=list(layer.dilation),
                      group=layer.groups)


def _layer_norm(graph: _GraphBuilder, path: str, layer: Any, x: str,
                in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> str:
    if graph.opset < 17:
        raise ValueError(f"export: LayerNorm (at {path!r}) needs opset 17 or later "
                         f"(LayerNormalization); got opset {graph.opset}")
    shape = layer.normalized_shape
    scale = graph.initializer(layer.weight) if layer.weight is not None else \
        graph.constant(f"{path}.ones", [1.0] * math.prod(shape), shape)
    inputs = [x, scale] + ([graph.initializer(layer.bias)] if layer.bias is not None else [])
    return graph.node("LayerNormalization", inputs, path, axis=len(in_shape) - len(shape),
                      epsilon=float(layer.eps))


def _batch_norm(graph: _GraphBuilder, path: str, layer: Any, x: str,
                in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> str:
    if not layer.track_running_stats:
        raise TypeError(f"export: the {type(layer).__name__} at {path!r} has no running "
                        "statistics (track_running_stats=False): in eval() it normalizes "
                        "with each batch's own, which ONNX's BatchNormalization does not do")
    c = layer.num_features
    scale = graph.initializer(layer.weight) if layer.weight is not None else \
        graph.constant(f"{path}.ones", [1.0] * c, (c,))
    bias = graph.initializer(layer.bias) if layer.bias is not None else \
        graph.constant(f"{path}.zeros", [0.0] * c, (c,))
    prefix = f"{path}." if path else ""  # the buffers' state-dict names
    mean = graph.initializer(layer.running_mean, f"{prefix}running_mean")
    var = graph.initializer(layer.running_var, f"{prefix}running_var")
    return graph.node("BatchNormalization", [x, scale, bias, mean, var], path,
                      epsilon=float(layer.eps))


def _adaptive_avg_pool2d(graph: _GraphBuilder, path: str, layer: Any, x: str,
                         in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> str:
    (h, w), (oh, ow) = in_shape[-2:], out_shape[-2:]
    if (oh, ow) == (1, 1):
        return graph.node("GlobalAveragePool", [x], path)
    if h % oh or w % ow:
        raise TypeError(f"export: the AdaptiveAvgPool2d at {path!r} maps {h}x{w} to {oh}x{ow}, "
                        "bins of different sizes that ONNX's AveragePool cannot express; "
                        "use an output size that divides the input's")
    kh, kw = h // oh, w // ow
    return graph.node("AveragePool", [x], path, kernel_shape=[kh, kw], strides=[kh, kw])


def _max_pool2d(graph: _GraphBuilder, path: str, layer: Any, x: str,
                in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> str:
    kh, kw = pair(layer.kernel_size, "MaxPool2d", "kernel_size", low=1)
    sh, sw = pair(layer.stride, "MaxPool2d", "stride", low=1)
    ph, pw = pair(layer.padding, "MaxPool2d", "padding", low=0)
    # ceil_mode=0: rows and columns that do not fill a window are dropped. The padding never
    # wins a window (minigrad pads with -inf; ONNX ignores padded positions).
    pads = {"pads": [ph, pw, ph, pw]} if (ph, pw) != (0, 0) else {}
    return graph.node("MaxPool", [x], path, kernel_shape=[kh, kw], strides=[sh, sw], **pads)


def _avg_pool2d(graph: _GraphBuilder, path: str, layer: Any, x: str,
                in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> str:
    kh, kw = pair(layer.kernel_size, "AvgPool2d", "kernel_size", low=1)
    sh, sw = pair(layer.stride, "AvgPool2d", "stride", low=1)
    ph, pw = pair(layer.padding, "AvgPool2d", "padding", low=0)
    # count_include_pad=1: the padded zeros count in each mean, as in minigrad and PyTorch.
    return graph.node("AveragePool", [x], path, kernel_shape=[kh, kw], strides=[sh, sw],
                      pads=[ph, pw, ph, pw], count_include_pad=1)


def _relu(graph: _GraphBuilder, path: str, layer: nn.ReLU, x: str,
          in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> str:
    return graph.node("Relu", [x], path)


def _leaky_relu(graph: _GraphBuilder, path: str, layer: nn.LeakyReLU, x: str,
                in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> str:
    return graph.node("LeakyRelu", [x], path, alpha=float(layer.negative_slope))


def _sigmoid(graph: _GraphBuilder, path: str, layer: nn.Sigmoid, x: str,
             in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> str:
    return graph.node("Sigmoid", [x], path)


def _tanh(graph: _GraphBuilder, path: str, layer: nn.Tanh, x: str,
          in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> str:
    return graph.node("Tanh", [x], path)


def _flatten(graph: _GraphBuilder, path: str, layer: nn.Flatten, x: str,
             in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> str:
    ndim = len(in_shape)
    if ndim >= 2 and _axis(layer.start_dim, ndim) == 1 and _axis(layer.end_dim, ndim) == ndim - 1:
        return graph.node("Flatten", [x], path, axis=1)  # (N, ...) -> (N, rest): the default
    # Any other merge: Reshape to the shape the example gave. Its axis 0 is the batch axis of
    # any size: 0 copies it from the input; -1 (the one dimension Reshape may infer) when the
    # batch axis is merged with others.
    target = list(out_shape)
    if target:
        target[0] = -1 if _axis(layer.start_dim, ndim) == 0 else 0
    shape = graph.constant_int64(f"{path}.shape" if path else "shape", target)
    return graph.node("Reshape", [x, shape], path)


def _dropout(graph: _GraphBuilder, path: str, layer: nn.Dropout, x: str,
             in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> str:
    return x  # in eval mode Dropout is the identity: no operator at all


Translation = Callable[..., str]
_TRANSLATIONS: dict[type, Translation] = {
    nn.Linear: _linear, nn.Conv2d: _conv2d, nn.MaxPool2d: _max_pool2d, nn.AvgPool2d: _avg_pool2d,
    nn.ReLU: _relu, nn.LeakyReLU: _leaky_relu, nn.Sigmoid: _sigmoid, nn.Tanh: _tanh,
    nn.Flatten: _flatten, nn.Dropout: _dropout,
    # issue 29
    Conv1d: _conv1d, LayerNorm: _layer_norm, BatchNorm1d: _batch_norm, BatchNorm2d: _batch_norm,
    AdaptiveAvgPool2d: _adaptive_avg_pool2d,
}
# issue 30: the attention layers (minigrad/export/onnx_transformer.py)
_TRANSLATIONS.update(onnx_transformer.TRANSLATIONS)
_INTEGER_INPUT: set[type] = set(onnx_transformer.INTEGER_INPUT)
#: The module types :func:`export` translates (``Sequential`` holds them).
SUPPORTED_MODULES: tuple[str, ...] = ("Sequential",) + tuple(t.__name__ for t in _TRANSLATIONS)


def register(module_type: type, translate: Translation, integer_input: bool = False) -> None:
    """Teach :func:`export` a module type of your own (a model with its own ``forward``).

    Parameters
    ----------
    module_type : type
        The ``nn.Module`` subclass (its ``forward`` is what ``translate`` writes in ONNX).
    translate : callable
        ``translate(graph, path, module, x, in_shape, out_shape)`` adds the module's operators
        and returns the name of its output value. ``graph.node(op_type, inputs, path,
        **attributes)`` adds an operator, ``graph.initializer(parameter)`` names a parameter,
        ``graph.constant`` / ``graph.constant_int64`` add constants, and
        ``graph.translate(path, submodule, x, in_shape, out_shape, **options)`` writes a
        layer the exporter knows (``Linear``, ``LayerNorm``, ``TransformerEncoderLayer``
        with ``causal=True``, ...). ``examples/char_gpt.py`` registers its GPT this way.
    integer_input : bool
        The module reads int64 token ids (the graph's input is then int64).
    """
    global SUPPORTED_MODULES
    if not (isinstance(module_type, type) and issubclass(module_type, nn.Module)):
        raise TypeError(f"register: module_type must be an nn.Module subclass; got "
                        f"{module_type!r}")
    if not callable(translate):
        raise TypeError(f"register: translate must be callable; got {translate!r}")
    _TRANSLATIONS[module_type] = translate
    if integer_input:
        _INTEGER_INPUT.add(module_type)
    SUPPORTED_MODULES = ("Sequential",) + tuple(t.__name__ for t in _TRANSLATIONS)


# ---------------------------------------------------------------------------------------------
# Building the graph


class _GraphBuilder:
    """Collects the operators (nodes) and initializers of the graph being built."""

    def __init__(self, model: nn.Module, onnx: Any, reserved: set[str]) -> None:
        self.onnx = onnx
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._param_names = {id(p): name for name, p in model.named_parameters()}
        self._added: dict[int, str] = {}  # id(parameter) -> initializer name, for shared ones
        self._used_names: set[str] = set()  # node names
        # Value names already given: the graph's input and output, and the parameters. The
        # names the builder makes up (node outputs, constants) avoid them.
        self._taken = set(reserved) | set(self._param_names.values())
        self._taken |= {name for name, _ in model.named_buffers()}
        self.opset = 0  # set by export()
        self.dtype = "float64"  # the model's dtype, set by export(): for constants

    def initializer(self, param: Tensor, name: str | None = None) -> str:
        """The name of ``param``'s initializer (added once, even if several layers share it).
        A buffer (running statistics) is not a parameter: give its state-dict ``name``."""
        if id(param) not in self._added:
            name = self._param_names.get(id(param), name)
            if name is None:
                raise ValueError("export: a tensor that is neither a parameter nor named")
            array = backend.to_numpy(param.data)  # from a GPU too
            self.initializers.append(self.onnx.numpy_helper.from_array(array, name))
            self._added[id(param)] = name
        return self._added[id(param)]

    def constant(self, name: str, values: list[float], shape: tuple[int, ...]) -> str:
        """A float initializer of the model's dtype (a LayerNorm's scale of ones when it has
        no weight), named ``name`` or ``name_1``, ..."""
        unique, k = name, 1
        while unique in self._taken:
            unique, k = f"{name}_{k}", k + 1
        self._taken.add(unique)
        kind = (self.onnx.TensorProto.DOUBLE if self.dtype == "float64"
                else self.onnx.TensorProto.FLOAT)
        self.initializers.append(self.onnx.helper.make_tensor(unique, kind, list(shape), values))
        return unique

    def constant_int64(self, name: str, values: list[int]) -> str:
        """An int64 vector initializer (e.g. a Reshape target shape), named ``name`` or, if
        that is taken, ``name_1``, ``name_2``, ..."""
        unique, k = name, 1
        while unique in self._taken:
            unique, k = f"{name}_{k}", k + 1
        self._taken.add(unique)
        tensor = self.onnx.helper.make_tensor(unique, self.onnx.TensorProto.INT64,
                                              [len(values)], values)
        self.initializers.append(tensor)
        return unique

    def translate(self, path: str, module: nn.Module, x: str, in_shape: tuple[int, ...],
                  out_shape: tuple[int, ...], **options: Any) -> str:
        """Write ``module`` (a layer export knows) at ``path``; return its output's name."""
        kind = next((c for c in type(module).__mro__ if c in _TRANSLATIONS), None)
        if kind is None:
            raise _no_translation(path, module, None)
        return _TRANSLATIONS[kind](self, path, module, x, in_shape, out_shape, **options)

    def node(self, op_type: str, inputs: list[str], path: str, **attributes: Any) -> str:
        """Add one operator; return the name of its output.

        Nodes and values are named after the module path, as PyTorch does: the Gemm of
        layer ``"2"`` is node ``/2/Gemm``, and its output ``/2/Gemm_output_0``.
        """
        prefix = "/" + path.replace(".", "/") + "/" if path else "/"
        name = f"{prefix}{op_type}"
        k = 1
        while name in self._used_names or f"{name}_output_0" in self._taken:
            name, k = f"{prefix}{op_type}_{k}", k + 1
        self._used_names.add(name)
        output = f"{name}_output_0"
        self._taken.add(output)
        self.nodes.append(self.onnx.helper.make_node(op_type, inputs, [output], name=name,
                                                     **attributes))
        return output


# ---------------------------------------------------------------------------------------------
# Checks and helpers


def _import_onnx() -> Any:
    try:
        import onnx
        import onnx.checker
        import onnx.numpy_helper
        import onnx.shape_inference
    except ImportError as exc:
        raise ImportError(f"minigrad.export.onnx.export needs the optional 'onnx' package, which is "
                          f"not installed; install the onnx extra: {INSTALL_HINT} (it brings "
                          f"onnx and onnxruntime)") from exc
    return onnx


def _layers(model: nn.Module) -> list[tuple[str, nn.Module, type[Any]]]:
    """The layers ``model`` applies, in order: ``(path, layer, its supported class)``.

    Raises TypeError for a module without a translation, naming its path and type.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"export: expected a minigrad nn.Module; got {type(model).__name__}")
    return _walk.layers(model, tuple(_TRANSLATIONS), _no_translation)


def _no_translation(path: str, module: nn.Module, base: type[Any] | None) -> TypeError:
    where = f"module {path!r}" if path else "the model itself"
    supported = ", ".join(SUPPORTED_MODULES)
    if base is not None:
        return TypeError(
            f"export: no ONNX translation for {where} ({type(module).__name__}): it "
            f"subclasses {base.__name__} but has its own forward(), which export cannot "
            f"read; supported: {supported}")
    if isinstance(module, nn.Sequential):
        why = "a Sequential with its own forward()"
    else:
        why = "write the model as an nn.Sequential of supported layers"
    return TypeError(f"export: no ONNX translation for {where} ({type(module).__name__}); "
                     f"supported: {supported} ({why})")


def _check_names(model: nn.Module, input_name: str, output_name: str) -> None:
    """The graph's input and output must not have a parameter's name.

    Parameters become initializers under their state-dict names, and ONNX has one namespace
    for all values: an input named ``"weight"`` beside an initializer ``"weight"`` makes a
    graph in which ``Gemm`` may read the input where the weight is meant (ONNX Runtime lets
    a graph input override an initializer of the same name), which computes the wrong thing
    without an error.
    """
    params = {name for name, _ in model.named_parameters()}
    for label, name in (("input_name", input_name), ("output_name", output_name)):
        if name in params:
            raise ValueError(
                f"export: {label} {name!r} is also the name of the parameter {name!r}, which "
                f"the graph holds as an initializer; ONNX has one namespace for both, so the "
                f"graph would read one where the other is meant. Choose another {label} "
                f"(the parameters are named {sorted(params)})")


def _check_arguments(model: Any, input_name: Any, output_name: Any, opset: Any,
                     onnx: Any) -> None:
    for label, name in (("input_name", input_name), ("output_name", output_name)):
        if not isinstance(name, str) or not name:
            raise ValueError(f"export: {label} must be a non-empty string; got {name!r}")
    if input_name == output_name:
        raise ValueError(f"export: input_name and output_name must differ; both are "
                         f"{input_name!r}")
    newest = onnx.defs.onnx_opset_version()
    if not isinstance(opset, int) or isinstance(opset, bool) or not MIN_OPSET <= opset <= newest:
        raise ValueError(f"export: opset must be an int from {MIN_OPSET} to {newest} (the "
                         f"newest this onnx package knows); got {opset!r}")


def _forward(layer: nn.Module, kind: type[Any], x: Tensor) -> Any:
    """What the exported graph computes of ``layer``: a MultiheadAttention attends to its input
    (query = key = value) and gives its output alone, as ``need_weights=False``."""
    if isinstance(layer, nn.MultiheadAttention):
        return layer(x, x, x, need_weights=False)[0]
    return layer(x)


def _ids_elem_type(t: Tensor, onnx: Any) -> int:
    """INT64 for the token ids an Embedding (or a model starting with one) reads."""
    if _dtype_name(t) not in ("int64", "int32"):
        raise TypeError(f"export: the model starts with an embedding, so the example input "
                        f"must be integer token ids; got dtype {_dtype_name(t)}")
    if _dtype_name(t) != "int64":
        raise TypeError("export: pass int64 token ids (the graph's input is int64)")
    return int(onnx.TensorProto.INT64)


def _elem_type(t: Tensor, what: str, onnx: Any) -> int:
    """The ONNX element type of a float32 or float64 tensor."""
    types = {"float32": onnx.TensorProto.FLOAT, "float64": onnx.TensorProto.DOUBLE}
    dtype = _dtype_name(t)
    if dtype not in types:
        raise TypeError(f"export: {what} must be float32 or float64; got dtype {dtype}")
    return int(types[dtype])


def _dtype_name(t: Tensor) -> str:
    return str(t.dtype).rsplit(".", 1)[-1]  # "float32" (also from array-api-strict's repr)


def _check_dtypes(model: nn.Module, x: Tensor) -> None:
    """Every parameter must have the input's dtype: an ONNX operator takes one element type."""
    for name, p in model.named_parameters():
        if _dtype_name(p) != _dtype_name(x):
            raise TypeError(
                f"export: the example input has dtype {_dtype_name(x)} but parameter {name!r} "
                f"has dtype {_dtype_name(p)}; an ONNX graph has one float type. Pass an input "
                f"of the model's dtype, or convert the model: model.to(dtype="
                f"{_dtype_name(x)!r})")


def _check_same_as_model(model: nn.Module, x: Tensor, y: Tensor) -> None:
    """The layers applied one by one must give what ``model(x)`` gives."""
    expected = _forward(model, type(model), x)
    same = isinstance(expected, Tensor) and expected.shape == y.shape
    if same:
        a, b, xp = expected.data, y.data, y._xp
        same = bool(xp.all((a == b) | (xp.isnan(a) & xp.isnan(b))))  # NaN = NaN here
    if not same:
        raise RuntimeError(
            f"export: applying the layers of {type(model).__name__} one after another does "
            "not give what model(example_input) gives; export translates the layers, so the "
            "model's forward() must do nothing but apply them in order")


def _axis(axis: int, ndim: int) -> int:
    return axis % ndim if ndim else 0


def _graph_name(model: nn.Module) -> str:
    return f"minigrad_{type(model).__name__}"


def _version() -> str:
    import minigrad

    return minigrad.__version__
