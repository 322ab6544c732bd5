"""The layers the C generator knows, each as the C of its forward and backward pass.

Every layer here is the C twin of a minigrad module, and its backward pass is the *same
formula* as that module's vector-Jacobian product, written as loops:

===========  ======================================  =========================================
layer        forward                                 backward (``g``: gradient of the output)
===========  ======================================  =========================================
Linear       ``y = x @ W.T + b``                     ``dW = g.T @ x``, ``db = sum(g, rows)``,
                                                     ``dx = g @ W``
Conv2d       ``y[o,i,j] = b[o] + sum over c, a, b``  ``dW``, ``db``: the same sums with ``g``;
             ``of W[o,c,a,b] * x[c, i*s+a, j*s+b]``  ``dx``: each ``g * W`` added back where
                                                     its input came from (col2im)
MaxPool2d    ``y = max of each window``              ``g`` to the window's first maximum
Flatten      ``(C, H, W) -> (C*H*W,)``: no copy      nothing to do
ReLU         ``y = maximum(x, 0)``                   ``g * (y > 0)``
LeakyReLU    ``y = x if x > 0 else s * x``           ``g if x > 0 else s * g``
Sigmoid      ``y = 0.5 * (tanh(0.5 * x) + 1)``       ``g * y * (1 - y)``
Tanh         ``y = tanh(x)``                         ``g * (1 - y * y)``
===========  ======================================  =========================================

(see ``Linear.forward`` in :mod:`minigrad.nn`, :mod:`minigrad.conv` and ``Tensor.relu`` ...
in :mod:`minigrad.tensor`). The sigmoid is written through ``tanh``, as the engine does, so it
never overflows.

NaN travels through the C as through the engine. The engine's ReLU and max-pooling take
``numpy.maximum``, which returns NaN when either value is NaN, where C's ``x > 0 ? x : 0``
would quietly make it 0; so the C writes ``maximum(a, b)`` as ``(a > b || isnan(a)) ? a :
b``, exactly NumPy's rule (ties take ``b``, a NaN ``b`` is taken). A window with a NaN
outputs NaN, and its gradient goes where the engine sends it: to the window's last NaN, as in
PyTorch.

Arrays are row-major with one row per sample: an activation of a batch of ``n`` samples of
shape ``(C, H, W)`` is ``n * C * H * W`` numbers, element ``[r, c, i, j]`` at
``((r * C + c) * H + i) * W + j``. Row-major is why ``Flatten`` costs nothing: the images of a
batch, flattened, are already the rows of a matrix. The batch size ``n`` is a run-time
argument of the generated functions (up to the compiled maximum); all other sizes are
constants written into the loops.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .cfloat import CFloat

__all__ = ["ELEMENTWISE", "CConv2d", "CElementwise", "CFlatten", "CLayer", "CLinear",
           "CMaxPool2d", "Rule"]


def _shape(shape: tuple[int, ...]) -> str:
    """``(n, 6, 28, 28)`` for a batch of samples of shape (6, 28, 28)."""
    return "(" + ", ".join(["n", *map(str, shape)]) + ")"


def _plus(term: str, value: int) -> str:
    """``term + value`` written plainly: ``i``, ``i + 1``, ``i - 2``."""
    return term if value == 0 else f"{term} + {value}" if value > 0 else f"{term} - {-value}"


def _times(term: str, value: int) -> str:
    return term if value == 1 else f"{term} * {value}"


def _bias_gradient(t: CFloat, g: str, gb: str, channel: str, channels: int,
                   pixels: int) -> list[str]:
    """A block, inside a loop over ``channel``, that sets ``gb[channel]`` to the sum of the
    gradient ``g`` (n, channels, pixels) over the rows and the pixels of that channel."""
    at = f"r * {channels} + {channel}" if pixels == 1 else \
        f"(r * {channels} + {channel}) * {pixels} + i"
    loops = ["        for (int r = 0; r < n; ++r)"]
    if pixels > 1:
        loops.append(f"            for (int i = 0; i < {pixels}; ++i)")
    return ["    {",
            f"        {t.name} acc = {t.literal(0)};",
            *loops,
            "    " * (len(loops) + 2) + f"acc += {g}[{at}];",
            f"        {gb}[{channel}] = acc;",
            "    }"]


@dataclass
class CLayer:
    """A layer of the network, placed in the model (``path``) and in the buffer.

    Attributes
    ----------
    path : str
        Where the module sits in the model, as in ``named_modules()`` (``"2"``, ``"1.0"``).
    title : str
        The module as its ``repr`` shows it, e.g. ``Linear(in_features=2, ...)``.
    in_shape, out_shape : tuple of int
        The shape of one input sample and of one output sample.
    output : str
        The C name of the array that holds this layer's output (set by the program).
    in_place : bool
        Whether the output overwrites the input (an activation right after a layer whose
        backward does not need its own output).

    Class attributes say how a layer fits in the backward pass: ``has_params`` (it has
    gradients to fill), ``needs_own_output`` (its backward reads its output, so nothing may
    overwrite it), and ``dx_apart`` (its input's gradient goes to another array; otherwise
    the gradient is updated in place, or, for Flatten, left as it is).
    """

    path: str
    title: str
    in_shape: tuple[int, ...]
    out_shape: tuple[int, ...]
    output: str = ""
    in_place: bool = False

    has_params = False
    needs_own_output = False
    dx_apart = False

    @property
    def label(self) -> str:
        return f"{self.path}: {self.title}" if self.path else self.title

    @property
    def in_size(self) -> int:
        """Numbers in one input sample."""
        return math.prod(self.in_shape)

    @property
    def out_size(self) -> int:
        """Numbers in one output sample."""
        return math.prod(self.out_shape)

    def forward(self, t: CFloat, x: str) -> list[str]:
        """C statements computing ``self.output`` from the input array ``x`` for ``n`` rows."""
        raise NotImplementedError

    def _backward_comment(self, g: str, formulas: list[str]) -> list[str]:
        """The comment above a layer's backward loops: the gradient ``g`` it starts from and
        the formulas of the gradients it fills."""
        lines = [f"/* {self.label}, backward",
                 f" * with {g} {_shape(self.out_shape)}, the gradient of its output:"]
        lines += [f" *   {formula}" for formula in formulas]
        lines[-1] += " */"
        return lines

    def backward(self, t: CFloat, x: str, g: str, dx: str | None) -> list[str]:
        """C statements of the backward pass, given the gradient ``g`` of the output.

        ``x`` is the layer's input array. They fill the parameters' gradients, and the
        gradient of the input into ``dx`` when it is not None (for an elementwise layer,
        ``dx`` is ``g`` itself: the gradient is updated in place).
        """
        raise NotImplementedError


@dataclass
class CLinear(CLayer):
    """``nn.Linear``: ``y = x @ W.T + b``, with ``W`` of shape (n_out, n_in)."""

    weight: str = ""            # C names of the parameter and gradient arrays
    bias: str | None = None
    grad_weight: str = ""
    grad_bias: str | None = None

    has_params = True
    dx_apart = True

    def forward(self, t: CFloat, x: str) -> list[str]:
        i, o, y, w, b = self.in_size, self.out_size, self.output, self.weight, self.bias
        plus_b = f" + {b} ({o},)" if b else ""
        return [
            f"/* {self.label}",
            f" *   {y} (n, {o}) = {x} (n, {i}) @ {w}.T ({i}, {o}){plus_b} */",
            "for (int r = 0; r < n; ++r) {",
            f"    for (int j = 0; j < {o}; ++j) {{",
            f"        {t.name} acc = {t.literal(0)};",
            f"        for (int k = 0; k < {i}; ++k)",
            f"            acc += {x}[r * {i} + k] * {w}[j * {i} + k];",
            f"        {y}[r * {o} + j] = acc{f' + {b}[j]' if b else ''};",
            "    }",
            "}",
        ]

    def backward(self, t: CFloat, x: str, g: str, dx: str | None) -> list[str]:
        i, o, w = self.in_size, self.out_size, self.weight
        gw, gb = self.grad_weight, self.grad_bias
        zero = t.literal(0)
        lines = self._backward_comment(g, [f"{gw} ({o}, {i}) = {g}.T ({o}, n) @ {x} (n, {i})"]
                                       + ([f"{gb} ({o},) = {g} summed over the n rows"] if gb
                                          else []))
        lines += [
            f"for (int j = 0; j < {o}; ++j) {{",
            f"    for (int k = 0; k < {i}; ++k) {{",
            f"        {t.name} acc = {zero};",
            "        for (int r = 0; r < n; ++r)",
            f"            acc += {g}[r * {o} + j] * {x}[r * {i} + k];",
            f"        {gw}[j * {i} + k] = acc;",
            "    }",
        ]
        if gb:
            lines += _bias_gradient(t, g, gb, "j", channels=o, pixels=1)
        lines.append("}")
        if dx is not None:
            lines += [
                f"/*   {dx} (n, {i}) = {g} (n, {o}) @ {w} ({o}, {i}): the gradient of "
                "its input */",
                "for (int r = 0; r < n; ++r) {",
                f"    for (int k = 0; k < {i}; ++k) {{",
                f"        {t.name} acc = {zero};",
                f"        for (int j = 0; j < {o}; ++j)",
                f"            acc += {g}[r * {o} + j] * {w}[j * {i} + k];",
                f"        {dx}[r * {i} + k] = acc;",
                "    }",
                "}",
            ]
        return lines


@dataclass
class CConv2d(CLayer):
    """``nn.Conv2d``: input (C, H, W), weight (O, C, KH, KW), output (O, OH, OW) per sample.

    Output pixel ``(o, i, j)`` reads the input rows ``i * stride + a - padding`` and columns
    ``j * stride + b - padding`` for kernel offsets ``a, b``; positions outside the input are
    the zero padding, skipped.
    """

    weight: str = ""
    bias: str | None = None
    grad_weight: str = ""
    grad_bias: str | None = None
    kernel: tuple[int, int] = (1, 1)
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)

    has_params = True
    dx_apart = True

    def _dims(self) -> tuple[int, ...]:
        c, h, w = self.in_shape
        o, oh, ow = self.out_shape
        return c, h, w, o, oh, ow

    def _input_position(self, axis: int, depth: int) -> list[str]:
        """``const int row = i * stride + ka - padding;`` (axis 0; ``col`` from ``j`` and
        ``kb`` for axis 1), and a line that skips a position in the zero padding, indented
        ``depth`` levels."""
        name, out, k = ("row", "i", "ka") if axis == 0 else ("col", "j", "kb")
        stride, padding, size = self.stride[axis], self.padding[axis], self.in_shape[1 + axis]
        pad = "    " * depth
        lines = [f"{pad}const int {name} = {_plus(_times(out, stride) + f' + {k}', -padding)};"]
        if padding:
            lines.append(f"{pad}if ({name} < 0 || {name} >= {size}) continue;  /* padding */")
        return lines

    def _window(self, body: list[str], depth: int) -> list[str]:
        """Loops over c, ka, kb around ``body`` (at indentation ``depth``), with ``row`` and
        ``col`` the input position read; positions in the padding are skipped."""
        c, *_ = self._dims()
        kh, kw = self.kernel
        pad = "    " * depth
        lines = [f"{pad}for (int c = 0; c < {c}; ++c) {{",
                 f"{pad}    for (int ka = 0; ka < {kh}; ++ka) {{",
                 *self._input_position(0, depth + 2),
                 f"{pad}        for (int kb = 0; kb < {kw}; ++kb) {{",
                 *self._input_position(1, depth + 3)]
        lines += [f"{pad}            {line}" for line in body]
        lines += [f"{pad}        }}", f"{pad}    }}", f"{pad}}}"]
        return lines

    def _indices(self) -> tuple[str, str, str]:
        """C index expressions: input x[r, c, row, col], weight W[o, c, ka, kb], output."""
        c, h, w, o, oh, ow = self._dims()
        kh, kw = self.kernel
        return (f"((r * {c} + c) * {h} + row) * {w} + col",
                f"((o * {c} + c) * {kh} + ka) * {kw} + kb",
                f"((r * {o} + o) * {oh} + i) * {ow} + j")

    def _about(self) -> str:
        (kh, kw), (sh, sw), (ph, pw) = self.kernel, self.stride, self.padding
        return f"{kh}x{kw} kernels, stride ({sh}, {sw}), padding ({ph}, {pw})"

    def forward(self, t: CFloat, x: str) -> list[str]:
        c, h, w, o, oh, ow = self._dims()
        kh, kw = self.kernel
        xi, wi, yi = self._indices()
        y, wt, b = self.output, self.weight, self.bias
        lines = [
            f"/* {self.label}",
            f" *   {y} {_shape(self.out_shape)} = {x} {_shape(self.in_shape)} convolved with "
            f"{wt} ({o}, {c}, {kh}, {kw})" + (f" + {b} ({o},)" if b else ""),
            f" *   ({self._about()}) */",
            "for (int r = 0; r < n; ++r) {",
            f"    for (int o = 0; o < {o}; ++o) {{",
            f"        for (int i = 0; i < {oh}; ++i) {{",
            f"            for (int j = 0; j < {ow}; ++j) {{",
            f"                {t.name} acc = {t.literal(0)};",
            *self._window([f"acc += {x}[{xi}] * {wt}[{wi}];"], 4),
            f"                {y}[{yi}] = acc{f' + {b}[o]' if b else ''};",
            "            }",
            "        }",
            "    }",
            "}",
        ]
        return lines

    def backward(self, t: CFloat, x: str, g: str, dx: str | None) -> list[str]:
        c, h, w, o, oh, ow = self._dims()
        kh, kw = self.kernel
        xi, wi, yi = self._indices()
        gw, gb, wt = self.grad_weight, self.grad_bias, self.weight
        zero = t.literal(0)
        lines = self._backward_comment(
            g, [f"{gw}[o][c][ka][kb] = sum over r, i, j of {g}[r][o][i][j] * {x}[r][c][row][col]"]
            + ([f"{gb}[o] = sum over r, i, j of {g}[r][o][i][j]"] if gb else []))
        # dW: loops over the weight's elements outside, the batch and output pixels inside
        lines += [
            f"for (int o = 0; o < {o}; ++o) {{",
            f"    for (int c = 0; c < {c}; ++c) {{",
            f"        for (int ka = 0; ka < {kh}; ++ka) {{",
            f"            for (int kb = 0; kb < {kw}; ++kb) {{",
            f"                {t.name} acc = {zero};",
            "                for (int r = 0; r < n; ++r) {",
            f"                    for (int i = 0; i < {oh}; ++i) {{",
            *self._input_position(0, 6),
            f"                        for (int j = 0; j < {ow}; ++j) {{",
            *self._input_position(1, 7),
            f"                            acc += {g}[{yi}] * {x}[{xi}];",
            "                        }",
            "                    }",
            "                }",
            f"                {gw}[{wi}] = acc;",
            "            }",
            "        }",
            "    }",
        ]
        if gb:
            lines += _bias_gradient(t, g, gb, "o", channels=o, pixels=oh * ow)
        lines.append("}")
        if dx is not None:
            lines += [
                f"/*   {dx} {_shape(self.in_shape)}: the gradient of its input. Each output "
                "pixel's",
                " *   gradient, times the kernel, is added back onto the input positions it "
                "read. */",
                f"for (int j = 0; j < n * {self.in_size}; ++j)",
                f"    {dx}[j] = {zero};",
                "for (int r = 0; r < n; ++r) {",
                f"    for (int o = 0; o < {o}; ++o) {{",
                f"        for (int i = 0; i < {oh}; ++i) {{",
                f"            for (int j = 0; j < {ow}; ++j) {{",
                f"                const {t.name} gij = {g}[{yi}];",
                *self._window([f"{dx}[{xi}] += gij * {wt}[{wi}];"], 4),
                "            }",
                "        }",
                "    }",
                "}",
            ]
        return lines


@dataclass
class CMaxPool2d(CLayer):
    """``nn.MaxPool2d``: the largest value of each window, channel by channel.

    The backward pass finds each window's maximum again in the input, the *first* one in
    row-major order when several tie (a strict ``>`` while scanning), as the engine and
    PyTorch choose, and adds the gradient there.
    """

    kernel: tuple[int, int] = (2, 2)
    stride: tuple[int, int] = (2, 2)

    dx_apart = True

    def _window_max(self, x: str, t: CFloat) -> list[str]:
        """Lines that set ``m`` to the largest value of window (i, j) of ``plane``, taken with
        ``numpy.maximum``'s rule, as the engine does: NaN if the window holds a NaN."""
        _, h, w = self.in_shape
        (kh, kw), (sh, sw) = self.kernel, self.stride
        return [
            f"const {t.name} *plane = {x} + p * {h * w};",
            f"{t.name} m = plane[{_times('i', sh * w)} + {_times('j', sw)}];"
            "  /* the window's top left */",
            f"for (int ka = 0; ka < {kh}; ++ka) {{",
            f"    for (int kb = 0; kb < {kw}; ++kb) {{",
            f"        const {t.name} v = plane[{self._position()}];",
            "        m = (m > v || isnan(m)) ? m : v;  /* numpy.maximum(m, v): NaN wins */",
            "    }",
            "}",
        ]

    def _position(self) -> str:
        """The offset in the plane of position (ka, kb) of window (i, j)."""
        _, _, w = self.in_shape
        (sh, sw) = self.stride
        return f"({_times('i', sh)} + ka) * {w} + {_times('j', sw)} + kb"

    def _about(self) -> str:
        (kh, kw), (sh, sw) = self.kernel, self.stride
        return f"{kh}x{kw} windows, stride ({sh}, {sw})"

    def forward(self, t: CFloat, x: str) -> list[str]:
        c, _, _ = self.in_shape
        _, oh, ow = self.out_shape
        y = self.output
        return [
            f"/* {self.label}",
            f" *   {y} {_shape(self.out_shape)} = the largest value of each window of "
            f"{x} {_shape(self.in_shape)}",
            f" *   ({self._about()}), plane by plane: p = r * {c} + channel */",
            f"for (int p = 0; p < n * {c}; ++p) {{",
            f"    for (int i = 0; i < {oh}; ++i) {{",
            f"        for (int j = 0; j < {ow}; ++j) {{",
            *["            " + line for line in self._window_max(x, t)],
            f"            {y}[(p * {oh} + i) * {ow} + j] = m;",
            "        }",
            "    }",
            "}",
        ]

    def backward(self, t: CFloat, x: str, g: str, dx: str | None) -> list[str]:
        c, h, w = self.in_shape
        _, oh, ow = self.out_shape
        kh, kw = self.kernel
        T = t.name
        return [
            f"/* {self.label}, backward: {dx} {_shape(self.in_shape)} gets the gradient "
            f"{g} {_shape(self.out_shape)}",
            " *   of each window at the window's first maximum m (found again in the input),",
            " *   by the engine's own formula: walking the window in row-major order, each",
            " *   position takes left * (x == m) of the gradient left, the last one all that is",
            " *   left. A NaN maximum equals nothing: walking back, the last NaN takes it (as",
            " *   PyTorch); a NaN gradient makes NaN everywhere, as in the engine. */",
            f"for (int j = 0; j < n * {self.in_size}; ++j)",
            f"    {dx}[j] = {t.literal(0)};",
            f"for (int p = 0; p < n * {c}; ++p) {{",
            f"    for (int i = 0; i < {oh}; ++i) {{",
            f"        for (int j = 0; j < {ow}; ++j) {{",
            *["            " + line for line in self._window_max(x, t)],
            f"            {T} left = {g}[(p * {oh} + i) * {ow} + j];  /* not given out yet */",
            f"            {T} *dplane = {dx} + p * {h * w};",
            f"            for (int ka = 0; ka < {kh}; ++ka) {{",
            f"                for (int kb = 0; kb < {kw}; ++kb) {{",
            f"                    const int at = {self._position()};",
            f"                    if (ka == {kh - 1} && kb == {kw - 1} && !isnan(m)) {{",
            "                        dplane[at] += left;",
            "                    } else {",
            f"                        const {T} d = left * ({T})(plane[at] == m);",
            "                        dplane[at] += d;",
            "                        left -= d;",
            "                    }",
            "                }",
            "            }",
            "            if (isnan(m)) {  /* the window's last NaN gets what is left */",
            f"                for (int ka = {kh - 1}; ka >= 0; --ka) {{",
            f"                    for (int kb = {kw - 1}; kb >= 0; --kb) {{",
            f"                        const int at = {self._position()};",
            f"                        const {T} d = left * ({T})isnan(plane[at]);",
            "                        dplane[at] += d;",
            "                        left -= d;",
            "                    }",
            "                }",
            "            }",
            "        }",
            "    }",
            "}",
        ]


