# %% [markdown]
# # Lesson 4 · Train with your engine and check it
#
# "The loss goes down" is weak evidence that gradients are right: a network trains, slowly,
# even with a wrong gradient. Here the engine must reproduce the gradients of a small network
# worked out by hand (the derivation is given; you turn it into code) and of hand-written
# layers, then train a network step for step like a hand-built loop, while we watch the
# memory its graph holds.
#
# From here on, lesson 3's classes come from the library: `minigrad.nn` and `minigrad.optim`.
# A demo whose exercise is not passing yet uses the reference and says so.
#
# **Time:** about 30 minutes (3 exercises, 1,200 words to read).

# %%
import gc
import tracemalloc

import matplotlib.pyplot as plt
import numpy as np

from minigrad import Tensor, data, graph, nn, no_grad, optim
from minigrad.course import byhand, checks, figures
from minigrad import functional as F
from minigrad.course.demos import yours_or_reference

np.set_printoptions(precision=6, suppress=True)
figures.setup()   # 100 dpi, 10-point labels

# %% [markdown]
# ## 1. The 2-2-2 network
#
# Two inputs, two sigmoid hidden units, two classes, one input $x$ of class $t = 1$:
#
# $$z_1 = W_1 x + b_1, \quad h = \sigma(z_1), \quad z_2 = W_2 h + b_2, \quad
# p = \operatorname{softmax}(z_2), \quad L = -\log p_t .$$
#
# Fixed decimals, checkable with a calculator:
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

# %%
x0 = np.array([1.0, -0.5])
t0 = 1
W1 = np.array([[0.5, -0.3], [0.2, 0.8]])
b1 = np.array([0.1, -0.2])
W2 = np.array([[0.7, -0.4], [-0.6, 0.5]])
b2 = np.array([0.05, -0.05])

# %% [markdown]
# `minigrad.nn` has lesson 3's classes and more, such as `nn.Sigmoid()`. A `Sequential` can
# be indexed (`model[0]`) and names its parameters by position, `"0.weight"`, `"0.bias"`, ...;
# `load_state_dict` copies arrays into them by name:

# %% tags=["nbval-check-output"]
small = nn.Sequential(nn.Linear(3, 2), nn.Sigmoid())
print(small[0], "weight shape", small[0].weight.shape, "(out, in)")
print(list(small.state_dict()))
small.load_state_dict({"0.weight": np.ones((2, 3)), "0.bias": np.zeros(2)})
print(small[0].weight)

# %% [markdown]
# ### Exercise 4.1
#
# Write `network(W1, b1, W2, b2)`: a `minigrad.nn` model computing the **logits** $z_2$ of a
# batch, `(N, in)` in and `(N, out)` out, with the sizes read off the weights, and holding
# copies of the given weights. The softmax is not part of the model: `F.cross_entropy`
# applies it (lesson 2).
#
# <details><summary>Hint 1 · the idea</summary>
#
# Two steps: build the layers with the right sizes (read them off the weights' shapes), then
# copy the given values into their parameters.
#
# </details>
# <details><summary>Hint 2 · the names</summary>
#
# `nn.Sequential(nn.Linear(...), nn.Sigmoid(), nn.Linear(...))`, with sizes from `W1.shape`
# and `W2.shape` (`(out, in)`); then `model.load_state_dict({"0.weight": W1, ...,
# "2.bias": b2})` (the sigmoid, layer 1, has none).
#
# </details>

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
# The engine gives the table's numbers:

# %% tags=["nbval-check-output"]
demo = yours_or_reference("4.1", network=network)
model = demo.network(W1, b1, W2, b2)
logits = model(Tensor(x0[None, :]))                 # a batch of one input: shape (1, 2)
loss = F.cross_entropy(logits, np.array([t0]))
print("z2 =", logits.numpy()[0])
print("p  =", F.softmax(logits).numpy()[0])
print(f"L  = {loss.item():.6f}")

# %% [markdown]
# The graph the engine recorded, with the gradients `backward()` leaves on the weights:

# %% tags=["demo"]
loss.backward()
graph.draw(loss, grads=True, names={model[0].weight: "W1", model[0].bias: "b1",
                                    model[2].weight: "W2", model[2].bias: "b2"})
plt.show()
model.zero_grad()

