"""Which array namespace an array lives in, and the few things the array API lacks.

This is the only module of the engine that imports NumPy (or CuPy). Everything else asks
:func:`namespace` for the namespace of the array at hand and calls functions on it, so the same
engine code runs on NumPy, on CuPy (a GPU) and on ``array-api-strict`` (the standard, nothing
more).

What the standard lacks and the engine needs lives here, with a fast path for NumPy/CuPy and a
fallback made only of standard functions:

* :func:`scatter_add` -- the backward pass of indexing with integer arrays;
* :func:`sliding_windows` -- the patches that ``im2col`` turns into one matrix product, and
  :func:`add_windows` (col2im), which adds patches back where they came from.
"""
from __future__ import annotations

import functools
import re
import threading
import types
from collections.abc import Callable
from typing import Any

import array_api_compat
import array_api_compat.numpy as _compat_numpy
import numpy as np

from ._utils import pair

# CuPy is optional: present only with the ``gpu`` extra (cupy-cuda12x) or cupy-cuda13x. Why it
# could not be imported is kept, to tell a user asking for "cuda" what is missing.
#: An array of any array-API namespace (NumPy, CuPy, array-api-strict): they share no
#: static type, so hints say ``Array`` where an array goes and mean any of them.
Array = Any

_CUPY_IMPORT_ERROR: Exception | None = None
try:
    import cupy as cp
except Exception as exc:  # pragma: no cover - depends on the machine
    cp = None
    _CUPY_IMPORT_ERROR = exc

__all__ = [
    "namespace", "asarray", "to_numpy", "resolve_dtype", "is_floating", "is_integer",
    "scatter_add", "sliding_windows", "window_slice", "add_windows", "device_name",
    "cupy_available", "cuda_problem", "check_same_device", "to_device", "default_rng",
    "uniform", "copy_to", "matmul_into", "times_mask", "reduce_sum", "reduce_max", "take",
    "CreationHook", "creation_hook", "is_numpy",
]

# NumPy 2.1 and later implement the array API standard in the ``numpy`` namespace itself (with
# ``astype``, ``permute_dims``, ``concat``, ...), so the engine calls NumPy directly there;
# array-api-compat's wrappers cost up to a microsecond and a half per call on small arrays.
_NUMPY_IS_STANDARD = tuple(int(v) for v in np.__version__.split(".")[:2]) >= (2, 1)

# ---------------------------------------------------------------------------------------------
# Array creation that minigrad.compile can see
#
# ``np.zeros(shape)`` takes no array, so NumPy cannot tell an array subclass about it, and a
# recording of a step (minigrad.compile) would miss the new array and the values it starts with.
# Instead of patching NumPy for the whole process, the engine's NumPy namespace is a copy of the
# ``numpy`` module whose array makers report what they made to the hook of the *current thread*
# (set only while that thread records a step; None, and one attribute read, otherwise).


class CreationHook:
    """What a recording is told (see :func:`creation_hook`); the base class ignores it all."""

    def created(self, array: Any, fill: Any) -> Any:
        """``array`` was just made by ``np.zeros`` (fill 0), ``ones`` (1), ``full``
        ("full") or ``empty`` (None); return the array the engine should use."""
        return array

    def viewed(self, view: Any, base: Any) -> Any:
        """``view`` is a strided view of ``base`` (``as_strided``); return the array to use."""
        return view

    def seen(self, x: Any) -> Any:
        """``x`` as the recording should see it: an array from outside the step (a class
        weight) read with an index that the recording sees, in a call that NumPy dispatches
        on ``x`` alone (``take``)."""
        return x


class _ThreadHook(threading.local):
    hook: CreationHook | None = None


_HOOK = _ThreadHook()


def creation_hook(hook: CreationHook | None) -> CreationHook | None:
    """Set the current thread's creation hook (None: none); return the previous one.

    Used by :mod:`minigrad.compile` while it records a step. Other threads, and code that calls
    ``numpy`` itself, never see it.
    """
    previous, _HOOK.hook = _HOOK.hook, hook
    return previous


_MAKERS = {"zeros": 0, "ones": 1, "full": "full", "empty": None}


def _observed(make: Callable[..., Any], fill: Any) -> Callable[..., Any]:
    @functools.wraps(make)
    def create(*args: Any, **kwargs: Any) -> Any:
        array = make(*args, **kwargs)
        hook = _HOOK.hook
        return array if hook is None else hook.created(array, fill)
    return create


