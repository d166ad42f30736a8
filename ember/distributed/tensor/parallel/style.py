"""Tensor-parallel styles: how ``parallelize_module`` lays out one ``nn.Linear`` or
``nn.Embedding`` and its inputs and outputs, as ``torch.distributed.tensor.parallel.style``.

NOTE [tensor parallel layouts]: ``ColwiseParallel`` shards a Linear's weight by rows (output
features; an Embedding's by columns), takes Replicate inputs and gives outputs sharded on the
last dim; ``RowwiseParallel`` shards the weight by columns (an Embedding's by rows), takes
inputs sharded on the last dim and gives Replicate outputs (the partial sums all-reduced).
So ``Colwise -> pointwise -> Rowwise`` needs one all-reduce forward and one backward.
With ``use_local_output`` (the default) outputs are plain local tensors.
"""

from __future__ import annotations

from typing import Any

import ember
from ember.distributed.tensor._api import DTensor, distribute_module, distribute_tensor
from ember.distributed.tensor.placement_types import Placement, Replicate, Shard

__all__ = ["ColwiseParallel", "ParallelStyle", "PrepareModuleInput", "RowwiseParallel"]


class ParallelStyle:
    """The base of the styles ``parallelize_module`` applies."""

    def _apply(self, module: Any, device_mesh: Any) -> Any:
        raise NotImplementedError


def _fix(p: Placement, ndim: int) -> Placement:
    return Shard(p.dim % ndim) if isinstance(p, Shard) else p


def _prepare_input(x: Any, mesh: Any, given: Placement, wanted: Placement) -> Any:
    if not isinstance(x, ember.Tensor):
        return x
    if not isinstance(x, DTensor):
        x = DTensor.from_local(x, mesh, [_fix(given, x.ndim)], run_check=False)
    want = _fix(wanted, x.ndim)
    if x.placements != (want,):
        x = x.redistribute(mesh, [want])
    return x


def _prepare_output(x: Any, mesh: Any, wanted: Placement, use_local: bool) -> Any:
    if not isinstance(x, DTensor):
        return x
    want = _fix(wanted, x.ndim)
    if x.placements != (want,):
        x = x.redistribute(mesh, [want])
    return x.to_local() if use_local else x


def _shard_param(module: Any, name: str, mesh: Any, placement: Placement) -> None:
    p = getattr(module, name, None)
    if p is None or isinstance(p, DTensor):
        return
    d = distribute_tensor(p.detach(), mesh, [_fix(placement, p.ndim)])
    module.register_parameter(name, ember.nn.Parameter(d, p.requires_grad))


class _LinearStyle(ParallelStyle):
    _weight_linear: Placement
    _bias_linear: Placement
    _weight_embedding: Placement
    _input_linear: Placement

    def __init__(
        self,
        *,
        input_layouts: Placement | None = None,
        output_layouts: Placement | None = None,
        use_local_output: bool = True,
    ) -> None:
        self.input_layouts = (input_layouts,) if input_layouts is not None else None
        self.output_layouts = (output_layouts,) if output_layouts is not None else None
        self.use_local_output = use_local_output

    def _layouts(self, module: Any = None) -> tuple[Placement, Placement]:
        raise NotImplementedError

    def _apply(self, module: Any, device_mesh: Any) -> Any:
        if device_mesh.ndim != 1:
            raise ValueError(f"{type(self).__name__}: tensor parallelism needs a 1-d mesh")
        if isinstance(module, ember.nn.Linear):
            weight, bias, wanted_in = self._weight_linear, self._bias_linear, self._input_linear
        elif isinstance(module, ember.nn.Embedding):
            weight, bias, wanted_in = self._weight_embedding, Replicate(), Replicate()
        else:
            raise NotImplementedError(
                f"{type(self).__name__} applies to nn.Linear and nn.Embedding, not "
                f"{type(module).__name__}"
            )
        given_in, out = self._layouts(module)

        def partition(name: str, m: Any, mesh: Any) -> None:
            if m is module:
                _shard_param(m, "weight", mesh, weight)
                _shard_param(m, "bias", mesh, bias)

        def input_fn(m: Any, inputs: Any, mesh: Any) -> Any:
            return tuple(_prepare_input(x, mesh, given_in, wanted_in) for x in inputs)

        def output_fn(m: Any, outputs: Any, mesh: Any) -> Any:
            return _prepare_output(outputs, mesh, out, self.use_local_output)

        return distribute_module(module, device_mesh, partition, input_fn, output_fn)

    def __repr__(self) -> str:
        i, o = self._layouts()
        return f"{type(self).__name__}(input_layouts={i}, output_layouts={o})"


