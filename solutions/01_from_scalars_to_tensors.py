# %% [markdown]
# # Lesson 1 · From scalars to tensors
#
# You have built reverse-mode autodiff on scalars: a `Var` that remembers its parents and
# hands gradients back to them. Here you turn it into a `Tensor`, the same idea with a NumPy
# array at every node: one operation does the work of thousands of `Var`s. You write the
# vector-Jacobian product (VJP) of an operation as a formula, and a `Tensor` that orders its
# graph without recursion and adds up the gradients of a tensor used twice.
#
# **How this notebook works.** Run the cells in order and fill in the *exercise* cells
# (replace `raise NotImplementedError`). The *check* after each prints ✓, or ✗ with the
# failing case and the usual cause. Hints are folded, in two levels. A demo whose exercise
# is not passing yet uses the reference and says so.
#
# **Time:** about 30 minutes if NumPy is familiar (5 exercises, 1,200 words to read); 40 if
# you need the second hints.

# %%
import time

import matplotlib.pyplot as plt
import numpy as np

from minigrad import graph
from minigrad.course import checks, figures
from minigrad.course.demos import reference, yours_or_reference
from minigrad.course.scalar import Var

# %% [markdown]
# ## 1. A recap: the scalar `Var`
#
# `minigrad.course.scalar.Var` holds one number; an operation remembers its parents and the
# *local derivative* for each; `backward()` applies `parent.grad += local * child.grad`.

# %% tags=["nbval-check-output"]
a, b = Var(2.0), Var(-3.0)
c = a * b + a.tanh()           # c = ab + tanh(a)
c.backward()
print(f"c = {c.data:.4f}")
print(f"dc/da = b + 1 - tanh(a)**2 = {a.grad:.4f}")
print(f"dc/db = a                  = {b.grad:.4f}")

# %% [markdown]
# ## 2. Why a graph of scalars is slow
#
# As `Var`s, every number is a Python object and every multiply-add a node. A dot product of
# 20,000 numbers, timed both ways:

# %% tags=["demo"]
rng = np.random.default_rng(0)
n = 20_000
xs, ws = rng.normal(size=n), rng.normal(size=n)

start = time.perf_counter()
x_vars, w_vars = [Var(v) for v in xs], [Var(v) for v in ws]
total = Var(0.0)
for xv, wv in zip(x_vars, w_vars):
    total = total + xv * wv
total.backward()
scalar_seconds = time.perf_counter() - start

array_seconds = float("inf")
for _ in range(5):                 # the best of 5 runs of 20, to see past noise
    start = time.perf_counter()
    for _ in range(20):
        value = xs @ ws            # the forward pass
        grad_x, grad_w = ws, xs    # d(x . w)/dx = w and d(x . w)/dw = x
    array_seconds = min(array_seconds, (time.perf_counter() - start) / 20)

print(f"graph of {2 * n:,} scalar products and sums: {scalar_seconds * 1e3:8.1f} ms")
print(f"one array operation and its gradient:    {array_seconds * 1e3:8.3f} ms")
print(f"the array version is about {scalar_seconds / array_seconds:,.0f} times faster")
print("same value and gradient:", np.isclose(total.data, value),
      np.allclose([v.grad for v in x_vars], grad_x))

# %% [markdown]
# The same answer; the array version runs in NumPy's compiled loops, with *one backward
# formula for the whole array*: a tensor engine.

# %% [markdown]
# ## 3. From local derivatives to vector-Jacobian products
#
# For `y = tanh(x)` on `n` numbers, the local derivative is the `n × n` Jacobian
# `J[i, j] = dy[i]/dx[j]`, diagonal with `1 - y[i]**2`. The backward pass needs only `g @ J`
# (`g`: the gradient with respect to `y`): a **vector-Jacobian product**, here just
# `g * (1 - y**2)`, with no matrix built:

