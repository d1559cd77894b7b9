"""``win.atomics``: where each (op, dtype) of a window runs, and why."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Mapping, NamedTuple

from . import _core
from ._types import OPS, dtype_code, op_code

if TYPE_CHECKING:
    from ._window import Window


class AtomicPath(NamedTuple):
    """Where an (op, dtype) runs on a window: the provider's native atomics
    (``native=True``) or onesided's software path at the target, and why."""

    native: bool
    reason: str

    def __str__(self) -> str:
        return f"{'native' if self.native else 'software'}: {self.reason}"


class AtomicsReport(Mapping[tuple[str, str], AtomicPath]):
    """Where each (op, dtype) of a window runs: the provider's native atomics
    or onesided's software path at the target, and why. One path per dtype:
    native only if every declared op on it is native at every rank. The
    window's data path (``path``, ``path_description``), chosen once at
    creation, carries every operation."""

    def __init__(self, win: "Window") -> None:
        self.path: str = win._path_name
        """The window's data path: ``shared-memory``, ``cross-memory`` or
        ``provider``; ``nasty(...)`` around it in nasty mode."""
        self.path_description: str = win._path_description
        """One line on what the data path does."""
        names = [name for name, _ in _core.dtypes()]
        self._by_dtype = {
            names[code]: AtomicPath(win._native_atomics(code), win._atomics_reason(code)) for code in range(len(names))
        }
        self._entries = {
            (op.name.lower(), names[dt]): self._by_dtype[names[dt]]
            for op in OPS.values()
            for dt in range(len(names))
            if _core.op_applies(int(op), dt)
        }

    def __getitem__(self, key: tuple[str, str]) -> AtomicPath:
        """``report["sum", "int64"]``; the dtype may be anything numpy takes."""
        op, dtype = key
        name = op.lower() if isinstance(op, str) else _core.ops()[op_code(op)][0]
        return self._entries[(name, _core.dtypes()[dtype_code(dtype)][0])]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def by_dtype(self) -> dict[str, AtomicPath]:
        """The path of each dtype (all its ops share it)."""
        return dict(self._by_dtype)

    def summary(self) -> str:
        """One line: which dtypes are native and which software."""
        native = [d for d, p in self._by_dtype.items() if p.native]
        software = [d for d, p in self._by_dtype.items() if not p.native]
        parts = []
        if native:
            parts.append("native " + ",".join(native))
        if software:
            parts.append("software " + ",".join(software))
        return "; ".join(parts)

    def __str__(self) -> str:
        """The data path, then one line per dtype."""
        width = max(len(d) for d in self._by_dtype)
        lines = [f"{'path':{width}s}  {self.path}: {self.path_description}"]
        lines += [f"{d:{width}s}  {p}" for d, p in self._by_dtype.items()]
        return "\n".join(lines)
