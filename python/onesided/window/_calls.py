"""Every RMA call of the Window, described once.

One row per operation says its MPI.Win name, its parameters in mpi4py's
order with their defaults, what each buffer is for, which forms it has
(request-based ``R*``, notified ``*_notify``) and its full parse in
:mod:`onesided._operations`. Everything else comes from here:

* the Window's methods, with their signatures and docstrings: written into
  ``_rma_methods.py`` by ``python -m onesided.window --write`` (a test
  checks that the file is what this table makes), so type checkers and
  ``help()`` see real methods;
* the fast entries' parameter names and default ops
  (``_core._define_fast``, at import: cpp/bindings/fast_entries.hpp): the
  instance's own Put, Get, ... are those entries, and what they do not take
  goes to the methods above, which are the full parse;
* the table of calls in docs/porting.md (same command).

Adding an operation is one row here, its full parse in ``_operations``, its
core call in the bindings and, for a fast entry, one line in
cpp/bindings/register_operations.cpp.
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path
from typing import Any, Callable, NamedTuple

from .. import _core
from .._types import OPS, RMW2_OPS, RMW_OPS
from ..args import _mpi_args as mpi_args
from . import _operations as operations
from ._constants import PROC_NULL
from ._request import Request

REQUIRED = object()  # a parameter without a default


class Param(NamedTuple):
    name: str
    annotation: str
    default: Any = REQUIRED
    default_text: str = ""  # how the signature shows the default


class Operation(NamedTuple):
    name: str
    params: tuple[Param, ...]  # in MPI.Win's order; target_rank among them
    buffers: tuple[tuple[str, str], ...]  # (parameter, role): what the call does with each buffer
    parse: Callable[..., operations.Issued]  # (win, rank, *the other parameters, request=False)
    doc: str
    request_doc: str  # the R* form's; every operation has one
    notify_doc: str = ""  # the *_notify forms', where the operation has them
    notify_request_doc: str = ""
    mpi: bool = True  # whether MPI.Win has it


def _p(name: str, default: Any = REQUIRED, text: str = "") -> Param:
    annotation = {"target_rank": "int", "target_disp": "int", "assertion": "int", "notification_idx": "int"}
    return Param(name, annotation.get(name, "Any"), default, text or repr(default))


TARGET = _p("target", None)
TARGET_DISP = _p("target_disp", 0)
OP_SUM = _p("op", OPS["sum"], "SUM")
NOTIFICATION = _p("notification_idx", 0)

READ, WRITE = "read", "written"

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "Put", (_p("origin"), _p("target_rank"), TARGET), (("origin", READ),), operations.put,
        doc="Write ``origin`` into the target's window. Not atomic, unordered;\n"
            "complete at the next flush, unlock or fence of ``target_rank``.",
        request_doc="Put returning a Request: complete (origin buffer reusable, data at\n"
                    "the target) when the Request is, or at a flush/unlock of ``target_rank``.",
        notify_doc="Put, then notify ``target_rank``'s counter ``notification_idx`` once\n"
                   "the data is visible in its window (docs/semantics.md, notified RMA).",
        notify_request_doc="Put_notify returning a Request that completes once the data is at\n"
                           "the target and the notification has been counted there."),
    Operation(
        "Get", (_p("origin"), _p("target_rank"), TARGET), (("origin", WRITE),), operations.get,
        doc="Read the target's window into ``origin`` (written when the\n"
            "operation completes). Not atomic, unordered.",
        request_doc="Get returning a Request: ``origin`` holds the data once the Request completes.",
        notify_doc="Get, then notify the target once its memory has been read (it may\n"
                   "reuse it). ``origin`` holds the data once the operation completes.",
        notify_request_doc="Get_notify returning a Request; ``origin`` is valid once it completes."),
    Operation(
        "Accumulate", (_p("origin"), _p("target_rank"), TARGET, OP_SUM), (("origin", READ),), operations.accumulate,
        doc="target = op(target, origin), atomic per element, ordered with the\n"
            "other accumulate-style calls from this origin.",
        request_doc="Accumulate returning a Request; atomicity and ordering as Accumulate.",
        notify_doc="Accumulate (atomic per element, ordered as Accumulate), then notify\n"
                   "the target once it has been applied.",
        notify_request_doc="Accumulate_notify returning a Request."),
    Operation(
        "Get_accumulate", (_p("origin"), _p("result"), _p("target_rank"), TARGET, OP_SUM),
        (("origin", READ), ("result", WRITE)), operations.get_accumulate,
        doc="result = target; target = op(target, origin), atomically per element.\n"
            "With op=NO_OP it is an atomic read and ``origin`` may be None.",
        request_doc="Get_accumulate returning a Request; ``result`` is valid once it completes."),
    Operation(
        "Fetch_and_op", (_p("origin"), _p("result"), _p("target_rank"), TARGET_DISP, OP_SUM),
        (("origin", READ), ("result", WRITE)), operations.fetch_and_op,
        doc="The one-element Get_accumulate: result = target; target = op(target, origin).",
        request_doc="Fetch_and_op returning a Request (an extension beyond MPI: MPI\n"
                    "Forum issue #128). ``result`` is valid once the Request completes\n"
                    "(Wait, Test, Waitall, ``await``, or a flush/unlock of\n"
                    "``target_rank``), not before; atomicity and ordering as Fetch_and_op.\n"
                    "Arguments are checked as Fetch_and_op's, before anything is sent."),
    Operation(
        "Compare_and_swap", (_p("origin"), _p("compare"), _p("result"), _p("target_rank"), TARGET_DISP),
        (("origin", READ), ("compare", READ), ("result", WRITE)), operations.compare_and_swap,
        doc="result = target; if target == compare: target = origin. One element,\n"
            "atomic with every other accumulate-style call.",
        request_doc="Compare_and_swap returning a Request (an extension beyond MPI:\n"
                    "MPI Forum issue #128). ``result`` is valid once the Request\n"
                    "completes, not before; atomicity as Compare_and_swap. Arguments are\n"
                    "checked as Compare_and_swap's, before anything is sent."),
    Operation(
        "Rmw", (_p("origin"), _p("result"), _p("target_rank"), TARGET_DISP, _p("op", RMW_OPS["RMW_SUM"], "RMW_SUM"),
                _p("assertion", 0)),
        (("origin", READ), ("result", WRITE)), operations.rmw, mpi=False,
        doc="Generalised read-modify-write (seed 002): per element, result =\n"
            "target, then target = op(target, origin). Ops: RMW_INC (origin may be\n"
            "None), RMW_SUM, RMW_PROD, RMW_MIN, RMW_MAX, RMW_LAND, RMW_LOR,\n"
            "RMW_LXOR, RMW_BAND, RMW_BOR, RMW_BXOR, RMW_SWAP. Each element is atomic\n"
            "with every accumulate-style call; the vector as a whole is not.\n"
            "Completes like the other RMA calls, or, with\n"
            "MODE_PASSIVE_EPOCH_IMPLICIT, before returning, inside its own\n"
            "exclusive lock epoch (no lock with MODE_NOCHECK as well).",
        request_doc="Rmw returning a Request that completes with the operation."),
    Operation(
        "Rmw2", (_p("origin"), _p("origin2"), _p("result"), _p("target_rank"), TARGET_DISP,
                 _p("op", RMW2_OPS["RMW2_COMP_SWAP_EQ"], "RMW2_COMP_SWAP_EQ"), _p("assertion", 0)),
        (("origin", READ), ("origin2", READ), ("result", WRITE)), operations.rmw2, mpi=False,
        doc="Two-operand read-modify-write: RMW2_MASK_SWAP (origin = mask,\n"
            "origin2 = value: target = (target & ~mask) | (value & mask)) and\n"
            "RMW2_COMP_SWAP_LT/_LE/_EQ/_GE/_GT/_NE (origin = comperand, origin2 =\n"
            "swaperand: when ``comperand OP target`` holds, target = swaperand).\n"
            "result receives the old values; same atomicity and completion as Rmw.",
        request_doc="Rmw2 returning a Request that completes with the operation."),
)


class Call(NamedTuple):
    """One method of the Window: an operation in one of its forms."""

    name: str
    operation: Operation
    params: tuple[Param, ...]
    form: str  # "plain", "request", "notified" or "notified_request"
    doc: str

    @property
    def returns(self) -> str:
        return "Request" if self.form.endswith("request") else "None"


def calls() -> list[Call]:
    """Every Window method the table makes, plain forms first."""
    out: list[Call] = []
    for op in OPERATIONS:
        out.append(Call(op.name, op, op.params, "plain", op.doc))
    for op in OPERATIONS:
        out.append(Call(_request_name(op.name), op, op.params, "request", op.request_doc))
    for op in OPERATIONS:
        if op.notify_doc:
            out.append(Call(op.name + "_notify", op, op.params + (NOTIFICATION,), "notified", op.notify_doc))
            out.append(Call(_request_name(op.name) + "_notify", op, op.params + (NOTIFICATION,), "notified_request",
                            op.notify_request_doc))
    return out


def _request_name(name: str) -> str:
    # MPI's R forms: Rput, Rget_accumulate, Rfetch_and_op; and Rrmw, Rrmw2.
    return "R" + name[0].lower() + name[1:]


# -- the forms: what a method does once Python has bound its arguments --------------------------------------------
#
# Each takes the operation's full parse and the arguments in table order,
# the target rank first. The rank is checked and translated here, once
# (mpi4py's PROC_NULL is onesided's); the parse checks every other
# argument, whatever the rank (_operations.py), and issues the call.

def plain(win: Any, parse: Callable[..., operations.Issued], target_rank: Any, *args: Any) -> None:
    """Issue; the buffers stay referenced until the target's next completion point."""
    rank = mpi_args.rank(target_rank, "target rank")
    win._keep(rank, *parse(win, rank, *args).buffers)


