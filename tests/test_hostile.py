"""Hostile input (issue 13 items 1, 3, 4, 6, 7): bad arguments to every data
call, epoch call and constructor, one argument varied at a time from a valid
call, property-based (hypothesis). Each bad call must raise the documented
onesided.Error subclass (which is also the builtin class Python users
expect: TypeError for the wrong kind of object, ValueError for a wrong
value, IndexError out of the window, BufferError for a read-only buffer)
and change no byte anywhere: not in the window, not in the guard bytes
around it, not in the result buffer or the guard bytes around that.

One process (a world of one), on the shared-memory path (an Allocate
window) and on the provider path (a Create window over the middle of a
guarded array, with onesided_shared_memory=off). The 2-rank run where one
rank passes a bad creation argument is in test_hostile_ranks.py.

The summary test at the end prints how many inputs each category tried.
"""

from __future__ import annotations

import array
import collections
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import onesided
from onesided import ArgumentError, ArgumentTypeError, BoundsError, BufferArgumentError, EpochError, UnsupportedError

EXAMPLES = 25  # per (call, argument, path): the file runs in about a minute on a loaded 2-core machine
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

TRIED: collections.Counter[str] = collections.Counter()

GUARD = -0x5A5A5A5A5A5A5A5B  # int64 pattern of the guard bytes
N = 8  # int64 elements per window
UNIT = 8  # disp_unit


# -- windows -------------------------------------------------------------------------


class Target:
    """A window with everything around it that must not change."""

    def __init__(self, path: str) -> None:
        self.path = path
        if path == "shared-memory":
            self.backing = None
            self.win = onesided.Window.Allocate(N * UNIT, UNIT)
        else:
            # The window is the middle of a guarded array.
            self.backing = np.full(3 * N, GUARD, np.int64)
            self.win = onesided.Window.Create(self.backing[N:2 * N], UNIT, info={"onesided_shared_memory": "off"})
        self.memory = np.frombuffer(self.win, np.int64)
        self.memory[:] = np.arange(100, 100 + N)
        assert self.win.Get_info()["onesided_path"].startswith(path), self.win.Get_info()["onesided_path"]

    def snapshot(self) -> tuple[bytes, bytes]:
        """(the window's bytes, the guard bytes around it)."""
        if self.backing is None:
            return self.memory.tobytes(), b""
        return self.memory.tobytes(), self.backing[:N].tobytes() + self.backing[2 * N:].tobytes()


@pytest.fixture(scope="module", params=["shared-memory", "provider"])
def target(request: pytest.FixtureRequest) -> Any:
    t = Target(request.param)
    t.win.Lock_all()
    yield t
    t.win.Unlock_all()
    t.win.Free()


# -- valid calls, one argument at a time replaced ------------------------------------


def _guarded(n: int, fill: int = GUARD) -> tuple[np.ndarray, np.ndarray]:
    """A result buffer of n int64 in the middle of guard bytes."""
    backing = np.full(n + 4, GUARD, np.int64)
    backing[2:2 + n] = fill
    return backing, backing[2:2 + n]


# Each call: its positional arguments by name, in order. "origin"-like
# arguments are read, "result" written; n is the element count of the
# valid call.
CALLS: dict[str, tuple[list[str], int]] = {
    "Put": (["origin", "rank", "target"], 2),
    "Get": (["result", "rank", "target"], 2),
    "Accumulate": (["origin", "rank", "target", "op"], 2),
    "Get_accumulate": (["origin", "result", "rank", "target", "op"], 2),
    "Fetch_and_op": (["origin", "result", "rank", "disp", "op"], 1),
    "Compare_and_swap": (["origin", "compare", "result", "rank", "disp"], 1),
    "Rmw": (["origin", "result", "rank", "disp", "rmw_op"], 2),
    "Rmw2": (["origin", "origin2", "result", "rank", "disp", "rmw2_op"], 2),
    "Rput": (["origin", "rank", "target"], 2),
    "Rget": (["result", "rank", "target"], 2),
    "Raccumulate": (["origin", "rank", "target", "op"], 2),
    "Rget_accumulate": (["origin", "result", "rank", "target", "op"], 2),
    "Rrmw": (["origin", "result", "rank", "disp", "rmw_op"], 2),
    "Rrmw2": (["origin", "origin2", "result", "rank", "disp", "rmw2_op"], 2),
}


