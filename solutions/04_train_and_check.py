# %% [markdown]
# # Lesson 4 · Train with your engine and check it
#
# An autodiff engine is only useful if its gradients are right, and "the loss goes down" is weak
# evidence: a network trains, slowly, even with a wrong gradient. In this lesson you hold the
# engine to a stricter standard. It must reproduce, to the last digits, the gradients you
# derive by hand with the chain rule, and the gradients of a library of layers whose backward
# passes were written by hand. Then it trains a real network, step for step identical to the
# hand-built one, while we watch the memory its graph takes and gives back.
#
# **By the end of this lesson you will be able to**
#
# - build a network with `minigrad.nn`, load given weights into it, and write the training loop
#   with `minigrad.optim.SGD`;
# - derive every gradient of a small network by hand, and check an engine against those
#   numbers and against hand-written backward passes (`minigrad.course.byhand`) to 1e-12;
# - train the 2-16-16-2 network on the moons and show it matches the hand-built loop step
#   for step;
# - measure what a graph holds in memory, see it released, and explain why an engine whose
#   closures capture their own output leaks memory or time.
#
# From here on we use the library versions of lesson 3's classes: `minigrad.nn` (`Linear`,
# `Sigmoid`, `ReLU`, `Sequential`, ...) and `minigrad.optim.SGD`, which behave like yours.

# %%
import gc
import math
import time
import tracemalloc
import weakref

import matplotlib.pyplot as plt
import numpy as np

from minigrad import Tensor, data, graph, nn, no_grad, optim
from minigrad.course import byhand, checks
from minigrad import functional as F
from minigrad.course.scalar import Var

np.set_printoptions(precision=6, suppress=True)
plt.rcParams["figure.dpi"] = 72   # small figures keep the notebook light

# %% [markdown]
# ## 1. The 2-2-2 network
#
# Two inputs, two sigmoid hidden units, two output classes, and one input $x$ whose class is
# $t = 1$:
#
# $$z_1 = W_1 x + b_1, \quad h = \sigma(z_1), \quad z_2 = W_2 h + b_2, \quad
# p = \operatorname{softmax}(z_2), \quad L = -\log p_t .$$
#
# The weights are fixed decimals, so that every number below can be checked with a
# calculator:
#
# $$x = \begin{pmatrix} 1.0 \\ -0.5 \end{pmatrix},\quad
# W_1 = \begin{pmatrix} 0.5 & -0.3 \\ 0.2 & 0.8 \end{pmatrix},\quad
# b_1 = \begin{pmatrix} 0.1 \\ -0.2 \end{pmatrix},\quad
# W_2 = \begin{pmatrix} 0.7 & -0.4 \\ -0.6 & 0.5 \end{pmatrix},\quad
# b_2 = \begin{pmatrix} 0.05 \\ -0.05 \end{pmatrix}.$$
#
# The forward pass, value by value:
#
# | quantity | formula | value |
# |---|---|---|
# | $z_1$ | $W_1 x + b_1$ | $(0.750000,\ -0.400000)$ |
# | $h$ | $\sigma(z_1) = 1 / (1 + e^{-z_1})$ | $(0.679179,\ 0.401312)$ |
# | $z_2$ | $W_2 h + b_2$ | $(0.364900,\ -0.256851)$ |
# | $p$ | $e^{z_2} / \sum e^{z_2}$ | $(0.650617,\ 0.349383)$ |
# | $L$ | $-\log p_1$ | $1.051586$ |
#
# The network gives the wrong class 65% of the probability, so the loss is well above
# $\log 2 \approx 0.69$.

# %%
x0 = np.array([1.0, -0.5])
t0 = 1
W1 = np.array([[0.5, -0.3], [0.2, 0.8]])
b1 = np.array([0.1, -0.2])
W2 = np.array([[0.7, -0.4], [-0.6, 0.5]])
b2 = np.array([0.05, -0.05])

