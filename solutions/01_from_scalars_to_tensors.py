# %% [markdown]
# # Lesson 1 · From scalars to tensors
#
# You have built reverse-mode autodiff on scalars: a `Var` that remembers its parents and
# hands gradients back to them. In this lesson you turn it into a `Tensor`: the same idea, but
# every value is a whole NumPy array, so one operation does the work of thousands of `Var`s.
#
# **By the end of this lesson you will be able to**
#
# - explain why a graph of scalars is slow and what an array engine does instead;
# - write the vector-Jacobian product (VJP) of an elementwise operation as a formula in the
#   output gradient;
# - build a `Tensor` class that records a closure per operation, orders its graph without
#   recursion, and adds up the gradients of a tensor used many times;
# - check every backward rule against finite differences and the scalar engine.
#
# **How this notebook works.** Read, run each cell in order, and fill in the *exercise* cells
# where you see `# YOUR CODE HERE` (delete the `raise NotImplementedError`). The cell after
# each exercise is a *check*: it prints a ✓ line when your code is right, and otherwise says
# which case failed, what it expected, what it got, and what usually causes that. Each
# exercise has a hint, folded away. Plan for about 25 minutes.

# %%
import time

import numpy as np

from minigrad.course import checks
from minigrad.course.scalar import Var

# %% [markdown]
# ## 1. A recap: the scalar `Var`
#
# `minigrad.course.scalar.Var` is the engine you know. Each `Var` holds one number in `.data`. An
# operation makes a new `Var` that remembers its parents and the *local derivative* with
# respect to each. `backward()` then applies the chain rule from the output back:
# `parent.grad += local * child.grad`.

# %%
# NBVAL_CHECK_OUTPUT
a, b = Var(2.0), Var(-3.0)
c = a * b + a.tanh()           # c = ab + tanh(a)
c.backward()
print(f"c = {c.data:.4f}")
print(f"dc/da = b + 1 - tanh(a)**2 = {a.grad:.4f}")
print(f"dc/db = a                  = {b.grad:.4f}")

# %% [markdown]
# ## 2. Why a graph of scalars is slow
#
# A neural network multiplies matrices with thousands of entries. As `Var`s, every entry is a
# Python object and every multiply-add is a node with its own closure and bookkeeping. Let us
# time a dot product of 20,000 numbers both ways: as a graph of `Var`s, and as one NumPy call.

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
# The answer is the same; the time is not. The scalar graph spends its time in Python, once
# per number. The array version does the arithmetic in NumPy's compiled loops, and its
# backward rule is *one formula for the whole array*. That is what a tensor engine is: the
# same graph, with arrays at the nodes.

# %% [markdown]
# ## 3. From local derivatives to vector-Jacobian products
#
# For `y = tanh(x)` with `x` an array of `n` numbers, the "local derivative" is an `n × n`
# matrix, the Jacobian `J[i, j] = dy[i]/dx[j]`. Since `y[i]` depends only on `x[i]`, it is
# diagonal, with `1 - y[i]**2` on the diagonal.
#
# The backward pass never needs `J` itself. It needs the gradient of the final loss with
# respect to `x`, given the gradient `g` with respect to `y`: the row vector `g @ J`, a
# **vector-Jacobian product**. For an elementwise operation that is just `g * (1 - y**2)`: no
# matrix is built. Let us confirm it on three numbers.

# %%
# NBVAL_CHECK_OUTPUT
x = np.array([-1.0, 0.5, 2.0])
y = np.tanh(x)
J = np.diag(1 - y**2)                  # the full Jacobian: n x n, mostly zeros
g = np.array([1.0, -2.0, 0.5])         # some gradient arriving from above
print("J =\n", J.round(4))
print("g @ J          =", (g @ J).round(4))
print("g * (1 - y**2) =", (g * (1 - y**2)).round(4))