def valid_args(names: list[str], n: int) -> tuple[dict[str, Any], list[np.ndarray]]:
    """The valid call's arguments, and the arrays (with their guards) that
    must not change when a bad argument makes it raise."""
    watched: list[np.ndarray] = []
    args: dict[str, Any] = {}
    for name in names:
        if name in ("origin", "origin2", "compare"):
            args[name] = np.full(n, 3, np.int64)
            watched.append(args[name])
        elif name == "result":
            backing, args[name] = _guarded(n, fill=-1)
            watched.append(backing)
        elif name == "rank":
            args[name] = 0
        elif name in ("target", "disp"):
            args[name] = 1
        elif name == "op":
            args[name] = onesided.SUM
        elif name == "rmw_op":
            args[name] = onesided.RMW_SUM
        elif name == "rmw2_op":
            args[name] = onesided.RMW2_COMP_SWAP_EQ
    return args, watched


# -- bad values, each with the class it must raise ------------------------------------

Bad = st.SearchStrategy  # of (value, expected exception class)


def _with(cls: type, strategy: st.SearchStrategy) -> Bad:
    return strategy.map(lambda v: (v, cls))


NOT_INTEGERS = st.one_of(
    st.floats(allow_nan=True), st.text(max_size=4), st.booleans(), st.just(None), st.binary(max_size=4),
    st.complex_numbers(max_magnitude=10), st.just([0]), st.just((0,)), st.just({}), st.just(object()),
    st.sampled_from([np.float64(0), np.float32(1), np.bool_(True), np.array([0])]),
)

BAD_RANKS: Bad = st.one_of(
    # not in a group of one; past the core's int (2**32 + 1 once landed on rank 1)
    _with(ArgumentError, st.integers(min_value=1, max_value=2**31 - 1)),
    _with(ArgumentError, st.integers(max_value=-2, min_value=-(2**31))),
    _with(ArgumentError, st.integers(min_value=2**31, max_value=2**70)),
    _with(ArgumentError, st.integers(max_value=-(2**31) - 1, min_value=-(2**70))),
    _with(ArgumentError, st.sampled_from([2**32, 2**32 + 1, 2**33, 2**63, -(2**63), 2**64 + 1])),
    _with(ArgumentError, st.integers(min_value=1, max_value=2**40).map(np.int64)),
    _with(ArgumentTypeError, NOT_INTEGERS.filter(lambda v: not isinstance(v, (tuple,)))),
)

