"""The demo's two networks and the recipe each is trained with."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import ember
from ember import nn
from ember.optim.optimizer import Optimizer


def mlp() -> nn.Module:
    """A 64-128-64-10 perceptron with ReLUs, on flattened 8 x 8 images.

    >>> from ember.demo.models import mlp
    >>> mlp()(ember.zeros(2, 1, 8, 8)).shape
    ember.Size([2, 10])
    """
    return nn.Sequential(
        nn.Flatten(),
        nn.Linear(64, 128),
        nn.ReLU(),
        nn.Linear(128, 64),
        nn.ReLU(),
        nn.Linear(64, 10),
    )


def cnn() -> nn.Module:
    """Two 3 x 3 convolutions, each followed by ReLU and 2 x 2 max pooling, then a linear layer.

    >>> from ember.demo.models import cnn
    >>> cnn()(ember.zeros(2, 1, 8, 8)).shape
    ember.Size([2, 10])
    """
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1),  # 8 x 8 x 8
        nn.ReLU(),
        nn.MaxPool2d(2),  # 8 x 4 x 4
        nn.Conv2d(8, 16, 3, padding=1),  # 16 x 4 x 4
        nn.ReLU(),
        nn.MaxPool2d(2),  # 16 x 2 x 2
        nn.Flatten(),
        nn.Linear(16 * 2 * 2, 10),
    )


@dataclass(frozen=True)
class Recipe:
    """How to build and train one model: its constructor, optimizer, epochs and batch size."""

    name: str
    build: Callable[[], nn.Module]
    optimizer: Callable[[Iterable[nn.Parameter]], Optimizer]
    epochs: int
    batch_size: int


RECIPES = {
    "mlp": Recipe("mlp", mlp, lambda p: ember.optim.SGD(p, lr=0.05, momentum=0.9), 20, 32),
    "cnn": Recipe("cnn", cnn, lambda p: ember.optim.Adam(p, lr=3e-3), 20, 32),
}


def count_params(model: nn.Module) -> int:
    """The number of trainable scalars in ``model``.

    >>> from ember.demo.models import count_params, mlp
    >>> count_params(mlp())
    17226
    """
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def describe(model: nn.Module) -> list[str]:
    """The layers of a ``Sequential``, with their sizes.

    >>> from ember.demo.models import describe, mlp
    >>> " > ".join(describe(mlp()))
    'Flatten > Linear(64, 128) > ReLU > Linear(128, 64) > ReLU > Linear(64, 10)'
    """
    parts = []
    for _, layer in model.named_children():
        if isinstance(layer, nn.Linear):
            parts.append(f"Linear({layer.in_features}, {layer.out_features})")
        elif isinstance(layer, nn.Conv2d):
            k = "x".join(map(str, layer.kernel_size))
            parts.append(f"Conv2d({layer.in_channels}, {layer.out_channels}, {k})")
        elif isinstance(layer, nn.MaxPool2d):
            parts.append(f"MaxPool2d({layer.kernel_size})")
        else:
            parts.append(type(layer).__name__)
    return parts