# %% tags=["nbval-check-output"]
x = np.array([-1.0, 0.5, 2.0])
y = np.tanh(x)
J = np.diag(1 - y**2)                  # the full Jacobian: n x n, mostly zeros
g = np.array([1.0, -2.0, 0.5])         # some gradient arriving from above
print("J =\n", J.round(4))
print("g @ J          =", (g @ J).round(4))
print("g * (1 - y**2) =", (g * (1 - y**2)).round(4))

# %% [markdown]
# So each operation stores a **VJP closure**: given the output gradient `g`, it returns one
# gradient per parent, shaped like that parent; for `y = a * b`, `(g * b, g * a)`.

# %% [markdown]
# ## 4. The `Tensor` class
#
# A `Tensor` holds four things:
#
# | attribute | what it is |
# |---|---|
# | `data` | a NumPy array of float64 |
# | `grad` | the gradient, an array shaped like `data`; `None` until `backward()` fills it |
# | `parents` | a tuple of the tensors this one was computed from (empty for an input) |
# | `vjp` | the closure: `vjp(g)` returns a tuple with one gradient per parent (`None` for an input) |
#
# Section 1's `c = a * b + tanh(a)`, drawn by `graph.draw` with the course's finished
# `Tensor`:

# %% tags=["demo"]
RefTensor = reference(1, "Tensor")      # lesson 1's Tensor, finished: for the pictures
a, b = RefTensor([2.0, 1.0]), RefTensor([-3.0, 0.5])
c = a * b + a.tanh()
graph.draw(c, names={a: "a", b: "b", c: "c"})
plt.show()

# %% [markdown]
# ### Exercise 1.1 · the constructor
#
# Write `__init__`. Convert `data` to a float64 array, so that `Tensor([1, 2])` and
# `Tensor(3)` work and integer data can carry a gradient. The rest of the class is given: its
# `backward()` and operators call functions you write further down, by name when they run, so
# this cell can be run again at any time without losing them.
#
# <details><summary>Hint 1 · the idea</summary>
#
# Store the four attributes of the table. Only `data` needs converting; what does a new
# tensor's gradient start as?
#
# </details>
# <details><summary>Hint 2 · the details</summary>
#
# `np.asarray(data, dtype=np.float64)` converts lists, numbers and integer arrays; `grad`
# starts as `None`; store `tuple(parents)` and `vjp` as given.
#
# </details>

# %% tags=["exercise:1.1"]
class Tensor:
    """An array that remembers how it was computed, for reverse-mode autodiff."""

    def __init__(self, data, parents=(), vjp=None):
        ### BEGIN SOLUTION
        self.data = np.asarray(data, dtype=np.float64)
        self.grad = None
        self.parents = tuple(parents)
        self.vjp = vjp
        ### END SOLUTION

    @property
    def shape(self):
        return self.data.shape

    def __repr__(self):
        return f"Tensor({self.data})"

    # Each finds the function of that name when it is called (exercises 1.3 to 1.5, below).
    def backward(self):
        return backward(self)

    def __add__(self, other):
        return add(self, other)

    def __sub__(self, other):
        return sub(self, other)

    def __mul__(self, other):
        return mul(self, other)

    def __truediv__(self, other):
        return div(self, other)

    def __pow__(self, p):
        return power(self, p)

    def exp(self):
        return exp(self)

    def log(self):
        return log(self)

    def tanh(self):
        return tanh(self)

    def relu(self):
        return relu(self)

# %% tags=["check:1.1"]
checks.lesson1.tensor_class(Tensor)

# %% [markdown]
# ### Why the closure takes the output gradient as an argument
#
# A closure could reach the gradient through its output, `lambda: out.grad * ...`. Then the
# output holds its closure and the closure holds the output: a **reference cycle**, which
# waits for the garbage collector, with every array the graph saved. Our closures take `g` as
# an argument and never refer to their output (they may refer to the inputs, which the output
# holds anyway), so the graph is freed the moment its last tensor goes. On a node of 8 MB:

# %% tags=["nbval-check-output"]
import gc
import weakref


class Node:                        # just enough of a tensor to show the difference
    def __init__(self, data):
        self.data, self.vjp = data, None