# %% [markdown]
# So each operation of our engine will store one small function, its **VJP closure**: given
# the output gradient `g` (an array shaped like the output), it returns the gradient for each
# parent (arrays shaped like the parents). For `y = a * b` the closure returns
# `(g * b, g * a)`. Where a `Var` kept numbers (`local_grads`), a `Tensor` keeps a function.

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
# ### Exercise 1.1 · the constructor
#
# Write `__init__`. Convert `data` to a float64 array, so that `Tensor([1, 2])` and
# `Tensor(3)` work, and so that integer data can still carry a gradient.
#
# <details><summary>Hint</summary>
#
# `np.asarray(data, dtype=np.float64)` converts lists, numbers and integer arrays. A new
# tensor has no gradient yet (`None`), and `tuple(parents)` stores the parents as a tuple.
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

# %% tags=["check:1.1"]
checks.lesson1.tensor_class(Tensor)

# %% [markdown]
# ### Why the closure takes the output gradient as an argument
#
# The closure could instead reach the gradient through the output tensor, as
# `lambda: out.grad * ...`. Then the output holds its closure, and the closure holds the
# output: a **reference cycle**. Python frees most objects the moment their last reference
# goes (reference counting), but an object in a cycle always has a reference, so it waits for
# the garbage collector, which runs only now and then. Until it does, every array the graph
# saved stays in memory.
#
# Our closures take `g` as an argument and keep only arrays, never their output. References
# then point one way, from a tensor to its parents, and the graph is freed as soon as you drop
# the last tensor of it. Here is the difference on a toy node holding 8 MB:

# %%
# NBVAL_CHECK_OUTPUT
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
# (Lesson 4 measures what this costs in a real training loop.)
#
# ## 5. Ordering the graph without recursion
#
# `backward()` must call each closure once, and only after the node's gradient is complete,
# that is, after every use of the node has passed its share back. That holds if we visit the
# nodes in reverse **topological order**: a list in which every tensor comes after all its
# parents.
#
# A recursive depth-first search builds that list in four lines, but Python stops recursing
# after about 1,000 nested calls, and a long chain of operations (an unrolled loop, say) is deeper
# than that. So we use a loop and an explicit stack.
#
# ### Exercise 1.2 · `topological_order(root)`
#
# Return a list of every tensor `root` depends on (`root` included), each exactly once, each
# after all of its parents. Do not recurse. A tensor may be reached along many paths: add it
# only once.
#
# <details><summary>Hint</summary>
#
# Keep a stack of pairs `(node, parents_done)`, starting with `[(root, False)]`, and a set of
# `id`s already visited. Pop a pair. If `parents_done` is true, every parent is already in the
# list: append the node. Otherwise, if the node was visited already, skip it; else mark it
# visited, push `(node, True)` back, then push `(parent, False)` for each parent not visited
# yet. The node is popped again after all its parents. Mark a node when you *pop* it, not when
# you push it: in `z = a * tanh(a)`, `a` is pushed by `z` first, but must still come before
# `tanh(a)`.
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
# With the order in hand, `backward()` is the chain rule, run once per node:
#
# 1. the output's gradient with respect to itself is one everywhere: `np.ones_like(data)`;
# 2. go through `reversed(topological_order(self))`, the output first;
# 3. for a node with a closure, call `node.vjp(node.grad)` and hand each returned gradient to
#    the matching parent.
#
# A tensor used twice (as in `x * x`, or `x` in both `a = x * w` and `b = x + 1`) receives a
# gradient from each use, and its gradient is their **sum**: add to what is there instead of
# overwriting it. Gradients also add up over several `backward()` calls, as in PyTorch;
# lesson 3 shows why optimizers zero them.
#
# ### Exercise 1.3 · `backward(self)`
#
# <details><summary>Hint</summary>
#
# For each parent and its gradient `pg` (use `zip(node.parents, grads)`): if `parent.grad` is
# `None`, set it to `pg`; otherwise `parent.grad = parent.grad + pg`. Avoid `+=` on arrays
# here: two tensors may share one gradient array (`add` returns `(g, g)`), and `+=` would
# change both.
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


