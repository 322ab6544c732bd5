# %% [markdown]
# # Lesson 3 · Parameters, modules and an optimizer
#
# The engine can differentiate any expression of tensors. Training a network needs more:
# something has to know *which* tensors are the weights, hand them to an update rule, and
# clear their gradients between steps. You write that bookkeeping here, shaped like PyTorch's
# `torch.nn` and `torch.optim`: the same names and the same two rules of a training step.
# (One simplification: our modules also search plain lists and dicts for parameters; PyTorch
# only searches `nn.ModuleList` and `nn.ModuleDict`.)
#
# You write it all on `minigrad.Tensor`, the engine of lesson 2. A demo whose exercise is
# not passing yet runs on the library's own classes (`minigrad.nn`, `minigrad.optim`) and
# says so.
#
# **Time:** about 30 minutes (5 exercises, 1,200 words to read).

# %%
import matplotlib.pyplot as plt
import numpy as np

from minigrad import Tensor, graph, no_grad
from minigrad.course import checks, figures
from minigrad.course.demos import yours_or_reference

np.set_printoptions(precision=4, suppress=True)
figures.setup()   # 100 dpi, 10-point labels

# %% [markdown]
# ## 1. Training with loose tensors
#
# A network with one hidden layer, trained for three steps on four points with nothing but
# tensors:

# %% tags=["nbval-check-output"]
rng = np.random.default_rng(0)
x = Tensor(np.array([[-1.0], [0.0], [1.0], [2.0]]))
y = Tensor(np.array([[1.0], [0.0], [1.0], [4.0]]))

W1 = Tensor(rng.uniform(-1, 1, size=(8, 1)), requires_grad=True)
b1 = Tensor(np.zeros(8), requires_grad=True)
W2 = Tensor(rng.uniform(-0.3, 0.3, size=(1, 8)), requires_grad=True)
b2 = Tensor(np.zeros(1), requires_grad=True)

for step in range(3):
    hidden = (x @ W1.T + b1).relu()
    loss = ((hidden @ W2.T + b2 - y) ** 2).mean()
    for t in (W1, b1, W2, b2):          # list 1: clear the old gradients
        t.grad = None
    loss.backward()
    for t in (W1, b1, W2, b2):          # list 2: move against the gradient
        t.data = t.data - 0.05 * t.grad
    print(f"step {step}: loss {loss.item():.6f}")

# %% [markdown]
# It works, but the weights are listed twice by hand. Forget one tensor in one list and
# nothing crashes: that weight never learns, or its gradient silently piles up. PyTorch's
# answer: a **`Parameter`** is a tensor marked as learned, a **`Module`** finds the
# parameters it holds, and an **optimizer** gets them once and owns the update and the
# zeroing.

# %% [markdown]
# ## 2. `Parameter`: a tensor the model learns
#
# A parameter is a `Tensor` that always requires a gradient and is a leaf. Being a subclass
# is what matters: `isinstance(value, Parameter)` tells a weight from a constant tensor.
# `minigrad.Tensor`'s constructor is `Tensor(data, requires_grad=False, dtype=None)`; `dtype`
# is a NumPy dtype such as `np.float32` (None keeps float64).
#
# ### Exercise 3.1
#
# Write `Parameter.__init__(self, data, dtype=None)`: make `self` a tensor of `data` (with
# `dtype` if given) that requires grad.
#
# <details><summary>Hint 1 · the idea</summary>
#
# A `Parameter` *is* a `Tensor` with one setting fixed. Let the parent class do the work.
#
# </details>
# <details><summary>Hint 2 · the call</summary>
#
# Call `Tensor.__init__` through `super().__init__(...)`, passing `data`, `dtype` and
# `requires_grad=True`.
#
# </details>

# %% tags=["exercise:3.1"]
class Parameter(Tensor):
    """A tensor that a model learns: a leaf that always requires grad."""

    def __init__(self, data, dtype=None):
        ### BEGIN SOLUTION
        super().__init__(data, requires_grad=True, dtype=dtype)
        ### END SOLUTION


