# %% [markdown]
# # Lesson 2 · Matrix products, reductions and broadcasting
#
# Lesson 1's operations kept one shape from input to output. A network needs more: matrix
# products, sums over an axis, reshapes, a bias added to every row, and a loss that turns a
# batch of scores into one number. The rule of thumb for all their backward rules: **a
# gradient has the shape of the thing it is the gradient of**.
#
# You now build on `minigrad`, an engine that works like the `Tensor` you wrote in lesson 1
# (so you start from working code, whatever happened there). As before, fill in the exercise
# cells; the check after each prints ✓ or ✗. A demo whose exercise is not passing yet runs on
# the reference and says so.
#
# **Time:** about 35 minutes (5 exercises, 1,200 words to read); more if cross-entropy's
# formula is new to you.

# %%
import matplotlib.pyplot as plt
import numpy as np

import minigrad
import minigrad.functional as F
from minigrad import Tensor, op
from minigrad.course import checks, figures
from minigrad.course.demos import yours_or_reference

figures.setup()   # 100 dpi, 10-point labels

# %% [markdown]
# ## 1. minigrad's `Tensor`, and how to add an operation
#
# `minigrad.Tensor` holds `.data` and `.grad` as yours did. A tensor created with
# `requires_grad=True` is a **leaf** the graph records from; what is computed from it is
# recorded too, but `backward()` fills `.grad` on the leaves only (the results in between keep
# `.grad` at `None`, as in PyTorch). New operations are defined with `minigrad.op`:
#
# ```python
# op(value, parents, vjp, saved=(arrays...), name="...")
# ```
#
# `value` is the result, computed on arrays; `vjp(g, *saved)` receives the output gradient
# and the saved arrays and returns each parent's gradient (a tuple, or a bare array for one
# parent). The engine frees the saved arrays after `backward()`. Here is `square`:

# %% tags=["nbval-check-output"]
def square(x):
    return op(x.data**2, (x,), lambda g, x_data: 2 * x_data * g, saved=(x.data,), name="square")


x = Tensor([1.0, -2.0, 3.0], requires_grad=True)
y = square(x)
y.sum().backward()
print(y)
print("dy/dx =", x.grad, "  y.grad =", y.grad, "(not a leaf)")

# %% [markdown]
# ## 2. Matrix products: the VJPs are read off from the shapes
#
# Let `C = A @ B` with `A` of shape `(n, k)` and `B` of shape `(k, m)`, so `C` is `(n, m)`.
# The backward pass gets `dC`, the gradient with respect to `C`, also `(n, m)`, and must
# return `dA` of shape `(n, k)` and `dB` of shape `(k, m)`.
#
# When `n`, `k` and `m` differ, only one product of `dC` with `B` (or its transpose) is
# `(n, k)`: `dC @ B.T`; and only `A.T @ dC` gives `(k, m)`. Those are the two VJPs. (For
# square matrices other products fit too: the shapes are a guide; the proof is below.)
#
# <details><summary>Going further · the proof, one element</summary>
#
# In `C[i, j] = sum_l A[i, l] B[l, j]`, `A[i, l]` reaches each `C[i, j]` of row `i` with
# coefficient `B[l, j]`, so its gradient is `sum_j dC[i, j] B[l, j]`, entry `(i, l)` of
# `dC @ B.T`.
#
# </details>

# %% tags=["demo"]
figures.matmul_shapes(n=4, k=3, m=2)
plt.show()

# %% [markdown]
# ### Exercise 2.1 · `matmul(a, b)` for two matrices
#
# Compute the product on the arrays, save the two input arrays, and return both gradients.
#
# <details><summary>Hint 1 · the idea</summary>
#
# Each gradient has the shape of its input: which product of `g` `(n, m)` with `B` or `B.T`
# is `(n, k)`, and which of `A` or `A.T` with `g` is `(k, m)`? Pass `A` and `B` as `saved`.
#
# </details>
# <details><summary>Hint 2 · the formulas</summary>
#
# `dA = g @ B.T` and `dB = A.T @ g`. With `saved=(a.data, b.data)` the VJP is called as
# `vjp(g, a_data, b_data)`.
#
# </details>

