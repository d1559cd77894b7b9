"""``Alloc_mem`` and ``Free_mem``: mpi4py's ``MPI.Alloc_mem`` and
``MPI.Free_mem``, over memory other processes on this host can map.

``Alloc_mem(size)`` gives ``size`` zeroed bytes as an :class:`onesided.buffer`
(writable, ``len``, ``address``, slicing, ``release``), page aligned, in a
shared mapping with no name in any file system (a memfd): nothing of it is
left behind when the process ends, even by SIGKILL.

Guarantee: a ``Window.Create`` over memory lying in such a block (the
buffer, ``np.frombuffer(mem, dtype)``, a slice of either) at every rank of
a window on one host takes the shared-memory path, as ``Allocate`` does
(``win.atomics`` and ``Get_info()["onesided_path"]`` say so); if one rank's
memory is not from ``Alloc_mem``, every rank takes the cross-memory path.

``Free_mem(mem)`` of memory a live window still exposes raises
:class:`onesided.ArgumentError` and frees nothing: MPI requires a window's
memory to stay allocated until the window is freed. The buffer and views
that outlive ``Free_mem`` stay valid and keep their length (the mapping
goes with the last of them), where mpi4py's buffer drops to length 0 and
numpy views of it point into freed memory.
"""

from __future__ import annotations

from typing import Any

from .. import _core
from .._errors import ArgumentError, ArgumentTypeError
from ..args import _mpi_args as mpi_args
from ..args._integers import integer
from ._mpi_objects import buffer


def Alloc_mem(size: Any, info: Any = None) -> buffer:
    """``size`` zeroed bytes (an integer >= 0) in a shared mapping, as an
    :class:`onesided.buffer`. ``info`` (a dict, ``MPI.Info``,
    ``MPI.INFO_NULL`` or None) is checked and otherwise unused."""
    n = integer(size, "size")
    if n < 0:
        raise ArgumentError(f"Alloc_mem: size must be >= 0, got {n}")
    mpi_args.info_dict(info)
    memory = _core._alloc_mem(n)
    return buffer.wrap(memory, None, memory.address)


def Free_mem(mem: Any) -> None:
    """Free memory from :func:`Alloc_mem` (``mem`` is the buffer it
    returned, or any view of the block whose ``.base`` chain reaches it).
    Raises :class:`onesided.ArgumentError` when a live window exposes it or
    it was freed already, :class:`onesided.ArgumentTypeError` when it is
    not from Alloc_mem."""
    block = _block_of(mem)
    if block is None:
        raise ArgumentTypeError(f"Free_mem: mem must be memory from onesided.Alloc_mem, got {type(mem).__name__}")
    block.free()


def _block_of(mem: Any) -> Any:
    """The core block an array's base chain ends in, or None."""
    seen = 0
    while mem is not None and seen < 64:
        if isinstance(mem, _core.AllocatedMemory):
            return mem
        if isinstance(mem, memoryview):
            mem = mem.obj
        else:
            mem = getattr(mem, "base", None)
        seen += 1
    return None
