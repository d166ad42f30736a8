"""The module classes: ``Module``, the containers, and the layers."""

from __future__ import annotations

from ember.nn.modules.container import (
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)
from ember.nn.modules.module import Module, RemovableHandle

# isort: split
# ---- layers (ember/nn/modules/<family>.py, written alongside): every class that exists ----
from ember.nn.modules.activation import GELU, MultiheadAttention, ReLU, Sigmoid, SiLU, Softmax, Tanh
from ember.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d
from ember.nn.modules.conv import Conv2d
from ember.nn.modules.dropout import Dropout
from ember.nn.modules.linear import Flatten, Identity, Linear
from ember.nn.modules.loss import BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from ember.nn.modules.normalization import LayerNorm
from ember.nn.modules.pooling import AvgPool2d, MaxPool2d
from ember.nn.modules.sparse import Embedding

# ---- end of layers ----
# isort: split
# ---- more layers: activations, losses, recurrent, transformer ----
from ember.nn.modules.activation import (
    CELU,
    ELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU6,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
)
from ember.nn.modules.distance import CosineSimilarity, PairwiseDistance
from ember.nn.modules.linear import Bilinear, Unflatten
from ember.nn.modules.loss import (
    BCELoss,
    CosineEmbeddingLoss,
    CTCLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    MarginRankingLoss,
    MultiLabelSoftMarginLoss,
    PoissonNLLLoss,
    SmoothL1Loss,
    SoftMarginLoss,
    TripletMarginLoss,
)
from ember.nn.modules.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from ember.nn.modules.transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
