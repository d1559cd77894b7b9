"""``win.atomics``: where each (op, dtype) of a window runs, and why."""

from __future__ import annotations

from typing import Iterator, Mapping, NamedTuple

from .. import _core
from .._types import OPS, dtype_code, op_code


class Executor(NamedTuple):
    """Who applies a window's atomics.

    ``kind`` is one of ``"nic"`` (the network card, in hardware),
    ``"provider"`` (libfabric's provider, in software at the target, inside
    the target's libfabric progress), ``"cpu"`` (the calling thread's own
    atomic instructions on shared memory), ``"origin"`` (the cross-memory
    path: the calling rank applies onesided's kernels to the target's
    memory by cross-memory attach, under the target's lock) or
    ``"unknown"`` (a provider onesided has no entry for). Elsewhere,
    software atomics are onesided's own kernels in the target's progress
    engine."""

    kind: str
    description: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.description}"


_RXM = "ofi_rxm carries atomics as messages and applies them in software at the target, inside the target's progress"
PROVIDER_EXECUTORS: dict[str, Executor] = {
    "cxi": Executor("nic", "the Cassini NIC (HPE Slingshot) applies them in hardware, for the ops and dtypes the "
                    "cxi provider offers"),
    "tcp;ofi_rxm": Executor("provider", _RXM),
    "verbs;ofi_rxm": Executor("provider", _RXM + " (rxm does not use the verbs NIC's own atomics)"),
    "shm": Executor("provider", "libfabric's shm provider applies them in software at the target, inside the "
                    "target's progress"),
    "efa": Executor("provider", "the efa provider emulates them in software at the target, inside the target's "
                    "progress (the EFA device has no atomics)"),
    "sockets": Executor("provider", "the sockets provider's progress thread applies them in software at the target"),
    "udp;ofi_rxd": Executor("provider", "ofi_rxd applies them in software at the target, inside the target's progress"),
    "psm2": Executor("provider", "psm2 applies them in software at the target (active messages)"),
    "psm3": Executor("provider", "psm3 applies them in software at the target (active messages)"),
    "opx": Executor("provider", "opx applies them in software at the target"),
}
"""Who runs each provider's native atomics, from libfabric's man pages
(fi_rxm(7), fi_shm(7), fi_efa(7), fi_cxi(7)) and sources (rxm, shm, efa rdm,
sockets); docs/atomics.md has the table."""


def base_path(path: str) -> str:
    """The data path under nasty mode's wrapper: ``shared-memory``,
    ``cross-memory`` or ``provider``."""
    for name in ("shared-memory", "cross-memory"):
        if path == name or path.startswith(f"nasty({name}"):
            return name
    return "provider"


def executor_of(provider: str, path: str) -> Executor:
    """Who applies the atomics of a window with ``provider`` and data
    ``path``: its native ones, or on the cross-memory path all of them."""
    if base_path(path) == "shared-memory":
        return Executor("cpu", "the calling thread's atomic instructions on shared memory")
    if base_path(path) == "cross-memory":
        return Executor("origin", "the calling rank reads, applies and writes back the target's elements by "
                        "cross-memory attach, under the target's lock in shared memory; the target takes no part")
    name = provider.split(";")[0] if provider.split(";")[0] in PROVIDER_EXECUTORS else provider
    return PROVIDER_EXECUTORS.get(
        provider, PROVIDER_EXECUTORS.get(name, Executor("unknown", f"{provider}: libfabric does not say whether "
                                                                   "its NIC or its software applies them"))
    )


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

    def __init__(self, win: _core.Window) -> None:
        self.path: str = win._path_name
        """The window's data path: ``shared-memory``, ``cross-memory`` or
        ``provider``; ``nasty(...)`` around it in nasty mode."""
        self.path_description: str = win._path_description
        """One line on what the data path does."""
        self.executor: Executor = executor_of(win.provider, self.path)
        """Who applies the native atomics at the target: the NIC, the
        provider's software, or the CPU on shared memory."""
        self.granularity: int = int(win._info()["mpi_accumulate_granularity"])
        """The info key ``mpi_accumulate_granularity``: the bytes of target
        memory the software path updates under one hold of the target's lock
        (rounded up to whole elements); 0: a whole message. Native and CPU
        atomics work element by element whatever it says."""
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
        """One line: which dtypes are native (and who executes them) and which software."""
        native = [d for d, p in self._by_dtype.items() if p.native]
        software = [d for d, p in self._by_dtype.items() if not p.native]
        parts = []
        if native:
            parts.append(f"native ({self.executor.kind}) " + ",".join(native))
        if software:
            by = "onesided, by the origin" if self.executor.kind == "origin" else "onesided"
            parts.append(f"software ({by}) " + ",".join(software))
        return "; ".join(parts)

    def software_execution(self) -> str:
        """Who applies this window's software-path dtypes, and whether
        ``mpi_accumulate_granularity`` matters to them (on the shared-memory
        path it does not: stripe locks work element by element)."""
        base = base_path(self.path)
        if base == "shared-memory":
            return ("the calling thread, under CPU stripe locks on shared memory, element by element "
                    "(mpi_accumulate_granularity changes nothing here)")
        held = f"{self.granularity} bytes (whole elements)" if self.granularity else "a whole message"
        who = (f"executed by {self.executor}" if base == "cross-memory"
               else "executed by onesided's kernels at the target, in its progress engine")
        return f"{who}; the target's lock held per {held} (mpi_accumulate_granularity)"

    def __str__(self) -> str:
        """The data path, who executes the native dtypes (if any) and the
        software ones (if any), then one line per dtype."""
        width = max(len(d) for d in self._by_dtype)
        lines = [f"{'path':{width}s}  {self.path}: {self.path_description}"]
        paths = self._by_dtype.values()
        if any(p.native for p in paths):
            lines += [f"{'native':{width}s}  executed by {self.executor}"]
        if not all(p.native for p in paths):
            lines += [f"{'software':{width}s}  {self.software_execution()}"]
        lines += [f"{d:{width}s}  {p}" for d, p in self._by_dtype.items()]
        return "\n".join(lines)
