"""The layers the C generator knows, each as the C of its forward and backward pass.

Every layer here is the C twin of a minigrad module, and its backward pass is the *same
formula* as that module's vector-Jacobian product, written as loops:

===========  ======================================  =========================================
layer        forward (per element / row)             backward (``g``: gradient of the output)
===========  ======================================  =========================================
Linear       ``y = x @ W.T + b``                     ``dW = g.T @ x``, ``db = sum(g, rows)``,
                                                     ``dx = g @ W``
ReLU         ``y = max(x, 0)``                       ``g * (y > 0)``
LeakyReLU    ``y = x if x > 0 else s * x``           ``g if x > 0 else s * g``
Sigmoid      ``y = 0.5 * (tanh(0.5 * x) + 1)``       ``g * y * (1 - y)``
Tanh         ``y = tanh(x)``                         ``g * (1 - y * y)``
===========  ======================================  =========================================

(see ``Linear.forward`` in :mod:`minigrad.nn` and ``Tensor.relu`` ... in
:mod:`minigrad.tensor`). The sigmoid is written through ``tanh``, as the engine does, so it
never overflows.

Arrays are row-major with one row per sample: an activation of a batch of ``n`` rows and
``f`` features is ``n * f`` numbers, element ``[r, j]`` at ``r * f + j``. The batch size
``n`` is a run-time argument of the generated functions (up to the compiled maximum); the
feature sizes are constants written into the loops.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .cfloat import CFloat

__all__ = ["CLayer", "CLinear", "CElementwise", "Rule", "ELEMENTWISE"]


@dataclass
class CLayer:
    """A layer of the network, placed in the model (``path``) and in the buffer.

    Attributes
    ----------
    path : str
        Where the module sits in the model, as in ``named_modules()`` (``"2"``, ``"1.0"``).
    title : str
        The module as its ``repr`` shows it, e.g. ``Linear(in_features=2, ...)``.
    n_in, n_out : int
        Features of one input row and one output row.
    output : str
        The C name of the array that holds this layer's output (set by the program).
    in_place : bool
        Whether the output overwrites the input (an activation right after a Linear).
    """

    path: str
    title: str
    n_in: int
    n_out: int
    output: str = ""
    in_place: bool = False
    has_params: bool = field(default=False, init=False)

    @property
    def label(self) -> str:
        return f"{self.path}: {self.title}" if self.path else self.title

    def forward(self, t: CFloat, x: str) -> list[str]:
        """C statements computing ``self.output`` from the input array ``x`` for ``n`` rows."""
        raise NotImplementedError

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

    def __post_init__(self) -> None:
        self.has_params = True

    def forward(self, t: CFloat, x: str) -> list[str]:
        i, o, y, w, b = self.n_in, self.n_out, self.output, self.weight, self.bias
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
        i, o, w = self.n_in, self.n_out, self.weight
        gw, gb = self.grad_weight, self.grad_bias
        zero = t.literal(0)
        lines = [
            f"/* {self.label}, backward",
            f" * with {g} (n, {o}), the gradient of its output:",
            f" *   {gw} ({o}, {i}) = {g}.T ({o}, n) @ {x} (n, {i})",
        ]
        if gb:
            lines.append(f" *   {gb} ({o},) = {g} summed over the n rows")
        lines[-1] += " */"
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
            lines += [
                "    {",
                f"        {t.name} acc = {zero};",
                "        for (int r = 0; r < n; ++r)",
                f"            acc += {g}[r * {o} + j];",
                f"        {gb}[j] = acc;",
                "    }",
            ]
        lines.append("}")
        if dx is not None:
            lines += [
                f"/*   {dx} (n, {i}) = {g} (n, {o}) @ {w} ({o}, {i}): the gradient of its "
                "input */",
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
class CElementwise(CLayer):
    """An activation applied to each number on its own (``n_in == n_out``).

    ``kind`` keys :data:`ELEMENTWISE`, which holds its forward and backward rules as C
    templates; ``slope`` is the negative slope of a leaky ReLU.
    """

    kind: str = ""
    slope: float = 0.0

    def _c(self, t: CFloat, template: str, x: str, g: str) -> str:
        """Fill a rule's template with element ``j`` of the arrays, and constants of type t."""
        return template.format(x=f"{x}[j]", y=f"{self.output}[j]", g=f"{g}[j]",
                               s=t.literal(self.slope), zero=t.literal(0), one=t.literal(1),
                               half=t.literal(0.5), tanh=t.fn("tanh"))

    def forward(self, t: CFloat, x: str) -> list[str]:
        rule = ELEMENTWISE[self.kind]
        size, y = self.n_out, self.output
        return [
            f"/* {self.label}",
            f" *   {y} (n, {size}) = {rule.forward_math}, elementwise"
            + (", in place */" if self.in_place else " */"),
            f"for (int j = 0; j < n * {size}; ++j)",
            f"    {y}[j] = {self._c(t, rule.forward_c, x, '')};",
        ]

    def backward(self, t: CFloat, x: str, g: str, dx: str | None) -> list[str]:
        rule = ELEMENTWISE[self.kind]
        size = self.n_out
        return [
            f"/* {self.label}, backward, in place on the gradient {g} (n, {size})",
            f" *   g = {rule.backward_math} */",
            f"for (int j = 0; j < n * {size}; ++j)",
            f"    {g}[j] = {self._c(t, rule.backward_c, x, g)};",
        ]


@dataclass(frozen=True)
class Rule:
    """An elementwise activation's forward and backward rule, as math and as C templates.

    The templates use ``{x}`` (input value), ``{y}`` (output value), ``{g}`` (gradient of
    the output), ``{s}`` (a slope) and the constants ``{zero}``, ``{one}``, ``{half}``.
    """

    forward_math: str
    forward_c: str
    backward_math: str
    backward_c: str

    @property
    def needs_input(self) -> bool:
        """Whether the backward rule reads the input ``x`` (else only ``y`` and ``g``)."""
        return "{x}" in self.backward_c


# The backward rules are the engine's VJPs (Tensor.relu, .leaky_relu, .sigmoid, .tanh in
# tensor.py), term for term, in the same order of operations.
ELEMENTWISE = {
    "ReLU": Rule("max(x, 0)", "{x} > {zero} ? {x} : {zero}",
                 "g * (y > 0)", "{y} > {zero} ? {g} : {zero}"),
    "LeakyReLU": Rule("x > 0 ? x : s * x", "{x} > {zero} ? {x} : {s} * {x}",
                      "x > 0 ? g : s * g", "{x} > {zero} ? {g} : {s} * {g}"),
    "Sigmoid": Rule("1 / (1 + exp(-x)), as 0.5 * (tanh(0.5 * x) + 1)",
                    "{half} * ({tanh}({half} * {x}) + {one})",
                    "g * y * (1 - y)", "{g} * {y} * ({one} - {y})"),
    "Tanh": Rule("tanh(x)", "{tanh}({x})", "g * (1 - y * y)", "{g} * ({one} - {y} * {y})"),
}
