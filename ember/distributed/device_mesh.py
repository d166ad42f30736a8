"""``DeviceMesh``: the job's ranks laid out as an n-dimensional array, with one process group
per mesh dimension (the ranks that differ only in that coordinate), as
``torch.distributed.device_mesh``.

>>> from ember.distributed.device_mesh import init_device_mesh
>>> mesh = init_device_mesh("cpu", (1,))  # doctest: +SKIP
>>> mesh.shape, mesh.get_coordinate()  # doctest: +SKIP
((1,), [0])
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember
import ember.distributed as dist

__all__ = ["DeviceMesh", "init_device_mesh"]


class DeviceMesh:
    """The ranks in ``mesh`` (any array-like of distinct global ranks), one process group per
    mesh dimension; every rank of the job constructs it with the same arguments."""

    def __init__(
        self,
        device_type: str,
        mesh: Any,
        *,
        mesh_dim_names: tuple[str, ...] | None = None,
        _groups: list[Any] | None = None,
    ) -> None:
        if device_type != "cpu":
            raise ValueError(f"DeviceMesh: device_type {device_type!r}: ember runs on 'cpu'")
        if not dist.is_initialized():
            dist.init_process_group(backend="mpi")
        arr = np.array(mesh.tolist() if isinstance(mesh, ember.Tensor) else mesh, dtype=np.int64)
        if arr.ndim == 0:
            arr = arr.reshape(1)
        world = dist.get_world_size()
        if sorted(arr.ravel().tolist()) != sorted(set(arr.ravel().tolist())) or arr.max() >= world:
            raise ValueError(
                f"DeviceMesh: mesh {arr.tolist()} must hold distinct ranks below the world "
                f"size {world}"
            )
        if mesh_dim_names is not None and len(mesh_dim_names) != arr.ndim:
            raise ValueError(
                f"DeviceMesh: {len(mesh_dim_names)} mesh_dim_names for a {arr.ndim}-d mesh"
            )
        self.device_type = device_type
        self._mesh = arr
        self.mesh_dim_names = None if mesh_dim_names is None else tuple(mesh_dim_names)
        rank = dist.get_rank()
        found = np.argwhere(arr == rank)
        self._coordinate = None if len(found) == 0 else [int(c) for c in found[0]]
        self._groups = self._make_groups() if _groups is None else _groups

    def _make_groups(self) -> list[Any]:
        # NOTE [mesh groups]: new_group is collective over the whole job, so every rank
        # creates every group of every mesh dimension in the same order and keeps its own.
        groups: list[Any] = []
        for d in range(self._mesh.ndim):
            rows = np.moveaxis(self._mesh, d, -1).reshape(-1, self._mesh.shape[d])
            mine = None
            for row in rows:
                ranks = [int(r) for r in row]
                if len(ranks) == dist.get_world_size() and ranks == sorted(ranks):
                    g = None  # the default group
                else:
                    g = dist.new_group(ranks)
                if self._coordinate is not None and dist.get_rank() in ranks:
                    mine = (g, ranks)
            groups.append(mine)
        return groups

    @property
    def mesh(self) -> ember.Tensor:
        return ember.tensor(self._mesh)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(n) for n in self._mesh.shape)

    @property
    def ndim(self) -> int:
        return int(self._mesh.ndim)

    def size(self, mesh_dim: int | None = None) -> int:
        """The number of ranks in the mesh, or along ``mesh_dim``."""
        return int(self._mesh.size if mesh_dim is None else self._mesh.shape[mesh_dim])

    def get_group(self, mesh_dim: int | str | None = None) -> Any:
        """The process group of this rank along ``mesh_dim`` (a 1-d mesh's only dimension when
        None)."""
        if mesh_dim is None:
            if self.ndim != 1:
                raise RuntimeError(f"DeviceMesh.get_group(): a {self.ndim}-d mesh needs a mesh_dim")
            mesh_dim = 0
        d = self._dim(mesh_dim)
        return self._groups[d][0]

    def _group_ranks(self, mesh_dim: int) -> list[int]:
        return list(self._groups[mesh_dim][1])

    def get_all_groups(self) -> list[Any]:
        return [self.get_group(d) for d in range(self.ndim)]

    def get_rank(self) -> int:
        return dist.get_rank()

    def get_local_rank(self, mesh_dim: int | str | None = None) -> int:
        """This rank's coordinate along ``mesh_dim``."""
        d = 0 if mesh_dim is None else self._dim(mesh_dim)
        if self._coordinate is None:
            raise RuntimeError(f"DeviceMesh: rank {dist.get_rank()} is not in {self}")
        return self._coordinate[d]

    def get_coordinate(self) -> list[int] | None:
        """This rank's coordinates in the mesh (None when it is not in it)."""
        return None if self._coordinate is None else list(self._coordinate)

    def _dim(self, mesh_dim: int | str) -> int:
        if isinstance(mesh_dim, str):
            if self.mesh_dim_names is None or mesh_dim not in self.mesh_dim_names:
                raise KeyError(f"DeviceMesh: no mesh dimension named {mesh_dim!r}")
            return self.mesh_dim_names.index(mesh_dim)
        if not -self.ndim <= mesh_dim < self.ndim:
            raise IndexError(f"DeviceMesh: mesh_dim {mesh_dim} of a {self.ndim}-d mesh")
        return mesh_dim % self.ndim

    def __getitem__(self, names: str | tuple[str, ...]) -> DeviceMesh:
        """The sub-mesh of the named dimensions that holds this rank."""
        names = (names,) if isinstance(names, str) else tuple(names)
        dims = [self._dim(n) for n in names]
        if self._coordinate is None:
            raise RuntimeError(f"DeviceMesh: rank {dist.get_rank()} is not in {self}")
        index = tuple(slice(None) if d in dims else self._coordinate[d] for d in range(self.ndim))
        sub = np.transpose(self._mesh[index], np.argsort(np.argsort(dims)))
        groups = [self._groups[d] for d in dims]
        return DeviceMesh(self.device_type, sub, mesh_dim_names=names, _groups=groups)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, DeviceMesh)
            and self._mesh.shape == other._mesh.shape
            and bool((self._mesh == other._mesh).all())
            and self.mesh_dim_names == other.mesh_dim_names
        )

    def __hash__(self) -> int:
        return hash((self._mesh.tobytes(), self._mesh.shape, self.mesh_dim_names))

    def __repr__(self) -> str:
        names = "" if self.mesh_dim_names is None else f", mesh_dim_names={self.mesh_dim_names}"
        return f"DeviceMesh('{self.device_type}', {self._mesh.tolist()}{names})"


def init_device_mesh(
    device_type: str, mesh_shape: tuple[int, ...], *, mesh_dim_names: tuple[str, ...] | None = None
) -> DeviceMesh:
    """A mesh of shape ``mesh_shape`` over ranks ``0 .. prod(mesh_shape) - 1`` in row-major order
    (initializing the default process group if needed).

    >>> init_device_mesh("cpu", (1,), mesh_dim_names=("tp",))  # doctest: +SKIP
    DeviceMesh('cpu', [0], mesh_dim_names=('tp',))
    """
    if not dist.is_initialized():
        dist.init_process_group(backend="mpi")
    n = int(np.prod(mesh_shape))
    if n != dist.get_world_size():
        raise RuntimeError(
            f"init_device_mesh: mesh_shape {tuple(mesh_shape)} holds {n} ranks but the world "
            f"size is {dist.get_world_size()}"
        )
    mesh = np.arange(n, dtype=np.int64).reshape(tuple(mesh_shape))
    return DeviceMesh(device_type, mesh, mesh_dim_names=mesh_dim_names)