# %% tags=["check:3.1"]
checks.lesson3.parameter(Parameter)

# %% [markdown]
# ## 3. `Module`: a model that finds its own parameters
#
# A module keeps what it needs as ordinary attributes (`self.weight = Parameter(...)`,
# `self.layers = [...]`), which Python stores in `vars(self)`, a dictionary. Four kinds of
# value can lead to a parameter:
#
# | an attribute's value | what `parameters()` does with it |
# |---|---|
# | a `Parameter` | keep it |
# | a `Module` | keep everything *its* `parameters()` returns (this is the recursion) |
# | a `list`, `tuple` or `dict` | look at each item (a dict's values) the same way |
# | anything else (a number, a string, a constant `Tensor`) | skip it |
#
# One subtlety: a parameter can be reachable twice (one module stored under two names, to
# share weights). `parameters()` returns it **once**, or the optimizer would update it twice.

# %% [markdown]
# ### Exercise 3.2
#
# Write `Module.parameters()`: return a list of every `Parameter` reachable from the module's
# attributes, following the table above, each one once. The rest of the class is given:
# calling a module runs its `forward`, and `zero_grad()` uses your `parameters()`.
#
# <details><summary>Hint 1 · the idea</summary>
#
# The table is a recursive rule: one function that handles *one value*, row by row, and
# calls itself on what the value contains. Start it on every attribute's value.
#
# </details>
# <details><summary>Hint 2 · the details</summary>
#
# For a module, use its own `parameters()`. To keep each parameter once, compare with `is`
# (`any(p is q for q in found)`): `==` and `in` compare tensors elementwise.
#
# </details>

# %% tags=["exercise:3.2"]
class Module:
    """Base class of layers and models: calling it runs forward(); it finds its parameters."""

    def __call__(self, *args):
        return self.forward(*args)

    def forward(self, *args):
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def parameters(self):
        """Every Parameter in this module and in the modules, lists, tuples and dicts it holds,
        each once, as a list."""
        ### BEGIN SOLUTION
        found = []

        def collect(value):
            if isinstance(value, Parameter):
                if not any(value is p for p in found):
                    found.append(value)
            elif isinstance(value, Module):
                for p in value.parameters():
                    collect(p)
            elif isinstance(value, (list, tuple)):
                for item in value:
                    collect(item)
            elif isinstance(value, dict):
                for item in value.values():
                    collect(item)

        for value in vars(self).values():
            collect(value)
        return found
        ### END SOLUTION

    def zero_grad(self):
        """Forget the gradients of every parameter (before the next backward pass)."""
        for p in self.parameters():
            p.grad = None


# %% tags=["check:3.2"]
checks.lesson3.parameters(Module, Parameter)

# %% [markdown]
# A module with a weight, a constant and a list holding another module:

# %% tags=["demo"]
demo = yours_or_reference("3.1", "3.2", Module=Module, Parameter=Parameter)


class Scale(demo.Module):
    def __init__(self):
        self.gain = demo.Parameter(np.ones(3))
        self.mask = Tensor(np.array([1.0, 0.0, 1.0]))   # a constant: not learned

    def forward(self, x):
        return x * self.gain * self.mask


class TwoScales(demo.Module):
    def __init__(self):
        self.first = Scale()
        self.rest = [Scale()]
        self.offset = demo.Parameter(np.zeros(3))

    def forward(self, x):
        return self.rest[0](self.first(x)) + self.offset


print([p.shape for p in TwoScales().parameters()])

# %% [markdown]
# ## 4. `Linear`: the fully connected layer
#
# A linear layer maps `in_features` numbers to `out_features` numbers. For a batch `x` of
# shape `(N, in_features)`:
#
# $$y = x W^\top + b, \qquad W: (\text{out}, \text{in}), \quad b: (\text{out},), \quad y: (N, \text{out}).$$
#
# The weight is stored as `(out, in)`, one row per output unit (PyTorch's layout, hence the
# transpose); the bias broadcasts over the batch.
#
# If every weight were equal, every output unit would compute the same thing and get the same
# gradient, forever. PyTorch draws weight and bias uniformly from $(-k, k)$ with
# $k = 1/\sqrt{\text{in}}$, so that outputs do not grow with the number of inputs.