# %% [markdown]
# ### Exercise 4.1
#
# Write `network(W1, b1, W2, b2)`: return a `minigrad.nn` model computing the **logits**
# $z_2$ of a batch of inputs (`(N, 2)` in, `(N, 2)` out), holding copies of the given
# weights. The softmax is not part of the model: `F.cross_entropy` applies it, fused and
# stable (lesson 2).
#
# *Hint:* `nn.Sequential(nn.Linear(...), nn.Sigmoid(), nn.Linear(...))`; read each layer's
# sizes off its weight (`W1.shape` is `(out, in)`, as `nn.Linear` stores it). Then load the
# values: a `Sequential` names its parameters `"0.weight"`, `"0.bias"`, `"2.weight"`,
# `"2.bias"` (layer 1 is the sigmoid, which has none), and `model.load_state_dict({...})`
# copies arrays into them.

# %% tags=["exercise:4.1"]
def network(W1, b1, W2, b2):
    """Linear(W1, b1), Sigmoid, Linear(W2, b2): a minigrad.nn model returning logits."""
    ### BEGIN SOLUTION
    model = nn.Sequential(nn.Linear(W1.shape[1], W1.shape[0]), nn.Sigmoid(),
                          nn.Linear(W2.shape[1], W2.shape[0]))
    model.load_state_dict({"0.weight": W1, "0.bias": b1, "2.weight": W2, "2.bias": b2})
    return model
    ### END SOLUTION


# %% tags=["check:4.1"]
checks.lesson4.network(network)

# %% [markdown]
# The engine's forward pass on $x$ gives the table's numbers:

# %%
# NBVAL_CHECK_OUTPUT
model = network(W1, b1, W2, b2)
logits = model(Tensor(x0[None, :]))                 # a batch of one input: shape (1, 2)
loss = F.cross_entropy(logits, np.array([t0]))
print("z2 =", logits.numpy()[0])
print("p  =", F.softmax(logits).numpy()[0])
print(f"L  = {loss.item():.6f}")

# %% [markdown]
# ## 2. The backward pass by hand
#
# Go backwards through the forward formulas, one link of the chain rule at a time. Write
# $\delta_2 = \partial L / \partial z_2$ and $\delta_1 = \partial L / \partial z_1$.
#
# 1. **Softmax and cross-entropy together** (lesson 2): $\delta_2 = p - e_t$, where $e_t$ is
#    the one-hot vector of the target.
# 2. **Second layer.** $z_{2,i} = \sum_j W_{2,ij} h_j + b_{2,i}$, so
#    $\partial L/\partial W_{2,ij} = \delta_{2,i}\, h_j$ and
#    $\partial L/\partial b_{2,i} = \delta_{2,i}$. As matrices: $\partial L/\partial W_2 =
#    \delta_2 h^\top$, an outer product with $W_2$'s shape.
# 3. **Back into the hidden layer.** $h_j$ feeds every output, so its gradient collects from
#    each: $\partial L/\partial h_j = \sum_i W_{2,ij}\, \delta_{2,i}$, that is
#    $\partial L/\partial h = W_2^\top \delta_2$.
# 4. **Through the sigmoid.** $\sigma'(z) = \sigma(z)(1 - \sigma(z))$, so
#    $\delta_1 = \partial L/\partial h \odot h \odot (1 - h)$, elementwise.
# 5. **First layer**, as in step 2: $\partial L/\partial W_1 = \delta_1 x^\top$ and
#    $\partial L/\partial b_1 = \delta_1$.
#
# One entry, written out in full, is $\partial L / \partial W_{1,01}$ (row 0, column 1):
#
# $$\frac{\partial L}{\partial W_{1,01}}
# = \underbrace{(W_{2,00}\,\delta_{2,0} + W_{2,10}\,\delta_{2,1})}_{\partial L/\partial h_0}
# \cdot \underbrace{h_0 (1 - h_0)}_{\sigma'(z_{1,0})} \cdot x_1
# = (0.7 \cdot 0.650617 + (-0.6)(-0.650617)) \cdot 0.217895 \cdot (-0.5) = -0.092148 .$$
#
# Every gradient of the network:
#
# | gradient | formula | value |
# |---|---|---|
# | $\delta_2 = \partial L/\partial z_2$ | $p - e_t$ | $(0.650617,\ -0.650617)$ |
# | $\partial L/\partial W_2$ | $\delta_2 h^\top$ | $\begin{pmatrix} 0.441885 & 0.261101 \\ -0.441885 & -0.261101 \end{pmatrix}$ |
# | $\partial L/\partial b_2$ | $\delta_2$ | $(0.650617,\ -0.650617)$ |
# | $\partial L/\partial h$ | $W_2^\top \delta_2$ | $(0.845802,\ -0.585555)$ |
# | $\sigma'(z_1)$ | $h \odot (1 - h)$ | $(0.217895,\ 0.240261)$ |
# | $\delta_1 = \partial L/\partial z_1$ | $\partial L/\partial h \odot \sigma'(z_1)$ | $(0.184296,\ -0.140686)$ |
# | $\partial L/\partial W_1$ | $\delta_1 x^\top$ | $\begin{pmatrix} 0.184296 & -0.092148 \\ -0.140686 & 0.070343 \end{pmatrix}$ |
# | $\partial L/\partial b_1$ | $\delta_1$ | $(0.184296,\ -0.140686)$ |
#
# Two things to notice. With two classes, $\delta_2$ always sums to zero (the probabilities
# sum to one, and so does $e_t$), so the two rows of $\partial L/\partial W_2$ are opposite.
# And every weight gradient is an outer product "gradient at the output times value at the
# input": the same pattern as lesson 2's matmul rule $\partial L/\partial W = G^\top X$.