Tensor.backward = backward

# %% tags=["check:1.3"]
checks.lesson1.backward(backward)

# %% [markdown]
# ## 7. Operations and their VJPs
#
# Every operation has the same shape: compute the result on arrays, then return a `Tensor` of
# it with the inputs as parents and a closure that maps the output gradient `g` to one
# gradient per parent. Here is negation, done for you:

# %%
def neg(a):
    """-a: the gradient of -x is -1, so the parent gets -g."""
    return Tensor(-a.data, (a,), lambda g: (-g,))

# %% [markdown]
# Note the comma in `(-g,)`: the closure always returns a tuple, one entry per parent. Your
# operations follow the same pattern. In this lesson both inputs of a binary operation have
# the same shape (lesson 2 deals with shapes that differ), so each gradient is simply an array
# of that shape. Each check compares your forward value and both gradients, element by
# element, with the scalar `Var`, and with finite differences of your own forward pass.
#
# ### Exercise 1.4 · `add(a, b)`
#
# <details><summary>Hint</summary>
#
# `d(a + b)/da = 1` and `d(a + b)/db = 1`: each parent gets `g` as it is.
#
# </details>

# %% tags=["exercise:1.4"]
def add(a, b):
    ### BEGIN SOLUTION
    return Tensor(a.data + b.data, (a, b), lambda g: (g, g))
    ### END SOLUTION

# %% tags=["check:1.4"]
checks.lesson1.add(add)

# %% [markdown]
# ### Exercise 1.5 · `sub(a, b)`
#
# <details><summary>Hint</summary>
#
# `a - b` moves up with `a` and down with `b`: the gradients are `g` and `-g`.
#
# </details>

# %% tags=["exercise:1.5"]
def sub(a, b):
    ### BEGIN SOLUTION
    return Tensor(a.data - b.data, (a, b), lambda g: (g, -g))
    ### END SOLUTION

# %% tags=["check:1.5"]
checks.lesson1.sub(sub)

# %% [markdown]
# ### Exercise 1.6 · `mul(a, b)`
#
# <details><summary>Hint</summary>
#
# Elementwise, `d(a * b)/da = b` and `d(a * b)/db = a`: each input's gradient is `g` times
# the *other* input's data.
#
# </details>

# %% tags=["exercise:1.6"]
def mul(a, b):
    ### BEGIN SOLUTION
    return Tensor(a.data * b.data, (a, b), lambda g: (g * b.data, g * a.data))
    ### END SOLUTION

# %% tags=["check:1.6"]
checks.lesson1.mul(mul)

# %% [markdown]
# ### Exercise 1.7 · `div(a, b)`
#
# <details><summary>Hint</summary>
#
# `d(a / b)/da = 1 / b` and `d(a / b)/db = -a / b**2`.
#
# </details>

# %% tags=["exercise:1.7"]
def div(a, b):
    ### BEGIN SOLUTION
    return Tensor(a.data / b.data, (a, b),
                  lambda g: (g / b.data, -g * a.data / b.data**2))
    ### END SOLUTION

# %% tags=["check:1.7"]
checks.lesson1.div(div)

# %% [markdown]
# ### Exercise 1.8 · `power(a, p)`
#
# Here `p` is a plain Python number (as in `x ** 2`), not a tensor: it is not a parent and
# gets no gradient, so the closure returns a tuple with one entry.
#
# <details><summary>Hint</summary>
#
# `d(x**p)/dx = p * x**(p - 1)`.
#
# </details>

# %% tags=["exercise:1.8"]
def power(a, p):
    ### BEGIN SOLUTION
    return Tensor(a.data**p, (a,), lambda g: (g * p * a.data ** (p - 1),))
    ### END SOLUTION

# %% tags=["check:1.8"]
checks.lesson1.power(power)

