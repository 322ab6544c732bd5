"""Walking, measuring and drawing the graph that a forward pass recorded.

Every operation keeps the arrays its backward rule needs (``saved=`` in :func:`minigrad.op`).
:func:`saved_bytes` adds them up, so a student can watch the memory a graph holds and see it
released by ``backward()`` and by ``del``. :func:`draw` pictures the graph with matplotlib.

:func:`topological_order` is the one topological order of the repository: it is defined in
``minigrad._utils`` (which imports nothing) so that the stand-alone scalar engine can use it
too, and this module is its public name. ``Tensor.backward()`` does not use it: it orders the
graph while it runs, by the number each tensor got when it was made (see the comment there).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from ._utils import topological_order
from .backend import to_numpy
from .tensor import Tensor

__all__ = ["count_ops", "draw", "nodes", "saved_arrays", "saved_bytes", "to_dot",
           "topological_order"]

#: What :func:`draw` guarantees: the least resolution of a figure it makes, in dots per inch,
#: the size of every label, in points, and the colour of the gradients (dark green: readable
#: on white, told apart from the black labels).
DPI, FONT_SIZE, GRAD_COLOR = 100, 9, "#1b5e20"


def nodes(root: Tensor) -> list[Tensor]:
    """Every tensor of the graph behind ``root`` that needs a gradient, inputs first.

    The order is :func:`topological_order` over the parents that need a gradient (constants
    are left out: no gradient flows into them).
    """
    return topological_order(root, lambda t: [p for p in t._parents if p.requires_grad])


def saved_arrays(root: Tensor) -> Iterator[Any]:
    """Each array saved for backward in the graph behind ``root``, once."""
    seen: set[int] = set()
    for node in nodes(root):
        for array in node._saved:
            if id(array) not in seen:
                seen.add(id(array))
                yield array


def saved_bytes(root: Tensor) -> int:
    """Bytes held by the arrays saved for backward (0 once ``backward()`` has freed them)."""
    return sum(int(a.size) * a.dtype.itemsize if hasattr(a.dtype, "itemsize") else
               int(a.size) * 8 for a in saved_arrays(root))


def count_ops(root: Tensor) -> dict[str, int]:
    """How many times each operation appears in the graph, e.g. ``{"matmul": 3, ...}``."""
    counts: dict[str, int] = {}
    for node in nodes(root):
        if node._op is not None:
            counts[node._op] = counts.get(node._op, 0) + 1
    return counts


def to_dot(root: Tensor) -> str:
    """The graph in Graphviz's dot language (render with ``dot -Tpng``)."""
    lines = ["digraph minigrad {", "  rankdir=LR;"]
    for node in nodes(root):
        label = f"{node._op or 'leaf'}\\n{node.shape}"
        shape = "box" if node._op else "ellipse"
        lines.append(f'  n{id(node)} [label="{label}", shape={shape}];')
        for parent in node._parents:
            if parent.requires_grad:
                lines.append(f"  n{id(parent)} -> n{id(node)};")
    lines.append("}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Drawing (matplotlib, imported only here: it is not a dependency of the engine)


def _parents_of(node: Any) -> tuple[Any, ...]:
    """``node._parents`` (minigrad) or ``node.parents`` (lesson 1's Tensor), else ()."""
    for name in ("_parents", "parents"):
        parents = getattr(node, name, None)
        if parents is not None:
            return tuple(parents)
    return ()


def _op_of(node: Any) -> str:
    """The operation that made ``node``: its ``_op`` or ``op`` attribute, else the name of the
    function its backward closure was written in (``mul`` for a lambda made inside ``mul``)."""
    for name in ("_op", "op"):
        label = getattr(node, name, None)
        if isinstance(label, str) and label:
            return label
    if not _parents_of(node):
        return "input"
    closure = getattr(node, "_vjp", None) or getattr(node, "vjp", None)
    # "mul.<locals>.<lambda>": the closure was written inside mul (the last enclosing function)
    parts = getattr(closure, "__qualname__", "").split(".")
    outer = parts[-3] if len(parts) >= 3 and parts[-2] == "<locals>" else ""
    return outer.removeprefix("_r_").lstrip("_") or "op"


def _shape_of(node: Any) -> tuple[int, ...]:
    shape: Any = getattr(node, "shape", None)
    if shape is None:
        shape = getattr(getattr(node, "data", None), "shape", ())
    return tuple(int(n) for n in shape)


def _short(array: Any) -> str:
    """A gradient in a few characters: a number, a short vector, or a small matrix with one
    row a line (columns aligned in a monospace font); a larger gradient by its largest value.

    >>> print(_short([[1.0, -0.25], [0.5, 2.0]]))
    [[  1, -0.25],
     [0.5,     2]]
    """
    values = to_numpy(array)  # on the host, whatever the namespace
    if values.ndim == 0:
        return f"{float(values):.3g}"
    if values.ndim == 1 and values.size <= 4:
        return "[" + ", ".join(f"{v:.3g}" for v in values) + "]"
    if values.ndim == 2 and values.size and values.shape[0] <= 4 and values.shape[1] <= 4:
        cells = [[f"{v:.3g}" for v in row] for row in values]
        widths = [max(len(row[j]) for row in cells) for j in range(values.shape[1])]
        lines = [", ".join(c.rjust(w) for c, w in zip(row, widths)) for row in cells]
        return ",\n".join(" [" + line + "]" for line in lines).replace(" [", "[[", 1) + "]"
    return f"|g| max {float(abs(values).max()):.3g} {tuple(values.shape)}"


def draw(root: Any, *, order: bool = False, grads: bool = False, names: dict[Any, str] | None = None,
         ax: Any = None, title: str | None = None) -> Any:
    """Draw the computation graph behind ``root`` with matplotlib.

    One box per tensor, with the operation that made it and its shape; an arrow from each
    parent to the tensors computed from it. ``root`` is on the right; a computed tensor sits
    one column right of its furthest parent, an input just left of the first tensor using it.

    Works for ``minigrad.Tensor`` and for any tensor class built like lesson 1's, reading
    only these attributes:

    - parents: ``_parents`` (minigrad) or ``parents`` (lesson 1), a sequence of tensors;
    - the operation's name: ``_op`` or ``op`` if there is one, else the name of the function
      in which the backward closure (``_vjp`` or ``vjp``) was written: the closure that
      ``mul`` returns reads "mul";
    - the shape: ``shape``, else ``data.shape``;
    - with ``grads=True``, the gradient: ``grad`` (skipped while it is ``None``);
    - a label: ``names`` maps tensors (by identity) to names, else a ``name`` attribute.

    Parameters
    ----------
    root : tensor
        The output whose graph is drawn.
    order : bool
        Number the boxes in the order ``backward()`` visits them (``root`` is 1).
    grads : bool
        Print each tensor's ``.grad`` under its box: a vector of at most 4 values as a list, a
        matrix of at most 4 x 4 as a small matrix (one row a line), anything larger by its
        largest magnitude and its shape.
    names : dict, optional
        ``{tensor: "x", ...}`` labels for some tensors (matched by identity).
    ax : matplotlib Axes, optional
        Where to draw; a new figure is made when left out.
    title : str, optional
        A title for the axes.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on. A figure made here has at least :data:`DPI` dots per inch; every
        label is at least :data:`FONT_SIZE` points.

    Examples
    --------
    >>> from minigrad import Tensor, graph
    >>> x = Tensor([1.0, 2.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> ax = graph.draw(y)          # doctest: +SKIP
    """
    import matplotlib.pyplot as plt  # noqa: F401 - here, not at the top: not an engine dependency

    layout = _layout(root, grads, names)
    if ax is None:
        ax = _new_axes(layout)
    for node in layout.nodes:  # parents first; each box after the arrows into it
        _draw_arrows(ax, layout, node)
        _draw_box(ax, layout, node, order)
    return _frame(ax, layout, title)


#: A box's width and height, and the height of one line of text, in the units of the axes.
_BOX_W, _BOX_H, _LINE = 2.0, 0.62, 0.17


class _Layout(NamedTuple):
    """Where :func:`draw` puts each tensor of the graph (the dicts are keyed by ``id``)."""

    nodes: list[Any]                        # every tensor, parents first (constants too)
    column: dict[int, int]                  # a tensor's column, 0 on the left
    place: dict[int, tuple[float, float]]   # the centre of its box: columns 3 apart
    labels: dict[int, str]                  # the names given to draw()
    grad_text: dict[int, str]               # the text under its box (grads=True)
    grad_lines: int                         # the most lines of text under one box
    last_column: int
    height: float                           # of the tallest column
    visit: dict[int, int]                   # when backward() visits it: the root is 1


def _layout(root: Any, grads: bool, names: dict[Any, str] | None) -> _Layout:
    """Columns, rows and places of the boxes, and the gradients' texts (see :func:`draw`)."""
    nodes_in_order = topological_order(root, _parents_of)  # constants too
    labels = {id(t): n for t, n in (names or {}).items()}
    column: dict[int, int] = {}
    for node in nodes_in_order:  # parents first: a column one right of the furthest parent
        column[id(node)] = max((column[id(p)] + 1 for p in _parents_of(node)), default=0)
    for node in nodes_in_order:  # an input sits just left of the first tensor that uses it
        if not _parents_of(node):
            users = [column[id(n)] for n in nodes_in_order
                     if any(p is node for p in _parents_of(n))]
            column[id(node)] = min(users, default=1) - 1
    rows: dict[int, list[Any]] = {}
    for node in nodes_in_order:
        rows.setdefault(column[id(node)], []).append(node)
    grad_text: dict[int, str] = {}  # id -> the text under the box
    for node in nodes_in_order:
        grad = getattr(node, "grad", None)
        if grads and grad is not None:  # a matrix's later rows under its first
            grad_text[id(node)] = "grad " + _short(grad).replace("\n", "\n     ")
    grad_lines = max((t.count("\n") + 1 for t in grad_text.values()), default=0)
    pitch = max(1.0, _BOX_H + 0.2 + grad_lines * _LINE)  # room under each box for its gradient
    place = {}  # id -> (x, y): columns 3 apart, each column centred on y = 0
    for c, members in rows.items():
        for r, node in enumerate(members):
            place[id(node)] = (c * 3.0, ((len(members) - 1) / 2 - r) * pitch)
    height = max(len(members) for members in rows.values()) * pitch
    visit = {id(n): k for k, n in enumerate(reversed(nodes_in_order), start=1)}
    return _Layout(nodes_in_order, column, place, labels, grad_text, grad_lines, max(rows),
                   height, visit)


def _new_axes(layout: _Layout) -> Any:
    """Axes of a new figure sized to the graph, at least :data:`DPI` dots per inch."""
    import matplotlib.pyplot as plt

    width = 2.6 * (layout.last_column + 1) + 0.5
    _, ax = plt.subplots(figsize=(min(width, 12), 1.1 * layout.height + 0.8),
                         dpi=max(DPI, plt.rcParams["figure.dpi"]))
    return ax


def _draw_arrows(ax: Any, layout: _Layout, node: Any) -> None:
    """An arrow from each parent of ``node`` to its box; one that skips a column bends."""
    x, y = layout.place[id(node)]
    for parent in _parents_of(node):
        px, py = layout.place[id(parent)]
        skips = layout.column[id(node)] - layout.column[id(parent)] > 1  # a shortcut: bend it
        ax.annotate("", xy=(x - _BOX_W / 2, y), xytext=(px + _BOX_W / 2, py),
                    arrowprops={"arrowstyle": "-|>", "color": "0.35", "lw": 1,
                                "shrinkA": 0, "shrinkB": 0,
                                "connectionstyle": f"arc3,rad={-0.35 if skips else 0}"})


def _draw_box(ax: Any, layout: _Layout, node: Any, order: bool) -> None:
    """The box of ``node``: its name and operation, its shape; its number in backward's
    order (``order=True``) and its gradient under it (``grads=True``)."""
    from matplotlib.patches import FancyBboxPatch

    x, y = layout.place[id(node)]
    name = layout.labels.get(id(node)) or getattr(node, "name", "") or ""
    op_name = _op_of(node)
    leaf = not _parents_of(node)
    text = name if name and leaf else f"{name}: {op_name}" if name else op_name
    text += f"\n{_shape_of(node)}"
    ax.add_patch(FancyBboxPatch((x - _BOX_W / 2, y - _BOX_H / 2), _BOX_W, _BOX_H,
                                boxstyle="round,pad=0.05",
                                facecolor="#dbe9f6" if leaf else "#fde9c9",
                                edgecolor="0.3"))
    ax.text(x, y, text, ha="center", va="center", fontsize=FONT_SIZE)
    if order:
        ax.text(x - _BOX_W / 2, y + _BOX_H / 2, str(layout.visit[id(node)]), ha="center",
                va="center", fontsize=FONT_SIZE, color="white",
                bbox={"boxstyle": "circle,pad=0.2", "facecolor": "tab:red",
                      "edgecolor": "none"})
    if id(node) in layout.grad_text:  # dark green, monospace so that a matrix's columns align
        ax.text(x, y - _BOX_H / 2 - 0.06, layout.grad_text[id(node)], ha="center", va="top",
                multialignment="left", family="monospace", fontsize=FONT_SIZE,
                color=GRAD_COLOR)


def _frame(ax: Any, layout: _Layout, title: str | None) -> Any:
    """Fit the axes' limits around the boxes, hide the axes, add the title; ``ax``."""
    xs = [p[0] for p in layout.place.values()]
    ys = [p[1] for p in layout.place.values()]
    ax.set_xlim(min(xs) - _BOX_W / 2 - 0.3, max(xs) + _BOX_W / 2 + 0.3)
    ax.set_ylim(min(ys) - _BOX_H / 2 - 0.1 - layout.grad_lines * _LINE,
                max(ys) + _BOX_H + 0.5)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=FONT_SIZE + 1)
    return ax