# Displacements of the window's 8 elements, for 2-element (or 1-element) calls.
BAD_DISPS: Bad = st.one_of(
    _with(BoundsError, st.integers(min_value=N, max_value=2**63 - 1)),
    _with(BoundsError, st.integers(min_value=-(2**63), max_value=-1)),
    _with(BoundsError, st.sampled_from([2**60, 2**61 + 3, (2**63 - 1) // UNIT + 1, -(2**60)])),
    _with(ArgumentError, st.integers(min_value=2**63, max_value=2**80)),
    _with(ArgumentError, st.integers(max_value=-(2**63) - 1, min_value=-(2**80))),
    _with(ArgumentTypeError, NOT_INTEGERS.filter(lambda v: v is not None and not isinstance(v, (list, tuple)))),
)

BAD_TARGETS: Bad = st.one_of(
    BAD_DISPS.filter(lambda p: p[0] is not None),
    # (disp, count[, dtype]) that disagree with the origin
    _with(ArgumentError, st.integers(min_value=0, max_value=100).filter(lambda c: c != 2).map(lambda c: (1, c))),
    _with(ArgumentError, st.sampled_from([np.float64, np.int32, "u8", "f8"]).map(lambda d: (1, 2, d))),
    _with(ArgumentTypeError, st.sampled_from([(1, 2.0), (1, "2"), (1, True), ("1",), (1.0,), (None, 2)])),
    _with(ArgumentTypeError, st.sampled_from([(1, 2, (np.int64, 2)), (1, 2, [("a", "i8")])])),
    _with(ArgumentTypeError, st.sampled_from([(), (1, 2, np.int64, 0), {"disp": 1}])),
    # onesided.Layout targets (the calls move 2 int64 from displacement 1):
    # outside the window, before it, overlapping, of the wrong size or dtype
    _with(BoundsError, st.integers(min_value=N - 1, max_value=2**40).map(
        lambda s: (1, 1, onesided.Layout((2,), (s,))))),
    _with(BoundsError, st.integers(min_value=-(2**40), max_value=-2).map(
        lambda s: (1, 1, onesided.Layout((2,), (s,))))),
    _with(ArgumentError, st.just((1, 1, onesided.Layout((2,), (0,))))),
    _with(ArgumentError, st.integers(min_value=0, max_value=6).filter(lambda n: n != 2).map(
        lambda n: onesided.Layout((n,)))),
    _with(ArgumentError, st.sampled_from([np.float64, np.int32]).map(
        lambda d: (1, 1, onesided.Layout((2,), dtype=d)))),
)

BAD_OPS: Bad = st.one_of(
    # plain ints are not ops (op=1 once ran PROD), nor bools, strings, None, ...
    _with(ArgumentTypeError, st.integers(min_value=-5, max_value=2**40)),
    _with(ArgumentTypeError, st.integers(min_value=0, max_value=40).map(np.int64)),
    _with(ArgumentTypeError, st.booleans()),
    _with(ArgumentTypeError, st.sampled_from(["sum", "SUM", None, 1.0, b"x", onesided.Op, object()])),
    _with(ArgumentTypeError, st.text(max_size=5)),
)


def _bad_buffers(n: int, writes: bool, alone: bool) -> Bad:
    """Bad buffers for an argument of n int64 elements (alone: the call's
    only buffer, whose size is the operation's, so a smaller one is fine)."""
    choices: list[st.SearchStrategy] = [
        _with(ArgumentTypeError, st.sampled_from(["abcdefgh", 5, 1.5, object(), {}, [1, 2], [None], (), [], True])),
        _with(ArgumentTypeError, st.lists(st.integers(0, 5), min_size=1, max_size=4)),
        # a strided view with a count that is not its size (a strided view
        # moves all of its elements; alone it is a valid buffer)
        _with(ArgumentError, st.integers(2, 4).map(lambda k: [np.zeros(max(n, 2) * k, np.int64)[::k], max(n, 2) + 1])),
        # too small for its count, or (beside other buffers) for the call
        *([] if alone else [_with(ArgumentError, st.integers(0, n - 1).map(lambda k: np.zeros(k, np.int64)))]),
        _with(ArgumentError, st.integers(n + 1, 100).map(lambda k: [np.zeros(n, np.int64), k])),
        _with(ArgumentError, st.integers(1, 10).map(lambda d: [np.zeros(n, np.int64), (n, d)])),
        _with(ArgumentError, st.integers(1, 10).map(lambda d: [np.zeros(n, np.int64), n, d, np.int64])),
        # counts that are not counts
        _with(ArgumentTypeError, st.sampled_from([2.0, "2", True, (1,), (1, 2, 3), (1.0, 0), (1, 0.5)]).map(
            lambda c: [np.zeros(n, np.int64), c])),
        _with(ArgumentError, st.integers(-50, -1).map(lambda c: [np.zeros(n, np.int64), c])),
        # dtypes onesided cannot move
        _with(UnsupportedError, st.sampled_from([np.float16, ">i8", "U2", "M8[s]"]).map(
            lambda d: [np.zeros(n * 8, np.uint8), d])),
        _with(ArgumentTypeError, st.sampled_from([(np.int64, 2), [("a", "i8")], 3.5]).map(
            lambda d: [np.zeros(n, np.int64), n, d])),
    ]
    if writes:
        # read-only memory where onesided must write
        choices.append(_with(BufferArgumentError, st.sampled_from(["bytes", "readonly", "memoryview",
                                                                   "readonly_strided"]).map(
            lambda k: _readonly_buffer(k, n))))
    else:
        choices.append(_with(ArgumentTypeError, st.just(None)))
    return st.one_of(*choices)


def _readonly_buffer(kind: str, n: int) -> Any:
    if kind == "bytes":
        return bytes(8 * n)
    if kind == "memoryview":
        return memoryview(bytes(8 * n))
    if kind == "readonly_strided":
        a = np.zeros(3 * n, np.int64)[::3]
        a.flags.writeable = False
        return a
    a = np.zeros(n, np.int64)
    a.flags.writeable = False
    return a


def _single() -> Bad:
    # Fetch_and_op / Compare_and_swap take exactly one element.
    return _with(ArgumentError, st.sampled_from([0, 2, 3, 8]).map(lambda k: np.zeros(k, np.int64)))


def bad_values(call: str, name: str) -> Bad:
    n = CALLS[call][1]
    if name == "rank":
        return BAD_RANKS
    if name == "target":
        return BAD_TARGETS
    if name == "disp":
        return BAD_DISPS
    if name in ("op", "rmw_op", "rmw2_op"):
        return BAD_OPS
    buffers = [k for k in CALLS[call][0] if k in ("origin", "origin2", "compare", "result")]
    strategy = _bad_buffers(n, writes=name == "result", alone=len(buffers) == 1)
    if "rmw" in call.lower():
        # Rmw and Rmw2 take contiguous buffers only
        strategy = st.one_of(strategy, _with(BufferArgumentError, st.integers(2, 4).map(
            lambda k: np.zeros(n * k, np.int64)[::k])))
    if n == 1:
        strategy = st.one_of(strategy, _single())
    return strategy


CATEGORY = {"rank": "ranks/ints", "target": "ranks/ints", "disp": "ranks/ints", "op": "ops", "rmw_op": "ops",
            "rmw2_op": "ops", "origin": "buffers", "origin2": "buffers", "compare": "buffers", "result": "buffers"}

CASES = [(call, name) for call, (names, _) in CALLS.items() for name in names]


def expect(cls: type, fn: Callable[[], Any]) -> BaseException:
    with pytest.raises(onesided.Error) as info:
        fn()
    e = info.value
    assert isinstance(e, cls), f"{type(e).__name__} ({e}) is not a {cls.__name__}"
    assert "incompatible function arguments" not in str(e)
    return e


@pytest.mark.parametrize("call, name", CASES, ids=[f"{c}-{n}" for c, n in CASES])
@SETTINGS
@given(data=st.data())
def test_bad_argument_to_data_call(target: Target, call: str, name: str, data: st.DataObject) -> None:
    names, n = CALLS[call]
    args, watched = valid_args(names, n)
    value, cls = data.draw(bad_values(call, name), label=name)
    args[name] = value
    before = target.snapshot(), [w.tobytes() for w in watched]
    expect(cls, lambda: getattr(target.win, call)(*(args[k] for k in names)))
    target.win.Flush(0)  # anything wrongly issued lands now
    assert target.snapshot() == before[0], f"the window or its guards changed: {call}({name}={value!r})"
    assert [w.tobytes() for w in watched] == before[1], f"a buffer or its guards changed: {call}({name}={value!r})"
    TRIED[CATEGORY[name]] += 1


@pytest.mark.parametrize("call", list(CALLS))
def test_valid_call_still_works(target: Target, call: str) -> None:
    """The control: the valid call of each case issues and changes only its
    addressed range (elements 1..n of the window, the result)."""
    names, n = CALLS[call]
    args, _ = valid_args(names, n)
    target.memory[:] = np.arange(100, 100 + N)
    before = target.snapshot()
    req = getattr(target.win, call)(*(args[k] for k in names))
    if req is not None:
        req.Wait()
    target.win.Flush(0)
    after = target.snapshot()
    assert after[1] == before[1]  # guards around the window
    changed = np.nonzero(np.frombuffer(after[0], np.int64) != np.frombuffer(before[0], np.int64))[0]
    assert set(changed.tolist()) <= set(range(1, 1 + n)), (call, changed)
    if "result" in args:
        assert (args["result"] == np.arange(101, 101 + n)).all(), (call, args["result"])


# -- epoch calls ------------------------------------------------------------------------

EPOCH_CASES: list[tuple[str, str, Bad]] = [
    ("Flush", "rank", BAD_RANKS),
    ("Flush_local", "rank", BAD_RANKS),
    ("Lock", "rank", BAD_RANKS),
    ("Unlock", "rank", BAD_RANKS),
    ("Lock", "lock_type", st.one_of(
        _with(ArgumentError, st.integers(min_value=-(2**40), max_value=2**40).filter(
            lambda v: v not in (onesided.LOCK_EXCLUSIVE, onesided.LOCK_SHARED))),
        _with(ArgumentTypeError, NOT_INTEGERS))),
    ("Lock", "assertion", st.one_of(
        _with(ArgumentError, st.integers(min_value=1, max_value=2**40).filter(
            lambda v: v & ~(onesided.MODE_NOCHECK | onesided.MODE_NOSTORE | onesided.MODE_NOPUT
                            | onesided.MODE_NOPRECEDE | onesided.MODE_NOSUCCEED
                            | onesided.MODE_PASSIVE_EPOCH_IMPLICIT))),
        _with(ArgumentError, st.integers(max_value=-1, min_value=-(2**40))),
        _with(ArgumentTypeError, NOT_INTEGERS.filter(lambda v: v is not None)))),
    ("Post", "group", st.one_of(
        _with(ArgumentTypeError, st.sampled_from([5, "0", None, 1.5, {0: 1}, b"\x00"])),
        _with(ArgumentTypeError, st.lists(st.sampled_from([0.0, "0", True, None, b"0"]), min_size=1, max_size=3)),
        _with(ArgumentError, st.lists(st.integers(min_value=2**31, max_value=2**70), min_size=1, max_size=3)),
        _with(ArgumentError, st.lists(st.integers(min_value=1, max_value=2**31 - 1), min_size=1, max_size=3)),
    )),
]


@pytest.mark.parametrize("call, name, bad", EPOCH_CASES, ids=[f"{c}-{n}" for c, n, _ in EPOCH_CASES])
@SETTINGS
@given(data=st.data())
def test_bad_argument_to_epoch_call(target: Target, call: str, name: str, bad: Bad, data: st.DataObject) -> None:
    value, cls = data.draw(bad, label=name)
    win = target.win
    args = {"rank": 0, "lock_type": onesided.LOCK_SHARED, "assertion": 0, "group": [0]}
    args[name] = value
    before = target.snapshot()
    if call in ("Lock", "Unlock"):
        win.Unlock_all()
        try:
            if call == "Lock":
                expect(cls, lambda: win.Lock(args["rank"], args["lock_type"], args["assertion"]))
            else:
                win.Lock(0)
                try:
                    expect(cls, lambda: win.Unlock(args["rank"]))
                finally:
                    win.Unlock(0)
        finally:
            win.Lock_all()
    elif call == "Post":
        win.Unlock_all()
        try:
            expect(cls, lambda: win.Post(args["group"], args["assertion"]))
        finally:
            win.Lock_all()
    else:
        expect(cls, lambda: getattr(win, call)(args["rank"]))
    assert target.snapshot() == before
    TRIED["ranks/ints" if name in ("rank", "group") else "epoch args"] += 1


# -- constructors ---------------------------------------------------------------------

BAD_SIZES: Bad = st.one_of(
    _with(ArgumentError, st.integers(max_value=-1, min_value=-(2**70))),
    _with(ArgumentError, st.integers(min_value=2**62 + 1, max_value=2**70)),  # > INT64_MAX / 2, or past 64 bits
    _with(ArgumentTypeError, NOT_INTEGERS),
)
BAD_UNITS: Bad = st.one_of(
    _with(ArgumentError, st.integers(max_value=0, min_value=-(2**70))),
    _with(ArgumentError, st.integers(min_value=2**31, max_value=2**70)),
    _with(ArgumentTypeError, NOT_INTEGERS),
)
BAD_INFOS: Bad = st.one_of(
    _with(ArgumentTypeError, st.sampled_from([5, "provider=shm", [("provider", "shm")], 1.5, b"x", object()])),
    _with(ArgumentTypeError, st.dictionaries(st.sampled_from(["onesided_nasty", "accumulate_ordering", "x"]),
                                             st.one_of(st.integers(), st.booleans(), st.just(None), st.floats()),
                                             min_size=1, max_size=2)),
    _with(ArgumentTypeError, st.just({1: "true"})),
    _with(ArgumentError, st.sampled_from([
        {"onesided_nasty": "maybe"}, {"onesided_fast_path": "maybe"}, {"onesided_shared_memory": "sometimes"},
        {"accumulate_ordering": "rar,wow"}, {"accumulate_ops": "fetch_and_op:bogus"}, {"onesided_nastty": "1"},
        {"alloc_shared_noncontig": "perhaps"}, {"onesided_atomics": "quantum"},
    ])),
)
def _memory(kind: str) -> Any:
    if kind == "bytes":
        return b"12345678"
    if kind == "readonly":
        a = np.zeros(8, np.int64)
        a.flags.writeable = False
        return a
    if kind == "strided":
        return np.zeros(16, np.int64)[::2]
    return np.zeros((4, 4), np.int64, order="F")


BAD_MEMORY = st.one_of(
    _with(BufferArgumentError, st.sampled_from(["bytes", "readonly", "strided", "fortran"]).map(_memory)),
    _with(ArgumentTypeError, st.sampled_from(["abcd", 5, 1.5, [1, 2], object(), True])),
)

CTOR_CASES: list[tuple[str, str, Bad]] = [
    ("Allocate", "size", BAD_SIZES), ("Allocate", "disp_unit", BAD_UNITS), ("Allocate", "info", BAD_INFOS),
    ("Allocate_shared", "size", BAD_SIZES), ("Allocate_shared", "disp_unit", BAD_UNITS),
    ("Create", "memory", BAD_MEMORY), ("Create", "disp_unit", BAD_UNITS), ("Create", "info", BAD_INFOS),
    ("Create_dynamic", "info", BAD_INFOS),
]


@pytest.mark.parametrize("ctor, name, bad", CTOR_CASES, ids=[f"{c}-{n}" for c, n, _ in CTOR_CASES])
@settings(max_examples=EXAMPLES, deadline=None, database=None)
@given(data=st.data())
def test_bad_argument_to_constructor(ctor: str, name: str, bad: Bad, data: st.DataObject) -> None:
    value, cls = data.draw(bad, label=name)
    kwargs: dict[str, Any] = {"Allocate": {"size": 64}, "Allocate_shared": {"size": 64},
                              "Create": {"memory": np.zeros(8, np.int64)}, "Create_dynamic": {}}[ctor]
    kwargs[name] = value
    e = expect(cls, lambda: getattr(onesided.Window, ctor)(**kwargs))
    assert "creation failed on rank 0" in str(e), e
    TRIED["constructors"] += 1


# -- half-made and freed windows ---------------------------------------------------------

ONE, RES = np.ones(1, np.int64), np.zeros(1, np.int64)
METHODS: list[tuple[str, tuple[Any, ...]]] = [
    ("Put", (ONE, 0)), ("Get", (RES, 0)), ("Accumulate", (ONE, 0)), ("Get_accumulate", (ONE, RES, 0)),
    ("Fetch_and_op", (ONE, RES, 0)), ("Compare_and_swap", (ONE, ONE, RES, 0)), ("Rmw", (ONE, RES, 0)),
    ("Rmw2", (ONE, ONE, RES, 0)), ("Rput", (ONE, 0)), ("Rget", (RES, 0)), ("Raccumulate", (ONE, 0)),
    ("Rget_accumulate", (ONE, RES, 0)), ("Rrmw", (ONE, RES, 0)), ("Rrmw2", (ONE, ONE, RES, 0)),
    ("Fence", ()), ("Lock", (0,)), ("Unlock", (0,)), ("Lock_all", ()), ("Unlock_all", ()), ("Flush", (0,)),
    ("Flush_all", ()), ("Flush_local", (0,)), ("Flush_local_all", ()), ("Sync", ()), ("Post", ([0],)),
    ("Start", ([0],)), ("Complete", ()), ("Wait", ()), ("Test", ()), ("Attach", (np.zeros(8),)),
    ("Shared_query", (0,)),
]
PROPERTIES = ["attrs", "flavor", "model", "group_rank", "group_size", "provider", "info", "atomics"]


def _half_made_case(method: str, args: Any) -> Any:
    return pytest.param(method, args, id=method)


@pytest.mark.parametrize("method, args", [_half_made_case(m, a) for m, a in METHODS]
                         + [_half_made_case(p, None) for p in PROPERTIES] + [_half_made_case("Free", ())])
def test_window_never_created(method: str, args: Any) -> None:
    """Window.__new__(Window) (no constructor ran): every method and property
    raises an onesided.Error (once a segfault)."""
    win = onesided.Window.__new__(onesided.Window)
    with pytest.raises(onesided.Error, match="never created|freed|null"):
        getattr(win, method) if args is None else getattr(win, method)(*args)
    TRIED["half-made objects"] += 1


# After Free, Sync (a memory barrier) and Shared_query (a view that holds its
# own reference to the mapping) are harmless and the core allows them.
AFTER_FREE = [(m, a) for m, a in METHODS if m not in ("Sync", "Shared_query")]


@pytest.mark.parametrize("method, args", AFTER_FREE, ids=[m for m, _ in AFTER_FREE])
def test_window_after_free(method: str, args: Any) -> None:
    win = onesided.Window.Allocate(8, 8)
    win.Free()
    with pytest.raises(EpochError):
        getattr(win, method)(*args)
    TRIED["half-made objects"] += 1


# -- buffers MPI accepts --------------------------------------------------------------


class _DLPackOnly:
    def __init__(self, a: np.ndarray) -> None:
        self._a = a

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> Any:
        return self._a.__dlpack_device__()


class _CudaInterfaceOnly:
    def __init__(self, a: np.ndarray) -> None:
        self._a = a

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return dict(self._a.__array_interface__, version=3, stream=None)


def test_buffers_mpi_accepts(target: Target) -> None:
    """bytes/bytearray/array.array/memoryview/DLPack/CUDA-array-interface
    origins and results, strided ones too; [buf, (count, displ), datatype]
    selects elements (it was once silently misread)."""
    win, mem = target.win, target.memory
    mem[:] = 0
    src = np.array([11, 12, 13, 14], np.int64)
    for origin, disp, expect_at in [
        (src.tobytes(), 0, src),
        (bytearray(src.tobytes()), 0, src),
        (array.array("q", src.tolist()), 0, src),
        (memoryview(src), 0, src),
        (_DLPackOnly(src), 0, src),
        ([_CudaInterfaceOnly(src), np.int64], 0, src),
        ([src, (2, 1), np.int64], 0, src[1:3]),
        ([src, 2, 1, np.int64], 4, src[1:3]),
        ([src.tobytes(), (1, 3), np.int64], 6, src[3:]),
        # strided, through each protocol: moved in C order, no copy
        (memoryview(src)[::-3], 2, src[::-3]),
        (_DLPackOnly(src[::2]), 1, src[::2]),
        ([_CudaInterfaceOnly(src[::-1]), np.int64], 3, src[::-1]),
    ]:
        mem[:] = 0
        win.Put(origin, 0, disp)
        win.Flush(0)
        assert (mem[disp:disp + len(expect_at)] == expect_at).all(), (origin, mem)
        assert (np.delete(mem, range(disp, disp + len(expect_at))) == 0).all(), (origin, mem)
    mem[:] = np.arange(100, 100 + N)
    out = np.full(6, -1, np.int64)
    win.Get([out, (3, 2), np.int64], 0, 1)
    win.Flush(0)
    assert out.tolist() == [-1, -1, 101, 102, 103, -1]
    got = np.full(2, -1, np.int64)
    win.Get(_DLPackOnly(got), 0, 3)
    win.Flush(0)
    assert got.tolist() == [103, 104]
    # A read-only DLPack result is refused like any read-only buffer.
    ro = np.zeros(2, np.int64)
    ro.flags.writeable = False
    expect(BufferArgumentError, lambda: win.Get(_DLPackOnly(ro), 0, 0))
    TRIED["buffers (valid kinds)"] += 13


# -- the summary --------------------------------------------------------------------------


def test_zz_summary(capsys: pytest.CaptureFixture[str]) -> None:
    """Prints how many bad inputs each category tried in this run."""
    with capsys.disabled():
        total = sum(TRIED.values())
        parts = ", ".join(f"{k} {v}" for k, v in sorted(TRIED.items()))
        print(f"\nhostile inputs tried: {total} ({parts}); each raised its onesided.Error subclass, "
              "no byte changed outside the addressed range")
