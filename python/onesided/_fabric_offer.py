"""The libfabric onesided's core runs on: where it was loaded from, its API
version, and the providers it offers, for ``python -m onesided info``.

The core has no binding that enumerates providers, so this asks the very
library the core loaded (found in ``/proc/self/maps`` once ``_core`` is
imported), through ``ctypes``, with ``fi_getinfo`` and no hints: the answer
is what the core's own ``fi_getinfo`` chooses from, under this process's
environment (``FI_PROVIDER`` and the other ``FI_*`` variables filter it, as
they filter the core's). Only the leading members of ``struct fi_info`` and
the attribute structs it points to are read; libfabric only ever appends
members to them, so those are the same in every 1.x release.

Guarantees
----------
* :func:`loaded_library` returns the path of the libfabric mapped into this
  process, or None (the core is not imported, or no /proc).
* :func:`offered` never raises: a library it cannot load or call gives an
  :class:`Offer` with ``error`` set and no providers.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Offer", "ProviderEntry", "loaded_library", "offered"]

_FI_MSG = 1 << 1
_FI_RMA = 1 << 2
_FI_ATOMIC = 1 << 4
_FI_EP_RDM = 3
_API_VERSION = (1 << 16) | 9  # FI_VERSION(1, 9), as the core asks (cpp/src/transport/fabric_transport.cpp)


class _FabricAttr(ctypes.Structure):
    _fields_ = [("fabric", ctypes.c_void_p), ("name", ctypes.c_char_p), ("prov_name", ctypes.c_char_p),
                ("prov_version", ctypes.c_uint32), ("api_version", ctypes.c_uint32)]


class _DomainAttr(ctypes.Structure):  # leading members only
    _fields_ = [("domain", ctypes.c_void_p), ("name", ctypes.c_char_p)]


class _EpAttr(ctypes.Structure):  # leading members only
    _fields_ = [("type", ctypes.c_int)]


class _Info(ctypes.Structure):
    pass


_Info._fields_ = [
    ("next", ctypes.POINTER(_Info)), ("caps", ctypes.c_uint64), ("mode", ctypes.c_uint64),
    ("addr_format", ctypes.c_uint32), ("src_addrlen", ctypes.c_size_t), ("dest_addrlen", ctypes.c_size_t),
    ("src_addr", ctypes.c_void_p), ("dest_addr", ctypes.c_void_p), ("handle", ctypes.c_void_p),
    ("tx_attr", ctypes.c_void_p), ("rx_attr", ctypes.c_void_p), ("ep_attr", ctypes.POINTER(_EpAttr)),
    ("domain_attr", ctypes.POINTER(_DomainAttr)), ("fabric_attr", ctypes.POINTER(_FabricAttr)),
]


@dataclass(frozen=True)
class ProviderEntry:
    """One answer of ``fi_getinfo``: a provider (``"tcp;ofi_rxm"``: a core
    provider under a utility one) on one domain (an interface, a device)."""

    provider: str
    version: str  # the provider's own version, major.minor
    fabric: str
    domain: str
    rdm: bool  # reliable datagram endpoints (FI_EP_RDM), which onesided needs
    rma: bool  # FI_MSG and FI_RMA, which onesided needs
    atomics: bool  # FI_ATOMIC: native atomics offered at all


@dataclass
class Offer:
    """What the loaded libfabric offers."""

    path: str | None
    api_version: str | None  # fi_version(): the library's API version, major.minor
    entries: list[ProviderEntry] = field(default_factory=list)
    error: str | None = None

    def usable(self) -> list[str]:
        """Providers onesided can run on (RDM endpoints with messages and
        RMA), each once, in libfabric's order of preference."""
        names = [e.provider for e in self.entries if e.rdm and e.rma]
        return list(dict.fromkeys(names))


def loaded_library() -> str | None:
    """The path of the libfabric mapped into this process, if any."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return None
    for line in maps.splitlines():
        path = line.split(maxsplit=5)[-1] if line.count(" ") >= 5 else ""
        if os.path.basename(path).startswith("libfabric.so"):
            return path
    return None


def _text(value: bytes | None) -> str:
    return value.decode(errors="replace") if value else ""


def _version(packed: int) -> str:
    return f"{packed >> 16}.{packed & 0xFFFF}"


def offered() -> Offer:
    """Ask the loaded libfabric (else ``libfabric.so.1`` as the loader finds
    it) for every provider and domain it offers, under this environment."""
    path = loaded_library()
    try:
        lib = ctypes.CDLL(path or "libfabric.so.1")
        lib.fi_version.restype = ctypes.c_uint32
        lib.fi_getinfo.argtypes = [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint64,
                                   ctypes.c_void_p, ctypes.POINTER(ctypes.POINTER(_Info))]
        lib.fi_getinfo.restype = ctypes.c_int
        lib.fi_freeinfo.argtypes = [ctypes.POINTER(_Info)]
        lib.fi_strerror.argtypes = [ctypes.c_int]
        lib.fi_strerror.restype = ctypes.c_char_p
    except (OSError, AttributeError) as exc:
        return Offer(path, None, error=f"cannot load libfabric: {exc}")
    offer = Offer(path, _version(lib.fi_version()))
    head = ctypes.POINTER(_Info)()
    ret = lib.fi_getinfo(_API_VERSION, None, None, 0, None, ctypes.byref(head))
    if ret != 0:
        offer.error = f"fi_getinfo: {_text(lib.fi_strerror(-ret))}"
        return offer
    try:
        node = head
        while node:
            info = node.contents
            node = info.next
            if not info.fabric_attr or not info.domain_attr:
                continue  # never so in a fi_getinfo answer; not worth a crash
            fabric, domain = info.fabric_attr.contents, info.domain_attr.contents
            offer.entries.append(ProviderEntry(
                provider=_text(fabric.prov_name),
                version=_version(fabric.prov_version),
                fabric=_text(fabric.name),
                domain=_text(domain.name),
                rdm=bool(info.ep_attr) and info.ep_attr.contents.type == _FI_EP_RDM,
                rma=(info.caps & (_FI_MSG | _FI_RMA)) == (_FI_MSG | _FI_RMA),
                atomics=bool(info.caps & _FI_ATOMIC),
            ))
    finally:
        lib.fi_freeinfo(head)
    return offer
