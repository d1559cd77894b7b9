"""The mpi4py datatype decoder (onesided.args._datatypes) against MPI itself:
for every combiner onesided takes, MPI's own Pack of an arange buffer gives
the elements of the type map in order, which must be the decoder's
offsets; its Get_extent the decoder's lb and extent. Single process."""

from __future__ import annotations

import gc
from typing import Any, Callable

import numpy as np
import pytest

MPI = pytest.importorskip("mpi4py.MPI")

import onesided  # noqa: E402
from onesided.args import _datatypes  # noqa: E402

I8, F8 = MPI.INT64_T, MPI.DOUBLE


def _struct_same() -> Any:
    inner = I8.Create_vector(2, 1, 3)
    t = MPI.Datatype.Create_struct([1, 2, 1], [0, 8, 96], [I8, inner, I8])
    inner.Free()
    return t


def _on(inner: Any, make: Callable[[Any], Any]) -> Any:
    # A type made from a temporary inner type, which is freed.
    t = make(inner)
    inner.Free()
    return t


def _nested_multi_block() -> Any:
    # copies of a two-block type: copy order, not block order
    pair = _on(MPI.Datatype.Create_struct([1, 1], [0, 24], [I8, I8]), lambda s: s.Create_resized(0, 40))
    return _on(pair, lambda p: p.Create_vector(3, 2, 4))


KINDS: dict[str, Callable[[], Any]] = {
    "named": lambda: I8.Dup(),  # Dup, so every case frees what it made
    "dup": lambda: _on(I8.Create_vector(2, 1, 2), lambda v: v.Dup()),
    "contiguous": lambda: I8.Create_contiguous(5),
    "vector": lambda: I8.Create_vector(3, 2, 5),
    "vector_negative_stride": lambda: I8.Create_vector(3, 2, -4),
    "hvector": lambda: I8.Create_hvector(4, 1, 24),
    "indexed": lambda: I8.Create_indexed([2, 0, 3, 1], [7, 1, 0, 12]),
    "hindexed": lambda: I8.Create_hindexed([1, 2], [40, 8]),
    "indexed_block": lambda: I8.Create_indexed_block(2, [5, 0, 9]),
    "hindexed_block": lambda: I8.Create_hindexed_block(1, [16, 0, 64]),
    "subarray_c": lambda: F8.Create_subarray([4, 5, 3], [2, 3, 2], [1, 2, 1], order=MPI.ORDER_C),
    "subarray_fortran": lambda: F8.Create_subarray([4, 5, 3], [2, 3, 2], [1, 2, 1], order=MPI.ORDER_FORTRAN),
    "resized": lambda: _on(I8.Create_vector(2, 1, 3), lambda v: v.Create_resized(-16, 64)),
    "struct_same_type": _struct_same,
    "vector_of_two_block_type": _nested_multi_block,
    "column_of_matrix": lambda: _on(F8.Create_vector(6, 1, 7), lambda v: v.Create_resized(0, 8)),
}


FLOAT_KINDS = {"subarray_c", "subarray_fortran", "column_of_matrix"}


@pytest.fixture
def made() -> Any:
    types: list[Any] = []
    yield types
    for t in types:
        if t != MPI.DATATYPE_NULL:
            t.Free()


def _packed(t: Any, count: int, base: int) -> np.ndarray:
    # MPI's order of the elements of (buf, count, t): send an arange whose
    # values are element offsets from `base` elements in, as t, to
    # oneself, received as contiguous elements.
    data = np.arange(-base, 400 - base, dtype=np.int64)
    view = data[base:]
    n = t.Get_size() * count // 8
    out = np.full(n, -999, np.int64)
    MPI.COMM_SELF.Sendrecv([view, count, t], 0, 0, [out, n, MPI.INT64_T], 0, 0)
    return out


@pytest.mark.parametrize("kind", list(KINDS))
def test_decoder_matches_mpi_pack(kind: str, made: list[Any]) -> None:
    t = KINDS[kind]()
    t.Commit()
    made.append(t)
    d = _datatypes.decode(t)
    assert d.dtype == np.dtype(np.float64 if kind in FLOAT_KINDS else np.int64)
    assert (d.lb, d.extent) == tuple(t.Get_extent())
    assert d.count == t.Get_size() // 8
    for count in (1, 3):
        want = _packed(t, count, 200).tolist()
        got = [o // 8 for o in _datatypes.offsets(_datatypes.replicated(d, count))]
        assert len(set(got)) == len(got) or kind == "vector_negative_stride"
        assert got == want, (kind, count)


def test_contiguity_is_detected(made: list[Any]) -> None:
    for t, contiguous in [(I8.Create_contiguous(4), True), (I8.Create_vector(3, 2, 2), True),
                          (I8.Create_vector(3, 2, 3), False), (I8.Create_resized(0, 16), False),
                          (I8.Create_indexed_block(2, [0, 2, 4]), True),
                          (I8.Create_indexed_block(2, [2, 0]), False)]:
        t.Commit()
        made.append(t)
        assert _datatypes.decode(t).contiguous is contiguous, t.decode()
    assert _datatypes.decode(I8).contiguous


def test_mixed_struct_names_its_types(made: list[Any]) -> None:
    t = MPI.Datatype.Create_struct([1, 1], [0, 8], [I8, F8])
    made.append(t)
    d = _datatypes.decode(t)
    # Its bytes, field by field (Put and Get move it so), and the types it mixes.
    assert d.dtype == np.uint8 and d.count == 16 and set(d.mixed) == {"int64", "float64"}
    assert _datatypes.offsets(d.blocks) == list(range(16))
    v = t.Create_contiguous(2)
    made.append(v)
    assert set(_datatypes.decode(v).mixed) == {"int64", "float64"} and _datatypes.decode(v).count == 32
    # MPI's pair types are elements of the table, not mixed structs.
    pair = _datatypes.decode(MPI.DOUBLE_INT)
    assert not pair.mixed and pair.dtype == onesided.DOUBLE_INT and pair.count == 1 and pair.contiguous


def test_darray_is_refused_clearly(made: list[Any]) -> None:
    t = F8.Create_darray(1, 0, [8], [MPI.DISTRIBUTE_BLOCK], [MPI.DISTRIBUTE_DFLT_DARG], [1])
    made.append(t)
    with pytest.raises(onesided.UnsupportedError, match="DARRAY is not supported"):
        _datatypes.decode(t)


def test_decoding_is_cached_per_object_and_handle(made: list[Any]) -> None:
    t = I8.Create_vector(3, 1, 2)
    made.append(t)
    first = _datatypes.decode(t)
    assert _datatypes.decode(t) is first
    t.Free()
    # A freed datatype is refused, not answered from the cache.
    with pytest.raises(onesided.ArgumentError, match="DATATYPE_NULL"):
        _datatypes.decode(t)
    key = id(t)
    del made[:], t
    gc.collect()
    assert key not in _datatypes._CACHE


def test_decoding_frees_the_inner_types_it_is_handed() -> None:
    # MPI_Type_get_contents gives new references to derived inner types;
    # decoding a type whose inner type the program freed still works, and
    # decoding does not keep the inner types alive (the count of live
    # Python wrappers of inner types does not grow).
    inner = I8.Create_vector(2, 1, 2)
    outer = inner.Create_contiguous(3)
    inner.Free()
    assert _datatypes.offsets(_datatypes.decode(outer).blocks) == [0, 16, 24, 40, 48, 64]
    outer.Free()
