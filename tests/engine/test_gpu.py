"""The engine on a GPU through CuPy, and the device errors a student meets.

Two kinds of tests live here:

* the *device errors* -- asking for ``"cuda"`` without CuPy, with a CuPy that cannot be
  imported, or without a GPU; mixing a CPU and a GPU tensor in one operation. These run on
  every machine: the missing pieces are simulated by replacing ``backend.cp`` (the CuPy module
  the engine imported, or ``None``) with stand-ins.
* the *GPU tests* (marked ``gpu``) -- a training step, convolutions, the optimizers and saving
  on CuPy, compared with NumPy. They are skipped where CuPy cannot find a device; on a GPU
  machine ``bench/gpu_check.sh`` runs them with the namespace-parametrised engine tests.
"""
from __future__ import annotations

import types

import array_api_strict
import numpy as np
import pytest
from tests.support.engine_helpers import mlp_sgd_step

import minigrad as mg
import minigrad.functional as F
from minigrad import backend, nn, optim
from minigrad.backend import cupy_available

gpu = pytest.mark.skipif(not cupy_available(),
                         reason="CuPy is not installed or sees no CUDA device")


# ---------------------------------------------------------------------------------------------
# Stand-ins for the pieces a machine may lack


def _fake_cupy(device_count=1, error: Exception | None = None) -> types.SimpleNamespace:
    """A stand-in for the ``cupy`` module: its runtime counts ``device_count`` GPUs, or raises."""
    def get_device_count() -> int:
        if error is not None:
            raise error
        return device_count

    runtime = types.SimpleNamespace(getDeviceCount=get_device_count)
    return types.SimpleNamespace(ndarray=FakeGpuArray, cuda=types.SimpleNamespace(runtime=runtime))


class FakeGpuArray:
    """An array on ``cuda:0`` that, like a CuPy array, refuses to meet a NumPy array."""

    __array_ufunc__ = None  # NumPy hands ``ndarray + FakeGpuArray`` over to __radd__

    def __init__(self, shape: tuple[int, ...], dtype: str = "float64") -> None:
        self.shape, self.dtype, self.ndim = shape, np.dtype(dtype), len(shape)
        self.device = types.SimpleNamespace(id=0)

    def __array_namespace__(self, api_version=None):
        return np  # for dtype questions only: any operation with a NumPy array still refuses

    def _refuse(self, other):
        raise TypeError(f"Unsupported type {type(other)}")  # CuPy's own words

    __add__ = __radd__ = __mul__ = __rmul__ = __matmul__ = __rmatmul__ = _refuse


def _on_fake_gpu(shape: tuple[int, ...]) -> mg.Tensor:
    """A tensor whose data is a FakeGpuArray (set after construction: NumPy would refuse it)."""
    t = mg.Tensor(np.zeros(shape))
    t.data = FakeGpuArray(shape)
    return t


NOT_INSTALLED = ModuleNotFoundError("No module named 'cupy'", name="cupy")


# ---------------------------------------------------------------------------------------------
# Asking for "cuda" says what is missing


@pytest.mark.parametrize("make", [
    lambda: mg.tensor([1.0, 2.0]).to("cuda"),
    lambda: mg.tensor([1.0, 2.0], device="cuda"),
    lambda: nn.Linear(2, 3, seed=0, device="cuda"),
    lambda: nn.Linear(2, 3, seed=0).to("cuda:0"),
], ids=["Tensor.to", "tensor(device=)", "Linear(device=)", "Module.to"])
def test_cuda_without_cupy_says_cupy_is_not_installed(monkeypatch, make):
    monkeypatch.setattr(backend, "cp", None)
    monkeypatch.setattr(backend, "_CUPY_IMPORT_ERROR", NOT_INSTALLED)
    with pytest.raises(RuntimeError, match="CuPy is not installed") as info:
        make()
    message = str(info.value)
    assert "cupy-cuda12x" in message and "cupy-cuda13x" in message  # what to install, per CUDA
    assert not cupy_available()


def test_cuda_with_a_cupy_that_cannot_load_says_so(monkeypatch):
    broken = ImportError("libnvrtc.so.13: cannot open shared object file")
    monkeypatch.setattr(backend, "cp", None)
    monkeypatch.setattr(backend, "_CUPY_IMPORT_ERROR", broken)
    with pytest.raises(RuntimeError, match="CuPy is installed but cannot be imported") as info:
        mg.tensor([1.0]).to("cuda")
    assert "libnvrtc.so.13" in str(info.value)  # the loader's own reason, kept
    assert "cupy-cuda13x for CUDA 13" in str(info.value)


def test_cuda_without_a_gpu_says_no_gpu_was_found(monkeypatch):
    no_device = RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")
    monkeypatch.setattr(backend, "cp", _fake_cupy(error=no_device))
    with pytest.raises(RuntimeError, match="CuPy is installed but finds no CUDA GPU") as info:
        mg.tensor([1.0]).to("cuda")
    assert "cudaErrorNoDevice" in str(info.value)
    assert "to('cuda')" in str(info.value)
    assert not cupy_available()