# %% tags=["exercise:2.1"]
def matmul(a, b):
    """The product of matrices a (n, k) and b (k, m), as a graph node."""
    ### BEGIN SOLUTION
    return op(a.data @ b.data, (a, b), lambda g, x, w: (g @ w.T, x.T @ g),
              saved=(a.data, b.data), name="matmul")
    ### END SOLUTION

# %% tags=["check:2.1"]
checks.lesson2.matmul(matmul)

# %% [markdown]
# ## 3. Sums spread the gradient back
#
# In `s = x.sum(axis=0)`, each `x[i, j]` is in exactly one output, `s[j]`, with coefficient 1,
# so `dx[i, j] = ds[j]`: the VJP copies `g` back along the summed axes.

# %% tags=["demo"]
figures.sum_gradient([10.0, 20.0, 30.0], rows=2)
plt.show()

# %% [markdown]
# In NumPy: put the summed axes back with size 1 (`np.expand_dims`), then `np.broadcast_to`
# copies along them:

# %% tags=["nbval-check-output"]
g = np.array([10.0, 20.0, 30.0])             # the gradient of s = x.sum(axis=0), x of shape (2, 3)
g_kept = np.expand_dims(g, 0)                # (1, 3): the summed axis is back, with size 1
print(g_kept.shape)
print(np.broadcast_to(g_kept, (2, 3)))       # (2, 3): each row of x gets g

# %% [markdown]
# ### Exercise 2.2 · `sum(x, axis=None, keepdims=False)`
#
# `axis` is `None` (sum everything), an axis, or a tuple of axes, as in NumPy. (The name
# `sum` hides Python's built-in `sum` here; use `np.sum` on arrays.)
#
# <details><summary>Hint 1 · the idea</summary>
#
# As in the cell above: `g` is copied back along the summed axes, to `x`'s shape. What
# differs between `keepdims=True` and `False` in the shape of `g`?
#
# </details>
# <details><summary>Hint 2 · the shapes</summary>
#
# Unless `keepdims`, `g` has lost the summed axes: put them back with size 1
# (`np.expand_dims(g, axis)`), then `np.broadcast_to` copies along them. With `axis=None`, `g`
# is one number and broadcasts to any shape as it is.
#
# </details>

# %% tags=["exercise:2.2"]
def sum(x, axis=None, keepdims=False):
    """x summed over axis, as a graph node; the gradient is copied back along the axis."""
    ### BEGIN SOLUTION
    shape = x.shape

    def vjp(g):
        if axis is not None and not keepdims:
            g = np.expand_dims(g, axis)
        return np.broadcast_to(g, shape)

    return op(np.sum(x.data, axis=axis, keepdims=keepdims), (x,), vjp, name="sum")
    ### END SOLUTION

# %% tags=["check:2.2"]
checks.lesson2.sum(sum)

# %% [markdown]
# A mean is a sum divided by the number of values averaged, so it needs no rule of its own:
# each input gets `g / count`.

# %% tags=["nbval-check-output"]
total = yours_or_reference("2.2", sum=sum).sum   # mean's, from here on


def mean(x, axis=None, keepdims=False):
    count = x.data.size // np.size(np.sum(x.data, axis=axis))
    return total(x, axis, keepdims) * (1.0 / count)


x = Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
mean(x, axis=1).sum().backward()
print(x.grad)                                # each row of 3 values: 1/3 each