def make_node(captures_output):
    out = Node(np.ones(1_000_000))
    if captures_output:
        out.vjp = lambda g: (g * out.data,)   # refers to out: a cycle
    else:
        y = out.data
        out.vjp = lambda g: (g * y,)          # refers to an array only
    return weakref.ref(out)                   # a reference that does not keep it alive


gc.disable()                                  # as between two automatic collections
print("closure takes g:       freed at once?", make_node(False)() is None)
leaked = make_node(True)
print("closure captures out:  freed at once?", leaked() is None)
gc.collect()
print("... after gc.collect():               ", leaked() is None)
gc.enable()

# %% [markdown]
# ## 5. Ordering the graph without recursion
#
# `backward()` must call each closure once, after every use of its node has passed its share
# back: it visits the nodes in reverse **topological order** (every tensor after all its
# parents). Python's recursion stops at about 1,000 nested calls, so we use our own stack.
#
# The hard case is a **shortcut**: in `z = a * tanh(a)`, `a` is a parent of `z` directly and
# through `tanh(a)`. The numbers show the order `backward()` visits: `z`, `tanh(a)`, then `a`.

# %% tags=["demo"]
a = RefTensor([0.5, -1.0])
z = a * a.tanh()
graph.draw(z, order=True, names={a: "a", z: "z"}, title="z = a * tanh(a): the order of backward")
plt.show()

# %% [markdown]
# One way: a stack of `(node, parents_done)` pairs, step by step on this graph:

# %% tags=["demo"]
figures.topological_walk(z, names={a: "a", z: "z"})
plt.show()

# %% [markdown]
# ### Exercise 1.2 · `topological_order(root)`
#
# Return a list of every tensor `root` depends on (`root` included), each exactly once, each
# after all of its parents, without recursion.
#
# <details><summary>Hint 1 · the idea</summary>
#
# A depth-first walk with your own stack: push a node back *below* its parents, flagged
# "parents done", so it is popped again after them. A set of `id`s remembers expanded nodes.
#
# </details>
# <details><summary>Hint 2 · the steps</summary>
#
# Start with `[(root, False)]`. Pop `(node, parents_done)`: if `parents_done`, append the
# node; else, unless visited, mark it visited, push `(node, True)`, then `(parent, False)`
# for each parent not visited. Mark a node when you *pop* it, not when you push it.
#
# </details>

# %% tags=["exercise:1.2"]
def topological_order(root):
    """Every tensor `root` depends on, each once, each after all of its parents."""
    ### BEGIN SOLUTION
    order = []
    visited = set()
    stack = [(root, False)]
    while stack:
        node, parents_done = stack.pop()
        if parents_done:               # all its parents are in the list: it can follow
            order.append(node)
            continue
        if id(node) in visited:        # reached again along another path
            continue
        visited.add(id(node))
        stack.append((node, True))
        for parent in node.parents:
            if id(parent) not in visited:
                stack.append((parent, False))
    return order
    ### END SOLUTION

# %% tags=["check:1.2"]
checks.lesson1.topological_order(topological_order)

# %% [markdown]
# ## 6. The backward pass
#
# `backward()` is the chain rule, once per node: seed the output's gradient with
# `np.ones_like(data)`; go through `reversed(topological_order(self))`; for a node with a
# closure, call `node.vjp(node.grad)` and hand each returned gradient to its parent.
#
# A tensor used twice (as `a` above) gets a gradient from each use; its gradient is their
# **sum**. Call `backward()` once per graph: the inner tensors keep the gradients of the
# first call, so a second call would add wrong multiples onto them. (PyTorch frees the graph
# after `backward()`: a second call through it is an error unless you pass
# `retain_graph=True`.)
#
# ### Exercise 1.3 · `backward(self)`
#
# <details><summary>Hint 1 · the idea</summary>
#
# The three steps above, in order. Where does the first gradient come from, before any
# closure runs? What must happen when a second gradient reaches a parent?
#
# </details>
# <details><summary>Hint 2 · the details</summary>
#
# `self.grad = np.ones_like(self.data)`. For each parent and its gradient `pg`
# (`zip(node.parents, grads)`): `parent.grad = pg` if it is `None`, else
# `parent.grad = parent.grad + pg` (not `+=`: two tensors may share one gradient array).
#
# </details>

