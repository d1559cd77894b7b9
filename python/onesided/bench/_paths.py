"""Figure 5: onesided's native against software atomics on libfabric shm and
tcp (shared-memory path off on every window); onesided only, no peer."""

from __future__ import annotations

from typing import Any

from ._common import Progress, Settings, fmt_spread, heading, latency_us, table
from ._figures import _buffers, _interleaved, latency_calls

NATIVE_INFO = {
    "accumulate_ops": "fetch_and_op:sum,compare_and_swap,accumulate:sum,rmw:inc,rmw2:comp_swap_lt",
    # tcp;ofi_rxm does not keep atomic write-after-read order
    "accumulate_ordering": "rar,raw,waw",
}
PATH_ROWS = ["fetch_and_op SUM int64", "compare_and_swap int64", "accumulate SUM int64", "rmw INC int64",
             "rmw2 COMP_SWAP_LT int64"]


def paths(comm: Any, MPI: Any, onesided: Any, s: Settings, progress: Progress) -> dict[str, Any] | None:
    """onesided's native against software atomics on libfabric shm and tcp
    (shared-memory path off on every window)."""
    b = _buffers()
    iters = max(10, s.iters // 2)
    columns: list[tuple[str, dict[str, float]]] = []
    for provider in ("shm", "tcp;ofi_rxm"):
        for path, extra in (("native", NATIVE_INFO), ("software", {"onesided_atomics": "software"})):
            progress(f"atomics by path: {provider} {path}")
            info = {"provider": provider, "onesided_shared_memory": "off", **extra}
            win = onesided.Window.Allocate(64, disp_unit=8, info=info, comm=comm)
            actual = "native" if win.atomics["sum", "int64"].native else "software"
            calls = latency_calls(win, onesided, b, True)
            entries = [(name, win, False, calls[name]) for name in PATH_ROWS]
            figures = _interleaved(comm, entries, s.reps,  # type: ignore[arg-type]
                                   lambda call, win: latency_us(call, win.Flush, 1, iters))
            columns.append((f"{provider.split(';')[0]} {actual}", figures))
            win.Free()
    return {"columns": columns, "iters": iters} if comm.rank == 0 else None


def paths_text(res: dict[str, Any], s: Settings, peer: str = "") -> str:
    columns = res["columns"]
    rows = [[name, *(fmt_spread(f[name], lambda x: f"{x:.3g}") for _, f in columns)] for name in PATH_ROWS]
    head = heading(
        "5. onesided atomics by path (libfabric, shared memory off)",
        f"us per op + Flush: median [min, max] of {s.reps} repetitions of {res['iters']}; every window has "
        "`onesided_shared_memory=off`. "
        "native: the provider's atomics; software: a message to the target, applied there.",
    )
    return head + "\n" + table(["operation", *(c for c, _ in columns)], rows)