# %% [markdown]
# ## 4. Reshape and transpose, undone
#
# A reshape moves no number (in row-major order, element `p` stays element `p`), so the
# gradient is `g` reshaped back to `x.shape`. A transpose with `axes` sends axis `axes[i]` of
# `x` to axis `i`; the gradient goes the other way, with the *inverse* permutation,
# `np.argsort(axes)`. A swap of two axes is its own inverse, so reusing `axes` only goes
# wrong with three or more:

# %% tags=["nbval-check-output"]
axes = (1, 2, 0)
inverse = tuple(int(i) for i in np.argsort(axes))
x_data = np.zeros((2, 3, 4))
y_data = np.transpose(x_data, axes)
print("x:", x_data.shape, " y = transpose(x, axes):", y_data.shape,
      " transpose(y, inverse):", np.transpose(y_data, inverse).shape)
print("axes =", axes, " inverse =", inverse)

# %% [markdown]
# ### Exercise 2.3 · `reshape(x, shape)` and `transpose(x, axes=None)`
#
# `shape` may contain one `-1`, as in NumPy. `axes=None` reverses the axes (a plain matrix
# transpose in 2-D).
#
# <details><summary>Hint 1 · the idea</summary>
#
# Neither operation changes a number, only where it sits, so the VJP moves `g` back: to `x`'s
# shape, or to `x`'s order of axes. Keep what it needs in local variables before building
# the node.
#
# </details>
# <details><summary>Hint 2 · the formulas</summary>
#
# Reshape: `g` reshaped to the old shape. Transpose: `np.transpose(g, inverse)` with
# `inverse = np.argsort(axes)`; for `axes=None` use `tuple(reversed(range(x.data.ndim)))`.
#
# </details>

# %% tags=["exercise:2.3"]
def reshape(x, shape):
    """x with a new shape, as a graph node; the gradient is reshaped back."""
    ### BEGIN SOLUTION
    old = x.shape
    return op(np.reshape(x.data, shape), (x,), lambda g: np.reshape(g, old), name="reshape")
    ### END SOLUTION


def transpose(x, axes=None):
    """x with its axes permuted (reversed by default), as a graph node."""
    ### BEGIN SOLUTION
    if axes is None:
        axes = tuple(reversed(range(x.data.ndim)))
    inverse = tuple(np.argsort(axes))
    return op(np.transpose(x.data, axes), (x,), lambda g: np.transpose(g, inverse),
              name="transpose")
    ### END SOLUTION

# %% tags=["check:2.3"]
checks.lesson2.reshape_and_transpose(reshape, transpose)

# %% [markdown]
# ## 5. Broadcasting, and undoing it
#
# NumPy adds a bias `b` of shape `(3,)` to a batch `x` of shape `(4, 3)` as if `b` were
# copied into 4 rows: it lines the shapes up at their right end and stretches every axis of
# size 1 (or missing). In the backward pass each copy sends a gradient back to the one `b` it
# came from, so `b`'s gradient is the **sum over the copies**.
#
# Try it below: type two shapes, pick an operator, and press the button to send a gradient
# of ones back and watch it summed to each shape.

# %% tags=["demo", "nbval-ignore-output"]
from minigrad.course.widgets import BroadcastBackward

BroadcastBackward(shape_a="3,1", shape_b="1,4", op="+")

# %% [markdown]
# ### Exercise 2.4 · `unbroadcast(grad, shape)`
#
# On plain arrays: given the gradient of a broadcast result, return the gradient of the input
# that had shape `shape`. Broadcasting made two kinds of axes: leading axes that `shape` does
# not have (sum them away), and axes where `shape` has size 1 but `grad` does not (sum them,
# keeping size 1).
#
# <details><summary>Hint 1 · the idea</summary>
#
# Sum over exactly the axes that broadcasting made, and no others. Count the leading ones
# from the two numbers of dimensions; find the stretched ones by comparing `shape` with
# `grad.shape` axis by axis.
#
# </details>
# <details><summary>Hint 2 · the axes</summary>
#
# With `extra = grad.ndim - len(shape)`, sum axes `0 .. extra - 1` away; then sum, with
# `keepdims=True`, every axis `i` where `shape[i] == 1` and `grad.shape[i] != 1`.
#
# </details>

