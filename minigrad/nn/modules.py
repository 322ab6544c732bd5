"""Layers as objects: :class:`Parameter`, :class:`Module` and the building blocks of a network.

A :class:`Module` is a function with state. Its state is whatever it holds in its attributes:
:class:`Parameter` tensors (trained by an optimizer), other modules, and lists or dicts of
either. :meth:`Module.named_parameters` finds them all by walking those attributes, and names
each by its path, ``"layers.0.weight"``; the same names key :meth:`Module.state_dict`.

>>> import minigrad.nn as nn
>>> model = nn.Sequential(nn.Linear(2, 16, seed=0), nn.ReLU(), nn.Linear(16, 2, seed=1))
>>> model
Sequential(
  (0): Linear(in_features=2, out_features=16, bias=True)
  (1): ReLU()
  (2): Linear(in_features=16, out_features=2, bias=True)
)
>>> [name for name, p in model.named_parameters()]
['0.weight', '0.bias', '2.weight', '2.bias']

The names and behaviour follow PyTorch's ``torch.nn``, so what is learned here carries over.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Iterator, NamedTuple

from .. import backend
from .._utils import pair
from .. import functional as F
from ..elementwise import leaky_relu, sigmoid
from ..reshaping import flatten
from ..tensor import Tensor, _tensor_arg, op, relu, tanh

__all__ = [
    "Parameter", "Module", "Linear", "ReLU", "LeakyReLU", "Sigmoid", "Tanh", "Sequential",
    "Flatten", "Dropout",
]


class Parameter(Tensor):
    """A tensor that is a trainable part of a module: it requires grad by default.

    A module finds its parameters by type, so wrap every trainable array in ``Parameter``.
    """

    __slots__ = ()

    def __init__(self, data: Any, requires_grad: bool = True, dtype: Any = None) -> None:
        super().__init__(data, requires_grad=requires_grad, dtype=dtype)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class IncompatibleKeys(NamedTuple):
    """What :meth:`Module.load_state_dict` did not match (only non-empty with strict=False)."""

    missing_keys: list[str]
    unexpected_keys: list[str]


class Module:
    """Base class of every layer and network.

    Subclasses set their parameters and submodules as attributes in ``__init__`` and define
    ``forward``; calling the module calls ``forward``. Parameters and modules are found in
    attributes, and inside lists, tuples and dicts held by attributes.
    """

    training: bool = True  # class defaults, so a subclass works even without super().__init__()
    _buffer_names: tuple[str, ...] = ()
    _non_persistent: tuple[str, ...] = ()  # buffers left out of the state dict

    def __init__(self) -> None:
        self.training = True

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} has no forward(); define "
                                  "forward(self, x) in the subclass")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # --- what a module holds ------------------------------------------------------------------

    def _members(self) -> list[tuple[str, Any]]:
        """(name, value) for each Parameter and Module held directly by this module."""
        found: list[tuple[str, Any]] = []
        for name, value in self.__dict__.items():
            _collect(name, value, found)
        return found

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        """The modules held directly by this one, with their names."""
        for name, value in self._members():
            if isinstance(value, Module):
                yield name, value

    def children(self) -> Iterator["Module"]:
        for _, module in self.named_children():
            yield module

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, "Module"]]:
        """This module (named ``prefix``) and every module inside it, each once."""
        seen: set[int] = set()
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            yield name, module
            children = [(f"{name}.{child_name}" if name else child_name, child)
                        for child_name, child in module.named_children()]
            stack.extend(reversed(children))  # visit children in the order they were set

    def modules(self) -> Iterator["Module"]:
        for _, module in self.named_modules():
            yield module

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        """Every parameter, named by its path (``"encoder.layers.0.weight"``), each once.

        They come in the order they were set, depth first: a submodule's parameters where
        the submodule was set.
        """
        found: list[tuple[str, Parameter]] = []
        _collect_parameters(self, f"{prefix}." if prefix else "", {id(self)}, found)
        return iter(found)

    def parameters(self) -> Iterator[Parameter]:
        """Every parameter, each once: what an optimizer is given."""
        return (p for _, p in self.named_parameters())

    def register_buffer(self, name: str, value: Any, persistent: bool = True) -> None:
        """Hold a tensor that is state but not trained (e.g. running statistics).

        A buffer is an attribute (``self.<name>``), moved and converted by :meth:`to`, never
        in :meth:`parameters`; it is saved in :meth:`state_dict` unless ``persistent=False``.
        ``None`` registers the name without a tensor (it is then left out). As PyTorch, the
        name must be a non-empty string without ``"."``, not an attribute already.
        """
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {type(name).__name__}")
        if not name or "." in name:
            raise KeyError(f'buffer name can\'t contain "." or be empty; got {name!r}')
        if name in self.__dict__ and name not in self._buffer_names:
            raise KeyError(f"attribute '{name}' already exists")
        setattr(self, name, value if value is None or isinstance(value, Tensor)
                else Tensor(value))
        if name not in self._buffer_names:
            self._buffer_names = self._buffer_names + (name,)
        others = tuple(n for n in self._non_persistent if n != name)
        self._non_persistent = others if persistent else others + (name,)

    def named_buffers(self, prefix: str = "") -> Iterator[tuple[str, Tensor]]:
        for module_name, module in self.named_modules(prefix):
            for name in module._buffer_names:
                value = getattr(module, name)
                if value is not None:
                    yield (f"{module_name}.{name}" if module_name else name), value

    def buffers(self) -> Iterator[Tensor]:
        for _, b in self.named_buffers():
            yield b

    # --- training -------------------------------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the gradients of all parameters (``backward()`` adds to them otherwise).

        ``set_to_none=True`` drops them (``p.grad = None``, no memory kept); ``False``
        replaces them with zeros. This walks the module tree on every call; in a training loop
        ``optimizer.zero_grad()``, which keeps its list of parameters, is cheaper.
        """
        for p in self.parameters():
            if set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad = p._xp.zeros_like(p.grad)

    def train(self, mode: bool = True) -> "Module":
        """Put this module and all inside it in training mode (``eval()``: the opposite).

        Only some layers behave differently: :class:`Dropout` drops values only in training.
        """
        for module in self.modules():
            module.training = mode
        return self

    def eval(self) -> "Module":
        """Evaluation mode: the same as ``train(False)``."""
        return self.train(False)

    def to(self, device: str | None = None, dtype: Any = None) -> "Module":
        """Move (``"cpu"``, ``"cuda"``) and/or convert every parameter and buffer, in place.

        The Parameter objects stay the same, so an optimizer made earlier still updates them;
        gradients are dropped. Move the model before training: an optimizer's momentum or
        averages stay where and as they were. ``dtype`` must be a floating-point dtype, as
        in PyTorch (integer parameters could not require grad); it is checked before anything
        is converted.
        """
        tensors = list(self._named_tensors())
        if dtype is not None and tensors:
            xp = tensors[0][1]._xp
            if not backend.is_floating(xp, backend.resolve_dtype(xp, dtype)):
                raise TypeError(f"{type(self).__name__}.to: dtype must be a floating-point dtype "
                                f"(float32, float64), as in PyTorch; got {dtype!r}")
        for _, t in tensors:
            # dtype= converts floating tensors only (a buffer that counts stays int64), as PyTorch
            kind = dtype if backend.is_floating(t._xp, t.dtype) else None
            new = backend.copy_to(t.data, device=device, dtype=kind) if device is not None \
                else backend.copy_to(t.data, like=t.data, dtype=kind)
            _set_data(t, new)
            t.grad = None
        return self

    # --- saving and loading ---------------------------------------------------------------------

    def _named_tensors(self, persistent: bool = False) -> Iterator[tuple[str, Tensor]]:
        """Parameters and buffers in PyTorch's state-dict order: module by module (in the order
        of :meth:`named_modules`), each module's parameters, then its buffers (with
        ``persistent``, only those saved in the state dict)."""
        buffers = list(self.named_buffers())
        if persistent:
            skipped = {f"{m}.{b}" if m else b for m, module in self.named_modules()
                       for b in module._non_persistent}
            buffers = [(n, b) for n, b in buffers if n not in skipped]
        if not buffers:  # the common case: the order of named_parameters()
            yield from self.named_parameters()
            return
        modules = [name for name, _ in self.named_modules()]
        owned: dict[str, list[tuple[str, Tensor]]] = {name: [] for name in modules}
        for name, p in self.named_parameters():
            owner = name.rpartition(".")[0]
            while owner not in owned:  # a parameter inside a list or dict of its module
                owner = owner.rpartition(".")[0]
            owned[owner].append((name, p))
        for name, b in buffers:
            owned[name.rpartition(".")[0]].append((name, b))
        for name in modules:
            yield from owned[name]

    def state_dict(self) -> dict[str, Any]:
        """Every parameter and buffer by name, as its array (not a copy: the live values).

        Save it with ``minigrad.save(model.state_dict(), path)``. To keep a snapshot in
        memory while training goes on, copy the arrays: ``{k: v.copy() for k, v in ...}``.
        """
        return {name: t.data for name, t in self._named_tensors(persistent=True)}

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> IncompatibleKeys:
        """Copy the values of ``state_dict`` into this module's parameters and buffers.

        Values are arrays, tensors or nested lists of numbers or booleans; each is copied and
        converted to its parameter's dtype and device (a float64 value into a float32
        parameter is rounded, as PyTorch's ``copy_`` does).

        All or nothing: every key, shape and dtype is checked, and every value converted,
        before the first parameter is changed. If anything is wrong, the module is left
        exactly as it was.

        Returns
        -------
        IncompatibleKeys
            ``(missing_keys, unexpected_keys)``; both empty unless ``strict=False``.

        Raises
        ------
        TypeError
            If ``state_dict`` is not a dict (PyTorch: "Expected state_dict to be dict-like").
        RuntimeError
            Naming, all at once, the keys the module has but the dict lacks (missing), the
            keys the dict has but the module lacks (unexpected) -- both only when ``strict``
            -- and, always, every key whose shape differs or whose value is not numbers or
            booleans (strings, objects; complex numbers too, which PyTorch would cast to real
            with a warning, dropping the imaginary part).
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"load_state_dict: expected a dict (a state dict) of arrays; got "
                            f"{type(state_dict).__name__}")
        own = dict(self._named_tensors(persistent=True))
        missing = [name for name in own if name not in state_dict]
        unexpected = [name for name in state_dict if name not in own]
        problems = []
        if strict and missing:
            problems.append("missing keys (the model has them, the state dict does not): "
                            + ", ".join(repr(k) for k in missing))
        if strict and unexpected:
            problems.append("unexpected keys (in the state dict, not in the model): "
                            + ", ".join(repr(k) for k in unexpected))
        new_values = {}
        for name, t in own.items():
            if name in state_dict:
                problem, new_values[name] = _converted(name, state_dict[name], t)
                if problem:
                    problems.append(problem)
        if problems:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n  "
                + "\n  ".join(problems)
                + "\nWas the state dict saved from a model built the same way?")
        for name, array in new_values.items():  # only now, with every value ready: no failure
            _set_data(own[name], array)
        return IncompatibleKeys(missing, unexpected)

    # --- printing -------------------------------------------------------------------------------

    def extra_repr(self) -> str:
        """The settings shown between the parentheses of ``repr`` (override in subclasses)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        children = list(self.named_children())
        if not children:
            return f"{type(self).__name__}({extra})"
        lines = [extra] if extra else []
        for name, child in children:
            lines.append(f"({name}): " + repr(child).replace("\n", "\n  "))
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"