def _observed_namespace(module: Any) -> Any:
    """A copy of namespace ``module`` whose array makers report to the creation hook."""
    copy = types.ModuleType(module.__name__, module.__doc__)
    copy.__dict__.update(vars(module))
    for name, fill in _MAKERS.items():
        setattr(copy, name, _observed(getattr(module, name), fill))
    return copy


def _as_strided(x: Any, shape: tuple[int, ...], strides: tuple[int, ...],
                writeable: bool = True) -> Any:
    """NumPy's ``as_strided``, told to the creation hook (the view would hide its base)."""
    view = np.lib.stride_tricks.as_strided(x, shape, strides, writeable=writeable)
    hook = _HOOK.hook
    return view if hook is None else hook.viewed(view, x)


def take(x: Any, indices: Any, axis: int | None = None) -> Any:
    """``xp.take(x, indices, axis=axis)``. NumPy hands ``take`` to an array subclass only when
    ``x`` is one, so while a step is recorded ``x`` is first shown to the creation hook."""
    hook = _HOOK.hook
    if hook is not None:
        x = hook.seen(x)
    return namespace(x).take(x, indices, axis=axis)


# NumPy >= 2.1 is an array-API namespace itself (the engine calls it directly, skipping the
# wrappers' cost); older NumPy goes through array-api-compat's wrappers.
_NUMPY = _observed_namespace(np if _NUMPY_IS_STANDARD else _compat_numpy)

# array_namespace() inspects its argument every time and costs more than a small add, so the
# answer is cached per array type (an ndarray is always NumPy, a cupy.ndarray always CuPy).
_NAMESPACES: dict[type, Any] = {}


def namespace(x: Any) -> Any:
    """Return the array-API namespace of array ``x`` (cached per array type).

    For NumPy arrays it is the ``numpy`` module's functions (see :class:`CreationHook` for why
    it is a copy of the module rather than the module itself).
    """
    kind = type(x)
    xp = _NAMESPACES.get(kind)
    if xp is None:
        xp = array_api_compat.array_namespace(x)
        if xp is _compat_numpy:
            xp = _NUMPY
        _NAMESPACES[kind] = xp
    return xp


def is_numpy(xp: Any) -> bool:
    """Whether ``xp`` is the namespace :func:`namespace` gives NumPy arrays."""
    return xp is _NUMPY or xp is np or xp is _compat_numpy


def asarray(data: Any, dtype: Any = None, like: Any = None) -> Any:
    """Turn ``data`` into an array.

    Arrays of a known namespace are kept where they live (converted only if ``dtype`` asks).
    Python numbers and (nested) lists become NumPy arrays, or arrays of ``like``'s namespace
    when ``like`` is given; Python floats give float64, as in NumPy.
    """
    if array_api_compat.is_array_api_obj(data) and not isinstance(data, (int, float, bool)):
        if isinstance(data, np.generic):  # NumPy scalars (from reductions) become 0-d arrays
            data = np.asarray(data)
        xp = namespace(data)
        if dtype is not None:
            dtype = resolve_dtype(xp, dtype)
            if data.dtype != dtype:
                data = xp.astype(data, dtype)
        return data
    xp = namespace(like) if like is not None else _NUMPY
    if dtype is not None:
        dtype = resolve_dtype(xp, dtype)
    if xp is _NUMPY:
        return np.asarray(data, dtype=dtype)
    return xp.asarray(data, dtype=dtype)


def to_numpy(x: Any) -> np.ndarray:
    """Copy an array of any supported namespace to a NumPy array (for printing and saving)."""
    if isinstance(x, np.ndarray):
        return x
    if cp is not None and isinstance(x, cp.ndarray):
        return cp.asnumpy(x)
    return np.asarray(x)


#: The dtype names :func:`resolve_dtype` knows (the array API's, and NumPy's float16).
_DTYPE_NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "float32", "float64", "complex64", "complex128")


def resolve_dtype(xp: Any, dtype: Any) -> Any:
    """Map ``"float32"``, ``np.float32`` or ``xp.float32`` to the dtype object of ``xp``."""
    if dtype is None:
        return None
    if isinstance(dtype, str):
        name = dtype
    elif is_numpy(xp) or (cp is not None and xp.__name__.endswith("cupy")):
        return np.dtype(dtype)
    else:
        try:
            name = np.dtype(dtype).name
        except TypeError:
            return dtype  # already a dtype object of xp (array-api-strict)
    found = getattr(xp, name, None) if name in _DTYPE_NAMES else None
    if found is None:  # "float8", "sum", a typo: say so (not an AttributeError of the library)
        raise TypeError(f"unknown dtype {dtype!r}; expected one of {', '.join(_DTYPE_NAMES)} "
                        f"(those that {getattr(xp, '__name__', 'the array library')} has)")
    return found