# %% [markdown]
# ### Exercise 4.2
#
# Turn the table into code: complete `hand_gradients(x, t, W1, b1, W2, b2)` so that it returns
# the four weight and bias gradients, for one input `x` (a vector) of class `t`, in NumPy. The
# forward pass is given. The check runs it on the lesson's network and on random networks of
# other sizes, and compares with the engine.
#
# *Hint:* one line per row of the table, top to bottom. `np.outer(a, b)` is $a b^\top$, and
# `W2.T @ delta2` is $W_2^\top \delta_2$.

# %% tags=["exercise:4.2"]
def hand_gradients(x, t, W1, b1, W2, b2):
    """The gradients of L = -log softmax(z2)[t] by the chain rule, as a dict of arrays."""
    z1 = W1 @ x + b1                       # the forward pass, as in the first table
    h = 1 / (1 + np.exp(-z1))
    z2 = W2 @ h + b2
    p = np.exp(z2 - z2.max())
    p = p / p.sum()
    onehot = np.eye(len(z2))[t]
    ### BEGIN SOLUTION
    delta2 = p - onehot
    dW2 = np.outer(delta2, h)
    db2 = delta2
    dh = W2.T @ delta2
    delta1 = dh * h * (1 - h)
    dW1 = np.outer(delta1, x)
    db1 = delta1
    ### END SOLUTION
    return {"W1": dW1, "b1": db1, "W2": dW2, "b2": db2}


# %% tags=["check:4.2"]
checks.lesson4.hand_gradients(hand_gradients)

# %% [markdown]
# ## 3. Three computations, one answer
#
# Now the same gradients three ways:
#
# - **by hand**: your `hand_gradients`, and the table above (rounded to 6 decimals);
# - **by hand-built layers**: `minigrad.course.byhand` has `Linear`, `Sigmoid` and
#   `SoftmaxCrossEntropy` classes whose `backward` methods are the formulas above, written
#   out by a person (NumPy only; it never imports the engine it checks);
# - **by the engine**: `loss.backward()` on the `minigrad.nn` model, which knows nothing about
#   this network, only the vector-Jacobian product of each operation.

# %%
layers = [byhand.Linear(2, 2), byhand.Sigmoid(), byhand.Linear(2, 2)]
layers[0].W, layers[0].b, layers[2].W, layers[2].b = W1.copy(), b1.copy(), W2.copy(), b2.copy()
hand_net, ce = byhand.MLP(layers), byhand.SoftmaxCrossEntropy()
hand_loss = ce.forward(hand_net.forward(x0[None, :]), np.array([t0]))
hand_net.backward(ce.backward())
by_layers = {"W1": layers[0].dW, "b1": layers[0].db, "W2": layers[2].dW, "b2": layers[2].db}

