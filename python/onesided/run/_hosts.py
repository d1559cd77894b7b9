"""Where ``python -m onesided run`` places ranks: host lists, hostfiles,
Slurm allocations, and the address the other hosts reach the launcher at.

Guarantees
----------
* :func:`parse_hosts`, :func:`read_hostfile`, :func:`expand_nodelist` and
  :func:`expand_tasks_per_node` reject malformed input with a
  :class:`ValueError` naming the offending item; they never guess.
* :func:`placement` fills each host's slots in the order given, then starts
  again at the first host (as MPICH's mpiexec does), so ``n`` larger than
  the slots oversubscribes evenly instead of failing.
* :func:`coordinator_address` returns an address of this machine that the
  remote hosts route to, or raises naming the hosts it tried.
* :func:`interface_toward` names the interface of this machine that packets
  to an address leave from, or returns None when it cannot tell.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..comm._interfaces import ipv4_of

__all__ = [
    "HostSlots",
    "coordinator_address",
    "expand_nodelist",
    "expand_tasks_per_node",
    "interface_toward",
    "is_local",
    "parse_hosts",
    "placement",
    "read_hostfile",
    "slurm_hosts",
]

_NAME = re.compile(r"^[A-Za-z0-9_.\-\[\]:]+$")


@dataclass(frozen=True)
class HostSlots:
    """A host and how many ranks it takes before the next host gets any."""

    name: str
    slots: int = 1


def _host_item(item: str, where: str) -> HostSlots:
    name, sep, slots = item.rpartition(":")
    if not sep or name.count(":") or not slots.isdigit():
        name, slots = item, "1"  # no slot count (or an IPv6 address)
    if not name or not _NAME.match(name):
        raise ValueError(f"{where}: {item!r} is not a host name or address")
    if int(slots) < 1:
        raise ValueError(f"{where}: {item!r} has {slots} slots; a host needs at least 1")
    return HostSlots(name, int(slots))


def parse_hosts(text: str) -> list[HostSlots]:
    """``"a,b:2"`` -> a with 1 slot, b with 2."""
    items = [item.strip() for item in text.split(",")]
    if not text.strip() or any(not item for item in items):
        raise ValueError(f"--hosts {text!r}: give host[:slots] items separated by commas")
    return [_host_item(item, "--hosts") for item in items]


def read_hostfile(path: str | Path) -> list[HostSlots]:
    """One host a line: ``host``, ``host:slots`` or ``host slots=N`` (Open
    MPI's form); ``#`` starts a comment, blank lines are ignored."""
    hosts = []
    for number, raw in enumerate(Path(path).read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{path}:{number}"
        words = line.split()
        if len(words) == 1:
            hosts.append(_host_item(words[0], where))
        elif len(words) == 2 and re.fullmatch(r"slots=\d+", words[1]):
            hosts.append(_host_item(f"{words[0]}:{words[1][6:]}", where))
        else:
            raise ValueError(f"{where}: {raw.strip()!r} is not 'host', 'host:slots' or 'host slots=N'")
    if not hosts:
        raise ValueError(f"{path}: no hosts")
    return hosts


def _split_top(text: str) -> list[str]:
    """Split on the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"nodelist {text!r}: unbalanced ']'")
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth:
        raise ValueError(f"nodelist {text!r}: unbalanced '['")
    parts.append(text[start:])
    return parts


def _expand_range(text: str, whole: str) -> list[str]:
    out = []
    for item in text.split(","):
        low, sep, high = item.partition("-")
        if not low.isdigit() or (sep and not high.isdigit()):
            raise ValueError(f"nodelist {whole!r}: {item!r} is not a number or a range")
        if not sep:
            out.append(low)
            continue
        if int(high) < int(low):
            raise ValueError(f"nodelist {whole!r}: range {item!r} runs backwards")
        width = len(low)  # Slurm keeps the lower bound's zero padding
        out.extend(str(v).zfill(width) for v in range(int(low), int(high) + 1))
    return out


def _expand_name(name: str, whole: str) -> list[str]:
    match = re.search(r"\[([^\[\]]*)\]", name)
    if match is None:
        if "[" in name or "]" in name or not name:
            raise ValueError(f"nodelist {whole!r}: {name!r} is not a host name")
        return [name]
    head, tail = name[: match.start()], name[match.end() :]
    rests = _expand_name(tail, whole) if tail else [""]
    return [f"{head}{value}{rest}" for value in _expand_range(match.group(1), whole) for rest in rests]


def expand_nodelist(text: str) -> list[str]:
    """Slurm's compressed host list: ``"n[01-03,07],gpu5,r[1-2]-n[1-2]"``
    -> ``n01 n02 n03 n07 gpu5 r1-n1 r1-n2 r2-n1 r2-n2``."""
    names: list[str] = []
    for part in _split_top(text.strip()):
        names.extend(_expand_name(part.strip(), text))
    return names


def expand_tasks_per_node(text: str) -> list[int]:
    """Slurm's ``SLURM_TASKS_PER_NODE``: ``"2(x3),1"`` -> ``[2, 2, 2, 1]``."""
    counts: list[int] = []
    for item in text.split(","):
        match = re.fullmatch(r"(\d+)(?:\(x(\d+)\))?", item.strip())
        if match is None:
            raise ValueError(f"tasks per node {text!r}: {item!r} is not N or N(xM)")
        counts.extend([int(match.group(1))] * int(match.group(2) or 1))
    return counts


def slurm_hosts(environ: Mapping[str, str]) -> list[HostSlots] | None:
    """The nodes of the Slurm allocation this process runs in, each with its
    task count as slots (1 where Slurm gives none); None outside Slurm."""
    nodelist = environ.get("SLURM_JOB_NODELIST") or environ.get("SLURM_NODELIST")
    if not nodelist:
        return None
    names = expand_nodelist(nodelist)
    per_node = environ.get("SLURM_TASKS_PER_NODE") or environ.get("SLURM_JOB_CPUS_PER_NODE")
    counts = expand_tasks_per_node(per_node) if per_node else []
    if len(counts) != len(names):
        counts = [1] * len(names)
    return [HostSlots(name, max(count, 1)) for name, count in zip(names, counts)]


def placement(hosts: Sequence[HostSlots], n: int) -> list[str]:
    """The host of each of ``n`` ranks, in rank order."""
    if not hosts:
        raise ValueError("no hosts to place ranks on")
    order = [host.name for host in hosts for _ in range(host.slots)]
    return [order[rank % len(order)] for rank in range(n)]


def is_local(name: str) -> bool:
    """Whether ``name`` is this machine, started without the remote shell."""
    if name in ("localhost", socket.gethostname(), socket.gethostname().split(".")[0]):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _route_source(host: str) -> str | None:
    """The address of this machine that packets to ``host`` leave from."""
    try:
        infos = socket.getaddrinfo(host, 9, socket.AF_INET, socket.SOCK_DGRAM)
    except OSError:
        return None
    for *_, sockaddr in infos:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            try:
                probe.connect(sockaddr)  # UDP: picks a route, sends nothing
            except OSError:
                continue
            address = probe.getsockname()[0]
            if not ipaddress.ip_address(address).is_loopback:
                return str(address)
    return None


def interface_toward(address: str) -> str | None:
    """The IPv4 interface of this machine that packets to ``address`` leave
    from (``address`` itself may be one of this machine's), or None."""
    source = _route_source(address)
    if source is None:
        return None
    for _, name in socket.if_nameindex():
        if ipv4_of(name) == source:
            return name
    return None


def coordinator_address(remote: Sequence[str]) -> str:
    """An address of this machine the ``remote`` hosts can connect to: the
    source address of the route to the first of them that resolves here,
    else this machine's hostname if it resolves to a non-loopback address."""
    for host in remote:
        address = _route_source(host)
        if address is not None:
            return address
    try:
        own = socket.gethostbyname(socket.gethostname())
        if not ipaddress.ip_address(own).is_loopback:
            return own
    except OSError:
        pass
    raise ValueError(
        f"cannot tell which address of this machine the hosts {', '.join(remote)} reach "
        "(none resolves here and this machine's hostname resolves to loopback); "
        "pass --coordinator ADDRESS"
    )
