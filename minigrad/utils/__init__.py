"""minigrad.utils: what ``torch.utils`` offers a training loop; today :mod:`.data`."""
from . import data

__all__ = ["data"]