# isdtype() parses its arguments on every call and costs more than a small operation; the
# answer for a (namespace, dtype) pair never changes, so it is cached.
@functools.lru_cache(maxsize=None)
def is_floating(xp: Any, dtype: Any) -> bool:
    """True for real floating dtypes (the only ones that can carry gradients)."""
    return xp.isdtype(dtype, "real floating")


@functools.lru_cache(maxsize=None)
def is_integer(xp: Any, dtype: Any) -> bool:
    """True for integer dtypes."""
    return xp.isdtype(dtype, "integral")


_INSTALL_CUPY = ("pip install cupy-cuda12x on CUDA 12 (the 'gpu' extra: pip install "
                 "'minigrad-course[gpu]'), or cupy-cuda13x on CUDA 13")


def cuda_problem(index: int = 0) -> str | None:
    """Why device ``cuda:<index>`` cannot be used, or ``None`` if it can.

    The answer names what is missing: CuPy itself, a CuPy that imports, a GPU that CuPy can
    see, or a GPU of that number.
    """
    if cp is None:
        exc = _CUPY_IMPORT_ERROR
        if isinstance(exc, ModuleNotFoundError) and exc.name == "cupy":
            return f"CuPy is not installed; {_INSTALL_CUPY}"
        return (f"CuPy is installed but cannot be imported ({type(exc).__name__}: {exc}); "
                "check that its package matches the machine's CUDA version "
                "(cupy-cuda12x for CUDA 12, cupy-cuda13x for CUDA 13) and that only one is "
                "installed")
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CUDARuntimeError: no driver, no device, driver too old
        reason = f"{type(exc).__name__}: {exc}"
        if "InsufficientDriver" in reason:  # what CUDA says when there is no driver at all, too
            return ("CuPy is installed but finds no usable NVIDIA driver: there is none, or it "
                    "is older than the CUDA this CuPy was built for (cupy-cuda13x needs a CUDA "
                    f"13 driver; use cupy-cuda12x with a CUDA 12 one) ({reason})")
        return f"CuPy is installed but finds no CUDA GPU ({reason})"
    if count == 0:
        return "CuPy is installed but finds no CUDA GPU (it counts 0 devices)"
    if not 0 <= index < count:
        return f"there is no GPU number {index}: CuPy sees {count} (cuda:0 to cuda:{count - 1})"
    return None


def cupy_available() -> bool:
    """True when CuPy is installed and can see a CUDA device."""
    return cuda_problem() is None


def device_name(x: Any) -> str:
    """A short name of where ``x`` lives: ``"cpu"`` for NumPy, ``"cuda:0"`` for CuPy, ..."""
    if isinstance(x, np.ndarray):
        return "cpu"
    if cp is not None and isinstance(x, cp.ndarray):
        return f"cuda:{x.device.id}"
    return str(getattr(x, "device", "unknown"))


def check_same_device(op: str, a: Any, b: Any) -> None:
    """Raise a clear error if arrays ``a`` and ``b`` live on different devices.

    The engine calls this when an operation on two arrays failed, to tell a user who mixed a
    CPU and a GPU tensor what happened instead of showing the array library's error.

    Raises
    ------
    RuntimeError
        Naming both devices, e.g. ``add: expected both tensors on one device; got cpu and
        cuda:0. Move one with .to('cuda:0') or .to('cpu').``
    """
    da, db = device_name(a), device_name(b)
    if da == db:
        return
    hint = ""
    if all(d == "cpu" or d.startswith("cuda") for d in (da, db)):
        hint = f" Move one with .to({db!r}) or .to({da!r})."
    raise RuntimeError(f"{op}: expected both tensors on one device; got {da} and {db}.{hint}")


# ---------------------------------------------------------------------------------------------
# scatter-add: the backward pass of ``x[index]``


def _is_basic(index: tuple[Any, ...]) -> bool:
    return all(i is None or i is Ellipsis or isinstance(i, (int, slice)) for i in index)


