"""``python -m onesided info``: what onesided finds on this machine, for a
user deciding why a job behaves as it does and for bug reports.

Sections: versions (onesided, Python, numpy, the libfabric the core loaded,
mpi4py and its MPI library); the providers that libfabric offers under this
environment, each probed with a window of one rank for its data path,
ordering and native atomics; whether ranks on this host take the
shared-memory path, and why; ``/dev/shm``; the network interfaces and the
one libfabric's tcp would use; and the environment variables that change
onesided's choices, with their values here.

Guarantees
----------
* Read-only: it creates windows of one rank (a world of its own, never the
  launcher's or an MPI job's), frees them, and changes nothing else.
* Never raises for what it finds: a probe that fails is reported with its
  error, and :func:`collect` still returns every section.
* mpi4py is imported only if it is installed, after every probe, and
  without initialising MPI (``mpi4py.rc.initialize = False``); a failure to
  load its MPI library is reported as found.
* ``--json`` prints one JSON object with the keys of :func:`collect`'s
  result; the text form shows the same facts in sections.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import socket
from pathlib import Path
from typing import Any

from . import _core
from ._errors import Error
from .boot._libfabric import load as libfabric
from .comm._comm import Comm
from .comm._interfaces import ipv4_of

__all__ = ["ENVIRONMENT", "add_arguments", "collect", "main", "render"]

ENVIRONMENT: dict[str, str] = {
    "FI_PROVIDER": "libfabric offers only these providers; a network one here makes every window use it "
                   "(no shared-memory path)",
    "FI_TCP_IFACE": "the interface libfabric's tcp uses (the launcher sets it across hosts unless given)",
    "ONESIDED_LIBFABRIC": "which libfabric onesided loads: a path, `system` or `bundled` (the wheel's copy, "
                          "the default; docs/packaging.md)",
    "ONESIDED_SHARED_MEMORY": "off keeps windows off memory shared between ranks (shared-memory path, "
                              "cross-memory attach, lock words)",
    "ONESIDED_FAST_PATH": "old name of ONESIDED_SHARED_MEMORY",
    "ONESIDED_NASTY": "true or a seed: nasty mode, which delays and reorders operations within the rules",
    "ONESIDED_CONNECT_TIMEOUT": "seconds window creation waits for peers on other hosts to answer (default 20)",
    "ONESIDED_PROGRESS_SPIN_US": "microseconds the progress thread spins before it yields (default 200)",
    "ONESIDED_PROGRESS_HOT_US": "microseconds the progress thread stays hot after work (default 5000)",
    "ONESIDED_PROGRESS_NAP_US": "longest nap of an idle progress thread, microseconds (default 200)",
    "ONESIDED_COORD": "set by `python -m onesided run`: this process is a rank of its job",
    "ONESIDED_RANK": "set by `python -m onesided run`: this rank's number",
    "ONESIDED_SIZE": "set by `python -m onesided run`: the number of ranks",
    "ONESIDED_TOKEN": "set by `python -m onesided run`: the job's secret (value not shown)",
    "PMI_RANK": "with PMI_SIZE > 1: a rank of an MPI job, so COMM_WORLD is mpi4py's (without mpi4py, "
                "formed through the launcher's PMI)",
    "OMPI_COMM_WORLD_RANK": "with OMPI_COMM_WORLD_SIZE > 1: a rank of an Open MPI job, so COMM_WORLD is mpi4py's "
                            "(without mpi4py, formed through PMIx)",
    "PMIX_RANK": "a rank of a PMIx job, so COMM_WORLD is mpi4py's (without mpi4py, formed through PMIx)",
    "PMI_FD": "the PMI wire's socket (hydra, srun --mpi=pmi2): how COMM_WORLD is formed without mpi4py",
    "ONESIDED_PMI_VERSION": "1 (default) or 2: the PMI wire protocol spoken on PMI_FD",
    "ONESIDED_PMI_TIMEOUT": "seconds each wait of a PMI bootstrap may take, and rank 0 serves at exit (default 60)",
    "ONESIDED_LIBPMIX": "the libpmix to load (default: PMIX_PREFIX's, else libpmix.so.2)",
    "SLURM_JOB_NODELIST": "inside Slurm: the launcher places ranks on these nodes",
    "IPATH_NO_BACKTRACE": "set by onesided so libinfinipath keeps crash signals visible",
    "PYTHONUNBUFFERED": "the launcher sets it for its ranks unless given, so their prints leave at once",
}
"""Every variable that changes what onesided chooses, and how. The C++ core
reads FI_PROVIDER, ONESIDED_LIBFABRIC, ONESIDED_SHARED_MEMORY (ONESIDED_FAST_PATH), ONESIDED_NASTY,
ONESIDED_CONNECT_TIMEOUT and ONESIDED_PROGRESS_*; libfabric reads FI_*."""

_SECRET = {"ONESIDED_TOKEN"}


def _versions() -> dict[str, Any]:
    import numpy

    from . import __version__

    return {
        "onesided": __version__,
        "onesided_path": str(Path(__file__).resolve().parent),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
    }


def _mpi4py() -> dict[str, Any]:
    """mpi4py's version and its MPI library's, without forcing either."""
    if importlib.util.find_spec("mpi4py") is None:
        return {"installed": False}
    import mpi4py

    found: dict[str, Any] = {"installed": True, "version": mpi4py.__version__}
    mpi4py.rc.initialize = False  # MPI_Get_library_version needs no MPI_Init
    mpi4py.rc.finalize = False
    try:
        from mpi4py import MPI

        found["mpi_library"] = " ".join(MPI.Get_library_version().split("\n", 1)[0].split())
        found["mpi_standard"] = "{}.{}".format(*MPI.Get_version())
    except Exception as exc:  # e.g. its libmpi needs another libfabric than the one loaded
        found["error"] = f"{type(exc).__name__}: {exc}"
    return found


def _message(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc.args[0] if exc.args else exc}"


def _probe(info: dict[str, str]) -> dict[str, Any]:
    """Create and free a window of one rank with ``info``; what it chose."""
    from .window._window import Window

    try:
        win = Window.Allocate(8, info=info, comm=Comm())
    except Exception as exc:
        return {"error": _message(exc)}
    try:
        report = win.atomics
        hints = win.Get_info()
        by_dtype = report.by_dtype()
        return {
            "provider": win.provider,
            "path": report.path,
            "ordering": hints.get("onesided_ordering"),
            "memory_model": hints.get("memory_model"),
            "native_atomics": [d for d, p in by_dtype.items() if p.native],
            "software_atomics": [d for d, p in by_dtype.items() if not p.native],
            "executor": str(report.executor),
        }
    finally:
        win.Free()


def _libfabric() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The library onesided loaded, every provider it lists, and a probe of
    each provider onesided can run on (RDM endpoints with messages and RMA),
    in libfabric's order of preference."""
    loaded = libfabric()
    library: dict[str, Any] = {"path": loaded.path, "chosen_by": loaded.chosen_by,
                               "api_version": "%d.%d" % loaded.version, "error": None}
    try:
        entries = _core.offered_providers()
    except Error as exc:
        entries, library["error"] = [], str(exc)
    domains: dict[str, list[str]] = {}
    for e in entries:
        where = f"{e['domain']} ({e['fabric']})" if e["fabric"] != e["domain"] else e["domain"]
        if where not in domains.setdefault(e["provider"], []):
            domains[e["provider"]].append(where)
    library["all_providers"] = sorted(domains)
    providers = []
    for name in dict.fromkeys(e["provider"] for e in entries if e["rdm"] and e["rma"]):
        # Shared memory kept out: the provider's own path is what is probed.
        found = _probe({"provider": name, "onesided_shared_memory": "off"})
        providers.append({"name": name, "domains": domains[name], **found})
    return library, providers