@dataclass
class CFlatten(CLayer):
    """``nn.Flatten()``: (C, H, W) per sample becomes (C*H*W,), the same numbers in the same
    order; the output is the input array itself, so there is no code at all."""

    def forward(self, t: CFloat, x: str) -> list[str]:
        return [f"/* {self.label}: {x} {_shape(self.in_shape)} is read as "
                f"{_shape(self.out_shape)} from here on; nothing to do */"]

    def backward(self, t: CFloat, x: str, g: str, dx: str | None) -> list[str]:
        return [f"/* {self.label}, backward: {g} is read as {_shape(self.in_shape)} from "
                "here on; nothing to do */"]


@dataclass
class CElementwise(CLayer):
    """An activation applied to each number on its own (``in_shape == out_shape``).

    ``kind`` keys :data:`ELEMENTWISE`, which holds its forward and backward rules as C
    templates; ``slope`` is the negative slope of a leaky ReLU.
    """

    kind: str = ""
    slope: float = 0.0

    @property
    def needs_own_output(self) -> bool:  # type: ignore[override]
        return ELEMENTWISE[self.kind].needs_output

    def _c(self, t: CFloat, template: str, x: str, g: str) -> str:
        """Fill a rule's template with element ``j`` of the arrays, and constants of type t."""
        return template.format(x=f"{x}[j]", y=f"{self.output}[j]", g=f"{g}[j]",
                               s=t.literal(self.slope), zero=t.literal(0), one=t.literal(1),
                               half=t.literal(0.5), tanh=t.fn("tanh"), t=t.name)

    def forward(self, t: CFloat, x: str) -> list[str]:
        rule = ELEMENTWISE[self.kind]
        y = self.output
        return [
            f"/* {self.label}",
            f" *   {y} {_shape(self.out_shape)} = {rule.forward_math}, elementwise"
            + (", in place */" if self.in_place else " */"),
            f"for (int j = 0; j < n * {self.out_size}; ++j)",
            f"    {y}[j] = {self._c(t, rule.forward_c, x, '')};",
        ]

    def backward(self, t: CFloat, x: str, g: str, dx: str | None) -> list[str]:
        rule = ELEMENTWISE[self.kind]
        return [
            f"/* {self.label}, backward, in place on the gradient {g} "
            f"{_shape(self.out_shape)}",
            f" *   g = {rule.backward_math} */",
            f"for (int j = 0; j < n * {self.out_size}; ++j)",
            f"    {g}[j] = {self._c(t, rule.backward_c, x, g)};",
        ]


