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
from ember.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm
from ember.nn.modules.conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from ember.nn.modules.dropout import Dropout, Dropout1d, Dropout2d, Dropout3d
from ember.nn.modules.fold import Fold, Unfold
from ember.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from ember.nn.modules.linear import Flatten, Identity, Linear
from ember.nn.modules.loss import BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from ember.nn.modules.normalization import GroupNorm, LayerNorm
from ember.nn.modules.padding import (
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from ember.nn.modules.pixelshuffle import ChannelShuffle, PixelShuffle, PixelUnshuffle
from ember.nn.modules.pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    FractionalMaxPool2d,
    FractionalMaxPool3d,
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
)
from ember.nn.modules.sparse import Embedding
from ember.nn.modules.upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

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

# isort: split
# ---- issue 18's layers ----
from ember.nn.modules.activation import RReLU
from ember.nn.modules.dropout import AlphaDropout, FeatureAlphaDropout
from ember.nn.modules.lazy import (
    LazyConv1d,
    LazyConv2d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,
    LazyLinear,
    LazyModuleMixin,
)
from ember.nn.modules.loss import MultiMarginLoss
from ember.nn.modules.normalization import LocalResponseNorm, RMSNorm
from ember.nn.modules.pooling import (
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
)
from ember.nn.modules.sparse import EmbeddingBag

#: every Module class, which ``ember.nn`` re-exports (as ``torch.nn`` does its modules')
__all__ = sorted(
    name for name, v in list(globals().items()) if isinstance(v, type) and issubclass(v, Module)
)