model = network(W1, b1, W2, b2)
loss = F.cross_entropy(model(Tensor(x0[None, :])), np.array([t0]))
loss.backward()
by_engine = {"W1": model[0].weight.grad, "b1": model[0].bias.grad,
             "W2": model[2].weight.grad, "b2": model[2].bias.grad}
by_you = hand_gradients(x0, t0, W1, b1, W2, b2)
table = {"W1": [[0.184296, -0.092148], [-0.140686, 0.070343]], "b1": [0.184296, -0.140686],
         "W2": [[0.441885, 0.261101], [-0.441885, -0.261101]], "b2": [0.650617, -0.650617]}

print("gradient   |engine - byhand|   |engine - yours|   |engine - table|")
for name in ("W1", "b1", "W2", "b2"):
    gaps = [np.abs(by_engine[name] - np.asarray(other)).max()
            for other in (by_layers[name], by_you[name], table[name])]
    print(f"dL/d{name:<5}  {gaps[0]:15.1e}   {gaps[1]:15.1e}   {gaps[2]:15.1e}")
    assert gaps[0] < 1e-12 and gaps[1] < 1e-12 and gaps[2] < 5.1e-7

# %% [markdown]
# The engine and the hand-built layers agree to about $10^{-16}$, the rounding of a float64;
# the table agrees to its 6 printed decimals. Agreement to 1e-12 is a strong statement: a
# single wrong term anywhere (a missing transpose, a sign, a forgotten $\sigma'$) would show
# up around $10^{-1}$.
#
# The same holds layer by layer, for any input and any gradient arriving from above. Each
# hand-built layer's `backward` against the engine's vector-Jacobian product of the same
# layer, on random batches:

# %%
rng = np.random.default_rng(0)
X_batch = rng.normal(size=(8, 5))
upstream = rng.normal(size=(8, 3))
pairs = {"Linear": (byhand.Linear(5, 3, rng=1), nn.Linear(5, 3, rng=1)),
         "ReLU": (byhand.ReLU(), nn.ReLU()),
         "Sigmoid": (byhand.Sigmoid(), nn.Sigmoid())}
print("layer      |forward diff|   |backward diff|")
for name, (hand_layer, engine_layer) in pairs.items():
    n_in = 5 if name == "Linear" else 3
    xb = X_batch[:, :n_in]
    x_t = Tensor(xb, requires_grad=True)
    out = engine_layer(x_t)
    out.backward(upstream)
    forward_gap = np.abs(hand_layer.forward(xb) - out.numpy()).max()
    backward_gap = np.abs(hand_layer.backward(upstream) - x_t.grad).max()
    print(f"{name:<8}  {forward_gap:14.1e}   {backward_gap:15.1e}")
    assert forward_gap < 1e-12 and backward_gap < 1e-12

logits_b = rng.normal(size=(8, 3)) * 3
targets_b = rng.integers(0, 3, size=8)
z = Tensor(logits_b, requires_grad=True)
F.cross_entropy(z, targets_b).backward()
ce_b = byhand.SoftmaxCrossEntropy()
ce_gap = abs(ce_b.forward(logits_b, targets_b)
             - F.cross_entropy(Tensor(logits_b), targets_b).item())
ce_grad_gap = np.abs(ce_b.backward() - z.grad).max()
print(f"{'SoftmaxCE':<8}  {ce_gap:14.1e}   {ce_grad_gap:15.1e}")
assert ce_gap < 1e-12 and ce_grad_gap < 1e-12

