"""The members of ``MPI.Win`` that are not RMA: what a window says about
itself (attrs, flavor, model, group, info, name, atomics), attribute caching
(``Get_attr`` and keyvals), error handlers, handle conversions and pickling.

:class:`WindowSurface` is a mixin of :class:`onesided.Window`. On a window
that speaks mpi4py (see the Window docstring) the answers are mpi4py's
objects and numbers."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, NoReturn

from .. import _core
from .._errors import ArgumentError, EpochError
from ..args import _mpi_args as mpi_args
from ._atomics_report import AtomicsReport
from ._constants import (
    FLAVOR_ALLOCATE,
    FLAVOR_CREATE,
    FLAVOR_DYNAMIC,
    FLAVOR_SHARED,
    KEYVAL_INVALID,
    WIN_BASE,
    WIN_CREATE_FLAVOR,
    WIN_DISP_UNIT,
    WIN_MODEL,
    WIN_SEPARATE,
    WIN_SIZE,
    WIN_UNIFIED,
    _mpi,
)
from ._mpi_objects import Group, Info, buffer

if TYPE_CHECKING:
    _Base = _core.Window
else:
    _Base = object

_PREDEFINED = {WIN_BASE: "WIN_BASE", WIN_SIZE: "WIN_SIZE", WIN_DISP_UNIT: "WIN_DISP_UNIT",
               WIN_CREATE_FLAVOR: "WIN_CREATE_FLAVOR", WIN_MODEL: "WIN_MODEL"}
_FLAVOR_NAMES = {FLAVOR_CREATE: "WIN_FLAVOR_CREATE", FLAVOR_ALLOCATE: "WIN_FLAVOR_ALLOCATE",
                 FLAVOR_SHARED: "WIN_FLAVOR_SHARED", FLAVOR_DYNAMIC: "WIN_FLAVOR_DYNAMIC"}
_MODEL_NAMES = {WIN_UNIFIED: "WIN_UNIFIED", WIN_SEPARATE: "WIN_SEPARATE"}

# User attribute keys (Create_keyval): key -> (copy_fn, delete_fn). Numbered
# from a range no MPI uses for its predefined keys.
_keyvals: dict[int, tuple[Any, Any]] = {}
_next_keyval = itertools.count(0x4F530001)


def _not_a_handle(what: str) -> NotImplementedError:
    return NotImplementedError(
        f"{what}: onesided windows are not MPI handles (onesided never links MPI); "
        "pass the Window object itself")


class WindowSurface(_Base):
    """The ``MPI.Win`` members that are not RMA (see the module docstring)."""

    _comm: Any
    _own_comm: Any
    _mpi_module: Any
    _freed: bool
    _name: str
    _attributes: dict[int, Any]

    def __reduce__(self) -> Any:
        raise ArgumentError("cannot serialize 'onesided.Window' instance: a window is local to its processes")

    def _created(self) -> bool:
        """Whether a constructor ran: ``Window.__new__(Window)`` alone sets
        none of creation's instance attributes (``_comm`` among them), so
        such a window is false, as a freed one is."""
        return "_comm" in vars(self)

    # -- attributes ------------------------------------------------------------

    def tomemory(self) -> Any:
        """The local window memory as writable bytes: an ``MPI.buffer`` on a
        window that speaks mpi4py, else a :class:`onesided.buffer` (both take
        ``m[:] = 0``, ``len``, ``.address``, ``.nbytes``, ``.obj``,
        ``memoryview(m)``, ``np.frombuffer(m, dtype)``)."""
        self._check_live("tomemory")
        return self._buffer(self, self._address)

    def _buffer(self, memory: Any, address: int) -> Any:
        if self._mpi_module is not None:
            return self._mpi_module.buffer.frombuffer(memory, readonly=False)
        return buffer.wrap(memory, self, address)

    @property
    def attrs(self) -> tuple[int, int, int]:
        """(base address, size in bytes, disp_unit), as mpi4py's ``Win.attrs``."""
        return (self._address, self._size, self._disp_unit)

    @property
    def flavor(self) -> int:
        """FLAVOR_CREATE (memory the user gave), FLAVOR_ALLOCATE (memory the
        window owns), FLAVOR_SHARED (Allocate_shared) or FLAVOR_DYNAMIC; on a
        window that speaks mpi4py, mpi4py's ``MPI.WIN_FLAVOR_*`` value (the
        same numbers on MPICH, not on Open MPI)."""
        return self._translated(self._flavor, _FLAVOR_NAMES)

    @property
    def model(self) -> int:
        """WIN_UNIFIED on every provider onesided knows and on shared
        windows: RMA updates land in the memory local loads read, with no
        separate public copy; they are seen once the epoch that completes
        them ends (plus Sync for loads racing with it). WIN_SEPARATE for a
        provider onesided has not checked. See docs/semantics.md. On a
        window that speaks mpi4py, ``MPI.WIN_UNIFIED``/``MPI.WIN_SEPARATE``."""
        return self._translated(self._model, _MODEL_NAMES)

    def _translated(self, value: int, names: dict[int, str]) -> int:
        mpi = self._mpi_module
        return int(getattr(mpi, names[value])) if mpi is not None and value in names else value

    @property
    def group_rank(self) -> int:
        """This process's rank in the window's group (its communicator)."""
        return self._rank

    @property
    def group_size(self) -> int:
        """The number of ranks in the window's group."""
        return self._group_size

    def Get_group(self) -> Any:
        """A new group of the window's processes, the caller's to ``Free``:
        an ``MPI.Group`` when the window is over an mpi4py communicator
        (IDENT to that communicator's group), else a :class:`onesided.Group`.
        Valid after the communicator itself was freed."""
        self._check_live("Get_group")
        if self._own_comm is not self._comm or hasattr(self._own_comm, "Get_group"):
            return self._own_comm.Get_group()
        return Group(range(self._group_size), self._rank)

    @property
    def group(self) -> Any:
        """``Get_group()``."""
        return self.Get_group()

    @property
    def comm(self) -> Any:
        """The communicator the window was created over (as the caller passed it)."""
        return self._comm

    @property
    def provider(self) -> str:
        """The libfabric provider moving this window's data."""
        return self._provider

    # -- info ------------------------------------------------------------------

    @property
    def info(self) -> Any:
        """``Get_info()``; assigning calls ``Set_info``."""
        return self.Get_info()

    @info.setter
    def info(self, info: Any) -> None:
        self.Set_info(info)

    def Get_info(self) -> Any:
        """The hints in force (provider, accumulate_ordering, atomics,
        onesided_path, ...): a new ``MPI.Info`` (the caller's to free) on a
        window that speaks mpi4py, else a :class:`onesided.Info` (a dict
        with MPI.Info's methods)."""
        self._check_live("Get_info")
        hints = self._info()
        mpi = self._mpi_module
        if mpi is None:
            return Info(hints)
        out = mpi.Info.Create()
        for key, value in hints.items():
            out.Set(key, value)
        return out

    def Set_info(self, info: Any) -> None:
        """Accepted (a dict, ``MPI.Info``, ``MPI.INFO_NULL`` or None) and
        ignored: a window's hints are fixed at creation, which MPI allows
        (an implementation may ignore hints; ``Get_info`` says what is in force)."""
        self._check_live("Set_info")
        mpi_args.info_dict(info)

    # -- name ------------------------------------------------------------------

    def Get_name(self) -> str:
        """The name given with ``Set_name`` ("" until then)."""
        return self._name

    def Set_name(self, name: str) -> None:
        """Name the window (local, for the user's own messages)."""
        self._name = str(name)

    @property
    def name(self) -> str:
        return self._name

    @name.setter
    def name(self, name: str) -> None:
        self.Set_name(name)

    # -- attribute caching (Get_attr and keyvals) ------------------------------

    def Get_attr(self, keyval: int) -> Any:
        """The predefined attributes ``WIN_BASE`` (base address; 0 on a
        dynamic window), ``WIN_SIZE``, ``WIN_DISP_UNIT``,
        ``WIN_CREATE_FLAVOR`` and ``WIN_MODEL`` (mpi4py's ``MPI.WIN_*`` keys or
        onesided's), or a user attribute set with ``Set_attr`` (None if unset)."""
        self._check_live("Get_attr")
        if keyval in self._attributes:
            return self._attributes[keyval]
        if keyval in _keyvals:
            return None
        name = self._predefined(keyval)
        if name is None:
            raise ArgumentError(f"Get_attr: {keyval!r} is not an attribute key (Create_keyval makes one)")
        return {"WIN_BASE": lambda: self._address, "WIN_SIZE": lambda: self._size,
                "WIN_DISP_UNIT": lambda: self._disp_unit, "WIN_CREATE_FLAVOR": lambda: self.flavor,
                "WIN_MODEL": lambda: self.model}[name]()

    def Set_attr(self, keyval: int, attrval: Any) -> None:
        """Store ``attrval`` under a key from ``Create_keyval`` (replacing,
        and calling the key's delete_fn on, any earlier value)."""
        self._check_live("Set_attr")
        self._user_key(keyval, "Set_attr")
        if keyval in self._attributes:
            self._delete_attr(keyval)
        self._attributes[keyval] = attrval

    def Delete_attr(self, keyval: int) -> None:
        """Remove the attribute (calling the key's delete_fn)."""
        self._check_live("Delete_attr")
        self._user_key(keyval, "Delete_attr")
        if keyval not in self._attributes:
            raise ArgumentError(f"Delete_attr: no attribute under key {keyval}")
        self._delete_attr(keyval)

    @classmethod
    def Create_keyval(cls, copy_fn: Any = None, delete_fn: Any = None, nopython: bool = False) -> int:
        """A new attribute key. ``delete_fn(win, keyval, value)`` runs when a
        value is deleted, replaced or its window freed; ``copy_fn`` is never
        called (windows are not duplicated)."""
        key = next(_next_keyval)
        _keyvals[key] = (copy_fn, delete_fn)
        return key

    @classmethod
    def Free_keyval(cls, keyval: int) -> int:
        """Forget the key (values already set stay until deleted); returns
        ``KEYVAL_INVALID`` (mpi4py's when it is imported)."""
        if _keyvals.pop(keyval, None) is None:
            raise ArgumentError(f"Free_keyval: {keyval!r} is not a key from Create_keyval")
        mpi = _mpi()
        return int(mpi.KEYVAL_INVALID) if mpi is not None else KEYVAL_INVALID

    def _predefined(self, keyval: Any) -> str | None:
        mpi = _mpi()
        if mpi is not None:
            for name in _PREDEFINED.values():
                if keyval == getattr(mpi, name):
                    return name
        return _PREDEFINED.get(keyval)

    @staticmethod
    def _user_key(keyval: Any, what: str) -> None:
        if keyval not in _keyvals:
            raise ArgumentError(f"{what}: {keyval!r} is not a key from Create_keyval")

    def _delete_attr(self, keyval: int) -> None:
        value = self._attributes.pop(keyval)
        delete_fn = _keyvals.get(keyval, (None, None))[1]
        if delete_fn is not None:
            delete_fn(self, keyval, value)

    def _check_live(self, what: str) -> None:
        if self._freed:
            raise EpochError(f"{what}: the window has been freed")

    # -- error handlers and MPI handles (not applicable) -------------------------

    @classmethod
    def Create_errhandler(cls, errhandler_fn: Any) -> Any:
        """Not applicable: onesided reports every error as a Python exception."""
        raise NotImplementedError("Create_errhandler: onesided raises exceptions, it has no error handlers")

    def Get_errhandler(self) -> Any:
        """A new handle (``MPI.Errhandler``, the caller's to ``Free``) of the
        handler last set with :meth:`Set_errhandler`, ``MPI.ERRORS_RETURN``
        before any; None without mpi4py. Whatever it names, errors are
        raised as exceptions, which is what mpi4py's default handler gives."""
        mpi = _mpi()
        if mpi is None:
            return None
        return mpi.Errhandler(vars(self).get("_errhandler") or mpi.ERRORS_RETURN)

    def Set_errhandler(self, errhandler: Any) -> None:
        """Remembered for :meth:`Get_errhandler`, and otherwise without effect:
        every error is raised as an exception, as with ``MPI.ERRORS_RETURN``
        (mpi4py's default); onesided never aborts the job, even under
        ``MPI.ERRORS_ARE_FATAL``."""
        mpi = _mpi()
        if mpi is not None and isinstance(errhandler, mpi.Errhandler):
            vars(self)["_errhandler"] = mpi.Errhandler(errhandler)

    def Call_errhandler(self, errorcode: int) -> None:
        """Not applicable: onesided has no MPI error codes."""
        raise NotImplementedError("Call_errhandler: onesided raises exceptions, it has no error handlers")

    @classmethod
    def fromhandle(cls, handle: int) -> NoReturn:
        raise _not_a_handle("Window.fromhandle")

    @classmethod
    def fromint(cls, arg: int) -> NoReturn:
        raise _not_a_handle("Window.fromint")

    @classmethod
    def f2py(cls, arg: int) -> NoReturn:
        raise _not_a_handle("Window.f2py")

    def toint(self) -> int:
        raise _not_a_handle("Window.toint")

    def py2f(self) -> int:
        raise _not_a_handle("Window.py2f")

    @property
    def handle(self) -> int:
        raise _not_a_handle("Window.handle")

    @property
    def atomics(self) -> AtomicsReport:
        """Per (op, dtype): native (the provider's atomics) or software (at
        the target), and why, as decided at creation from the declared
        ``accumulate_ops``, ``accumulate_ordering`` and each rank's probe;
        and the window's data path."""
        return AtomicsReport(self)

    def __repr__(self) -> str:
        # Never raises: a window no constructor ran has none of the fields.
        if not self._created():
            return "<onesided.Window (not created)>"
        flavor = {FLAVOR_CREATE: "create", FLAVOR_ALLOCATE: "allocate", FLAVOR_SHARED: "shared",
                  FLAVOR_DYNAMIC: "dynamic"}.get(self._flavor, "?")
        return (
            f"<onesided.Window {flavor} rank {self._rank}/{self._group_size} "
            f"{self._size} B disp_unit={self._disp_unit} provider={self._provider} "
            f"path={self._path_name} ({self._path_description}) atomics: {self.atomics.summary()}>"
        )
