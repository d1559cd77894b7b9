#!/usr/bin/env python3
"""``make bench-scale-hosts``: the scale-across-hosts jobs over simulated
hosts (tests/hosts/netns.py: network namespaces on one bridge, all on this
machine's cores), one job per (launcher, rank count), then the report
(python -m onesided.bench.hosts report).

    tools/bench_scale_hosts.py OUTDIR [--hosts 8] [--ranks 2,4,...,64] [--launchers onesided,mpiexec,srun]

Ranks are spread evenly: P ranks on min(P, hosts) hosts, P / that many on
each. Launchers:

* onesided: ``python -m onesided run`` through tools/netns-rsh; the job
  measures onesided (COMM_WORLD is the launcher's);
* mpiexec: MPICH's hydra through the same remote shell, the job started by
  ``python -m mpi4py``; it measures onesided (over mpi4py's COMM_WORLD) and
  MPI.Win in the same job, taking turns;
* srun: a real Slurm over hosts of its own (tests/cluster/slurm.py: munged,
  slurmctld, one slurmd per host), ``srun --mpi=pmi2 -N hosts -n P
  --ntasks-per-node=P/hosts``, the
  job started by ``python -m mpi4py``; onesided and MPI.Win as under
  mpiexec (MPICH reads srun's PMI).

MPICH (Debian's, over UCX) runs with ``UCX_TLS=tcp,self``: UCX cannot tell
simulated hosts apart (they share this machine's /dev/shm and boot id), and
left to itself takes shared memory between them, which no two real hosts
have (measured: fetch_and_op + Flush between two simulated hosts, 5.1 us by
UCX's shared memory, 40.5 us by tcp). onesided's windows across hosts take
tcp between every pair of their ranks, those on one host included, so the
two libraries move data alike.

A job that fails or outlives its timeout is named and the others reported.
Needs root (network namespaces), as the multi-host tests do.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from cluster.slurm import SlurmCluster  # noqa: E402
from hosts.netns import SimulatedHosts, sweep_stale, unavailable  # noqa: E402

JOB = ["-m", "onesided.bench.hosts", "job"]


def placement(hosts: list[str], ranks: int) -> list[tuple[str, int]]:
    used = hosts[: min(ranks, len(hosts))]
    if ranks % len(used):
        raise SystemExit(f"{ranks} ranks do not spread evenly over {len(used)} hosts")
    return [(h, ranks // len(used)) for h in used]


def command(launcher: str, sim: SimulatedHosts, ranks: int, out: Path, timeout: int, hosts: int = 0) -> list[str]:
    """The job's command line; for srun, ``hosts`` is the cluster's node count."""
    if launcher == "srun":
        spread = placement([str(i) for i in range(hosts)], ranks)
        # The same layout as the other launchers': without --ntasks-per-node
        # Slurm fills the first node (each has max(ranks) CPUs here) and puts
        # one task on each other (32 ranks: 25 on one node, measured).
        return ["srun", "--mpi=pmi2", "-N", str(len(spread)), "-n", str(ranks),
                f"--ntasks-per-node={spread[0][1]}", f"--time={timeout // 60 + 1}",
                "--quit-on-interrupt", "--kill-on-bad-exit=1", sys.executable, "-m", "mpi4py", *JOB,
                "--json", str(out), "--label", "srun", "--libs", "onesided,mpi"]
    spread = placement([h.address for h in sim.hosts], ranks)
    hosts = ",".join(f"{h}:{k}" for h, k in spread)
    if launcher == "onesided":
        return [sys.executable, "-m", "onesided", "run", "-n", str(ranks), "--hosts", hosts, "--rsh", sim.rsh,
                "--timeout", str(timeout), "-m", *JOB[1:], "--json", str(out), "--label", "launcher"]
    if launcher == "mpiexec":
        mpiexec = shutil.which("mpiexec.mpich") or "mpiexec"
        return [mpiexec, "-launcher", "rsh", "-launcher-exec", sim.rsh, "-iface", sim.bridge, "-hosts", hosts,
                "-n", str(ranks), sys.executable, "-m", "mpi4py", *JOB, "--json", str(out), "--label", "mpiexec",
                "--libs", "onesided,mpi"]
    raise SystemExit(f"unknown launcher {launcher!r}")


def run_one(cmd: list[str], env: dict[str, str], timeout: int) -> tuple[bool, float, str]:
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, _ = proc.communicate()
        return False, time.monotonic() - t0, f"timed out after {timeout} s\n{out}"
    except BaseException:
        os.killpg(proc.pid, 9)  # Ctrl-C: the job is in a session of its own and would outlive us
        proc.wait()
        raise
    return proc.returncode == 0, time.monotonic() - t0, out


def run_recorded(launcher: str, sim: SimulatedHosts, ranks: int, env: dict[str, str], args: argparse.Namespace,
                 failed: list[str], hosts: int = 0) -> list[str]:
    """One job; its JSON's path in a list, or nothing (and its log kept)."""
    out = args.outdir / f"{launcher}-{ranks}.json"
    out.unlink(missing_ok=True)
    ok, seconds, text = run_one(command(launcher, sim, ranks, out, args.timeout, hosts), env, args.timeout + 30)
    print(f"{launcher} {ranks} ranks: {'ok' if ok else 'FAILED'} in {seconds:.1f} s", flush=True)
    if ok and out.exists():
        return [str(out)]
    failed.append(f"{launcher} at {ranks} ranks")
    (args.outdir / f"{launcher}-{ranks}.log").write_text(text)
    return []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--hosts", type=int, default=8)
    parser.add_argument("--ranks", default="2,4,8,16,32,64")
    parser.add_argument("--launchers", default="onesided,mpiexec")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per job")
    args = parser.parse_args()
    reason = unavailable()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    args.outdir.mkdir(parents=True, exist_ok=True)
    sweep_stale()
    failed, runs = [], []
    launchers = args.launchers.split(",")
    rank_counts = [int(r) for r in args.ranks.split(",")]
    with tempfile.TemporaryDirectory(prefix="onesided-scale-") as tmp:
        with SimulatedHosts(args.hosts, Path(tmp)) as sim:
            env = {**os.environ, **sim.env(), "UCX_TLS": "tcp,self"}
            env.pop("ONESIDED_TEST_PROVIDER", None)
            for ranks in rank_counts:
                for launcher in (name for name in launchers if name != "srun"):
                    runs += run_recorded(launcher, sim, ranks, env, args, failed)
        if "srun" in launchers:
            # Its own hosts (a controller and the nodes), after the others are gone.
            (Path(tmp) / "slurm").mkdir()
            with SlurmCluster(args.hosts, Path(tmp) / "slurm", index=5, cpus=max(rank_counts)) as cluster:
                env = {**cluster.env(), "UCX_TLS": "tcp,self"}
                env.pop("ONESIDED_TEST_PROVIDER", None)
                for ranks in rank_counts:
                    runs += run_recorded("srun", cluster.simulated, ranks, env, args, failed,
                                         len(cluster.nodes))
    if runs:
        subprocess.run([sys.executable, "-m", "onesided.bench.hosts", "report", *runs], check=True)
    if failed:
        print("failed jobs (logs in " + str(args.outdir) + "): " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