def request(win: Any, parse: Callable[..., operations.Issued], target_rank: Any, *args: Any) -> Request:
    """Issue; the Request holds the buffers and completes with the operation."""
    issued = parse(win, mpi_args.rank(target_rank, "target rank"), *args, request=True)
    return Request(issued.core, issued.buffers) if issued.core is not None else Request()


def notified(win: Any, parse: Callable[..., operations.Issued], target_rank: Any, notification_idx: Any,
             *args: Any) -> None:
    """Issue, then notify: the index is checked before anything is issued."""
    index = win._notification(notification_idx)
    rank = mpi_args.rank(target_rank, "target rank")
    win._keep(rank, *parse(win, rank, *args).buffers)
    if rank != PROC_NULL:
        win._notify(rank, index, False)


def notified_request(win: Any, parse: Callable[..., operations.Issued], target_rank: Any, notification_idx: Any,
                     *args: Any) -> Request:
    """The notification follows the operation, so its request completes only
    after the operation's: it stands for both."""
    index = win._notification(notification_idx)
    rank = mpi_args.rank(target_rank, "target rank")
    issued = parse(win, rank, *args, request=True)
    if rank == PROC_NULL:
        return Request()
    return Request(win._notify(rank, index, True), issued.buffers)


# -- what the table makes ---------------------------------------------------------------------------------------------