# %% [markdown]
# ### Exercise 3.3
#
# Write `Linear`:
#
# - `__init__(in_features, out_features, rng=None)`: `self.weight`, a `Parameter` of shape
#   `(out_features, in_features)`, then `self.bias`, of shape `(out_features,)`, both drawn
#   with `rng.uniform(-k, k, size=...)` (the line that makes `rng` a Generator is given);
# - `forward(x)`: `x @ W.T + b`, with the tensors themselves, so that the engine records it.
#
# <details><summary>Hint 1 · the idea</summary>
#
# The two shapes say which dimension is which; `k` depends only on `in_features`. In
# `forward`, everything the gradient must reach has to be a tensor the engine sees.
#
# </details>
# <details><summary>Hint 2 · the formulas</summary>
#
# `k = 1 / np.sqrt(in_features)`; `Parameter(rng.uniform(-k, k, size=(out_features,
# in_features)))`, and the bias likewise with `size=(out_features,)`. `forward` uses
# `self.weight` and `self.bias` themselves, not their `.data`.
#
# </details>

# %% tags=["exercise:3.3"]
class Linear(Module):
    """y = x @ weight.T + bias, with weight of shape (out_features, in_features)."""

    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        ### BEGIN SOLUTION
        k = 1.0 / np.sqrt(in_features)
        self.weight = Parameter(rng.uniform(-k, k, size=(out_features, in_features)))
        self.bias = Parameter(rng.uniform(-k, k, size=(out_features,)))
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        return x @ self.weight.T + self.bias
        ### END SOLUTION


# %% tags=["check:3.3"]
checks.lesson3.linear(Linear, Parameter)

# %% [markdown]
# ## 5. `ReLU` and `Sequential`
#
# An activation is a module without parameters, so it can sit in a list of layers.
# `Sequential(layer1, layer2, ...)` feeds its input through its layers in order, kept in a list
# attribute where your `parameters()` finds their weights.
#
# ### Exercise 3.4
#
# Write `ReLU.forward` and `Sequential.__init__` / `Sequential.forward`.
#
# <details><summary>Hint 1 · the idea</summary>
#
# The engine already has `x.relu()`. `Sequential` feeds each layer's output to the next.
#
# </details>
# <details><summary>Hint 2 · the details</summary>
#
# In `__init__(self, *layers)`, `layers` is a tuple: store it as a list in `self.layers`.
# `forward` is a loop: `x = layer(x)` for each layer, then return `x`.
#
# </details>

# %% tags=["exercise:3.4"]
class ReLU(Module):
    """max(x, 0), elementwise."""

    def forward(self, x):
        ### BEGIN SOLUTION
        return x.relu()
        ### END SOLUTION


class Sequential(Module):
    """Layers applied one after another: Sequential(a, b, c)(x) == c(b(a(x)))."""

    def __init__(self, *layers):
        ### BEGIN SOLUTION
        self.layers = list(layers)
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        for layer in self.layers:
            x = layer(x)
        return x
        ### END SOLUTION


# %% tags=["check:3.4"]
checks.lesson3.relu_and_sequential(ReLU, Sequential)

# %% [markdown]
# The network of section 1 is now one expression, and it knows its four weights:

# %% tags=["nbval-check-output"]
demo = yours_or_reference("3.1", "3.2", "3.3", "3.4", Linear=Linear, ReLU=ReLU,
                          Sequential=Sequential)
model = demo.Sequential(demo.Linear(1, 8, rng=0), demo.ReLU(), demo.Linear(8, 1, rng=1))
print([p.shape for p in model.parameters()])

# %% [markdown]
# The tree `parameters()` walked to find them:

# %% tags=["demo"]
figures.module_tree(model)
plt.show()

# %% [markdown]
# ## 6. The update must stay out of the graph
#
# The update rule is $w \leftarrow w - \eta\, \partial L / \partial w$, with learning rate
# $\eta$. The obvious line is `layer.weight = layer.weight - lr * grad`. But a subtraction of
# tensors that require grad is an operation like any other: the engine records it.