# %% [markdown]
# ## 2. The backward pass by hand
#
# Backwards through the forward formulas, one link of the chain rule at a time, with
# $\delta_2 = \partial L / \partial z_2$ and $\delta_1 = \partial L / \partial z_1$:
# softmax with cross-entropy gives $\delta_2 = p - e_t$ (lesson 2; $e_t$ is the one-hot
# target); a layer $z = Wa + b$ gives $\partial L/\partial W = \delta\, a^\top$,
# $\partial L/\partial b = \delta$ and $\partial L/\partial a = W^\top \delta$; the sigmoid
# multiplies by $\sigma'(z_1) = h \odot (1 - h)$.
#
# <details><summary>Going further · each step, element by element</summary>
#
# $z_{2,i} = \sum_j W_{2,ij} h_j + b_{2,i}$, so $\partial L/\partial W_{2,ij} =
# \delta_{2,i}\, h_j$ (the outer product $\delta_2 h^\top$, with $W_2$'s shape) and
# $\partial L/\partial b_{2,i} = \delta_{2,i}$. $h_j$ feeds every output, so its gradient
# collects from each: $\partial L/\partial h_j = \sum_i W_{2,ij}\, \delta_{2,i}$. Then
# $\delta_1 = \partial L/\partial h \odot h \odot (1 - h)$, and the first layer repeats the
# second with $x$ in place of $h$. Lesson 2's `dB = A.T @ dC` is the same rule for a batch,
# transposed because `nn.Linear` stores $W$ as (out, in).
#
# </details>
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

# %% [markdown]
# On the network, from the engine: each unit's $\delta$, each weight's gradient.

# %% tags=["demo"]
model.zero_grad()
F.cross_entropy(model(Tensor(x0[None, :])), np.array([t0])).backward()
figures.network_deltas(model, x0, t0)
plt.show()

# %% [markdown]
# ### Exercise 4.2
#
# Turn the table into code: complete `hand_gradients(x, t, W1, b1, W2, b2)`, the four weight
# and bias gradients for one input `x` (a vector) of class `t`, in NumPy. The forward pass is
# given. The check compares with the engine to 1e-9, here and on random networks of other
# sizes.
#
# <details><summary>Hint 1 · the idea</summary>
#
# Go down the table of gradients row by row: each row uses only the rows above it and the
# forward values. Mind which products are outer products (a matrix) and which are not.
#
# </details>
# <details><summary>Hint 2 · NumPy</summary>
#
# `np.outer(a, b)` is $a b^\top$; `W2.T @ delta2` is $W_2^\top \delta_2$; `*` is the
# elementwise $\odot$.
#
# </details>

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
# The same gradients three ways: **by hand** (yours, and the table); by the **hand-built
# layers** of `minigrad.course.byhand` (NumPy only); and **by the engine**.

# %%
layers = [byhand.Linear(2, 2), byhand.Sigmoid(), byhand.Linear(2, 2)]
layers[0].W, layers[0].b, layers[2].W, layers[2].b = W1.copy(), b1.copy(), W2.copy(), b2.copy()
hand_net, ce = byhand.MLP(layers), byhand.SoftmaxCrossEntropy()
hand_loss = ce.forward(hand_net.forward(x0[None, :]), np.array([t0]))
hand_net.backward(ce.backward())
by_layers = {"W1": layers[0].dW, "b1": layers[0].db, "W2": layers[2].dW, "b2": layers[2].db}

demo = yours_or_reference("4.1", "4.2", network=network, hand_gradients=hand_gradients)
model = demo.network(W1, b1, W2, b2)
loss = F.cross_entropy(model(Tensor(x0[None, :])), np.array([t0]))
loss.backward()
by_engine = {"W1": model[0].weight.grad, "b1": model[0].bias.grad,
             "W2": model[2].weight.grad, "b2": model[2].bias.grad}
by_you = demo.hand_gradients(x0, t0, W1, b1, W2, b2)
table = {"W1": [[0.184296, -0.092148], [-0.140686, 0.070343]], "b1": [0.184296, -0.140686],
         "W2": [[0.441885, 0.261101], [-0.441885, -0.261101]], "b2": [0.650617, -0.650617]}

print("gradient   |engine - byhand|   |engine - yours|   |engine - table|")
for name in ("W1", "b1", "W2", "b2"):
    gaps = [np.abs(by_engine[name] - np.asarray(other)).max()
            for other in (by_layers[name], by_you[name], table[name])]
    print(f"dL/d{name:<5}  {gaps[0]:15.1e}   {gaps[1]:15.1e}   {gaps[2]:15.1e}")
    assert gaps[0] < 1e-12 and gaps[1] < 1e-12 and gaps[2] < 5.1e-7

