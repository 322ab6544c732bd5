"""The losses the C generator knows: each computes the loss and its gradient in one pass.

Both are the C twins of :mod:`minigrad.functional`'s losses, with the same formulas:

``cross_entropy`` (targets: ``const int *y``, one class index per row)
    Fused and stable, as ``functional.cross_entropy``: each row of logits ``z`` is shifted by
    its largest value, so no ``exp`` overflows. ``loss = -mean(z[y] - max - log(sum(exp(z -
    max))))`` and the gradient of the logits is ``(softmax(z) - onehot(y)) / n``.
``mse`` (targets: ``const T *target``, shaped like the output)
    ``loss = mean((z - t)^2)`` over all ``n * C`` numbers; the gradient is what the engine's
    graph of ``(diff * diff).mean()`` gives: ``diff / count + diff / count``.
"""
from __future__ import annotations

from dataclasses import dataclass

from .cfloat import CFloat

__all__ = ["CLoss", "LOSSES"]


@dataclass
class CLoss:
    """A loss on the network's output, of ``n_out`` numbers per row.

    Attributes
    ----------
    kind : str
        ``"cross_entropy"`` or ``"mse"``.
    n_out : int
        Outputs per row (the classes, for cross-entropy).
    """

    kind: str
    n_out: int

    def target_param(self, t: CFloat) -> str:
        """The C parameter that passes the targets of a batch."""
        return "const int *y" if self.kind == "cross_entropy" else f"const {t.name} *target"

    @property
    def target_arg(self) -> str:
        return "y" if self.kind == "cross_entropy" else "target"

    def body(self, t: CFloat, z: str, g: str) -> list[str]:
        """C statements that return the loss of the output ``z`` and leave its gradient in g."""
        if self.kind == "cross_entropy":
            return self._cross_entropy(t, z, g)
        return self._mse(t, z, g)

    def _cross_entropy(self, t: CFloat, z: str, g: str) -> list[str]:
        c, T = self.n_out, t.name
        zero, one = t.literal(0), t.literal(1)
        return [
            f"/* softmax cross-entropy of the logits {z} (n, {c}) against the labels y (n,),",
            " * averaged over the rows, fused with its gradient; each row is shifted by its",
            " * largest logit first, so that no exp() overflows:",
            " *   loss = -mean over rows of (z[y] - max - log(sum(exp(z - max))))",
            f" *   {g} (n, {c}) = (softmax(z) - onehot(y)) / n */",
            f"const {T} inv_n = {one} / ({T})n;",
            f"{T} total = {zero};",
            "for (int r = 0; r < n; ++r) {",
            f"    const {T} *z = {z} + r * {c};",
            f"    {T} *p = {g} + r * {c};",
            f"    {T} zmax = z[0];",
            f"    {T} sum = {zero};",
            f"    for (int k = 1; k < {c}; ++k)",
            "        if (z[k] > zmax)",
            "            zmax = z[k];",
            f"    for (int k = 0; k < {c}; ++k) {{",
            f"        p[k] = {t.fn('exp')}(z[k] - zmax);  /* each at most 1 */",
            "        sum += p[k];",
            "    }",
            f"    total += (z[y[r]] - zmax) - {t.fn('log')}(sum);  /* log-softmax at the label */",
            f"    for (int k = 0; k < {c}; ++k)",
            f"        p[k] = (p[k] / sum - (k == y[r] ? {one} : {zero})) * inv_n;",
            "}",
            f"return -total / ({T})n;",
        ]

    def _mse(self, t: CFloat, z: str, g: str) -> list[str]:
        c, T = self.n_out, t.name
        zero, one = t.literal(0), t.literal(1)
        return [
            f"/* mean squared error of the outputs {z} (n, {c}) against target (n, {c}),",
            f" * averaged over all n * {c} numbers, with its gradient:",
            " *   loss = mean((z - target)^2)",
            f" *   {g} (n, {c}) = 2 (z - target) / (n * {c}) */",
            f"const {T} count = ({T})(n * {c});",
            f"const {T} inv_count = {one} / count;",
            f"{T} total = {zero};",
            f"for (int j = 0; j < n * {c}; ++j) {{",
            f"    const {T} diff = {z}[j] - target[j];",
            "    total += diff * diff;",
            f"    {g}[j] = inv_count * diff + inv_count * diff;  /* d(diff * diff) / d(diff) */",
            "}",
            "return total / count;",
        ]


LOSSES = ("cross_entropy", "mse")