def define_fast_entries() -> None:
    """Give each fast entry its names, default op and docstring (import time)."""
    by_name = {call.name: call for call in calls()}
    for name in _core.FAST_CALLS:
        call = by_name[name]
        op = next((p.default for p in call.params if p.name == "op"), None)
        _core._define_fast(name, tuple(p.name for p in call.params), op, call.doc)


def method_source(call: Call) -> str:
    """The Python source of one Window method."""
    params = ", ".join(
        f"{p.name}: {p.annotation}" + ("" if p.default is REQUIRED else f" = {p.default_text}") for p in call.params)
    rest = [p.name for p in call.params if p.name not in ("target_rank", "notification_idx")]
    head = ["target_rank"] + (["notification_idx"] if call.form.startswith("notified") else [])
    args = ", ".join([f"_operations.{call.operation.parse.__name__}", *head, *rest])
    doc = call.doc.replace("\n", "\n        ")
    return (f"    def {call.name}(self, {params}) -> {call.returns}:\n"
            f'        """{doc}"""\n'
            f"        return _calls.{call.form}(self, {args})\n")


# What the generated module says of itself, one paragraph a string (wrapped
# when written).
GENERATED_DOC = (
    "The Window's RMA methods. GENERATED from the calls table in ``onesided/window/_calls.py`` by "
    "``python -m onesided.window --write``: do not edit.",
    "Each method is the full parse of its call: the instance's own fast entry (cpp/bindings/fast_entries.hpp) "
    "takes plain arrays, int ranks and known ops, and hands anything else here, with the arguments as the user "
    "gave them.",
)


