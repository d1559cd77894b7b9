"""The PMI wire protocols a launcher serves on an inherited socket,
``PMI_FD``: what MPICH's hydra (``mpiexec``) and Slurm's ``srun
--mpi=pmi2`` give every process they start, so that a rank can publish a
value and read the others' without MPI.

PMI-1 (the default; Flux RFC 13, MPICH's ``pmi_v1`` messages) is one text
line a message, ``cmd=NAME key=value ...``; Slurm's ``mpi/pmi2`` plugin
serves it too (its ``pmi1.c``). PMI-2 (``ONESIDED_PMI_VERSION=2``) starts
with the same PMI-1 ``init`` naming version 2, then frames each message as a
6-character decimal length and ``cmd=NAME;key=value;...;``.

Only what a bootstrap needs is spoken: init, the job's key-value space,
put, the barrier (PMI-1 ``barrier_in``/``barrier_out``, PMI-2
``kvs-fence``) that makes every rank's puts visible, get, finalize.

Guarantees
----------
* Every malformed variable (``PMI_FD``, ``PMI_RANK``, ``PMI_SIZE``,
  ``ONESIDED_PMI_VERSION``) raises :class:`~onesided.comm._comm.WorldError`
  naming it and the rule it breaks, before anything is sent.
* Every wait for the server is bounded by the ``timeout`` given: past it,
  and on a closed socket or an error reply, :class:`WorldError` names the
  command that got no answer.
* Values are checked before they are sent: no space, ``=`` or ``;`` (the
  protocols' separators, which no server escapes alike) and no newline.
"""

from __future__ import annotations

import os
import socket
import stat
import time
from collections.abc import Mapping

from ._comm import WorldError

__all__ = ["PmiWire"]

_PMI2_LENGTH = 6
"""PMI-2 frames start with their length in this many decimal characters."""

_FORBIDDEN = frozenset(" =;\n\r")


def _whole_number(environ: Mapping[str, str], name: str, minimum: int) -> int:
    text = environ.get(name)
    if text is None:
        raise WorldError(f"{name} is not set: a PMI launcher sets PMI_FD, PMI_RANK and PMI_SIZE together")
    if not text.isdigit() or int(text) < minimum:
        raise WorldError(f"{name}={text!r} must be a whole number >= {minimum}")
    return int(text)