# %% [markdown]
# ## 4. The training loop
#
# Training repeats four lines, in this order: clear the old gradients, run the forward pass
# and the loss, backpropagate, update. Lesson 3 showed what each one is for.
#
# ### Exercise 4.3
#
# Write `train(model, X, y, steps, lr)`: full-batch gradient descent on the cross-entropy
# with `optim.SGD`, for `steps` steps; return the list of the losses of every step, as Python
# floats. `X` is a NumPy array `(N, 2)`, `y` an integer array `(N,)`.
#
# *Hint:* make the input tensor and the optimizer once, before the loop. Record
# `loss.item()`, not `loss`: a loss tensor keeps its whole graph alive, and with it every
# activation of that step (section 6 measures how much that is).

# %% tags=["exercise:4.3"]
def train(model, X, y, steps, lr):
    """Full-batch SGD on F.cross_entropy(model(X), y); returns the loss of every step."""
    ### BEGIN SOLUTION
    inputs = Tensor(X)
    opt = optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(inputs), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
    ### END SOLUTION


# %% tags=["check:4.3"]
checks.lesson4.train_loop(train)

# %% [markdown]
# ## 5. The moons, step for step
#
# The real test: a 2-16-16-2 ReLU network on `make_moons` (two interleaved half circles that
# no straight line separates), trained twice from **the same initial weights**: once with
# your loop on the engine, once with `byhand.train`, the hand-built loop. After every single
# step we compare every parameter of the two networks.

# %%
X_train, y_train = data.moons(400, noise=0.1, seed=0)
X_test, y_test = data.moons(1000, noise=0.1, seed=1)     # new points, to measure accuracy

hand_mlp = byhand.MLP.from_sizes([2, 16, 16, 2], rng=0)
engine_mlp = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(),
                           nn.Linear(16, 2))
engine_mlp.load_state_dict(hand_mlp.state_dict())       # copies: same values, own arrays
print(engine_mlp)


def accuracy(model, X, y):
    """The fraction of points whose largest logit is their class."""
    with no_grad():
        return float((model(Tensor(X)).numpy().argmax(axis=1) == y).mean())


# %%
# NBVAL_CHECK_OUTPUT
steps, lr = 300, 0.5
engine_losses, hand_losses, largest_gap = [], [], 0.0
for _ in range(steps):
    engine_losses += train(engine_mlp, X_train, y_train, steps=1, lr=lr)
    hand_losses += byhand.train(hand_mlp, X_train, y_train, epochs=1, lr=lr)
    engine_state = engine_mlp.state_dict()
    for name, value in hand_mlp.state_dict().items():
        largest_gap = max(largest_gap, np.abs(engine_state[name] - value).max())
print(f"every parameter equal to 1e-12 after each of the {steps} steps: {largest_gap < 1e-12}")
print(f"loss after {steps} steps: engine {engine_losses[-1]:.4f}, by hand {hand_losses[-1]:.4f}")
print(f"accuracy: {accuracy(engine_mlp, X_train, y_train):.1%} on the 400 training points, "
      f"{accuracy(engine_mlp, X_test, y_test):.1%} on 1000 new points")
assert accuracy(engine_mlp, X_test, y_test) >= 0.97

# %% [markdown]
# Every parameter of the two networks stays equal to about $10^{-15}$ for all 300 steps (the
# figure's title gives the largest difference), so the two loss curves lie exactly on top of
# each other. On the right, the decision boundary of the trained network over 1000 points it
# never saw.

# %% tags=["demo"]
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
ax1.semilogy(engine_losses, lw=4, alpha=0.4, label="engine (minigrad.nn)")
ax1.semilogy(hand_losses, "k--", lw=1, label="by hand (minigrad.course.byhand)")
ax1.set_xlabel("step")
ax1.set_ylabel("cross-entropy")
ax1.set_title(f"largest parameter difference: {largest_gap:.0e}")
ax1.legend()

grid_x, grid_y = np.meshgrid(np.linspace(-1.5, 2.5, 200), np.linspace(-1.0, 1.5, 150))
grid = np.column_stack([grid_x.ravel(), grid_y.ravel()])
with no_grad():
    scores = F.softmax(engine_mlp(Tensor(grid))).numpy()[:, 1].reshape(grid_x.shape)
