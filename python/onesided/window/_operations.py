"""The full path of each operation: arguments the binding's shortcut form
did not recognise (tuples with counts or dtypes, memoryviews, mpi4py
datatypes, None where an op takes no operand) are parsed here, checked, and
passed to the core's full form.

Each function takes the window, the target rank and the operation's
arguments as the user gave them, issues the operation, and returns the core
Request (for the R* forms, ``request=True``; else None) and the buffers in
use, which the caller keeps referenced until the operation completes. The
checks run in a fixed order, so a call with several faults always reports
the same one.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

from .. import _core
from .._types import OPS, RMW_OPS, op_code
from ..args import _mpi_args as mpi_args
from ..args._buffers import Message, absent, message, plain, same_dtype, same_shape, single, target as target_spec
from ._constants import PROC_NULL


NO_OP = int(OPS["no_op"])
RMW_INC = int(RMW_OPS["RMW_INC"])


class Issued(NamedTuple):
    core: Any  # the core Request when one was asked for, else None
    buffers: tuple[Any, ...]  # in use until the operation completes


# A PROC_NULL target (translated by mpi_args.rank before these run) is a
# valid target of every call, which then moves nothing; every argument is
# still checked as for any other rank, so a mistake shows at the boundary
# ranks of a halo exchange as at its interior ones. The one difference: a
# buffer may be None there, alone or as the first item of its spec
# (``[None, MPI.INT]``: MPI passes no memory to a PROC_NULL target).
# When one is, the core is not called (it would need the buffer's dtype);
# the window must still be live. Otherwise the core's own PROC_NULL rule
# applies (its checks, then nothing moves; a request complete at once).
_SKIPPED = Issued(None, ())


def _spec(spec: Any, target_rank: int, **kwargs: Any) -> Message | None:
    if target_rank == PROC_NULL and absent(spec, kwargs["what"]):
        return None
    return message(spec, **kwargs)


def _skip(win: _core.Window, *messages: Message | None) -> bool:
    # True when a left-out buffer leaves nothing to issue (see above).
    if all(m is not None for m in messages):
        return False
    win._check_live("an operation to PROC_NULL")
    return True


def put(win: _core.Window, target_rank: int, origin: Any, target: Any, request: bool = False) -> Issued:
    o = _spec(origin, target_rank, writable=False, what="origin")
    t = target_spec(target, o)
    if _skip(win, o):
        return _SKIPPED
    assert o is not None
    core = win._put(o.buffer, o.count, o.dtype, target_rank, t.disp, request, o.layout, t.layout)
    return Issued(core, (o.buffer,))


def get(win: _core.Window, target_rank: int, origin: Any, target: Any, request: bool = False) -> Issued:
    o = _spec(origin, target_rank, writable=True, what="origin")
    t = target_spec(target, o)
    if _skip(win, o):
        return _SKIPPED
    assert o is not None
    core = win._get(o.buffer, o.count, o.dtype, target_rank, t.disp, request, o.layout, t.layout)
    return Issued(core, (o.buffer,))


def accumulate(win: _core.Window, target_rank: int, origin: Any, target: Any, op: Any, request: bool = False) -> Issued:
    code = op_code(op)
    o = _spec(origin, target_rank, writable=False, what="origin", accumulate=True)
    t = target_spec(target, o, accumulate=True)
    if _skip(win, o):
        return _SKIPPED
    assert o is not None
    core = win._accumulate(o.buffer, o.count, o.dtype, target_rank, t.disp, code, request, o.layout, t.layout)
    return Issued(core, (o.buffer,))


def get_accumulate(win: _core.Window, target_rank: int, origin: Any, result: Any, target: Any, op: Any,
                   request: bool = False) -> Issued:
    name = "Rget_accumulate" if request else "Get_accumulate"
    code, r, o = fetching(op, result, origin, target_rank, NO_OP, same_shape, f"{name} origin and result",
                          ignored=True)
    t = target_spec(target, r if r is not None else o, accumulate=True)
    if _skip(win, r, o if code != NO_OP else r):
        return _SKIPPED
    assert r is not None and o is not None
    # layouts positionally: origin, result, target (keywords cost more in pybind11)
    core = win._get_accumulate(o.buffer, r.buffer, r.count, r.dtype, target_rank, t.disp, code, request, o.layout,
                               r.layout, t.layout)
    return Issued(core, (o.buffer, r.buffer))


def fetch_and_op(win: _core.Window, target_rank: int, origin: Any, result: Any, target_disp: int, op: Any,
                 request: bool = False) -> Issued:
    name = "Rfetch_and_op" if request else "Fetch_and_op"
    disp = mpi_args.integer(target_disp, "target displacement")
    code, r, o = fetching(op, result, origin, target_rank, NO_OP, same_dtype, f"{name} origin and result")
    r = r if r is None else single(r, f"{name} result")
    o = o if o is None else single(o, f"{name} origin")
    if _skip(win, r, o):
        return _SKIPPED
    assert r is not None and o is not None
    core = win._fetch_and_op(o.buffer, r.buffer, r.dtype, target_rank, disp, code, request)
    return Issued(core, (o.buffer, r.buffer))


def compare_and_swap(win: _core.Window, target_rank: int, origin: Any, compare: Any, result: Any,
                     target_disp: int, request: bool = False) -> Issued:
    fn = "Rcompare_and_swap" if request else "Compare_and_swap"
    disp = mpi_args.integer(target_disp, "target displacement")
    o = _spec(origin, target_rank, writable=False, what="origin", accumulate=True)
    c = _spec(compare, target_rank, writable=False, what="compare", accumulate=True)
    r = _spec(result, target_rank, writable=True, what="result", accumulate=True)
    for m, name in ((o, "origin"), (c, "compare")):
        same_dtype(m, r, f"{fn} {name} and result")
    same_dtype(o, c, f"{fn} origin and compare")
    o, c, r = (m if m is None else single(m, f"{fn} {name}") for m, name in ((o, "origin"), (c, "compare"),
                                                                          (r, "result")))
    if _skip(win, o, c, r):
        return _SKIPPED
    assert o is not None and c is not None and r is not None
    core = win._compare_and_swap(o.buffer, c.buffer, r.buffer, r.dtype, target_rank, disp, request)
    return Issued(core, (o.buffer, c.buffer, r.buffer))


def rmw(win: _core.Window, target_rank: int, origin: Any, result: Any, target_disp: int, op: Any, assertion: int,
        request: bool = False) -> Issued:
    disp = mpi_args.integer(target_disp, "target displacement")
    code, r, o = fetching(op, result, origin, target_rank, RMW_INC, same_shape, "Rmw origin and result")
    for m, name in ((r, "result"), (o, "origin")):
        if m is not None:
            plain(m, f"Rmw {name}")
    modes = mpi_args.assertion(assertion)
    if _skip(win, r, o if code != RMW_INC else r):
        return _SKIPPED
    assert r is not None and o is not None
    core = win._rmw(code, o.buffer, r.buffer, r.count, r.dtype, target_rank, disp, modes, request)
    return Issued(core, (r.buffer, o.buffer))


def rmw2(win: _core.Window, target_rank: int, origin: Any, origin2: Any, result: Any, target_disp: int, op: Any,
         assertion: int, request: bool = False) -> Issued:
    disp = mpi_args.integer(target_disp, "target displacement")
    code, r, o = fetching(op, result, origin, target_rank, None, same_shape, "Rmw origin and result")
    o2 = _spec(origin2, target_rank, writable=False, what="origin2", accumulate=True)
    same_shape(o2, r, "Rmw2 origin2 and result")
    same_shape(o2, o, "Rmw2 origin2 and origin")
    for m, name in ((r, "result"), (o, "origin"), (o2, "origin2")):
        if m is not None:
            plain(m, f"Rmw2 {name}")
    modes = mpi_args.assertion(assertion)
    if _skip(win, r, o, o2):
        return _SKIPPED
    assert r is not None and o is not None and o2 is not None
    core = win._rmw2(code, o.buffer, o2.buffer, r.buffer, r.count, r.dtype, target_rank, disp, modes, request)
    return Issued(core, (r.buffer, o.buffer, o2.buffer))


def fetching(op: Any, result: Any, origin: Any, target_rank: int, without_operand: int | None,
             rule: Callable[[Message | None, Message | None, str], None],
             what: str, ignored: bool = False) -> tuple[int, Message | None, Message | None]:
    """The op code, result and origin of a call that fetches into ``result``.
    ``origin`` may be None when the op is ``without_operand`` (NO_OP,
    RMW_INC: no operand to read); with ``ignored`` (Get_accumulate) any
    origin is then ignored, as MPI says, once its form is checked (mpi4py's
    Fetch_and_op still wants its one element, so it keeps the rule); else it must satisfy ``rule`` against
    the result (same dtype, or same dtype and count). Toward PROC_NULL
    either may be None (None is returned for it)."""
    code = op_code(op)
    r = _spec(result, target_rank, writable=True, what="result", accumulate=True)
    if code == without_operand and (origin is None or ignored):
        # MPI ignores Get_accumulate's origin under NO_OP (origin_addr,
        # origin_count and origin_datatype alike), and programs spell it
        # None, [None, 0, T], [None, 0, MPI.DATATYPE_NULL] or [buf, 0, T]:
        # each is taken once its form is checked, and nothing of it is read.
        if not absent(origin, "origin"):
            message(origin, writable=False, what="origin")
        return code, r, (r if r is None else Message(None, r.count, r.dtype))
    o = _spec(origin, target_rank, writable=False, what="origin", accumulate=True)
    rule(o, r, what)
    return code, r, o
