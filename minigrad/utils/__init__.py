"""minigrad.utils: what ``torch.utils`` offers a training loop; today :mod:`.data` (Dataset,
TensorDataset, DataLoader).

Imports: the engine (``minigrad.tensor``, ``minigrad.backend``); never ``minigrad.export`` or
``minigrad.course``. It is not ``minigrad.data``, the course's data sets in plain NumPy, which
does not import the engine.
"""
from . import data

__all__ = ["data"]
