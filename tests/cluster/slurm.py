"""A real Slurm cluster over simulated hosts, started and stopped by the tests.

Debian's Slurm 22.05 and munge (installed by tools/setup-debian.sh), with
every daemon a child of this process in the foreground: on a simulated host
of its own, an isolated munged (its own key, socket, pid, log and seed
files in a temporary directory) and an slurmctld, and one ``slurmd -D -N NAME`` on
each compute host (tests/hosts/netns.py: a network namespace, its own
address and hostname). The cluster's slurm.conf, cgroup.conf and every
daemon's state live in that directory; client commands find them through
:meth:`SlurmCluster.env` (``SLURM_CONF``), never through /etc/slurm, so the
machine's own Slurm, if any, is neither used nor disturbed, and two clusters
(different ``index``) run side by side: their hosts are different
namespaces and their ports differ.

Slurm node names are the hosts' names (``simhostN``), which nothing
resolves, as on a cluster whose node names are not in DNS: NodeAddr gives
each node's address.

Guarantees: :meth:`SlurmCluster.up` returns once ``sinfo`` shows every node
idle, or raises (after stopping what it started) with the daemons' logs;
:meth:`SlurmCluster.down` stops every daemon, waits for each (nothing stays
a zombie or keeps a port), then removes the hosts and every process left in
them (the jobs' slurmstepd and ranks).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from hosts.netns import Host, SimulatedHosts, UpDown, unavailable as hosts_unavailable

COMMANDS = ("munged", "slurmctld", "slurmd", "srun", "salloc", "sbatch", "scancel", "sinfo", "scontrol")
READY_SECONDS = 30.0
STOP_SECONDS = 10.0


def unavailable() -> str | None:
    """Why a cluster cannot be made here, or None when it can."""
    missing = [name for name in COMMANDS if shutil.which(name) is None and not Path(f"/usr/sbin/{name}").exists()]
    if missing:
        return f"Slurm cluster tests need {', '.join(missing)} (tools/setup-debian.sh installs slurm-wlm and munge)"
    return hosts_unavailable()


def _binary(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


class SlurmCluster(UpDown):
    """``nodes`` compute hosts and a controller host; use as a context
    manager (down() always runs). ``cpus`` is each node's CPU count as Slurm
    sees it (what srun may place on it), whatever this machine has."""

    def __init__(self, nodes: int, workdir: Path, index: int = 6, cpus: int = 4) -> None:
        self.dir = workdir
        self.simulated = SimulatedHosts(nodes + 1, workdir, index=index)
        self.controller: Host = self.simulated.hosts[0]
        self.nodes: list[Host] = self.simulated.hosts[1:]
        self.cpus = cpus
        base = 17000 + (os.getpid() % 400) * 20 + index * 4  # two clusters, two pairs of ports
        self.ctld_port, self.slurmd_port = base, base + 1
        self.name = f"os{os.getpid()}i{index}"
        self.conf = workdir / "slurm.conf"
        self.munge_socket = workdir / "munge" / "socket"
        self._daemons: list[tuple[str, subprocess.Popen[bytes]]] = []

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """``base`` (default: this process's environment) with what Slurm's
        client commands need to reach this cluster."""
        env = dict(os.environ if base is None else base)
        env["SLURM_CONF"] = str(self.conf)
        for name in [n for n in env if n.startswith(("SLURM_", "SBATCH_", "SALLOC_", "SRUN_")) and n != "SLURM_CONF"]:
            del env[name]  # an enclosing job's variables would point the commands elsewhere
        return env

    def run(self, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        """A client command against this cluster (sinfo, scontrol, ...)."""
        return subprocess.run(list(args), capture_output=True, text=True, env=self.env(), timeout=timeout)

    def _write_config(self) -> None:
        for sub in ("munge", "ctld", "log", *(f"spool/{h.name}" for h in self.nodes)):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        (self.dir / "tmp").mkdir(exist_ok=True)
        (self.dir / "munge").chmod(0o700)
        key = self.dir / "munge" / "key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        names = ",".join(h.name for h in self.nodes)
        d = self.dir
        lines = [
            f"ClusterName={self.name}",
            f"SlurmctldHost={self.controller.name}({self.controller.address})",
            f"SlurmctldPort={self.ctld_port}",
            f"SlurmdPort={self.slurmd_port}",
            "SlurmUser=root",
            "SlurmdUser=root",
            f"AuthInfo=socket={self.munge_socket}",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"StateSaveLocation={d / 'ctld'}",
            f"SlurmctldPidFile={d / 'ctld' / 'slurmctld.pid'}",
            f"SlurmctldLogFile={d / 'log' / 'slurmctld.log'}",
            # %n: each node's own spool, pid and log, though they share a filesystem
            f"SlurmdSpoolDir={d / 'spool'}/%n",
            f"SlurmdPidFile={d / 'spool'}/%n/slurmd.pid",
            f"SlurmdLogFile={d / 'log'}/slurmd.%n.log",
            f"TmpFS={d / 'tmp'}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "MpiDefault=pmi2",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "SchedulerType=sched/builtin",
            "AccountingStorageType=accounting_storage/none",
            "JobAcctGatherType=jobacct_gather/none",
            "JobCompType=jobcomp/none",
            "ReturnToService=2",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=30",
            "MessageTimeout=30",  # a task launch on a loaded 2-core machine took over 10 s once (measured)
            "KillWait=2",  # scancel: SIGKILL follows SIGTERM after 2 s
            "InactiveLimit=0",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            "SlurmdParameters=config_overrides",  # CPUs= as configured, whatever this machine has
            f"PlugStackConfig={d / 'plugstack.conf'}",  # not /etc/slurm's: no SPANK plugin
            "MailProg=/bin/true",
        ]
        lines += [f"NodeName={h.name} NodeAddr={h.address} CPUs={self.cpus} State=UNKNOWN" for h in self.nodes]
        lines.append(f"PartitionName=main Nodes={names} Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO")
        self.conf.write_text("\n".join(lines) + "\n")
        # slurmd 22.05 loads a cgroup plugin even under proctrack/linuxproc
        # and, without a cgroup.conf naming one, exits at start on this
        # machine (measured), whose cgroup v1 hierarchies v1 can use.
        (d / "cgroup.conf").write_text("CgroupPlugin=cgroup/v1\nIgnoreSystemd=yes\n")
        (d / "plugstack.conf").write_text("")

    def _start(self, name: str, argv: Sequence[str], host: Host | None = None) -> None:
        log = open(self.dir / "log" / f"{name}.out", "wb")
        if host is not None:
            # netns-rsh: the host's namespace and hostname; every step execs,
            # so the Popen's pid is the daemon's own.
            argv = [self.simulated.rsh, host.name, "exec " + " ".join(argv)]
        env = self.env()
        env.update(self.simulated.env())
        proc = subprocess.Popen(list(argv), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, start_new_session=True)
        log.close()
        self._daemons.append((name, proc))

    def up(self) -> None:
        self.simulated.up()
        self._write_config()
        m = self.dir / "munge"
        # On the controller's host too (its socket is a path, reached from
        # every namespace): a harness killed before down() leaves every
        # daemon in a namespace that hosts.netns.sweep_stale() empties.
        self._start("munged", [_binary("munged"), "--foreground", "--force", f"--socket={self.munge_socket}",
                               f"--key-file={m / 'key'}", f"--pid-file={m / 'pid'}", f"--log-file={m / 'log'}",
                               f"--seed-file={m / 'seed'}"], self.controller)
        self._await(lambda: self.munge_socket.exists(), "munged's socket")
        self._start("slurmctld", [_binary("slurmctld"), "-D", "-i", "-f", str(self.conf)], self.controller)
        for host in self.nodes:
            self._start(f"slurmd.{host.name}", [_binary("slurmd"), "-D", "-N", host.name, "-f", str(self.conf)], host)
        self._await(self._all_idle, "every node idle in sinfo")

    def _all_idle(self) -> bool:
        try:
            proc = self.run("sinfo", "-h", "-N", "-o", "%N %T", timeout=10)
        except subprocess.TimeoutExpired:
            return False
        states = dict(line.split() for line in proc.stdout.splitlines() if line.strip())
        return proc.returncode == 0 and all(states.get(h.name) == "idle" for h in self.nodes)

    def _await(self, ready, what: str) -> None:
        deadline = time.monotonic() + READY_SECONDS
        while not ready():
            dead = [name for name, proc in self._daemons if proc.poll() is not None]
            if dead or time.monotonic() > deadline:
                why = f"{', '.join(dead)} exited" if dead else f"not within {READY_SECONDS:g} s"
                raise RuntimeError(f"Slurm cluster: waiting for {what}: {why}\n{self.logs()}")
            time.sleep(0.1)  # polling a daemon's state: there is nothing to wait on

    def daemon_pids(self) -> list[int]:
        """The pids of the daemons this cluster started and has not stopped."""
        return [proc.pid for _, proc in self._daemons]

    def logs(self) -> str:
        """Every daemon's log, for a failure message."""
        parts = []
        for path in sorted((self.dir / "log").glob("*")) + [self.dir / "munge" / "log"]:
            if path.is_file():
                parts.append(f"--- {path.name}\n{path.read_text(errors='replace')[-3000:]}")
        return "\n".join(parts)

    def down(self) -> None:
        """Stop every daemon (slurmd first), wait for each, remove the hosts."""
        for name, proc in reversed(self._daemons):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._daemons.clear()
        self.simulated.down()  # what is left in the hosts: slurmstepd, ranks