def _shared_memory() -> dict[str, Any]:
    """Whether ranks on this host take the shared-memory path, and why."""
    reasons = []
    switch = os.environ.get("ONESIDED_SHARED_MEMORY", os.environ.get("ONESIDED_FAST_PATH", ""))
    if switch in ("off", "false", "0"):
        reasons.append(f"ONESIDED_SHARED_MEMORY={switch} keeps windows off shared memory")
    provider = os.environ.get("FI_PROVIDER", "")
    if provider and provider != "shm":
        reasons.append(f"FI_PROVIDER={provider} asks for a network provider")
    # A window of one rank decides as ranks that all share this host key do.
    probe = _probe({})
    taken = probe.get("path") == "shared-memory"
    if "error" in probe:
        reasons.append(f"a window could not be created here: {probe['error']}")
    elif not taken and not reasons:
        reasons.append(f"a window here takes the {probe.get('path')} path")
    if taken:
        reasons.append("Allocate and Allocate_shared windows whose ranks all share this host key, and that ask "
                       "for no network provider, no software atomics and not onesided_shared_memory=off")
    return {"taken": taken, "reasons": reasons, "probe": probe, "host_key": _host_key()}


def _host_key() -> dict[str, str]:
    """The core's host key (cpp/src/memory/host_identity.hpp), part by part:
    ranks share memory only when all of them are equal."""
    parts = dict(part.split("=", 1) for part in _core.host_key().split())
    return {**parts, "hostname": socket.gethostname()}