# %% [markdown]
# The engine and the hand-built layers agree to the rounding of a float64 (the table has six
# decimals); a wrong term (a sign, a forgotten $\sigma'$) would show around $10^{-1}$. Layer
# by layer, on random batches:

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
# ### Exercise 4.3
#
# Write `train(model, X, y, steps, lr)`: `steps` steps of full-batch gradient descent on the
# cross-entropy with `optim.SGD`; return every step's loss as a Python float. `X` is an array
# `(N, 2)`, `y` integers `(N,)`.
#
# <details><summary>Hint 1 · the idea</summary>
#
# What is made once, before the loop, and what every step? Lesson 3's rule gives the order
# of the four lines inside it.
#
# </details>
# <details><summary>Hint 2 · the details</summary>
#
# `inputs = Tensor(X)` and `opt = optim.SGD(model.parameters(), lr=lr)` before the loop;
# each step `opt.zero_grad()`, `loss = F.cross_entropy(model(inputs), y)`, `loss.backward()`,
# `opt.step()`. Record `loss.item()`: a loss tensor keeps its whole graph alive.
#
# </details>

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
# A 2-16-16-2 ReLU network on the moons (two interleaved half circles), trained twice from
# **the same weights**, with your loop and with the hand-built `byhand.train`, every parameter
# compared after every step.

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


# %% tags=["nbval-check-output"]
demo = yours_or_reference("4.3", train=train)
steps, lr = 300, 0.5
engine_losses, hand_losses, largest_gap = [], [], 0.0
for _ in range(steps):
    engine_losses += demo.train(engine_mlp, X_train, y_train, steps=1, lr=lr)
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
# The two loss curves lie on top of each other; on the right, the decision boundary over
# 1000 points the network never saw.

# %% tags=["demo"]
def probability(points):
    with no_grad():
        return F.softmax(engine_mlp(Tensor(points))).numpy()[:, 1]


figures.moons(engine_losses, hand_losses, largest_gap, probability, X_test, y_test)
plt.show()

# %% [markdown]
# ## 6. The memory a graph holds
#
# Each operation saves the arrays its backward rule needs; for $N$ points through the
# 2-16-16-2 network:
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
# A ReLU's output is also the next linear's input: it counts once.

# %% tags=["nbval-check-output"]
N = 10_000
X_big, y_big = data.moons(N, noise=0.1, seed=2)
inputs_big = Tensor(X_big)
loss = F.cross_entropy(engine_mlp(inputs_big), y_big)
print("operations:", graph.count_ops(loss))
print(f"saved for backward: {graph.saved_bytes(loss):,} bytes")
print(f"by the table:       {16 * N + 256 + 128 * N + 2048 + 128 * N + 256 + 32 * N:,} bytes")
del loss

# %% [markdown]
# Python's `tracemalloc` sees every allocation. One step, after the forward pass, after
# `backward()`, and after `del loss`:

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
# `backward()` drops the saved arrays, but most memory stays: they are mostly activations,
# which the graph's tensors still hold as `.data`. After `del loss`, reference counting frees
# the whole graph (it has **no reference cycles**), back to the start plus the parameters'
# gradients. So training runs in the same memory for as long as you like:

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
figures.memory_over_steps([b / 1e6 for b in after_step], {"peak during a step": peak / 1e6})
plt.show()

# %% [markdown]
# Flat: each step's graph is freed when the next step's `loss = ...` replaces it. (Lesson 1
# showed the opposite: a closure that captures its own output makes a cycle, and the graph
# waits for the garbage collector.)

# %% [markdown]
# ## Summary
#
# - The chain rule, link by link, gives every gradient of a network: for a layer
#   $z = Wa + b$, $\partial L/\partial W = \delta\, a^\top$, $\partial L/\partial b = \delta$,
#   $\partial L/\partial a = W^\top \delta$; softmax with cross-entropy gives $\delta = p - e_t$.
# - The engine reproduced your chain rule (checked to 1e-9), the hand-built layers (to
#   1e-12), and the hand-built training loop (every parameter to 1e-12 over 300 steps on the
#   moons).
# - A step is `zero_grad()`, forward and loss, `backward()`, `step()`; record `loss.item()`.
# - A graph holds its activations until its last tensor goes; with no reference cycles,
#   memory stays flat over many steps.
#
# You have built an autodiff engine, a module library on it, and the evidence that both are
# right. The `minigrad` package goes on: convolutions, Adam, saving models, a GPU backend.