def scatter_add(xp: Any, shape: tuple[int, ...], dtype: Any, index: Any, values: Any) -> Any:
    """Return zeros of ``shape`` with ``values`` added at ``index`` (repeats add up).

    ``index`` is whatever ``x[index]`` was called with. Basic indices (ints, slices, ``None``,
    ``...``) never repeat a position, so a plain assignment does. Integer arrays may repeat one:
    NumPy and CuPy use ``add.at``; elsewhere the positions are one-hot encoded and the sum is a
    matrix product, which works when the integer arrays index the leading axes.
    """
    if not isinstance(index, tuple):
        index = (index,)
    out = xp.zeros(shape, dtype=dtype)
    if _is_basic(index):
        out[index] = values
        return out
    if isinstance(out, np.ndarray):
        i = index[0]
        if len(index) == 1 and out.ndim == 2 and isinstance(i, np.ndarray) and i.dtype.kind in "iu":
            # rows of a matrix (an embedding's backward): add.at on the flat positions is about
            # five times faster than on rows, with the same sums in the same order
            n, d = shape
            rows = i.astype(np.intp, copy=False)
            flat = np.where(rows < 0, rows + n, rows)[..., None] * d + np.arange(d)
            np.add.at(np.reshape(out, (-1,)), np.reshape(flat, (-1,)), np.reshape(values, (-1,)))
            return out
        np.add.at(out, index, values)
        return out
    if cp is not None and isinstance(out, cp.ndarray):
        cp.add.at(out, index, values)
        return out
    return _scatter_add_onehot(xp, out, index, values)


def _scatter_add_onehot(xp: Any, out: Any, index: tuple[Any, ...], values: Any) -> Any:
    if index and index[-1] is Ellipsis:
        index = index[:-1]
    expanded: list[Any] = []
    for i in index:  # a boolean mask is the positions of its True values, one array per axis
        is_mask = hasattr(i, "dtype") and xp.isdtype(i.dtype, "bool")
        expanded.extend(xp.nonzero(i) if is_mask else (i,))
    index = tuple(expanded)
    arrays = [i for i in index if not isinstance(i, (int, slice)) and i is not Ellipsis]
    if len(arrays) != len(index):
        raise NotImplementedError(
            "indexing backward: mixing integer arrays with slices or ints needs NumPy or CuPy; "
            f"this array lives in {xp.__name__}. Index with integer arrays only, one per "
            "leading axis, or convert the tensor to NumPy."
        )
    k = len(arrays)
    lead = out.shape[:k]
    arrays = xp.broadcast_arrays(*arrays)
    linear = xp.zeros(arrays[0].shape, dtype=xp.int64)
    for i, n in zip(arrays, lead):
        linear = linear * n + (i % n)  # negative indices count from the end, as in NumPy
    n_rows = 1
    for n in lead:
        n_rows *= n
    linear = xp.reshape(linear, (-1,))
    onehot = xp.astype(linear[:, None] == xp.arange(n_rows)[None, :], out.dtype)
    flat = xp.reshape(values, (linear.shape[0], -1))
    summed = xp.matmul(xp.matrix_transpose(onehot), flat)
    return out + xp.reshape(summed, out.shape)


# (typed Any: NumPy's stubs have no overload of ufunc.reduce for a run-time axis and keepdims)
_add_reduce: Any = np.add.reduce
_maximum_reduce: Any = np.maximum.reduce


