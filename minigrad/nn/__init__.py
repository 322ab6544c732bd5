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
from .attention import MultiheadAttention  # noqa: E402
from .transformer import TransformerEncoder, TransformerEncoderLayer  # noqa: E402

from . import init  # noqa: E402  nn.init.kaiming_uniform_, ...
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, L1Loss,  # noqa: E402
                   MSELoss, NLLLoss, SmoothL1Loss)
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm  # noqa: E402
from .convolution import AdaptiveAvgPool2d, Conv1d  # noqa: E402

__all__ = [*__all__, "Embedding", "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell",
           "utils", "ModuleList", "ModuleDict", "GELU", "SiLU", "ELU", "Softplus",
           "Hardtanh", "LogSigmoid", "Softmax", "LogSoftmax",
           "MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder",
           # issue 29
           "init", "CrossEntropyLoss", "MSELoss", "NLLLoss", "BCELoss",
           "BCEWithLogitsLoss", "L1Loss", "HuberLoss", "SmoothL1Loss", "LayerNorm",
           "BatchNorm1d", "BatchNorm2d", "Conv1d", "AdaptiveAvgPool2d"]