def _collect(name: str, value: Any, found: list[tuple[str, Any]]) -> None:
    """Append the parameters and modules in ``value`` to ``found`` (inside lists, tuples, dicts)."""
    if isinstance(value, (Parameter, Module)):
        found.append((name, value))
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _collect(f"{name}.{i}", item, found)
    elif isinstance(value, dict):
        for key, item in value.items():
            _collect(f"{name}.{key}", item, found)


def _collect_parameters(module: Module, prefix: str, seen: set[int],
                        found: list[tuple[str, Parameter]]) -> None:
    for name, value in module._members():
        if id(value) in seen:  # a shared parameter or module: listed where first met
            continue
        seen.add(id(value))
        if isinstance(value, Parameter):
            found.append((prefix + name, value))
        else:
            _collect_parameters(value, f"{prefix}{name}.", seen, found)


def _converted(name: str, value: Any, t: Tensor) -> tuple[str | None, Any]:
    """``(problem, None)`` if ``value`` cannot replace ``t``'s array; else ``(None, copy)``.

    The copy has ``t``'s dtype and device. Nothing of ``t`` is changed here.
    """
    data = value.data if isinstance(value, Tensor) else value
    if not hasattr(data, "shape"):  # a list or a number
        try:
            data = backend.copy_to(data)
        except ValueError as exc:  # a ragged list
            return f"{name!r} cannot be read as an array ({exc})", None
    if not backend.namespace(data).isdtype(data.dtype, ("bool", "integral", "real floating")):
        dtype = str(data.dtype).rsplit(".", 1)[-1]  # "<U3", or array-api-strict's "complex128"
        return (f"dtype mismatch for {name!r}: the state dict holds dtype {dtype}; expected "
                f"numbers or booleans, to copy into the model's {t.dtype}"), None
    if tuple(data.shape) != t.shape:
        return (f"size mismatch for {name!r}: the state dict has shape {tuple(data.shape)}, "
                f"the model has shape {t.shape}"), None
    return None, backend.copy_to(data, like=t.data, dtype=t.data.dtype)


