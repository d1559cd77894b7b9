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
from ..args._buffers import Message, message, plain, same_dtype, same_shape, single, target as target_spec

NO_OP = int(OPS["no_op"])
RMW_INC = int(RMW_OPS["RMW_INC"])


class Issued(NamedTuple):
    core: Any  # the core Request when one was asked for, else None
    buffers: tuple[Any, ...]  # in use until the operation completes


def put(win: _core.Window, target_rank: int, origin: Any, target: Any, request: bool = False) -> Issued:
    o = message(origin, writable=False, what="origin")
    t = target_spec(target, o)
    core = win._put(o.buffer, o.count, o.dtype, target_rank, t.disp, request, o.layout, t.layout)
    return Issued(core, (o.buffer,))


def get(win: _core.Window, target_rank: int, origin: Any, target: Any, request: bool = False) -> Issued:
    o = message(origin, writable=True, what="origin")
    t = target_spec(target, o)
    core = win._get(o.buffer, o.count, o.dtype, target_rank, t.disp, request, o.layout, t.layout)
    return Issued(core, (o.buffer,))


def accumulate(win: _core.Window, target_rank: int, origin: Any, target: Any, op: Any, request: bool = False) -> Issued:
    o = message(origin, writable=False, what="origin", accumulate=True)
    t = target_spec(target, o, accumulate=True)
    core = win._accumulate(o.buffer, o.count, o.dtype, target_rank, t.disp, op_code(op), request, o.layout,
                           t.layout)
    return Issued(core, (o.buffer,))


def get_accumulate(win: _core.Window, target_rank: int, origin: Any, result: Any, target: Any, op: Any,
                   request: bool = False) -> Issued:
    name = "Rget_accumulate" if request else "Get_accumulate"
    code, r, o = fetching(op, result, origin, NO_OP, same_shape, f"{name} origin and result")
    t = target_spec(target, r, accumulate=True)
    # layouts positionally: origin, result, target (keywords cost more in pybind11)
    core = win._get_accumulate(o.buffer, r.buffer, r.count, r.dtype, target_rank, t.disp, code, request, o.layout,
                               r.layout, t.layout)
    return Issued(core, (o.buffer, r.buffer))


def fetch_and_op(win: _core.Window, target_rank: int, origin: Any, result: Any, target_disp: int, op: Any,
                 request: bool = False) -> Issued:
    name = "Rfetch_and_op" if request else "Fetch_and_op"
    code, r, o = fetching(op, result, origin, NO_OP, same_dtype, f"{name} origin and result")
    r = single(r, f"{name} result")
    o = single(o, f"{name} origin")
    core = win._fetch_and_op(o.buffer, r.buffer, r.dtype, target_rank, target_disp, code, request)
    return Issued(core, (o.buffer, r.buffer))


def compare_and_swap(win: _core.Window, target_rank: int, origin: Any, compare: Any, result: Any,
                     target_disp: int, request: bool = False) -> Issued:
    fn = "Rcompare_and_swap" if request else "Compare_and_swap"
    o = message(origin, writable=False, what="origin", accumulate=True)
    c = message(compare, writable=False, what="compare", accumulate=True)
    r = message(result, writable=True, what="result", accumulate=True)
    for m, name in ((o, "origin"), (c, "compare")):
        same_dtype(m, r, f"{fn} {name} and result")
    o, c, r = (single(m, f"{fn} {name}") for m, name in ((o, "origin"), (c, "compare"), (r, "result")))
    core = win._compare_and_swap(o.buffer, c.buffer, r.buffer, r.dtype, target_rank, target_disp, request)
    return Issued(core, (o.buffer, c.buffer, r.buffer))


def rmw(win: _core.Window, target_rank: int, origin: Any, result: Any, target_disp: int, op: Any, assertion: int,
        request: bool = False) -> Issued:
    code, r, o = fetching(op, result, origin, RMW_INC, same_shape, "Rmw origin and result")
    plain(r, "Rmw result")
    plain(o, "Rmw origin")
    core = win._rmw(code, o.buffer, r.buffer, r.count, r.dtype, target_rank, target_disp,
                    mpi_args.assertion(assertion), request)
    return Issued(core, (r.buffer, o.buffer))


def rmw2(win: _core.Window, target_rank: int, origin: Any, origin2: Any, result: Any, target_disp: int, op: Any,
         assertion: int, request: bool = False) -> Issued:
    code, r, o = fetching(op, result, origin, None, same_shape, "Rmw origin and result")
    o2 = message(origin2, writable=False, what="origin2", accumulate=True)
    same_shape(o2, r, "Rmw2 origin2 and result")
    for m, name in ((r, "result"), (o, "origin"), (o2, "origin2")):
        plain(m, f"Rmw2 {name}")
    core = win._rmw2(code, o.buffer, o2.buffer, r.buffer, r.count, r.dtype, target_rank, target_disp,
                     mpi_args.assertion(assertion), request)
    return Issued(core, (r.buffer, o.buffer, o2.buffer))


def fetching(op: Any, result: Any, origin: Any, without_operand: int | None,
             rule: Callable[[Message, Message, str], None], what: str) -> tuple[int, Message, Message]:
    """The op code, result and origin of a call that fetches into ``result``.
    ``origin`` may be None when the op is ``without_operand`` (NO_OP,
    RMW_INC: no operand to read); else it must satisfy ``rule`` against
    the result (same dtype, or same dtype and count)."""
    code = op_code(op)
    r = message(result, writable=True, what="result", accumulate=True)
    if origin is None and code == without_operand:
        return code, r, Message(None, r.count, r.dtype)
    o = message(origin, writable=False, what="origin", accumulate=True)
    rule(o, r, what)
    return code, r, o
