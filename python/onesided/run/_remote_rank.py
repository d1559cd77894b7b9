"""The launcher's agent on another host: ``python -m onesided.run._remote_rank``,
started there by the remote shell (ssh, srun, ...) for one rank.

Its stdin is the launcher's control channel, which carries:

1. one line of JSON: ``{"argv": [...], "env": {...}, "cwd": "...",
   "choose_tcp_iface": bool}``, the rank's command, its whole environment
   and its working directory (so the token and the environment never
   appear on a command line), and whether to set ``FI_TCP_IFACE``;
2. then one line per signal the launcher forwards: a decimal signal number.

Guarantees
----------
* The rank runs in a session of its own with exactly ``env`` and ``cwd``,
  plus, with ``choose_tcp_iface``, ``FI_TCP_IFACE`` naming the interface
  that routes to the launcher's coordinator (the hosts' common network), so
  libfabric's tcp does not pick a host-local one (docker0);
  its stdout and stderr are this agent's, which the remote shell carries
  back to the launcher.
* A signal line, or SIGINT/SIGTERM/SIGHUP to the agent, sends that signal
  to the rank's process group.
* End of input (the launcher closed it, or the remote shell's connection
  died with the launcher) sends SIGTERM to the group, then SIGKILL
  :data:`~onesided.run._launch.GRACE_SECONDS` later: no rank outlives its launcher.
* The agent exits with the rank's status (128+S when a signal S killed it),
  which the remote shell hands back, after SIGKILL to the rank's group
  (descendants that outlived it) and, when the rank failed, a sweep of the
  shared memory it may have left in /dev/shm.
"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading

GRACE_SECONDS = 2.0  # as the launcher's (onesided.run._launch.GRACE_SECONDS)


def _signal_group(pid: int, signum: int) -> None:
    try:
        os.killpg(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _watch(control: io.RawIOBase, proc: subprocess.Popen[bytes]) -> None:
    """Forward signal lines to the rank's group; at end of input stop it."""
    for line in iter(control.readline, b""):
        try:
            signum = int(line)
        except ValueError:
            continue
        _signal_group(proc.pid, signum)
    _signal_group(proc.pid, signal.SIGTERM)
    try:
        proc.wait(GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        _signal_group(proc.pid, signal.SIGKILL)


def main() -> int:
    # Unbuffered, so the start line leaves the signal lines unread, and no
    # buffer lock is held by the watching thread when the interpreter exits.
    control = io.FileIO(sys.stdin.fileno(), "rb", closefd=False)
    line = control.readline()
    where = f"onesided run: on {socket.gethostname()}"
    try:
        spec = json.loads(line)
        argv, env, cwd = list(spec["argv"]), dict(spec["env"]), str(spec["cwd"])
    except (ValueError, KeyError, TypeError) as exc:
        print(f"{where}: malformed start request from the launcher ({exc})", file=sys.stderr, flush=True)
        return 127
    if spec.get("choose_tcp_iface") and "ONESIDED_COORD" in env:
        from ._hosts import interface_toward

        iface = interface_toward(env["ONESIDED_COORD"].rpartition(":")[0].strip("[]"))
        if iface:
            env["FI_TCP_IFACE"] = iface
    try:
        os.chdir(cwd)
    except OSError as exc:
        print(f"{where}: cannot enter the launcher's working directory: {exc}", file=sys.stderr, flush=True)
        return 127
    try:
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as exc:
        print(f"{where}: cannot start {argv[0]}: {exc}", file=sys.stderr, flush=True)
        return 127
    # With a remote shell that keeps the chain of processes local (srun,
    # `ip netns exec`), signals to the launcher's client reach this agent:
    # they go on to the rank, which ends the agent in turn.
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda signum, frame: _signal_group(proc.pid, signum))
    threading.Thread(target=_watch, args=(control, proc), name="onesided-control", daemon=True).start()
    returncode = proc.wait()
    _signal_group(proc.pid, signal.SIGKILL)
    if returncode != 0:
        try:
            from .. import _core

            _core.remove_stale_shared_memory()
        except ImportError:
            pass
    return returncode if returncode >= 0 else 128 - returncode


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # the watching thread may be blocked reading stdin