def _set_data(t: Tensor, data: Any) -> None:
    """Give tensor ``t`` a new array (its namespace may change, e.g. when moved to a GPU)."""
    t.data = data
    t._xp = backend.namespace(data)


# ---------------------------------------------------------------------------------------------
# Layers


def _generator(layer: str, rng: Any, seed: int | None) -> Any:
    """The random generator a layer draws its initial weights from: ``rng`` (a
    ``numpy.random.Generator``) or one made from ``seed`` (None: fresh entropy), never both."""
    if rng is not None and seed is not None:
        raise ValueError(f"{layer}: pass rng or seed, not both")
    return backend.default_rng(rng if rng is not None else seed)


def _uniform_parameter(rng: Any, bound: float, shape: tuple[int, ...], dtype: Any,
                       device: str | None) -> Parameter:
    """A parameter drawn uniformly from ``[-bound, bound)``: PyTorch's initialisation of
    Linear, Conv2d and the recurrent layers, with ``bound = 1 / sqrt(fan_in)``."""
    return Parameter(backend.uniform(rng, -bound, bound, shape, dtype, device=device))


class Linear(Module):
    """A fully connected layer: ``y = x @ weight.T + bias``.

    Parameters
    ----------
    in_features, out_features : int
        Sizes of each input and output sample.
    bias : bool
        Whether to add a learned bias.
    rng : numpy Generator, optional
        Draws the initial values: ``weight`` (out_features, in_features), then ``bias``
        (out_features,), uniformly from ``(-1/sqrt(in_features), 1/sqrt(in_features))``:
        PyTorch's default (Kaiming-uniform with ``a = sqrt(5)``).
    seed : int, optional
        A seed for a new Generator, instead of ``rng``. With neither, the values differ
        every run.
    dtype : str
        ``"float64"`` (the course's default: exact comparisons) or ``"float32"`` (faster).
    device : str, optional
        ``"cpu"`` (NumPy) or ``"cuda"`` (CuPy).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, *,
                 rng: Any = None, seed: int | None = None, dtype: Any = "float64",
                 device: str | None = None) -> None:
        super().__init__()
        for label, n in (("in_features", in_features), ("out_features", out_features)):
            if not isinstance(n, int) or n < 1:
                raise ValueError(f"Linear: {label} must be a positive int; got {n!r}")
        rng = _generator("Linear", rng, seed)
        bound = 1.0 / in_features ** 0.5
        self.in_features, self.out_features = in_features, out_features
        self.weight = _uniform_parameter(rng, bound, (out_features, in_features), dtype, device)
        self.bias = (_uniform_parameter(rng, bound, (out_features,), dtype, device) if bias
                     else None)

    def forward(self, x: Tensor) -> Tensor:
        """``x @ weight.T + bias``: one fused operation of the graph, :func:`F.linear`."""
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class ReLU(Module):
    """``max(x, 0)``, elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return relu(x)