# %% tags=["exercise:2.4"]
def unbroadcast(grad, shape):
    """Sum grad down to shape, undoing NumPy broadcasting."""
    ### BEGIN SOLUTION
    extra = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True)
    ### END SOLUTION

# %% tags=["check:2.4"]
checks.lesson2.unbroadcast(unbroadcast)

# %% [markdown]
# With `unbroadcast`, lesson 1's `add` works for any two shapes that broadcast. Forget it, and
# the gradient of `b` comes back with the wrong shape; minigrad's engine checks every
# gradient's shape and says so:

# %% tags=["nbval-check-output"]
undo = yours_or_reference("2.4", unbroadcast=unbroadcast).unbroadcast   # add's, from here on


def add(a, b):
    return op(a.data + b.data, (a, b), lambda g: (undo(g, a.shape), undo(g, b.shape)),
              name="add")


def add_forgetful(a, b):
    return op(a.data + b.data, (a, b), lambda g: (g, g), name="add")


x = Tensor(np.ones((4, 3)), requires_grad=True)
b = Tensor(np.zeros(3), requires_grad=True)
try:
    add_forgetful(x, b).sum().backward()
except ValueError as error:
    print("without unbroadcast:", error)

# %% tags=["nbval-check-output"]
x = Tensor(np.ones((4, 3)), requires_grad=True)
b = Tensor(np.zeros(3), requires_grad=True)
add(x, b).sum().backward()
print("with unbroadcast: b.grad =", b.grad, " (one per row of x, added up)")

# %% [markdown]
# ## 6. Cross-entropy, fused
#
# A classifier outputs a row of scores `z` (logits) per example, and the loss of row `i` with
# correct class `t` is the negative log of the softmax probability of `t`:
#
# $$L_i = -\log \frac{e^{z_t}}{\sum_j e^{z_j}} = \log \sum_j e^{z_j} - z_t .$$
#
# Its derivative with respect to `z_j` is
# $\frac{e^{z_j}}{\sum_k e^{z_k}} - [j = t] = \text{softmax}(z)_j - \text{onehot}(t)_j$.
# Averaged over `N` rows, the gradient of the mean loss is **`(softmax(z) - onehot) / N`**: no
# division by a probability, no log in it.
#
# Built from separate `exp`, `sum`, `/` and `log` nodes, the same loss breaks on large logits.
# `exp(1000)` is `inf` in float64 (the largest is about `exp(709)`), `inf / inf` is `nan`, and
# a probability that underflows to 0 has the logarithm `-inf`:

# %% tags=["nbval-check-output"]
def naive_softmax(z):
    return np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)


def naive_cross_entropy(z, t):
    """Softmax, then log: correct on paper, fragile in floating point."""
    p = naive_softmax(z)
    return -np.log(p[np.arange(len(t)), t]).mean()


z = np.array([[2.0, 1.0, -1.0], [1000.0, 0.0, -1000.0]])
t = np.array([0, 1])
with np.errstate(all="ignore"):              # NumPy would warn about the overflow
    print("softmax of [1000, 0, -1000]:", naive_softmax(z[1:]))
    print("naive loss, small logits:   ", naive_cross_entropy(z[:1], t[:1]))
    print("naive loss, large logits:   ", naive_cross_entropy(z, t))