# %% [markdown]
# ### Exercises 1.9 to 1.12 · `exp`, `log`, `tanh`, `relu`
#
# One input each. When the derivative is easiest to write with the result (`exp` and `tanh`),
# compute the result array once, `y = ...`, and let the closure use `y`: an array, not the
# output tensor.
#
# <details><summary>Hint</summary>
#
# - `exp`: the derivative of `exp(x)` is `exp(x)`, so the gradient is `g * y`;
# - `log`: `d log(x)/dx = 1 / x`;
# - `tanh`: `d tanh(x)/dx = 1 - tanh(x)**2`, so the gradient is `g * (1 - y**2)`;
# - `relu`: `max(x, 0)` passes `g` where `x > 0` and 0 elsewhere: `np.where(a.data > 0, g, 0.0)`.
#
# </details>

# %% tags=["exercise:1.9"]
def exp(a):
    ### BEGIN SOLUTION
    y = np.exp(a.data)
    return Tensor(y, (a,), lambda g: (g * y,))
    ### END SOLUTION

# %% tags=["check:1.9"]
checks.lesson1.exp(exp)

# %% tags=["exercise:1.10"]
def log(a):
    ### BEGIN SOLUTION
    return Tensor(np.log(a.data), (a,), lambda g: (g / a.data,))
    ### END SOLUTION

# %% tags=["check:1.10"]
checks.lesson1.log(log)

# %% tags=["exercise:1.11"]
def tanh(a):
    ### BEGIN SOLUTION
    y = np.tanh(a.data)
    return Tensor(y, (a,), lambda g: (g * (1 - y**2),))
    ### END SOLUTION

# %% tags=["check:1.11"]
checks.lesson1.tanh(tanh)

# %% tags=["exercise:1.12"]
def relu(a):
    ### BEGIN SOLUTION
    return Tensor(np.maximum(a.data, 0.0), (a,), lambda g: (np.where(a.data > 0, g, 0.0),))
    ### END SOLUTION

# %% tags=["check:1.12"]
checks.lesson1.relu(relu)

# %% [markdown]
# ## 8. Your engine at work
#
# Attach the operations to the class so that ordinary Python syntax builds the graph:
# `a * b` calls `Tensor.__mul__(a, b)`, which is your `mul`.

# %%
Tensor.__add__, Tensor.__sub__, Tensor.__mul__ = add, sub, mul
Tensor.__truediv__, Tensor.__pow__, Tensor.__neg__ = div, power, neg
Tensor.exp, Tensor.log, Tensor.tanh, Tensor.relu = exp, log, tanh, relu

# %% [markdown]
# A small neuron on four inputs at once: `y = tanh(w * x + b) ** 2 / (1 + exp(x))`, where
# `w` appears twice. Compare every gradient with the scalar `Var`, run once per element.

# %%
# NBVAL_CHECK_OUTPUT
x = Tensor([-1.5, -0.2, 0.3, 2.0])
w = Tensor([0.8, -1.1, 0.4, 0.9])
b = Tensor([0.1, 0.1, 0.1, 0.1])
one = Tensor([1.0, 1.0, 1.0, 1.0])
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
# - A tensor engine is the scalar engine with arrays at the nodes: the graph is the same, but
#   one node now does the work of thousands, in NumPy's compiled loops.
# - An operation stores a **VJP closure**, a formula in the output gradient `g` and saved
#   arrays. For an elementwise operation it is `g` times the elementwise derivative; no
#   Jacobian is ever built.
# - The closure takes `g` as an argument and never refers to its output tensor, so the graph
#   has no reference cycles and is freed as soon as it is no longer used.
# - `backward()` seeds the output with ones, visits the graph in reverse topological order
#   (built with an explicit stack, so depth is no problem), calls each closure once, and
#   *adds* the gradients that reach a tensor from its different uses.
#
# **Next:** in lesson 2 the shapes of the two inputs may differ. You will write the backward
# rules of matrix products, sums, reshapes and broadcasting, and a cross-entropy that cannot
# overflow, on top of `minigrad`'s engine, which works the way yours does.