class ColwiseParallel(_LinearStyle):
    """Shard a Linear by output features (an Embedding by embedding dims); inputs Replicate,
    outputs ``Shard(-1)`` (NOTE [tensor parallel layouts]).

    >>> from ember.distributed.tensor.parallel import ColwiseParallel
    >>> ColwiseParallel()
    ColwiseParallel(input_layouts=R, output_layouts=S(-1))
    """

    _weight_linear = Shard(0)
    _bias_linear = Shard(0)
    _weight_embedding = Shard(1)
    _input_linear = Replicate()

    def _layouts(self, module: Any = None) -> tuple[Placement, Placement]:
        i = self.input_layouts[0] if self.input_layouts else Replicate()
        o = self.output_layouts[0] if self.output_layouts else Shard(-1)
        return i, o


class RowwiseParallel(_LinearStyle):
    """Shard a Linear by input features (an Embedding by rows); inputs ``Shard(-1)``, outputs
    Replicate (NOTE [tensor parallel layouts]).

    >>> from ember.distributed.tensor.parallel import RowwiseParallel
    >>> RowwiseParallel()
    RowwiseParallel(input_layouts=S(-1), output_layouts=R)
    """

    _weight_linear = Shard(1)
    _bias_linear = Replicate()
    _weight_embedding = Shard(0)
    _input_linear = Shard(-1)

    def _layouts(self, module: Any = None) -> tuple[Placement, Placement]:
        # an Embedding's input is indices: Replicate unless said otherwise
        default_in = Replicate() if isinstance(module, ember.nn.Embedding) else Shard(-1)
        i = self.input_layouts[0] if self.input_layouts else default_in
        o = self.output_layouts[0] if self.output_layouts else Replicate()
        return i, o


class PrepareModuleInput(ParallelStyle):
    """Turn a module's positional inputs from ``input_layouts`` to ``desired_input_layouts``
    (None entries: left as they are), plain local tensors again with ``use_local_output``."""

    def __init__(
        self,
        *,
        input_layouts: Any = None,
        desired_input_layouts: Any = None,
        use_local_output: bool = False,
    ) -> None:
        one = lambda x: (x,) if isinstance(x, Placement) else x  # noqa: E731
        self.input_layouts = one(input_layouts)
        self.desired_input_layouts = one(desired_input_layouts)
        self.use_local_output = use_local_output
        if (
            self.input_layouts is None
            or self.desired_input_layouts is None
            or len(self.input_layouts) != len(self.desired_input_layouts)
        ):
            raise ValueError(
                "PrepareModuleInput: give input_layouts and desired_input_layouts of one length"
            )

    def _apply(self, module: Any, device_mesh: Any) -> Any:
        def pre(m: Any, inputs: Any) -> Any:
            out = list(inputs)
            for i, (g, w) in enumerate(
                zip(self.input_layouts, self.desired_input_layouts, strict=False)
            ):
                if g is None or i >= len(out):
                    continue
                x = _prepare_input(out[i], device_mesh, g, w)
                out[i] = x.to_local() if self.use_local_output and isinstance(x, DTensor) else x
            return tuple(out)

        module.register_forward_pre_hook(pre)
        return module
