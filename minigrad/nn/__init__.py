"""minigrad.nn: layers as objects, PyTorch-shaped.

What lives here: :class:`Parameter`, :class:`Module` and the layers built on the engine
(:mod:`.modules`). It imports the engine (``tensor``, ``functional``, ``backend``) and never
``minigrad.export`` or ``minigrad.course``.
"""
from .modules import *  # noqa: F401,F403
from .modules import __all__  # noqa: F401
from . import utils  # noqa: E402  clip_grad_norm_
from .recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell  # noqa: E402
from .sparse import Embedding  # noqa: E402
from .containers import ModuleDict, ModuleList  # noqa: E402
from .activation import (ELU, GELU, Hardtanh, LogSigmoid, LogSoftmax, SiLU,  # noqa: E402
                         Softmax, Softplus)

__all__ = __all__ + ["Embedding", "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell",
                     "utils", "ModuleList", "ModuleDict", "GELU", "SiLU", "ELU", "Softplus",
                     "Hardtanh", "LogSigmoid", "Softmax", "LogSoftmax"]