# %% [markdown]
# The fix is the **log-sum-exp trick**: for any `m`,
# $\log \sum_j e^{z_j} = m + \log \sum_j e^{z_j - m}$. With `m = max(z)` the largest term is
# `e^0 = 1`: nothing overflows. Then `log_softmax = z - logsumexp(z)` takes no log of a small
# probability, and the backward rule uses `softmax = exp(log_softmax)`, always in [0, 1].
#
# ### Exercise 2.5 · `cross_entropy(logits, targets)`
#
# `logits` is a tensor of shape `(N, C)`, `targets` an integer array of `N` class indices.
# Return the mean loss as **one node** whose only parent is `logits`, with the fused VJP.
#
# <details><summary>Hint 1 · the idea</summary>
#
# Work on arrays: log-softmax with the trick above, then each row's entry at its target,
# averaged. The VJP needs only the softmax and the one-hot targets.
#
# </details>
# <details><summary>Hint 2 · the formulas</summary>
#
# `log_p = shifted - log(sum(exp(shifted), axis=1, keepdims=True))` with `shifted = z - max`;
# `onehot[np.arange(n), targets] = 1`; loss `-(log_p * onehot).sum() / n`; VJP
# `g * (exp(log_p) - onehot) / n`.
#
# </details>

# %% tags=["exercise:2.5"]
def cross_entropy(logits, targets):
    """Mean softmax cross-entropy of logits (N, C) against integer targets (N,), fused."""
    ### BEGIN SOLUTION
    z = logits.data
    n = z.shape[0]
    shifted = z - z.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    onehot = np.zeros_like(z)
    onehot[np.arange(n), targets] = 1.0
    loss = -(log_p * onehot).sum() / n
    return op(loss, (logits,), lambda g, log_p, onehot: g * (np.exp(log_p) - onehot) / n,
              saved=(log_p, onehot), name="cross_entropy")
    ### END SOLUTION

# %% tags=["check:2.5"]
checks.lesson2.cross_entropy(cross_entropy)

# %% [markdown]
# The logits that broke the naive version now give a finite loss and gradient:

# %% tags=["nbval-check-output"]
demo = yours_or_reference("2.5", cross_entropy=cross_entropy)
logits = Tensor(z, requires_grad=True)
loss = demo.cross_entropy(logits, t)
loss.backward()
print("loss =", round(float(loss.data), 4))
print("gradient =\n", logits.grad.round(4))

# %% [markdown]
# ## 7. Everything together
#
# A linear classifier on a batch: `logits = x @ W + b` with the bias broadcast over the rows,
# then the loss. Built only from your functions, its gradients should equal those of
# minigrad's built-in operations, and pass `minigrad.gradcheck` (finite differences).

# %% tags=["nbval-check-output"]
demo = yours_or_reference("2.1", "2.5", matmul=matmul, cross_entropy=cross_entropy)
rng = np.random.default_rng(0)
x = Tensor(rng.normal(size=(5, 4)))
targets = np.array([0, 2, 1, 2, 0])
W = Tensor(rng.normal(size=(4, 3)), requires_grad=True)
b = Tensor(np.zeros(3), requires_grad=True)


def yours(W, b):
    return demo.cross_entropy(add(demo.matmul(x, W), b), targets)


def builtin(W, b):
    return F.cross_entropy(x @ W + b, targets)


yours(W, b).backward()
W_mine, b_mine = W.grad, b.grad
W.grad = b.grad = None
builtin(W, b).backward()
print("loss:", round(float(yours(W, b).data), 6), " built-in:", round(float(builtin(W, b).data), 6))
print("W.grad and b.grad equal the built-in ones:",
      np.allclose(W_mine, W.grad) and np.allclose(b_mine, b.grad))
print("gradcheck:", bool(minigrad.gradcheck(yours, W, b)))

# %% [markdown]
# ## Summary
#
# - A gradient has the shape of its input: for `C = A @ B`, `dA = dC @ B.T`, `dB = A.T @ dC`.
# - A sum copies the gradient back along the summed axes; reshape and transpose are undone.
# - A broadcast input's gradient is the sum over its copies: `unbroadcast`.
# - Fused cross-entropy has the gradient `(softmax - onehot) / N`, finite for any logits.
#
# **Next:** lesson 3 builds a PyTorch-shaped library on these operations: parameters,
# modules and an optimizer.