def module_source() -> str:
    """``_rma_methods.py``: the Window's RMA methods, as the table makes them."""
    defaults = sorted({p.default_text for c in calls() for p in c.params if p.default_text.isupper()})
    doc = "\n\n".join(textwrap.fill(paragraph, 79) for paragraph in GENERATED_DOC)
    imports = ["from __future__ import annotations", "", "from typing import Any", "",
               "from . import _calls, _operations", f"from ._calls import {', '.join(defaults)}",
               "from ._request import Request"]
    names = ", ".join(op.name for op in OPERATIONS)
    head = [f'"""{doc}\n"""', "", *imports, "", "", "class WindowCalls:",
            textwrap.indent(textwrap.fill(f'"""{names}, their request-based forms and the notified ones."""', 75),
                            "    "), ""]
    return "\n".join(head) + "\n" + "\n".join(method_source(c) for c in calls())


# The names the generated module imports for its defaults.
SUM = OPS["sum"]
RMW_SUM = RMW_OPS["RMW_SUM"]
RMW2_COMP_SWAP_EQ = RMW2_OPS["RMW2_COMP_SWAP_EQ"]

# Where --write puts what the table makes, from the repository's root.
GENERATED = Path("python/onesided/window/_rma_methods.py")
PORTING = Path("docs/porting.md")
BEGIN, END = "<!-- calls table: generated by python -m onesided.window --write -->", "<!-- end of calls table -->"


def porting_table() -> str:
    """The table of RMA calls in docs/porting.md."""
    rows = ["| `onesided.Window` | `MPI.Win` | buffers | returns |", "| --- | --- | --- | --- |"]
    for call in calls():
        params = ", ".join(p.name + ("" if p.default is REQUIRED else f"={p.default_text}") for p in call.params)
        mpi = call.operation.mpi and call.form in ("plain", "request") and call.name not in (
            "Rfetch_and_op", "Rcompare_and_swap")
        buffers = ", ".join(f"`{b}` {role}" for b, role in call.operation.buffers)
        rows.append(f"| `win.{call.name}({params})` | {'same' if mpi else '(none: beyond MPI)'} | {buffers} | "
                    f"{'`onesided.Request`' if call.returns == 'Request' else ''} |")
    return "\n".join([BEGIN, *rows, END])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m onesided.window",
                                     description="Write what the calls table makes: _rma_methods.py and the table "
                                                 "in docs/porting.md.")
    parser.add_argument("--write", action="store_true", help="write the files (else print them)")
    parser.add_argument("--root", type=Path, default=Path("."), help="the repository's root (default: here)")
    args = parser.parse_args(argv)
    if not args.write:
        print(module_source())
        print(porting_table())
        return 0
    (args.root / GENERATED).write_text(module_source())
    porting = args.root / PORTING
    porting.write_text(with_porting_table(porting.read_text()))
    return 0


def with_porting_table(text: str) -> str:
    """docs/porting.md's text with the table as the table makes it."""
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + porting_table() + text[end:]


define_fast_entries()
