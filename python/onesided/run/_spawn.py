"""``onesided.launch``: run a function on N ranks from a notebook or script.

The function travels to freshly started ranks (never forked: a process that
has opened a libfabric endpoint must not fork), runs there under
``python -m onesided run``, and each rank's return value comes back, in rank
order. Functions defined in a notebook or ``__main__`` travel as source code,
so they must be self-contained (do their imports inside, or use names that
exist at module level in the child); functions importable from a module
travel by reference.
"""

from __future__ import annotations

import inspect
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any, Callable

from .._errors import Error


class LaunchError(Error, RuntimeError):
    """A rank of a launched function raised, died, or the job timed out. The
    message carries the failing rank's traceback."""


class LaunchTimeout(LaunchError):
    """The launched job outlived its timeout; every rank was stopped."""


def _payload(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> bytes:
    module = getattr(fn, "__module__", "__main__")
    if module not in ("__main__", None) and getattr(fn, "__qualname__", "").isidentifier():
        return pickle.dumps(("ref", module, fn.__qualname__, args, kwargs))
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as e:
        raise LaunchError(f"cannot send {fn!r} to the ranks: its source is not available ({e})") from None
    return pickle.dumps(("source", source, fn.__name__, args, kwargs))


def _unpack(
    payload: bytes, namespace: dict[str, Any]
) -> tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]:
    """The function, arguments and keyword arguments :func:`_payload` packed.
    A function sent as source is defined in ``namespace``, so its global
    names are looked up there."""
    kind, *rest = pickle.loads(payload)
    if kind == "ref":
        module, qualname, args, kwargs = rest
        obj: Any = __import__(module, fromlist=["_"])
        for part in qualname.split("."):
            obj = getattr(obj, part)
        return obj, args, kwargs
    source, name, args, kwargs = rest
    exec(compile(source, f"<launched {name}>", "exec"), namespace)
    return namespace[name], args, kwargs


def finish(proc: "subprocess.Popen[str]", deadline: float) -> tuple[str, str, bool]:
    """Wait for a launcher (``python -m onesided run`` or mpiexec) started in
    its own session; past ``deadline`` seconds terminate it, which both
    launchers forward to their ranks, and kill its group if that does not
    end it. Returns (stdout, stderr, whether the deadline passed).

    An interrupt while waiting (KeyboardInterrupt in a notebook or a pytest
    run, or any other exception) stops the launcher the same way before it
    propagates: the launcher lives in its own session, so the terminal's
    SIGINT never reached it or its ranks, and nothing else would stop them
    before their own timeout."""
    try:
        out, err = proc.communicate(timeout=deadline)
        return out or "", err or "", False
    except subprocess.TimeoutExpired:
        out, err = _stop(proc)
        return out, err, True
    except BaseException:
        _stop(proc)
        raise


def _stop(proc: "subprocess.Popen[str]") -> tuple[str, str]:
    """SIGTERM to the launcher (it stops its ranks), SIGKILL to its group if
    that does not end it within 15 s; returns what it printed meanwhile."""
    proc.terminate()
    try:
        out, err = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=15)
    return out or "", err or ""


def launch(
    fn: Callable[..., Any],
    n: int = 2,
    *args: Any,
    timeout: float = 120,
    env: dict[str, str] | None = None,
    **kwargs: Any,
) -> list[Any]:
    """Run ``fn(*args, **kwargs)`` on ``n`` new ranks (their
    ``onesided.COMM_WORLD`` spans them) and return the ``n`` results in rank
    order. Output the ranks print is echoed here. If any rank raises or dies,
    the others are stopped and :class:`LaunchError` carries its traceback; if
    the job outlives ``timeout`` seconds every rank is killed and
    :class:`LaunchTimeout` (a :class:`LaunchError`) says so. No rank
    outlives the call."""
    if n < 1:
        raise ValueError("n must be >= 1")
    with tempfile.TemporaryDirectory(prefix="onesided-launch-") as tmp:
        job = Path(tmp)
        (job / "payload.pickle").write_bytes(_payload(fn, args, kwargs))
        # The launcher enforces the timeout: it stops every rank (each in its
        # own session) and exits 124. Our own deadline is only a backstop.
        cmd = [sys.executable, "-m", "onesided", "run", "-n", str(n), "--timeout", str(timeout),
               "-m", "onesided.run._spawn_rank", str(job)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env={**os.environ, **(env or {})}, start_new_session=True)
        output, _, _ = finish(proc, timeout + 30)
        if output:
            print(output, end="")
        if proc.returncode == 124:
            raise LaunchTimeout(
                f"{fn.__name__} on {n} ranks did not finish within {timeout} s; all ranks were stopped"
            )
        # The first failure is the cause; the others are usually ranks that
        # then found a peer gone.
        failures = sorted(job.glob("error.*"), key=lambda p: p.stat().st_mtime_ns)
        if failures:
            first = failures[0]
            raise LaunchError(f"rank {first.suffix[1:]} raised:\n{first.read_text()}")
        if proc.returncode != 0:
            raise LaunchError(f"{fn.__name__} on {n} ranks failed (exit status {proc.returncode}); see the output above")
        return [pickle.loads((job / f"result.{r}").read_bytes()) for r in range(n)]


def _rank_main(job: Path) -> int:
    """What each launched rank runs."""
    import traceback

    from ..comm._world import world

    rank = world().Get_rank()
    try:
        fn, args, kwargs = _unpack(
            (job / "payload.pickle").read_bytes(), {"__name__": "__onesided_launch__"}
        )
        result = fn(*args, **kwargs)
        (job / f"result.{rank}").write_bytes(pickle.dumps(result))
    except BaseException:
        (job / f"error.{rank}").write_text(traceback.format_exc())
        return 1
    return 0