# %% tags=["nbval-check-output"]
demo = yours_or_reference("3.1", "3.2", "3.3", Parameter=Parameter, Linear=Linear)
xs = Tensor(np.array([[1.0, 2.0], [3.0, -1.0]]))
ts = Tensor(np.array([[1.0], [0.0]]))
layer = demo.Linear(2, 1, rng=0)

loss = ((layer(xs) - ts) ** 2).mean()                       # step 1
loss.backward()
old_weight = layer.weight
layer.weight = layer.weight - 0.1 * layer.weight.grad      # the update, as Tensor maths
print("the new weight:", layer.weight)
print("is it a Parameter?", isinstance(layer.weight, demo.Parameter),
      "| a leaf?", layer.weight.is_leaf, "| recorded:", graph.count_ops(layer.weight))
print("parameters the layer still has:", len(list(layer.parameters())))

old_weight.grad = None                                      # forget step 1's gradient
loss = ((layer(xs) - ts) ** 2).mean()                       # step 2
loss.backward()
print("operations in step 2's graph:", graph.count_ops(loss))
print("gradient on the weight the layer uses:", layer.weight.grad)
print("gradient on the old weight, no longer in the model:", old_weight.grad.ravel())

# %% [markdown]
# Three things went wrong. The weight is now the *output of an operation*, which
# `parameters()` does not find. Step 2's graph contains the update itself (the second `sub`).
# And the gradient lands on the old weight, not on the one the layer uses. Each recorded
# update also adds a node to the weight's history:

# %% tags=["nbval-check-output"]
w = demo.Linear(2, 1, rng=0).weight
for k in range(5):
    w = w - 0.1 * np.ones((1, 2))
    print(f"recorded updates: {k + 1}, tensors in the weight's history: {len(graph.nodes(w))}")

# %% [markdown]
# After a thousand steps the weight would sit at the end of a thousand-step chain, kept in
# memory and walked by every backward pass. Two rules avoid all of it:
#
# 1. **Run the update under `no_grad()`**: operations inside record nothing (no parents, no
#    saved arrays), as in PyTorch's `torch.no_grad()`.
# 2. **Keep the same `Parameter` object**: the model and the optimizer both hold it, so the
#    update gives it new numbers (`p.data = ...`, a new array in the same tensor) instead of
#    making a new tensor.

# %% tags=["nbval-check-output"]
layer = demo.Linear(2, 1, rng=0)
with no_grad():
    new = layer.weight - 0.1 * np.ones((1, 2))
print("under no_grad:", new, "| leaf:", new.is_leaf, "| recorded:", graph.count_ops(new))

# %% [markdown]
# ## 7. `SGD`: the optimizer
#
# The optimizer takes the parameters once; each step, `zero_grad()` before the backward pass
# and `step()` after it.
#
# ### Exercise 3.5
#
# Write `SGD`:
#
# - `__init__(params, lr)`: keep the parameters **as a list** (a generator runs only once) and
#   the learning rate;
# - `step()`: for every parameter that has a gradient, `p.data = p.data - lr * p.grad`
#   (under `no_grad()`: the decorator is given);
# - `zero_grad()`: set every parameter's `.grad` to `None`.
#
# <details><summary>Hint 1 · the idea</summary>
#
# The optimizer keeps the parameter objects themselves and gives them new numbers. A
# parameter whose `.grad` is `None` got no gradient this step: skip it.
#
# </details>
# <details><summary>Hint 2 · the details</summary>
#
# Assign to `p.data` (`p = ...` only rebinds the loop variable):
# `p.data = p.data - self.lr * p.grad`.
#
# </details>