def _dev_shm() -> dict[str, Any]:
    try:
        st = os.statvfs("/dev/shm")
    except OSError as exc:
        return {"path": "/dev/shm", "error": str(exc)}
    return {"path": "/dev/shm", "free_bytes": st.f_bavail * st.f_frsize, "total_bytes": st.f_blocks * st.f_frsize,
            "writable": os.access("/dev/shm", os.W_OK)}


def _default_route_interface() -> str | None:
    """The interface of the IPv4 default route (/proc/net/route), if any."""
    try:
        lines = Path("/proc/net/route").read_text().splitlines()[1:]
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) > 2 and fields[1] == "00000000":
            return fields[0]
    return None


def _interfaces(tcp_domains: list[str]) -> dict[str, Any]:
    listed = []
    for _, name in socket.if_nameindex():
        try:
            state = Path(f"/sys/class/net/{name}/operstate").read_text().strip()
        except OSError:
            state = "?"
        listed.append({"name": name, "ipv4": ipv4_of(name), "state": state})
    chosen = os.environ.get("FI_TCP_IFACE")
    default = _default_route_interface()
    first = tcp_domains[0].split()[0] if tcp_domains else None
    return {
        "interfaces": listed,
        "tcp": {
            "FI_TCP_IFACE": chosen,
            "one_host": chosen or "lo",  # the core binds network providers to 127.0.0.1 then
            "across_hosts_launcher": chosen or default,
            "across_hosts_other": chosen or first,
        },
    }


def _environment() -> list[dict[str, Any]]:
    names = list(ENVIRONMENT) + sorted(n for n in os.environ if n.startswith("FI_") and n not in ENVIRONMENT)
    listed = []
    for name in names:
        value = os.environ.get(name)
        if value is not None and name in _SECRET:
            value = "(set, not shown)"
        listed.append({"name": name, "value": value,
                       "effect": ENVIRONMENT.get(name, "read by libfabric (see its man pages)")})
    return listed


def collect() -> dict[str, Any]:
    """Every section as plain data (what ``--json`` prints)."""
    versions = _versions()
    library, providers = _libfabric()
    versions["libfabric"] = library["api_version"]
    shared = _shared_memory()
    tcp_domains = next((p["domains"] for p in providers if p["name"] == "tcp;ofi_rxm"), [])
    network = _interfaces(tcp_domains)
    return {
        "versions": versions,
        "mpi4py": _mpi4py(),  # last: loading an MPI library may bring another libfabric
        "libfabric": library,
        "providers": providers,
        "default_provider": os.environ.get("FI_PROVIDER") or "shm on one host, tcp;ofi_rxm across hosts",
        "shared_memory": shared,
        "dev_shm": _dev_shm(),
        "interfaces": network["interfaces"],
        "tcp_interface": network["tcp"],
        "environment": _environment(),
    }