def reduce_sum(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``xp.sum(x, axis=axis, keepdims=keepdims)``. On NumPy it calls ``np.add.reduce``, which
    is what ``np.sum`` calls after its Python wrapper: the same values, about 2 us less per
    call, which counts on the small arrays of a small network's step."""
    if isinstance(x, np.ndarray):
        return _add_reduce(x, axis=axis, keepdims=keepdims)
    return namespace(x).sum(x, axis=axis, keepdims=keepdims)


def reduce_max(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``xp.max(x, axis=axis, keepdims=keepdims)``; on NumPy ``np.maximum.reduce``, as
    :func:`reduce_sum`."""
    if isinstance(x, np.ndarray):
        return _maximum_reduce(x, axis=axis, keepdims=keepdims)
    return namespace(x).max(x, axis=axis, keepdims=keepdims)


def matmul_into(a: Any, b: Any, out: Any) -> Any:
    """``a @ b`` written into ``out`` (NumPy's and CuPy's ``out=``) and returned; ``None``
    where it cannot be: another array library, or operands of another type or dtype than
    ``out`` (the caller then computes ``a @ b`` as usual)."""
    kind = type(out)
    if (type(a) is not kind or type(b) is not kind
            or not a.dtype == b.dtype == out.dtype):
        return None
    if isinstance(out, np.ndarray):
        return np.matmul(a, b, out=out)
    if cp is not None and isinstance(out, cp.ndarray):
        return cp.matmul(a, b, out=out)
    return None


def row_major(x: Any) -> Any:
    """``x`` laid out row by row in memory (C order): ``x`` itself when it already is, else a
    copy with the same values; on other array libraries ``x`` itself (the standard has no
    memory order).

    For a matrix used many times as the right operand of small products: OpenBLAS multiplies
    ``(32, 128) @ (128, 512)`` about 1.6 times slower when the right operand is a transposed
    view (``W.T``) than when it is row-major; a recurrent layer's ``W_hh^T``, used once per
    step, is copied once per sequence (``docs/guide/performance.md``).
    """
    if isinstance(x, np.ndarray):  # np.copy, not np.ascontiguousarray: minigrad.compile sees it
        return x if x.flags.c_contiguous else np.copy(x, order="C")
    if cp is not None and isinstance(x, cp.ndarray):
        return cp.ascontiguousarray(x)
    return x


def times_mask(g: Any, mask: Any) -> Any:
    """``g`` where ``mask`` is True, 0 where it is False: the backward of ReLU and max-pooling.

    A product, not ``where()`` (several times slower on NumPy), with the same values: 1 or 0
    times ``g``, so a NaN in ``g`` stays NaN everywhere, as in PyTorch. NumPy and CuPy multiply
    by the booleans directly; the array API only multiplies numbers, so elsewhere the mask is
    cast to ``g``'s dtype first (one more pass over the array).
    """
    if isinstance(g, np.ndarray) or (cp is not None and isinstance(g, cp.ndarray)):
        return g * mask
    return g * namespace(g).astype(mask, g.dtype)


# ---------------------------------------------------------------------------------------------
# sliding windows: the patches of a convolution or a pooling layer


def sliding_windows(x: Any, kh: int, kw: int, stride: int | tuple[int, int] = 1) -> Any:
    """Return the ``kh x kw`` windows of ``x`` (N, C, H, W) as (N, C, OH, OW, kh, kw).

    ``windows[n, c, i, j]`` is the patch ``x[n, c, i*sh : i*sh + kh, j*sw : j*sw + kw]``, with
    ``stride`` an int or a pair ``(sh, sw)``. On NumPy and CuPy this is a strided view: no copy,
    whatever the memory layout of ``x``. Elsewhere it is built from kh*kw strided slices stacked
    on two new axes.
    """
    n, c, h, w = x.shape
    sh, sw = pair(stride, "sliding_windows", "stride", low=1)
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    if isinstance(x, np.ndarray) or (cp is not None and isinstance(x, cp.ndarray)):
        shape = (n, c, oh, ow, kh, kw)
        s_n, s_c, s_h, s_w = x.strides
        strides = (s_n, s_c, s_h * sh, s_w * sw, s_h, s_w)
        if isinstance(x, np.ndarray):
            return _as_strided(x, shape, strides, writeable=False)
        return cp.lib.stride_tricks.as_strided(x, shape, strides)  # CuPy's has no writeable=
    xp = namespace(x)
    rows = []
    for i in range(kh):
        cols = [x[:, :, window_slice(i, oh, sh), window_slice(j, ow, sw)] for j in range(kw)]
        rows.append(xp.stack(cols, axis=-1))
    return xp.stack(rows, axis=-2)


def window_slice(offset: int, count: int, stride: int) -> slice:
    """The slice that picks position ``offset`` of each of ``count`` windows along one axis.

    ``x[:, :, window_slice(i, oh, sh), window_slice(j, ow, sw)]`` is
    ``sliding_windows(x, kh, kw, (sh, sw))[..., i, j]``: row ``i``, column ``j`` of every window.
    """
    return slice(offset, offset + stride * (count - 1) + 1, stride)


def add_windows(out: Any, windows: Any, stride: int | tuple[int, int] = 1) -> Any:
    """Add ``windows`` (N, C, OH, OW, kh, kw) back onto ``out`` (N, C, H, W), in place.

    This is col2im, the adjoint of :func:`sliding_windows`: every window value is added to the
    position of ``out`` it was taken from, and where windows overlap the values add up. It is
    the backward pass of anything built on ``sliding_windows``. It loops over the kh*kw
    positions of a window, each one strided slice of ``out`` (standard functions only); when
    windows do not overlap, NumPy and CuPy add them all at once through a strided view.
    Returns ``out``.
    """
    *_, oh, ow, kh, kw = windows.shape
    sh, sw = pair(stride, "add_windows", "stride", low=1)
    lib = np if isinstance(out, np.ndarray) else (
        cp if cp is not None and isinstance(out, cp.ndarray) else None)
    if lib is not None and sh >= kh and sw >= kw:  # disjoint windows: one strided add
        s_n, s_c, s_h, s_w = out.strides
        strides = (s_n, s_c, s_h * sh, s_w * sw, s_h, s_w)
        view = (_as_strided(out, windows.shape, strides) if lib is np
                else lib.lib.stride_tricks.as_strided(out, shape=windows.shape, strides=strides))
        view += windows
        return out
    for i in range(kh):
        for j in range(kw):
            out[:, :, window_slice(i, oh, sh), window_slice(j, ow, sw)] += windows[..., i, j]
    return out


def to_device(x: Any, device: str) -> Any:
    """Copy ``x`` to ``"cpu"`` (a NumPy array) or ``"cuda"`` / ``"cuda:N"`` (a CuPy array).

    Raises
    ------
    ValueError
        For a device name other than ``"cpu"``, ``"cuda"`` or ``"cuda:N"``.
    RuntimeError
        For ``"cuda"`` where it cannot be used, saying what is missing: CuPy, or a GPU.
    """
    if device == "cpu":
        return to_numpy(x)
    match = re.fullmatch(r"cuda(?::(\d+))?", device) if isinstance(device, str) else None
    if match is None:
        raise ValueError(f"to(): unknown device {device!r}; expected 'cpu', 'cuda' or 'cuda:N'")
    index = int(match.group(1) or 0)
    problem = cuda_problem(index)
    if problem is not None:
        raise RuntimeError(f"to({device!r}): {problem}")
    if isinstance(x, cp.ndarray) and x.device.id == index:
        return x
    with cp.cuda.Device(index):
        return cp.array(x) if isinstance(x, cp.ndarray) else cp.asarray(to_numpy(x))


# ---------------------------------------------------------------------------------------------
# Random initial values and copies between namespaces (for nn, optim, serialize)


def default_rng(seed: Any = None) -> np.random.Generator:
    """A NumPy random Generator: ``seed`` itself if it is one, else a new one from the seed."""
    return np.random.default_rng(seed)


def uniform(rng: Any, low: float, high: float, shape: tuple[int, ...], dtype: Any = "float64",
            like: Any = None, device: str | None = None) -> Any:
    """Values drawn uniformly from ``[low, high)`` by a NumPy Generator (or a seed).

    They are always drawn in float64 (so a float32 layer gets the same numbers, rounded), then
    converted to ``dtype`` and placed in ``like``'s namespace and device, or on ``device``.
    """
    values = np.random.default_rng(rng).uniform(low, high, size=shape)
    if device is None and (like is None or isinstance(like, np.ndarray)):
        return values.astype(resolve_dtype(_compat_numpy, dtype), copy=False)
    return copy_to(values, like=like, dtype=dtype, device=device)


def copy_to(x: Any, like: Any = None, dtype: Any = None, device: str | None = None) -> Any:
    """A copy of ``x`` (an array of any namespace, a list or a number) as a new array.

    It lives in ``like``'s namespace and device if ``like`` is given, else on ``device``
    (``"cpu"`` or ``"cuda[:N]"``), else where ``x`` is; ``dtype`` converts it.
    """
    is_array = array_api_compat.is_array_api_obj(x) and not isinstance(x, (int, float, bool))
    if device is not None:
        copy = np.array(to_numpy(x) if is_array else x, dtype=resolve_dtype(_compat_numpy, dtype))
        return copy if device == "cpu" else to_device(copy, device)
    target = like if like is not None else (x if is_array else None)
    if target is None or isinstance(target, (np.ndarray, np.generic)):
        return np.array(to_numpy(x) if is_array else x, dtype=resolve_dtype(_compat_numpy, dtype))
    xp = namespace(target)
    if cp is not None and isinstance(target, cp.ndarray):
        with cp.cuda.Device(target.device.id):
            return cp.array(x, dtype=resolve_dtype(xp, dtype))
    return xp.asarray(x, dtype=resolve_dtype(xp, dtype), copy=True)