# %% tags=["exercise:1.3"]
def backward(self):
    """Compute the gradient of this tensor with respect to every tensor it depends on."""
    ### BEGIN SOLUTION
    self.grad = np.ones_like(self.data)
    for node in reversed(topological_order(self)):
        if node.vjp is None:                  # an input: nothing to pass on
            continue
        grads = node.vjp(node.grad)
        for parent, pg in zip(node.parents, grads):
            if parent.grad is None:
                parent.grad = pg
            else:
                parent.grad = parent.grad + pg
    ### END SOLUTION

# %% tags=["check:1.3"]
checks.lesson1.backward(backward)

# %% [markdown]
# After `backward()` on `z = a * tanh(a)`, `a`'s gradient is the sum of what it received
# along both paths, `tanh(a) + a * (1 - tanh(a)**2)`.

# %% tags=["demo"]
z.backward()
graph.draw(z, order=True, grads=True, names={a: "a", z: "z"})
plt.show()

# %% [markdown]
# ## 7. Operations and their VJPs, as tables
#
# An operation computes its result on arrays and returns a `Tensor` with the inputs as
# parents and a closure. `power(a, p)`, done for you:

# %%
def power(a, p):
    """a ** p: d(x**p)/dx = p * x**(p - 1), so the parent gets g times that."""
    out = Tensor(a.data**p, (a,), lambda g: (g * p * a.data ** (p - 1),))
    out.op = "power"                  # a label for graph.draw
    return out

# %% [markdown]
# The closure returns a tuple, one entry per parent (note the comma). Only the formula changes
# between operations, so the ones below are built from a table you fill in. Both inputs have
# the same shape here.
#
# ### Exercise 1.4 · the binary operations
#
# | operation | forward | gradient for `a` | gradient for `b` |
# |---|---|---|---|
# | `add` | $a + b$ | $g$ | $g$ |
# | `sub` | $a - b$ | $g$ | $-g$ |
# | `mul` | $a b$ | $g\, \partial(ab)/\partial a$ | $g\, \partial(ab)/\partial b$ |
# | `div` | $a / b$ | $g\, \partial(a/b)/\partial a$ | $g\, \partial(a/b)/\partial b$ |
#
# Fill in `binary_vjps()`: for each operation, a function of `g` and the input *arrays* `a`
# and `b` returning the pair of gradients.
#
# <details><summary>Hint 1 · the idea</summary>
#
# Elementwise, an input's gradient is `g` times the derivative of the output with respect to
# that input, the other input held fixed.
#
# </details>
# <details><summary>Hint 2 · the derivatives</summary>
#
# $\partial(ab)/\partial a = b$, $\partial(ab)/\partial b = a$;
# $\partial(a/b)/\partial a = 1/b$, $\partial(a/b)/\partial b = -a/b^2$.
#
# </details>

# %% tags=["exercise:1.4"]
def binary_vjps():
    """The backward rule of each binary operation: (g, a, b) -> (gradient for a, for b)."""
    ### BEGIN SOLUTION
    return {
        "add": lambda g, a, b: (g, g),
        "sub": lambda g, a, b: (g, -g),
        "mul": lambda g, a, b: (g * b, g * a),
        "div": lambda g, a, b: (g / b, -g * a / b**2),
    }
    ### END SOLUTION


def binary(name, forward):
    """The operation `name`: `forward` on the arrays, backward by the rule in the table."""
    def operation(a, b):
        vjp = binary_vjps()[name]
        out = Tensor(forward(a.data, b.data), (a, b), lambda g: vjp(g, a.data, b.data))
        out.op = name                 # a label for graph.draw
        return out
    return operation


add, sub = binary("add", np.add), binary("sub", np.subtract)
mul, div = binary("mul", np.multiply), binary("div", np.divide)

# %% tags=["check:1.4"]
checks.lesson1.binary_ops(add, sub, mul, div)