ax2.contourf(grid_x, grid_y, scores, levels=20, cmap="RdBu_r", alpha=0.6)
ax2.contour(grid_x, grid_y, scores, levels=[0.5], colors="k", linewidths=1)
ax2.scatter(X_test[:, 0], X_test[:, 1], c=y_test, cmap="RdBu_r", s=4, edgecolors="none")
ax2.set_title("decision boundary, test points")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 6. The memory a graph holds
#
# Each operation saves the arrays its backward rule needs (`saved=` in `minigrad.op`). For a
# batch of $N$ points through the 2-16-16-2 network that is:
#
# | operation | saves | bytes (float64) |
# |---|---|---|
# | `linear` 2→16 | input $(N, 2)$, weight $(16, 2)$ | $16N + 256$ |
# | `relu` | its output $(N, 16)$ | $128N$ |
# | `linear` 16→16 | input $(N, 16)$, weight $(16, 16)$ | $128N + 2048$ |
# | `relu` | its output $(N, 16)$ | $128N$ |
# | `linear` 16→2 | input $(N, 16)$, weight $(2, 16)$ | $128N + 256$ |
# | `cross_entropy` | log-probabilities and one-hot targets, $(N, 2)$ each | $32N$ |
#
# Arrays shared by two operations count once: a ReLU's output is the next linear's input.
# `graph.saved_bytes` adds them up.

# %%
# NBVAL_CHECK_OUTPUT
N = 10_000
X_big, y_big = data.moons(N, noise=0.1, seed=2)
inputs_big = Tensor(X_big)
loss = F.cross_entropy(engine_mlp(inputs_big), y_big)
print("operations:", graph.count_ops(loss))
print(f"saved for backward: {graph.saved_bytes(loss):,} bytes")
print(f"by the table:       {16 * N + 256 + 128 * N + 2048 + 128 * N + 256 + 32 * N:,} bytes")
del loss

# %% [markdown]
# `saved_bytes` counts what the graph keeps *for backward*. Python's `tracemalloc` sees every
# allocation, including each operation's output array. Measure one training step: after the
# forward pass, after `backward()`, and after `del loss`.

# %% tags=["demo"]
engine_mlp.zero_grad()
gc.collect()
tracemalloc.start()
base = tracemalloc.get_traced_memory()[0]


def held():
    return f"{(tracemalloc.get_traced_memory()[0] - base) / 1e6:6.2f} MB"


loss = F.cross_entropy(engine_mlp(inputs_big), y_big)
print(f"after forward:  {held()} allocated, {graph.saved_bytes(loss) / 1e6:.2f} MB saved")
loss.backward()
print(f"after backward: {held()} allocated, {graph.saved_bytes(loss) / 1e6:.2f} MB saved")
del loss
print(f"after del loss: {held()} allocated")
tracemalloc.stop()

# %% [markdown]
# `backward()` drops the saved arrays (`saved_bytes` falls to 0), but most of the memory is
# still there. Most saved arrays *are* the activations (a ReLU's output, the next layer's
# input), and the graph's tensors still hold those as their `.data`. The graph goes away
# only when its last tensor does: after `del loss`, reference counting frees it all at once,
# and the memory is back to where it started, minus only the small gradients kept on the
# parameters.
#
# That happens because our graph has **no reference cycles**: each output points to its
# parents, never back. So training can run for as long as you like in the same memory:

# %% tags=["demo"]
gc.collect()
tracemalloc.start()
base = tracemalloc.get_traced_memory()[0]
opt = optim.SGD(engine_mlp.parameters(), lr=0.1)
after_step = []
for step in range(40):
    opt.zero_grad()
    loss = F.cross_entropy(engine_mlp(inputs_big), y_big)
    loss.backward()
    opt.step()
    after_step.append(tracemalloc.get_traced_memory()[0] - base)
peak = tracemalloc.get_traced_memory()[1] - base
tracemalloc.stop()
del loss
print(f"memory held between steps, over 40 steps: {min(after_step) / 1e6:.2f} to "
      f"{max(after_step) / 1e6:.2f} MB (peak during a step: {peak / 1e6:.1f} MB)")

