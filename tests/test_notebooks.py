"""Every notebook runs top to bottom on a fresh kernel, so none of them rots."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks() -> None:
    assert {p.stem for p in NOTEBOOKS} >= {"quickstart", "atomics_and_ordering", "performance", "exploration"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path: Path, tmp_path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    # A cell that raises makes execute() raise CellExecutionError with its traceback.
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()


def test_kernel_interrupt_stops_a_ranks_cell_and_the_ranks_live_on(tmp_path: Path) -> None:
    """The kernel's interrupt (what Jupyter's stop button sends) ends a
    ``%%ranks`` cell whose every rank waits in Wait_notify for a
    notification nobody sends, within 2 s, and the next cell runs on the
    same ranks, the window and COMM_WORLD's collectives included."""
    import os
    import signal
    import threading
    import time

    from conftest import RANKS

    inside = [tmp_path / f"inside-{rank}" for rank in range(2)]
    sources = [
        "%load_ext onesided",
        "%%ranks -n 2\nimport onesided\nrank = onesided.COMM_WORLD.Get_rank()\n"
        "win = onesided.Window.Allocate(8, disp_unit=8, info={'onesided_notifications': '1'})",
        # Each rank says when it stands inside Wait_notify (tests/ranks/standstill.py).
        f"%%ranks\nfrom pathlib import Path\nfrom standstill import ready\n"
        f"ready(on_inside=lambda: Path({str(tmp_path)!r}, f'inside-{{rank}}').touch())\n"
        # Not the cell's last line: that one, an expression, runs apart from
        # the cell's frame, which ready() watches.
        "win.Wait_notify(0, 1)\npass",
        "%%ranks\nwin.Lock_all()\nwin.Notify(1 - rank, 0)\nwin.Unlock_all()\n"
        "win.Wait_notify(0, 1)\nonesided.COMM_WORLD.allgather(rank)",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    client = nbclient.NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True,
                                     resources={"metadata": {"path": str(tmp_path)}})
    env = dict(os.environ, ONESIDED_TEST_PROVIDER="shm")
    env["PYTHONPATH"] = os.pathsep.join([str(RANKS), *filter(None, [env.get("PYTHONPATH")])])
    sent: list[float] = []

    def interrupt_once_inside() -> None:
        end = time.monotonic() + 60
        while not all(p.exists() for p in inside) and time.monotonic() < end:
            time.sleep(0.01)  # polling the files the ranks write: nothing else tells this thread
        # What the kernel manager's interrupt does for a kernel whose
        # interrupt mode is "signal" (ipykernel's): SIGINT to its group.
        pid = client.km.provisioner.process.pid
        sent.append(time.monotonic())
        os.killpg(os.getpgid(pid), signal.SIGINT)

    with client.setup_kernel(env=env):
        for index in range(2):
            client.execute_cell(nb.cells[index], index)
        thread = threading.Thread(target=interrupt_once_inside, daemon=True)
        thread.start()
        client.execute_cell(nb.cells[2], 2)
        ended = time.monotonic()
        thread.join()
        client.execute_cell(nb.cells[3], 3)

    def text(cell: object) -> str:
        return "\n".join(o.get("text", "") + "".join(o.get("traceback", [])) + str(o.get("data", {}))
                         for o in cell.outputs)  # type: ignore[attr-defined]

    assert all(p.exists() for p in inside), text(nb.cells[2])
    assert "KeyboardInterrupt" in text(nb.cells[2]), text(nb.cells[2])
    took = ended - sent[0]
    print(f"%%ranks cell interrupted: ended {took:.2f} s after the kernel's interrupt")
    assert took < 2.0, f"{took:.2f} s\n{text(nb.cells[2])}"
    assert "[0, 1]" in text(nb.cells[3]) and "Error" not in text(nb.cells[3]), text(nb.cells[3])