# %% [markdown]
# ### Exercise 1.5 · the unary operations
#
# The same with one input. The rule gets the input `x` and the output `y` (computed in the
# forward pass), for derivatives easiest to write with `y`.
#
# | operation | forward | derivative |
# |---|---|---|
# | `exp` | $e^x$ | $e^x$ |
# | `log` | $\log x$ | $1/x$ |
# | `tanh` | $\tanh x$ | $1 - \tanh^2 x$ |
# | `relu` | $\max(x, 0)$ | 1 where $x > 0$, else 0 (at exactly 0 too, as in PyTorch) |
#
# <details><summary>Hint 1 · the idea</summary>
#
# The gradient is `g` times the derivative, elementwise. Which derivatives can use `y`?
#
# </details>
# <details><summary>Hint 2 · the formulas</summary>
#
# `exp`: `g * y`; `log`: `g / x`; `tanh`: `g * (1 - y**2)`; `relu`: `g` where `x > 0`, else 0
# (`np.where`).
#
# </details>

# %% tags=["exercise:1.5"]
def unary_vjps():
    """The backward rule of each unary operation: (g, x, y) -> the gradient for x."""
    ### BEGIN SOLUTION
    return {
        "exp": lambda g, x, y: g * y,
        "log": lambda g, x, y: g / x,
        "tanh": lambda g, x, y: g * (1 - y**2),
        "relu": lambda g, x, y: np.where(x > 0, g, 0.0),
    }
    ### END SOLUTION


def unary(name, forward):
    """The operation `name`: y = forward(x), backward by the rule in the table."""
    def operation(a):
        vjp = unary_vjps()[name]
        y = forward(a.data)
        out = Tensor(y, (a,), lambda g: (vjp(g, a.data, y),))
        out.op = name
        return out
    return operation


exp, log, tanh = unary("exp", np.exp), unary("log", np.log), unary("tanh", np.tanh)
relu = unary("relu", lambda x: np.maximum(x, 0.0))

# %% tags=["check:1.5"]
checks.lesson1.unary_ops(exp, log, tanh, relu)

# %% [markdown]
# ## 8. Your engine at work
#
# Python syntax now builds the graph: `a * b` calls `Tensor.__mul__(a, b)`, which calls your
# `mul`. A small neuron on four inputs, `w` used twice; every gradient is compared
# with the scalar `Var`.

# %% tags=["nbval-check-output"]
demo = yours_or_reference("1.1", "1.2", "1.3", "1.4", "1.5", Tensor=Tensor)
x = demo.Tensor([-1.5, -0.2, 0.3, 2.0])
w = demo.Tensor([0.8, -1.1, 0.4, 0.9])
b = demo.Tensor([0.1, 0.1, 0.1, 0.1])
one = demo.Tensor([1.0, 1.0, 1.0, 1.0])
y = (w * x + b).tanh() ** 2 / (one + x.exp()) + w.relu()
y.backward()
print("y      =", y.data.round(5))
print("dy/dx  =", x.grad.round(5))
print("dy/dw  =", w.grad.round(5))

for i in range(4):                     # the same, one scalar at a time
    xv, wv, bv = Var(x.data[i]), Var(w.data[i]), Var(b.data[i])
    yv = (wv * xv + bv).tanh() ** 2 / (1 + xv.exp()) + wv.relu()
    yv.backward()
    assert np.isclose(yv.data, y.data[i]) and np.isclose(xv.grad, x.grad[i])
    assert np.isclose(wv.grad, w.grad[i]) and np.isclose(bv.grad, b.grad[i])
print("every value and gradient matches the scalar engine")

# %% [markdown]
# ## Summary
#
# - An operation stores a **VJP closure**, a formula in `g` and the inputs; it never refers
#   to its output, so the graph has no reference cycles.
# - `backward()` seeds the output with ones, visits the graph in reverse topological order
#   (an explicit stack), and *adds* the gradients from a tensor's uses.
#
# **Next:** lesson 2: shapes that differ, on `minigrad`'s engine.