# %% [markdown]
# Flat: each step's graph is freed when the next step's `loss = ...` replaces it (the loop
# holds the last loss, about one step's activations).
#
# ## 7. A closure that captures its own output
#
# Lesson 1 gave each operation a backward function that takes the output's gradient **as an
# argument**. Many small engines do it differently: the backward closure reads `out.grad`
# from the output it belongs to. It looks harmless, and it is exactly what the scalar engine
# below does:

# %% tags=["demo"]
class CycleVar:
    """A scalar engine whose backward closures capture their own output tensor."""

    def __init__(self, data, parents=()):
        self.data, self.grad, self.parents = data, 0.0, parents
        self.backward_fn = lambda: None

    def __add__(self, other):
        other = other if isinstance(other, CycleVar) else CycleVar(other)
        out = CycleVar(self.data + other.data, (self, other))

        def backward_fn():
            self.grad += out.grad                # `out` is captured: out -> closure -> out
            other.grad += out.grad
        out.backward_fn = backward_fn
        return out

    def __mul__(self, other):
        other = other if isinstance(other, CycleVar) else CycleVar(other)
        out = CycleVar(self.data * other.data, (self, other))

        def backward_fn():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out.backward_fn = backward_fn
        return out

    def tanh(self):
        out = CycleVar(math.tanh(self.data), (self,))

        def backward_fn():
            self.grad += (1 - out.data ** 2) * out.grad
        out.backward_fn = backward_fn
        return out

    __radd__, __rmul__ = __add__, __mul__

    def backward(self):
        order, seen, stack = [], set(), [(self, False)]
        while stack:                              # topological order, no recursion
            node, parents_done = stack.pop()
            if parents_done:
                order.append(node)
            elif id(node) not in seen:
                seen.add(id(node))
                stack.append((node, True))
                stack.extend((p, False) for p in node.parents)
        self.grad = 1.0
        for node in reversed(order):
            node.backward_fn()


# %% [markdown]
# The output refers to its closure (`out.backward_fn`), and the closure refers to the output:
# a reference cycle. Reference counting can never free a cycle, because each member keeps the
# other's count above zero. Only Python's cycle collector (`gc`) can, when it next runs. The
# course's scalar engine, `minigrad.course.scalar.Var`, has no cycle and is freed at once:

# %% tags=["demo"]
# NBVAL_CHECK_OUTPUT
for Engine in (Var, CycleVar):
    gc.disable()                    # so that the collector cannot run at a random moment
    a, b = Engine(2.0), Engine(3.0)
    out = a * b + a
    alive = weakref.ref(out)        # a reference that does not keep `out` alive
    del out
    after_del = alive() is not None
    gc.enable()
    gc.collect()
    print(f"{Engine.__name__:>8}: graph still alive after `del out`? {after_del}; "
          f"after gc.collect()? {alive() is not None}")

# %% [markdown]
# So the collector has to find and free every graph. We train the same small scalar network,
# a 2-8-8-1 tanh network on 24 moons points (about 2,000 scalar operations per step), with
# both engines, in two ways:
#
# - **with `gc` disabled**: how much memory is still held after each step;
# - **with `gc` enabled**: how much of each step's time the collector takes, timed with
#   `gc.callbacks`.
#
# Both are measurements on this machine, not guarantees.

# %% tags=["demo"]
X_small, y_small = data.moons(24, noise=0.1, seed=0)
y_small = 2.0 * y_small - 1.0                              # targets -1 and +1


def scalar_network(Engine, sizes=(2, 8, 8, 1), seed=0):
    rng = np.random.default_rng(seed)
    return [[([Engine(w) for w in rng.uniform(-1, 1, n_in)], Engine(0.0)) for _ in range(n_out)]
            for n_in, n_out in zip(sizes[:-1], sizes[1:])]