def _size(count: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024  # type: ignore[assignment]
    raise AssertionError


def render(report: dict[str, Any]) -> str:
    """The report as text sections, for people."""
    v, mpi, lib = report["versions"], report["mpi4py"], report["libfabric"]
    out = ["onesided", f"  onesided    {v['onesided']} ({v['onesided_path']})", f"  python      {v['python']}",
           f"  numpy       {v['numpy']}", f"  libfabric   API {lib['api_version']} ({lib['path']}, {lib['chosen_by']})"]
    if not mpi["installed"]:
        out.append("  mpi4py      not installed")
    else:
        where = mpi.get("mpi_library") or f"its MPI library does not load: {mpi.get('error')}"
        out.append(f"  mpi4py      {mpi['version']}; {where}")
    out += ["", "providers (each probed with a window of one rank, shared memory off)"]
    if lib["error"]:
        out.append(f"  libfabric: {lib['error']}")
    for p in report["providers"]:
        out.append(f"  {p['name']}  on {', '.join(p['domains'])}")
        if "error" in p:
            out.append(f"    unusable: {p['error']}")
            continue
        out.append(f"    path {p['path']}; ordering: {p['ordering']}")
        out.append(f"    native atomics: {', '.join(p['native_atomics']) or 'none'}"
                   f"{' (' + p['executor'] + ')' if p['native_atomics'] else ''}")
        out.append(f"    software atomics: {', '.join(p['software_atomics']) or 'none'}")
    out.append(f"  default provider: {report['default_provider']}")
    out.append(f"  every provider libfabric lists: {', '.join(lib['all_providers'])}")
    shared, key = report["shared_memory"], report["shared_memory"]["host_key"]
    out += ["", "shared memory between ranks on this host", f"  {'yes' if shared['taken'] else 'no'}: "
            + "; ".join(shared["reasons"])]
    out.append("  host key (ranks share memory when all parts are equal): "
               + " ".join(f"{k}={key[k]}" for k in ("boot", "shm", "ipc", "pid", "net")))
    shm = report["dev_shm"]
    if "error" in shm:
        out.append(f"  /dev/shm: {shm['error']}")
    else:
        out.append(f"  /dev/shm: {_size(shm['free_bytes'])} free of {_size(shm['total_bytes'])}"
                   f"{'' if shm['writable'] else ', NOT writable'}")
    out += ["", "network interfaces"]
    out += [f"  {i['name']:10s} {i['state']:8s} {i['ipv4'] or '-'}" for i in report["interfaces"]]
    tcp = report["tcp_interface"]
    given = f"FI_TCP_IFACE={tcp['FI_TCP_IFACE']}" if tcp["FI_TCP_IFACE"] else "FI_TCP_IFACE unset"
    out.append(f"  tcp uses ({given}): {tcp['one_host']} between ranks of one host; across hosts, "
               f"{tcp['across_hosts_launcher'] or '?'} under `python -m onesided run` (the route to the other "
               f"hosts; here the default route's), {tcp['across_hosts_other'] or '?'} under other launchers "
               "(libfabric's first)")
    out += ["", "environment (what changes onesided's choices)"]
    for e in report["environment"]:
        value = "(unset)" if e["value"] is None else e["value"]
        out.append(f"  {e['name']}={value}" if e["value"] is not None else f"  {e['name']} {value}")
        out.append(f"      {e['effect']}")
    return "\n".join(out)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of the ``info`` subcommand on ``parser``."""
    parser.add_argument("--json", action="store_true", help="print one JSON object (for scripts)")


def main(args: argparse.Namespace) -> int:
    """Handle ``info``: print the report; the status is 0."""
    report = collect()
    print(json.dumps(report, indent=2) if args.json else render(report))
    return 0