class PmiWire:
    """This process's PMI client over ``PMI_FD``: rank, size and the job's
    key-value space, PMI-1 or PMI-2 (``ONESIDED_PMI_VERSION``).

    Construction sends ``init`` and reads the job's name; :meth:`put`,
    :meth:`fence` and :meth:`get` then exchange values; :meth:`finalize`
    ends the session and closes the socket.
    """

    def __init__(self, environ: Mapping[str, str], timeout: float) -> None:
        version = environ.get("ONESIDED_PMI_VERSION", "") or "1"
        if version not in ("1", "2"):
            raise WorldError(f"ONESIDED_PMI_VERSION={version!r} must be 1 or 2 (the PMI wire protocol to speak)")
        fd = _whole_number(environ, "PMI_FD", 0)
        self.rank = _whole_number(environ, "PMI_RANK", 0)
        self.size = _whole_number(environ, "PMI_SIZE", 1)
        if self.rank >= self.size:
            raise WorldError(f"PMI_RANK={self.rank} must be below PMI_SIZE={self.size}")
        try:
            mode = os.fstat(fd).st_mode
        except OSError as exc:
            raise WorldError(f"PMI_FD={fd} must be a socket this process inherited, but it is not open ({exc})") from None
        if not stat.S_ISSOCK(mode):
            raise WorldError(f"PMI_FD={fd} must be a socket this process inherited, but it is not a socket")
        self.version = int(version)
        self.name = f"PMI-{version} wire on PMI_FD"
        # Slurm's PMI-2 server requires a pmijobid in fullinit (srun sets PMI_JOBID); hydra ignores it.
        job = environ.get("PMI_JOBID", "")
        self._jobid = job if job.isdigit() else "-1"
        self._timeout = timeout
        self._sock = socket.socket(fileno=fd)
        self._inbox = bytearray()
        self._where = f"the PMI server on PMI_FD={fd}"
        try:
            self._start()
        except WorldError:
            self._sock.close()
            raise

    def _start(self) -> None:
        version = str(self.version)
        reply = self._line(f"cmd=init pmi_version={version} pmi_subversion={1 if version == '1' else 0}",
                           "response_to_init")
        if reply.get("pmi_version") != version:
            raise WorldError(f"{self._where} answered init with PMI version {reply.get('pmi_version')}, not {version}")
        if self.version == 1:
            self._kvs = self._line("cmd=get_my_kvsname", "my_kvsname")["kvsname"]
        else:
            reply = self._frame(f"cmd=fullinit;pmijobid={self._jobid};pmirank={self.rank};threaded=FALSE;", "fullinit-response")
            if (reply.get("rank"), reply.get("size")) != (str(self.rank), str(self.size)):
                raise WorldError(
                    f"{self._where} says rank {reply.get('rank')} of {reply.get('size')}, "
                    f"but PMI_RANK={self.rank} and PMI_SIZE={self.size}"
                )

    def put(self, key: str, value: str) -> None:
        """Publish ``value`` under ``key`` (visible to the others after :meth:`fence`)."""
        bad = _FORBIDDEN.intersection(key + value)
        if bad:
            raise WorldError(f"PMI key {key!r} or its value holds {sorted(bad)}, which the PMI wire cannot carry")
        if self.version == 1:
            self._line(f"cmd=put kvsname={self._kvs} key={key} value={value}", "put_result")
        else:
            self._frame(f"cmd=kvs-put;key={key};value={value};", "kvs-put-response")

    def fence(self) -> None:
        """Return once every rank of the job has called it: each one's puts
        made before it are then visible to every rank."""
        if self.version == 1:
            self._line("cmd=barrier_in", "barrier_out")
        else:
            self._frame("cmd=kvs-fence;", "kvs-fence-response")

    def get(self, key: str) -> str | None:
        """The value some rank published under ``key`` before a fence, or None."""
        if self.version == 1:
            reply = self._line(f"cmd=get kvsname={self._kvs} key={key}", "get_result", check=False)
        else:
            reply = self._frame(f"cmd=kvs-get;srcid=-1;key={key};", "kvs-get-response", check=False)
            if reply.get("found") == "FALSE":
                return None
        return reply.get("value") if reply.get("rc", "0") == "0" else None

    def finalize(self) -> None:
        """End the PMI session and close the socket (the launcher then counts
        this rank's exit as a normal one). Errors are ignored: nothing is left to do."""
        try:
            if self.version == 1:
                self._line("cmd=finalize", "finalize_ack")
            else:
                self._frame("cmd=finalize;", "finalize-response")
        except WorldError:
            pass
        finally:
            self._sock.close()

    def _line(self, message: str, expected: str, check: bool = True) -> dict[str, str]:
        self._send(message.encode() + b"\n", message)
        deadline = time.monotonic() + self._timeout
        while b"\n" not in self._inbox:
            self._receive(deadline, message)
        line, _, rest = self._inbox.partition(b"\n")
        self._inbox = bytearray(rest)
        fields = dict(item.partition("=")[::2] for item in line.decode("utf-8", "replace").split())
        return self._checked(fields, message, expected, check)

    def _frame(self, message: str, expected: str, check: bool = True) -> dict[str, str]:
        body = message.encode()
        self._send(f"{len(body):<{_PMI2_LENGTH}d}".encode() + body, message)
        deadline = time.monotonic() + self._timeout
        while len(self._inbox) < _PMI2_LENGTH:
            self._receive(deadline, message)
        length_text = bytes(self._inbox[:_PMI2_LENGTH]).decode("ascii", "replace").strip()
        if not length_text.isdigit():
            raise WorldError(f"{self._where} answered {message!r} with a malformed PMI-2 frame length {length_text!r}")
        end = _PMI2_LENGTH + int(length_text)
        while len(self._inbox) < end:
            self._receive(deadline, message)
        text = bytes(self._inbox[_PMI2_LENGTH:end]).decode("utf-8", "replace")
        del self._inbox[:end]
        # ";;" is an escaped ";" inside a value; none of ours holds one.
        fields = dict(item.partition("=")[::2] for item in text.replace(";;", "\0").split(";") if item)
        return self._checked({k: v.replace("\0", ";") for k, v in fields.items()}, message, expected, check)

    def _checked(self, fields: dict[str, str], message: str, expected: str, check: bool) -> dict[str, str]:
        if fields.get("cmd") != expected:
            raise WorldError(f"{self._where} answered {message!r} with {fields.get('cmd')!r}, not {expected!r}")
        if check and fields.get("rc", "0") != "0":
            why = fields.get("msg") or fields.get("errmsg") or ""
            raise WorldError(f"{self._where} refused {message!r}: rc={fields['rc']} {why}".rstrip())
        return fields

    def _send(self, data: bytes, message: str) -> None:
        try:
            self._sock.sendall(data)
        except OSError as exc:
            raise WorldError(f"cannot send {message!r} to {self._where}: {exc}") from None

    def _receive(self, deadline: float, message: str) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise WorldError(
                f"{self._where} did not answer {message!r} within {self._timeout:g} s "
                "(ONESIDED_PMI_TIMEOUT): a rank of the job never reached it, or the launcher is gone"
            )
        self._sock.settimeout(left)
        try:
            chunk = self._sock.recv(4096)
        except TimeoutError:
            return  # the next call reports the deadline
        except OSError as exc:
            raise WorldError(f"no answer from {self._where} to {message!r}: {exc}") from None
        if not chunk:
            raise WorldError(f"{self._where} closed the connection instead of answering {message!r}")
        self._inbox += chunk