# %% tags=["exercise:3.5"]
class SGD:
    """Plain stochastic gradient descent: p <- p - lr * p.grad."""

    def __init__(self, params, lr):
        ### BEGIN SOLUTION
        self.params = list(params)
        self.lr = lr
        ### END SOLUTION

    @no_grad()
    def step(self):
        ### BEGIN SOLUTION
        for p in self.params:
            if p.grad is not None:
                p.data = p.data - self.lr * p.grad
        ### END SOLUTION

    def zero_grad(self):
        ### BEGIN SOLUTION
        for p in self.params:
            p.grad = None
        ### END SOLUTION


# %% tags=["check:3.5"]
checks.lesson3.sgd(SGD, Parameter)

# %% [markdown]
# ## 8. Why zero the gradients?
#
# minigrad's `backward()`, like PyTorch's, *adds* into the leaves' `.grad`, over calls too
# (each call builds a new graph here): gradients left over from the previous step are still
# there. The same backward pass three times without clearing:

# %% tags=["nbval-check-output"]
layer = demo.Linear(2, 1, rng=0)
for k in range(1, 4):
    loss = ((layer(xs) - ts) ** 2).mean()
    loss.backward()
    print(f"after backward #{k}: weight.grad = {layer.weight.grad.ravel()}")

# %% [markdown]
# The same loss, a growing gradient. In training, each step then moves by the *sum of all
# gradients so far*. Two identical models, trained with `zero_grad()` and without:

# %% tags=["nbval-check-output"]
demo = yours_or_reference("3.1", "3.2", "3.3", "3.5", Linear=Linear, SGD=SGD)


def train(model, steps, lr, zero):
    opt = demo.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        if zero:
            opt.zero_grad()
        loss = ((model(xs) - ts) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


with_zero = train(demo.Linear(2, 1, rng=0), steps=8, lr=0.05, zero=True)
without = train(demo.Linear(2, 1, rng=0), steps=8, lr=0.05, zero=False)
print("step   with zero_grad   without")
for k, (a, b) in enumerate(zip(with_zero, without)):
    print(f"{k:4d}   {a:14.6f}   {b:9.6f}")

# %% [markdown]
# With zeroing, the loss falls steadily. Without it, the loss falls faster for a moment,
# then climbs back above 2. Nothing crashed, which is why this bug is common. The rule of
# every training loop: `zero_grad()`, forward, `backward()`, `step()`.

# %% [markdown]
# ## 9. Train a small network
#
# A `1-32-32-1` ReLU network fits $y = \sin(2x)$ on 64 points with full-batch SGD, with
# the loop you will write in every framework.

# %% tags=["demo"]
demo = yours_or_reference("3.1", "3.2", "3.3", "3.4", "3.5", Linear=Linear, ReLU=ReLU,
                          Sequential=Sequential, SGD=SGD)
xs_fit = np.linspace(-2, 2, 64).reshape(-1, 1)
inputs, targets = Tensor(xs_fit), Tensor(np.sin(2 * xs_fit))
net = demo.Sequential(demo.Linear(1, 32, rng=0), demo.ReLU(), demo.Linear(32, 32, rng=1),
                      demo.ReLU(), demo.Linear(32, 1, rng=2))
opt = demo.SGD(net.parameters(), lr=0.1)
history = []
for step in range(1500):
    opt.zero_grad()
    loss = ((net(inputs) - targets) ** 2).mean()
    loss.backward()
    opt.step()
    history.append(loss.item())
print(f"loss: {history[0]:.4f} at the start, {history[-1]:.2e} after {len(history)} steps")

with no_grad():
    fitted = net(inputs).numpy()
figures.fit(xs_fit, np.sin(2 * xs_fit), fitted, history)
plt.show()

# %% [markdown]
# ## Summary
#
# - A **`Parameter`** is a leaf tensor that requires grad; a **`Module`** finds its parameters
#   by walking its attributes, each parameter once, however deep.
# - **`Linear`** stores `W` as `(out, in)`, computes `x @ W.T + b`, and starts from small,
#   different random values.
# - **`SGD.step()`** gives each parameter new numbers, *under `no_grad()`*;
#   **`zero_grad()`** comes before every backward pass, because `backward()` accumulates.
#
# **Next:** lesson 4 holds the library's versions of these classes to gradients derived by
# hand, and trains a network on the moons.
