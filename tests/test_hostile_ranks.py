"""Hostile input (issue 13), across ranks: one rank of a 2-rank run passes a
bad creation argument, the other a good one, and every rank must raise the
same onesided.Error subclass, promptly (tests/ranks/hostile.py), under the
onesided launcher and under mpiexec. The one-process cases are in
test_hostile.py.
"""

from __future__ import annotations

import re
import time

import pytest

from conftest import run_ranks


# -- one bad rank, every rank raises ----------------------------------------------------

RANK_CASES = {
    "size_str": "ArgumentTypeError", "size_float": "ArgumentTypeError", "size_negative": "ArgumentError",
    "size_huge": "ArgumentError", "disp_unit_zero": "ArgumentError", "disp_unit_bool": "ArgumentTypeError",
    "info_not_a_dict": "ArgumentTypeError", "info_value_int": "ArgumentTypeError",
    "info_bad_value": "ArgumentError", "shared_size_str": "ArgumentTypeError",
    "create_readonly": "BufferArgumentError", "create_str": "ArgumentTypeError",
    "create_strided": "BufferArgumentError", "dynamic_info": "ArgumentTypeError",
}


# Under mpiexec (slower to start), one case per error class and constructor kind.
MPIEXEC_CASES = ["size_str", "info_bad_value", "create_readonly", "info_value_int", "shared_size_str"]


@pytest.mark.parametrize("launcher", ["onesided", "mpiexec"])
def test_one_rank_bad_creation_argument_fails_every_rank(launcher: str) -> None:
    """Rank 1 passes a bad argument, rank 0 a good one: both raise the same
    class, promptly (none left waiting in the creation's agreement)."""
    for case in RANK_CASES if launcher == "onesided" else MPIEXEC_CASES:
        cls = RANK_CASES[case]
        t0 = time.perf_counter()
        out = run_ranks("hostile.py", 2, case, launcher=launcher, timeout=90).stdout
        took = time.perf_counter() - t0
        # Ranks' lines may run together on the shared pipe.
        lines = sorted(re.findall(r"RAISED (\d+) (\w+) ([\d.]+) (.*?)(?=RAISED |\n|$)", out))
        lines = [("RAISED", *line) for line in lines]
        assert [line[1] for line in lines] == ["0", "1"], (case, out)
        assert {line[2] for line in lines} == {cls}, (case, out)
        assert all("creation failed on rank 1" in line[4] for line in lines), (case, out)
        assert all(float(line[3]) < 5 for line in lines), (case, out)
        assert took < 30, (case, took)