def test_cuda_without_a_driver_says_the_driver_is_missing_or_old(monkeypatch):
    # CuPy's words on a machine with no NVIDIA driver, or one older than its CUDA
    old = RuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient for "
                       "CUDA runtime version")
    monkeypatch.setattr(backend, "cp", _fake_cupy(error=old))
    with pytest.raises(RuntimeError, match="finds no usable NVIDIA driver") as info:
        mg.tensor([1.0]).to("cuda")
    assert "cupy-cuda12x" in str(info.value) and "cudaErrorInsufficientDriver" in str(info.value)


def test_cuda_with_zero_devices_says_no_gpu_was_found(monkeypatch):
    monkeypatch.setattr(backend, "cp", _fake_cupy(device_count=0))
    with pytest.raises(RuntimeError, match=r"finds no CUDA GPU \(it counts 0 devices\)"):
        nn.Linear(2, 2, seed=0, device="cuda")


def test_cuda_device_number_beyond_the_gpus_names_the_range(monkeypatch):
    monkeypatch.setattr(backend, "cp", _fake_cupy(device_count=2))
    with pytest.raises(RuntimeError, match=r"no GPU number 5: CuPy sees 2 \(cuda:0 to cuda:1\)"):
        mg.tensor([1.0]).to("cuda:5")
    assert backend.cuda_problem(1) is None and cupy_available()


@pytest.mark.parametrize("device", ["gpu", "cuda:x", "cuda0", "CPU", ""])
def test_unknown_device_names_what_is_expected(device):
    with pytest.raises(ValueError, match=r"unknown device .*expected 'cpu', 'cuda' or 'cuda:N'"):
        mg.tensor([1.0]).to(device)


# ---------------------------------------------------------------------------------------------
# Mixing devices in one operation names both


@pytest.mark.parametrize("name, fn", [
    ("add", lambda a, b: a + b),
    ("mul", lambda a, b: a * b),
    ("matmul", lambda a, b: a @ b),
])
@pytest.mark.parametrize("gpu_first", [False, True])
def test_mixing_cpu_and_gpu_tensors_names_both_devices(monkeypatch, name, fn, gpu_first):
    monkeypatch.setattr(backend, "cp", _fake_cupy())
    cpu, gpu_t = mg.tensor(np.ones((2, 2))), _on_fake_gpu((2, 2))
    a, b = (gpu_t, cpu) if gpu_first else (cpu, gpu_t)
    first, second = ("cuda:0", "cpu") if gpu_first else ("cpu", "cuda:0")
    with pytest.raises(RuntimeError) as info:
        fn(a, b)
    assert str(info.value) == (
        f"{name}: expected both tensors on one device; got {first} and {second}. "
        f"Move one with .to('{second}') or .to('{first}').")


@pytest.mark.parametrize("loss", [F.cross_entropy, F.nll_loss])
def test_targets_on_another_device_than_the_logits_name_both(monkeypatch, loss):
    monkeypatch.setattr(backend, "cp", _fake_cupy())
    logits = mg.tensor(np.zeros((3, 2)), requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        loss(logits, FakeGpuArray((3,), "int64"))  # the labels were moved to the GPU, the model was not
    assert str(info.value).startswith(f"{loss.__name__}: expected both tensors on one device; "
                                      "got cpu and cuda:0.")


def test_mixing_devices_of_array_api_strict_names_both():
    """array-api-strict has devices of its own that refuse to mix: a real second device."""
    a = mg.Tensor(array_api_strict.asarray([1.0, 2.0]))
    b = mg.Tensor(array_api_strict.asarray([1.0, 2.0], device=array_api_strict.Device("device1")))
    for fn in (lambda: a + b, lambda: a @ b, lambda: mg.maximum(a, b)):
        with pytest.raises(RuntimeError, match="expected both tensors on one device") as info:
            fn()
        assert "CPU_DEVICE" in str(info.value) and "device1" in str(info.value)


def test_a_shape_error_on_one_device_is_still_a_shape_error():
    with pytest.raises(ValueError, match="do not broadcast"):
        mg.tensor(np.ones((2, 3))) + mg.tensor(np.ones(4))
    with pytest.raises(TypeError):  # not a device problem: the array library's own error stays
        mg.tensor(np.ones(2)) + mg.Tensor(np.array(["a", "b"]))


# ---------------------------------------------------------------------------------------------
# On a real GPU (skipped where CuPy finds none)


def _train(device: str, steps: int = 10) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(64, 2)), rng.integers(0, 2, size=64)
    init = [rng.normal(size=s) * 0.5 for s in [(2, 16), (16,), (16, 2), (2,)]]
    params = [mg.tensor(p, requires_grad=True, device=device) for p in init]
    xs, ys = mg.tensor(x, device=device), mg.tensor(y, device=device)
    for _ in range(steps):
        mlp_sgd_step(params, xs, ys)
    assert params[0].device == ("cpu" if device == "cpu" else "cuda:0")
    return [p.numpy() for p in params]


