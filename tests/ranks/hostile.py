"""One rank passes a bad argument to a window constructor, the others good
ones: every rank must raise the same error class, promptly (none may be
left waiting in the creation's collective steps). Prints one line per rank:
``RAISED <rank> <class> <seconds> <message>`` (or ``CREATED``).

Usage: hostile.py CASE (a key of CASES)."""

from __future__ import annotations

import sys
import time

import numpy as np

import onesided
from harness import comm as get_comm, info

comm = get_comm()
rank = comm.Get_rank()
BAD = 1  # the rank that passes the bad argument

# case -> (constructor, good kwargs, bad kwargs)
CASES = {
    "size_str": ("Allocate", {"size": 64}, {"size": "64"}),
    "size_float": ("Allocate", {"size": 64}, {"size": 64.0}),
    "size_negative": ("Allocate", {"size": 64}, {"size": -1}),
    "size_huge": ("Allocate", {"size": 64}, {"size": 2**64 + 5}),
    "disp_unit_zero": ("Allocate", {"size": 64}, {"size": 64, "disp_unit": 0}),
    "disp_unit_bool": ("Allocate", {"size": 64}, {"size": 64, "disp_unit": True}),
    "info_not_a_dict": ("Allocate", {"size": 64}, {"size": 64, "info": 5}),
    "info_value_int": ("Allocate", {"size": 64}, {"size": 64, "info": {"onesided_nasty": 1}}),
    "info_bad_value": ("Allocate", {"size": 64}, {"size": 64, "info": {"onesided_nasty": "maybe"}}),
    "shared_size_str": ("Allocate_shared", {"size": 64}, {"size": "64"}),
    "create_readonly": ("Create", {"memory": "good"}, {"memory": b"12345678"}),
    "create_str": ("Create", {"memory": "good"}, {"memory": "12345678"}),
    "create_strided": ("Create", {"memory": "good"}, {"memory": "strided"}),
    "dynamic_info": ("Create_dynamic", {}, {"info": ["not", "a", "dict"]}),
}


def main(case: str) -> None:
    ctor, good, bad = CASES[case]
    kwargs = dict(bad if rank == BAD else good)
    if kwargs.get("memory") == "good":
        kwargs["memory"] = np.zeros(8, np.int64)
    elif kwargs.get("memory") == "strided":
        kwargs["memory"] = np.zeros(16, np.int64)[::2]
    if "info" not in kwargs:
        kwargs["info"] = info()
    t0 = time.perf_counter()
    try:
        win = getattr(onesided.Window, ctor)(comm=comm, **kwargs)
    except onesided.Error as e:
        took = time.perf_counter() - t0
        print(f"RAISED {rank} {type(e).__name__} {took:.3f} {e}", flush=True)
    else:
        print(f"CREATED {rank}", flush=True)
        win.Free()
    comm.Barrier()


if __name__ == "__main__":
    main(sys.argv[1])