def scalar_step(layers, lr=0.05):
    loss = 0.0
    for point, target in zip(X_small, y_small):
        values = list(point)
        for k, layer in enumerate(layers):
            values = [sum((w * v for w, v in zip(ws, values)), b) for ws, b in layer]
            if k < len(layers) - 1:
                values = [v.tanh() for v in values]
        error = values[0] + (-float(target))
        loss = error * error + loss
    loss = loss * (1.0 / len(X_small))
    params = [p for layer in layers for ws, b in layer for p in (*ws, b)]
    for p in params:
        p.grad = 0.0
    loss.backward()
    for p in params:
        p.data -= lr * p.grad
    return loss.data


gc.collect()
gc.disable()
for Engine in (Var, CycleVar):
    net = scalar_network(Engine)
    tracemalloc.start()
    held_mb = []
    for step in range(3):
        scalar_step(net)
        held_mb.append(tracemalloc.get_traced_memory()[0] / 1e6)
    tracemalloc.stop()
    print(f"{Engine.__name__:>8}, gc disabled: MB held after each step:",
          " ".join(f"{m:5.2f}" for m in held_mb))
print(f"gc.collect() then finds {gc.collect():,} unreachable objects")
gc.enable()

# %% [markdown]
# With the collector off, `Var` holds the same small amount after every step, while
# `CycleVar` keeps every graph it ever built: memory grows by the same amount each step,
# until `gc.collect()` finds the garbage. Now with the collector on, as normal:

# %% tags=["demo"]
def share_of_time_in_gc(run_steps):
    """Run a training loop and return (seconds, fraction of them spent in gc)."""
    spent, started = [0.0], [0.0]

    def timer(phase, info):
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            spent[0] += time.perf_counter() - started[0]

    gc.collect()
    gc.callbacks.append(timer)
    try:
        start = time.perf_counter()
        run_steps()
        total = time.perf_counter() - start
    finally:
        gc.callbacks.remove(timer)
    return total, spent[0] / total


for Engine in (Var, CycleVar):
    net = scalar_network(Engine)
    total, share = share_of_time_in_gc(lambda: [scalar_step(net) for _ in range(5)])
    print(f"{Engine.__name__:>8}: 5 steps in {total:.2f} s, {share:.0%} of it in gc")
total, share = share_of_time_in_gc(lambda: train(engine_mlp, X_train, y_train, 50, 0.1))
print(f"  Tensor: 50 steps of the moons network in {total:.2f} s, {share:.0%} of it in gc")

# %% [markdown]
# The cycle-building engine spends most of its training step in the garbage collector here.
# Every step leaves thousands of objects in cycles; they survive the collector's cheap young-
# generation passes, and only the expensive full passes over every object in the program free
# them. `Var` still pays for some passes, since a scalar graph is thousands of live objects
# that the collector looks at, but it leaves no garbage that only the collector can free; the
# tensor engine makes a few dozen objects per step in the first place. The fix costs nothing: pass the output's gradient
# to the backward function (`vjp(g, *saved)`) instead of letting the closure reach for `out`.

# %% [markdown]
# ## Summary
#
# - The chain rule, applied link by link, gives every gradient of a network: for a layer
#   $z = Wa + b$, $\partial L/\partial W = \delta\, a^\top$, $\partial L/\partial b = \delta$,
#   and $\partial L/\partial a = W^\top \delta$; an activation multiplies $\delta$ by its
#   derivative; softmax with cross-entropy gives $\delta = p - e_t$.
# - The engine reproduced the hand-derived numbers, the hand-built layers' backward passes and
#   the hand-built training loop **to 1e-12**: 300 steps on the moons with every parameter
#   equal after every step, and above 97% accuracy on new points.
# - A training step is `zero_grad()`, forward and loss, `backward()`, `step()`; record
#   `loss.item()`, never the loss tensor.
# - A graph holds its activations until its last tensor goes; `backward()` drops what was
#   saved for it, `del` (or the next step) frees the rest, and memory stays flat over many
#   steps, because the graph has no reference cycles.
# - A backward closure that captures its own output makes a cycle per operation: with the
#   collector off the memory is never returned, with it on the collector takes a large share
#   of each step.
#
# You have built an autodiff engine, a module library on top of it, and the evidence that both
# are right. The `minigrad` package goes further in the same style: convolutions for LeNet-5,
# Adam, saving models, and a GPU backend.
