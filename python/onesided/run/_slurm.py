"""Inside a Slurm allocation: how the launcher reaches the allocated nodes.

Slurm names nodes as its slurm.conf does (``NodeName``), and those names
need not resolve anywhere: a cluster may give each node its address only
as ``NodeAddr``. The launcher starts remote ranks through ``srun``, which
takes the node names, and listens for them on an address found from the
route to the nodes, which needs their addresses: :func:`node_addresses`
asks ``scontrol`` for them.

Guarantees
----------
* :func:`node_addresses` returns one entry per name given, in order: the
  node's ``NodeAddr`` when ``scontrol show node`` gives one, else the name
  itself (resolution is then left to the resolver, as outside Slurm); it
  never raises for an unknown node or a missing ``scontrol``.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence

__all__ = ["SLURM_RSH", "node_addresses", "parse_node_addresses"]

SLURM_RSH = ("srun", "--nodes=1", "--ntasks=1", "--nodelist={host}", "--overlap", "sh", "-c", "{command}")
"""The remote shell inside a Slurm allocation: one task of a new job step on
the node. ``{host}`` and ``{command}`` (the words joined into one argument)
are filled in; any ``--rsh`` may use them too."""

_SCONTROL_SECONDS = 10.0
"""How long ``scontrol`` may take to answer (it asks slurmctld)."""

_FIELD = re.compile(r"(?:^|\s)(NodeName|NodeAddr)=(\S+)")


def parse_node_addresses(text: str) -> dict[str, str]:
    """``scontrol -o show node`` output (one node a line) -> name: NodeAddr."""
    found = {}
    for line in text.splitlines():
        fields = dict(_FIELD.findall(line))
        if "NodeName" in fields and "NodeAddr" in fields:
            found[fields["NodeName"]] = fields["NodeAddr"]
    return found


def node_addresses(names: Sequence[str]) -> list[str]:
    """Each node's ``NodeAddr`` (or its name where Slurm gives none)."""
    if not names:
        return []
    try:
        shown = subprocess.run(
            ["scontrol", "-o", "show", "node", ",".join(names)],
            capture_output=True, text=True, timeout=_SCONTROL_SECONDS, stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return list(names)
    addresses = parse_node_addresses(shown.stdout)
    return [addresses.get(name, name) for name in names]