@gpu
def test_training_step_on_the_gpu_matches_numpy():
    for a, b in zip(_train("cpu"), _train("cuda")):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


@gpu
def test_to_cpu_round_trip():
    t = mg.tensor([1.0, 2.0]).to("cuda")
    assert t.device == "cuda:0"
    np.testing.assert_array_equal(t.to("cpu").numpy(), [1.0, 2.0])
    assert backend.cuda_problem() is None


@gpu
def test_mixing_real_numpy_and_cupy_tensors_names_both_devices():
    cpu, cuda = mg.tensor(np.ones((2, 2))), mg.tensor(np.ones((2, 2)), device="cuda")
    for fn in (lambda: cpu + cuda, lambda: cuda * cpu, lambda: cpu @ cuda, lambda: cuda @ cpu):
        with pytest.raises(RuntimeError, match="expected both tensors on one device") as info:
            fn()
        assert "cpu" in str(info.value) and "cuda:0" in str(info.value)


@gpu
def test_a_gpu_number_beyond_the_machine_names_the_range():
    import cupy

    n = cupy.cuda.runtime.getDeviceCount()
    with pytest.raises(RuntimeError, match=f"no GPU number {n}: CuPy sees {n}"):
        mg.tensor([1.0]).to(f"cuda:{n}")


def _lenet_like(device: str) -> tuple[list[np.ndarray], list[float]]:
    """Conv, pool, linear, SGD with momentum: two steps, float64, on ``device``."""
    rng = np.random.default_rng(1)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, seed=0), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(4, 6, 3, stride=2, seed=1), nn.ReLU(), nn.Flatten(),
                          nn.Linear(6 * 1 * 1, 3, seed=2)).to(device)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = mg.tensor(rng.normal(size=(5, 1, 6, 6)), device=device)
    y = mg.tensor(rng.integers(0, 3, size=5), device=device)
    losses = []
    for _ in range(2):  # the course's training loop (alike only: lesson 4's demo has it too)
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(p.device == ("cpu" if device == "cpu" else "cuda:0") for p in model.parameters())
    return [p.numpy() for p in model.parameters()], losses


@gpu
def test_convolution_pooling_and_momentum_on_the_gpu_match_numpy():
    (cpu, cpu_losses), (cuda, cuda_losses) = _lenet_like("cpu"), _lenet_like("cuda")
    np.testing.assert_allclose(cuda_losses, cpu_losses, rtol=1e-10)
    for a, b in zip(cpu, cuda):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12)


@gpu
def test_adam_and_integer_indexing_on_the_gpu_match_numpy():
    def run(device: str) -> np.ndarray:
        table = nn.Parameter(mg.tensor(np.linspace(-1, 1, 12).reshape(4, 3), device=device))
        rows = mg.tensor([0, 2, 2, 3], device=device)  # repeated rows: scatter-add backward
        opt = optim.Adam([table], lr=0.05)
        for _ in range(3):
            opt.zero_grad()
            (table[rows.data] ** 2).sum().backward()
            opt.step()
        return table.numpy()

    np.testing.assert_allclose(run("cuda"), run("cpu"), rtol=1e-10)


@gpu
def test_a_model_saved_from_the_gpu_loads_on_the_cpu(tmp_path):
    gpu_model = nn.Linear(3, 2, seed=4, device="cuda")
    mg.save(gpu_model.state_dict(), tmp_path / "m.npz")
    cpu_model = nn.Linear(3, 2, seed=5)
    cpu_model.load_state_dict(mg.load(tmp_path / "m.npz"))
    np.testing.assert_array_equal(cpu_model.weight.numpy(), gpu_model.weight.numpy())
    assert cpu_model.weight.device == "cpu"


@gpu
def test_linear_gradient_written_into_the_fused_buffer_on_the_gpu_matches_numpy():
    # Linear's weight and bias gradients go straight into the fused SGD's gradient buffer
    # (cupy.matmul with out=): the same numbers as NumPy, in the buffer itself.
    def run(device: str) -> tuple[nn.Linear, list[np.ndarray]]:
        model = nn.Linear(3, 2, seed=6).to(device)
        opt = optim.SGD(model.parameters(), lr=0.1)
        x = mg.tensor(np.arange(12.0).reshape(4, 3), device=device)
        for _ in range(2):
            opt.zero_grad()
            (model(x) ** 2).sum().backward()
            opt.step()
        return model, [mg.tensor(p.grad).numpy() for p in model.parameters()]

    (gpu_model, gpu_grads), (_, cpu_grads) = run("cuda"), run("cpu")
    assert gpu_model.weight.grad is gpu_model.weight._grad_buffer
    for a, b in zip(gpu_grads, cpu_grads):
        np.testing.assert_allclose(a, b, rtol=1e-12)
