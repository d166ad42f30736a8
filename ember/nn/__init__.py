"""Neural-network building blocks: ``Module``, ``Parameter``, containers, layers, ``init``.

>>> net = ember.nn.Sequential(ember.nn.Linear(4, 2))
>>> [name for name, _ in net.named_parameters()]
['0.weight', '0.bias']
"""

from __future__ import annotations

from ember.nn import functional, init
from ember.nn.modules import (
    Module,
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)
from ember.nn.parameter import Parameter

# isort: split
# ---- layers (ember/nn/modules/<family>.py, written alongside): every class that exists ----
from ember.nn.modules import (
    GELU,
    AvgPool2d,
    BatchNorm1d,
    BatchNorm2d,
    BCEWithLogitsLoss,
    Conv2d,
    CrossEntropyLoss,
    Dropout,
    Embedding,
    Flatten,
    Identity,
    L1Loss,
    LayerNorm,
    Linear,
    MaxPool2d,
    MSELoss,
    MultiheadAttention,
    NLLLoss,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)

# isort: split
# ---- the spatial layers (convolution, pooling, resampling...): ember/nn/modules/ ----
from ember.nn.modules import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AvgPool1d,
    AvgPool3d,
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    Conv1d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    Fold,
    GroupNorm,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    MaxPool1d,
    MaxPool3d,
    PixelShuffle,
    PixelUnshuffle,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    Unfold,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)

# ---- end of layers ----
# isort: split
# ---- more layers: activations, losses, recurrent, transformer ----
from ember.nn import utils  # noqa: E402
from ember.nn.modules import (
    CELU,
    ELU,
    GLU,
    GRU,
    LSTM,
    RNN,
    SELU,
    BCELoss,
    Bilinear,
    CosineEmbeddingLoss,
    CosineSimilarity,
    CTCLoss,
    GaussianNLLLoss,
    GRUCell,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    LSTMCell,
    MarginRankingLoss,
    Mish,
    MultiLabelSoftMarginLoss,
    PairwiseDistance,
    PoissonNLLLoss,
    PReLU,
    ReLU6,
    RNNBase,
    RNNCell,
    RNNCellBase,
    SmoothL1Loss,
    SoftMarginLoss,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
    TripletMarginLoss,
    Unflatten,
)

# isort: split
# ---- issue 18's layers ----
from ember.nn import parallel  # noqa: E402  (DistributedDataParallel, over ember.distributed)
from ember.nn.modules import (  # noqa: E402
    AlphaDropout,
    EmbeddingBag,
    FeatureAlphaDropout,
    LazyConv1d,
    LazyConv2d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,
    LazyLinear,
    LocalResponseNorm,
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
    MultiMarginLoss,
    RMSNorm,
    RReLU,
)
from ember.nn.parameter import UninitializedParameter  # noqa: E402
