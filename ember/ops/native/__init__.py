"""The op catalogue: every aten op ember has, declared once by its schema, by family."""

from ember.ops.native import (  # noqa: F401
    activation,
    attention,
    backward,
    complex,  # noqa: A004 - the module of complex ops (ember.ops.native.complex)
    copies,
    copies_composite,
    creation,
    distance,
    fft,
    foreach,
    histogram,
    indexing,
    inplace_views,
    ldl,
    linalg,
    linalg_composite,
    loss,
    lu,
    metadata,
    nn,
    pointwise,
    products,
    random,
    reductions,
    rnn,
    scatter_reduce,
    sorting,
    sparse,
    spatial,
    special,
    spectral,
    views,
    weight_norm,
    windows,
)
from ember.ops.native.promotion import refuse_shell_dtypes  # noqa: E402

refuse_shell_dtypes()  # NOTE [shell unsigned dtypes]: once every op is declared