@dataclass(frozen=True)
class Rule:
    """An elementwise activation's forward and backward rule, as math and as C templates.

    The templates use ``{x}`` (input value), ``{y}`` (output value), ``{g}`` (gradient of
    the output), ``{s}`` (a slope), the constants ``{zero}``, ``{one}``, ``{half}``, and
    ``{t}``, the C type.
    """

    forward_math: str
    forward_c: str
    backward_math: str
    backward_c: str

    @property
    def needs_input(self) -> bool:
        """Whether the backward rule reads the input ``x``."""
        return "{x}" in self.backward_c

    @property
    def needs_output(self) -> bool:
        """Whether the backward rule reads the output ``y``."""
        return "{y}" in self.backward_c


# The rules are the engine's (Tensor.relu, .leaky_relu, .sigmoid, .tanh in tensor.py), term
# for term, in the same order of operations, NaN included: ReLU's forward is numpy.maximum(x, 0)
# (a NaN stays NaN) and its backward the product g * (y > 0), as the engine computes them.
ELEMENTWISE = {
    "ReLU": Rule("maximum(x, 0), NaN kept", "({x} > {zero} || isnan({x})) ? {x} : {zero}",
                 "g * (y > 0)", "{g} * ({t})({y} > {zero})"),
    "LeakyReLU": Rule("x > 0 ? x : s * x", "{x} > {zero} ? {x} : {s} * {x}",
                      "x > 0 ? g : s * g", "{x} > {zero} ? {g} : {s} * {g}"),
    "Sigmoid": Rule("1 / (1 + exp(-x)), as 0.5 * (tanh(0.5 * x) + 1)",
                    "{half} * ({tanh}({half} * {x}) + {one})",
                    "g * y * (1 - y)", "{g} * {y} * ({one} - {y})"),
    "Tanh": Rule("tanh(x)", "{tanh}({x})", "g * (1 - y * y)", "{g} * ({one} - {y} * {y})"),
}