class LeakyReLU(Module):
    """``x`` where positive, ``negative_slope * x`` elsewhere."""

    def __init__(self, negative_slope: float = 0.01) -> None:
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: Tensor) -> Tensor:
        return leaky_relu(x, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class Sigmoid(Module):
    """``1 / (1 + exp(-x))``, elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return sigmoid(x)


class Tanh(Module):
    """``tanh(x)``, elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return tanh(x)


class Flatten(Module):
    """Merge axes ``start_dim`` to ``end_dim``: (N, C, H, W) becomes (N, C*H*W) by default."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return flatten(x, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Dropout(Module):
    """In training, zero each value with probability ``p`` and scale the rest by 1/(1-p).

    The scaling keeps the expected value unchanged, so in evaluation mode (``eval()``) the
    layer simply passes its input through.

    Parameters
    ----------
    p : float
        Probability of dropping a value, in [0, 1].
    rng : numpy Generator, optional
        Draws the masks. ``seed`` makes a new one; with neither, masks differ every run.
    """

    def __init__(self, p: float = 0.5, *, rng: Any = None, seed: int | None = None) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: p must be a probability in [0, 1]; got {p!r}")
        if rng is not None and seed is not None:
            raise ValueError("Dropout: pass rng or seed, not both")
        self.p = p
        self.rng = backend.default_rng(rng if rng is not None else seed)

    def forward(self, x: Tensor) -> Tensor:
        _tensor_arg(x, "Dropout")
        if not self.training or self.p == 0.0:
            return x
        if self.p == 1.0:
            return x * 0.0
        xp, keep = x._xp, 1.0 - self.p
        u = backend.uniform(self.rng, 0.0, 1.0, x.shape, like=x.data)
        scale = xp.astype(u < keep, x.dtype) / keep  # 1/keep where kept, 0 where dropped
        return op(x.data * scale, (x,), lambda g, s: g * s, saved=(scale,), name="dropout")

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Sequential(Module):
    """Modules applied one after another: ``Sequential(a, b, c)(x) == c(b(a(x)))``.

    Indexable (``model[0]``, ``model[1:]``), iterable and sized; its children are named
    ``"0"``, ``"1"``, ... as in PyTorch, so parameters are ``"0.weight"``, ``"0.bias"``, ...
    """

    def __init__(self, *layers: Module) -> None:
        super().__init__()
        for i, layer in enumerate(layers):
            if not isinstance(layer, Module):
                raise TypeError(f"Sequential: argument {i} is a {type(layer).__name__}, "
                                "not a Module (did you pass a class instead of an instance, "
                                "e.g. nn.ReLU instead of nn.ReLU()?)")
        self._layers = list(layers)

    def _members(self) -> list[tuple[str, Any]]:
        found = [(str(i), layer) for i, layer in enumerate(self._layers)]
        for name, value in self.__dict__.items():
            if name != "_layers":
                _collect(name, value, found)
        return found

    def forward(self, x: Any) -> Any:
        for layer in self._layers:
            x = layer(x)
        return x

    def append(self, layer: Module) -> "Sequential":
        """Add a module at the end."""
        if not isinstance(layer, Module):
            raise TypeError(f"Sequential.append: expected a Module; got {type(layer).__name__}")
        self._layers.append(layer)
        return self

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return Sequential(*self._layers[index])
        return self._layers[index]

    def __setitem__(self, index: int, layer: Module) -> None:
        """Replace the layer at ``index`` (``model[1] = nn.Tanh()``), as PyTorch."""
        if not isinstance(layer, Module):
            raise TypeError(f"Sequential: a layer must be a Module; got {type(layer).__name__}")
        if not isinstance(index, int) or isinstance(index, bool):
            raise TypeError(f"Sequential: layers are replaced one at a time, by an int index; "
                            f"got {type(index).__name__}")
        self._layers[index] = layer

    def __len__(self) -> int:
        return len(self._layers)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._layers)


# ---------------------------------------------------------------------------------------------
# Losses


# The loss modules (CrossEntropyLoss, MSELoss, ... with their options) are in .loss.


# --- convolution layers (conv.py) ---


class Conv2d(Module):
    """A 2-D convolution layer: ``y = conv2d(x, weight, bias, stride, padding)``.

    Input (N, in_channels, H, W), output (N, out_channels, OH, OW); see
    :func:`minigrad.functional.conv2d`.

    Parameters
    ----------
    in_channels, out_channels : int
        Channels of each input and output image.
    kernel_size : int or (int, int)
        Height and width of the kernels.
    stride, padding : int or (int, int)
        Step between windows; zeros added around the input.
    dilation : int or (int, int)
        Spacing between the kernel's taps.
    groups : int
        Split the channels into this many independent convolutions (``in_channels`` and
        ``out_channels`` divisible by it; ``groups = in_channels``: depthwise).
    bias : bool
        Whether to add a learned bias per output channel.
    rng : numpy Generator, optional
        Draws the initial values: ``weight`` (out_channels, in_channels / groups, kh, kw),
        then ``bias`` (out_channels,), uniformly from ``(-1/sqrt(fan_in), 1/sqrt(fan_in))``
        with ``fan_in = in_channels / groups * kh * kw``: PyTorch's default
        (Kaiming-uniform, ``a = sqrt(5)``).
    seed : int, optional
        A seed for a new Generator, instead of ``rng``. With neither, values differ every run.
    dtype : str
        ``"float64"`` or ``"float32"`` (faster).
    device : str, optional
        ``"cpu"`` (NumPy) or ``"cuda"`` (CuPy).

    Example
    -------
    >>> Conv2d(1, 6, 5, seed=0)
    Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, int],
                 stride: int | tuple[int, int] = 1, padding: int | tuple[int, int] = 0,
                 dilation: int | tuple[int, int] = 1, groups: int = 1,
                 bias: bool = True, *, rng: Any = None, seed: int | None = None,
                 dtype: Any = "float64", device: str | None = None) -> None:
        super().__init__()
        for label, n in (("in_channels", in_channels), ("out_channels", out_channels),
                         ("groups", groups)):
            if not isinstance(n, int) or n < 1:
                raise ValueError(f"Conv2d: {label} must be a positive int; got {n!r}")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"Conv2d: in_channels ({in_channels}) and out_channels "
                             f"({out_channels}) must be divisible by groups ({groups})")
        rng = _generator("Conv2d", rng, seed)
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = pair(kernel_size, "Conv2d", "kernel_size", low=1)
        self.stride = pair(stride, "Conv2d", "stride", low=1)
        self.padding = pair(padding, "Conv2d", "padding", low=0)
        self.dilation = pair(dilation, "Conv2d", "dilation", low=1)
        kh, kw = self.kernel_size
        bound = 1.0 / (in_channels // groups * kh * kw) ** 0.5
        self.weight = _uniform_parameter(rng, bound, (out_channels, in_channels // groups, kh, kw),
                                         dtype, device)
        self.bias = (_uniform_parameter(rng, bound, (out_channels,), dtype, device) if bias
                     else None)

    def forward(self, x: Tensor) -> Tensor:
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def extra_repr(self) -> str:
        return _conv_repr(self)


def _conv_repr(layer: Any) -> str:
    """PyTorch's repr of a convolution of any number of spatial axes (defaults left out)."""
    n = len(layer.stride)
    s = (f"{layer.in_channels}, {layer.out_channels}, kernel_size={layer.kernel_size}, "
         f"stride={layer.stride}")
    if layer.padding != (0,) * n:
        s += f", padding={layer.padding}"
    if layer.dilation != (1,) * n:
        s += f", dilation={layer.dilation}"
    if layer.groups != 1:
        s += f", groups={layer.groups}"
    if layer.bias is None:
        s += ", bias=False"
    return s


class _Pool2d(Module):
    """What the pooling layers share: a window, a stride (by default the window) and padding."""

    def __init__(self, kernel_size: int | tuple[int, int],
                 stride: int | tuple[int, int] | None, padding: int | tuple[int, int]) -> None:
        super().__init__()
        name = type(self).__name__
        # Checked now, kept as given: PyTorch keeps and shows them so (kernel_size=2).
        pair(kernel_size, name, "kernel_size", low=1)
        pair(kernel_size if stride is None else stride, name, "stride", low=1)
        pair(padding, name, "padding", low=0)
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding = padding

    def extra_repr(self) -> str:
        s = f"kernel_size={self.kernel_size}, stride={self.stride}"
        return s + (f", padding={self.padding}" if self.padding not in (0, (0, 0)) else "")


class MaxPool2d(_Pool2d):
    """The largest value of each ``kernel_size`` window; see :func:`minigrad.functional.max_pool2d`.

    ``stride`` defaults to ``kernel_size``: windows side by side; ``padding`` adds ``-inf``
    around (at most half the kernel). The gradient of a window goes to its (first) maximum.

    >>> MaxPool2d(2)
    MaxPool2d(kernel_size=2, stride=2)
    """

    def __init__(self, kernel_size: int | tuple[int, int],
                 stride: int | tuple[int, int] | None = None,
                 padding: int | tuple[int, int] = 0) -> None:
        super().__init__(kernel_size, stride, padding)

    def forward(self, x: Tensor) -> Tensor:
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding)


class AvgPool2d(_Pool2d):
    """The mean of each ``kernel_size`` window; see :func:`minigrad.functional.avg_pool2d`.

    ``stride`` defaults to ``kernel_size``; ``padding`` zeros count in the mean (PyTorch's
    default ``count_include_pad=True``).

    >>> AvgPool2d(2, padding=1)
    AvgPool2d(kernel_size=2, stride=2, padding=1)
    """

    def __init__(self, kernel_size: int | tuple[int, int],
                 stride: int | tuple[int, int] | None = None,
                 padding: int | tuple[int, int] = 0) -> None:
        super().__init__(kernel_size, stride, padding)

    def forward(self, x: Tensor) -> Tensor:
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding)


__all__ += ["Conv2d", "MaxPool2d", "AvgPool2d"]
