#!/usr/bin/env bash
# Installs the Debian packages onesided needs, only those that are missing,
# so a second run costs a few dpkg queries.
#
#   tools/setup-debian.sh            what `make demo` and `make test` need:
#     libfabric-dev libfabric-bin    the fabric (shm, tcp, verbs, ... providers) and fi_info
#     libgtest-dev                   the C++ unit tests
#     mpich libmpich-dev             an MPI for the interop tests and the benchmark's peer;
#                                    Debian's MPICH uses UCX, so its process never loads a
#                                    second libfabric (PyPI's MPI wheels bundle their own)
#     g++ pkg-config make            the build
#     iproute2                       `ip netns`: tests/test_multihost.py's simulated hosts
#                                    (unshare and hostname are in every Debian system)
#     munge slurmctld slurmd         a real Slurm 22.05 that the tests start over the
#     slurm-client                   simulated hosts (tests/cluster/slurm.py); the tests run
#                                    their own daemons with their own keys and ports
#     libpmix2                       PMIx, loaded at run time by onesided's PMI bootstrap
#                                    when a launcher offers PMIx (srun --mpi=pmix, Open MPI)
#     libpmix-dev                    only for its unversioned libpmix.so: Slurm's mpi/pmix
#                                    plugin dlopens pmix2/lib/libpmix.so, and without it
#                                    srun --mpi=pmix fails ("can not load PMIx library")
#     python3-venv python3-dev       only when the python3 in use lacks venv or headers
#
#   tools/setup-debian.sh openmpi    only for `make bench-openmpi`, never demo or test:
#     openmpi-bin libopenmpi-dev     the benchmark's second peer (an mpi4py built against
#                                    it under build/openmpi-site). Installing it points the
#                                    mpiexec/mpirun/mpicc alternatives at Open MPI, which
#                                    is why everything else calls MPICH's mpiexec.mpich
#                                    and mpicc.mpich.
set -euo pipefail

case ${1:-} in
  "")
    packages=(libfabric-dev libfabric-bin libgtest-dev mpich libmpich-dev g++ pkg-config make iproute2
              munge slurmctld slurmd slurm-client libpmix2 libpmix-dev)
    python=${PYTHON:-python3}
    if ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then
      packages+=(python3-venv)
    fi
    include=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null || true)
    if [[ -z $include || ! -f $include/Python.h ]]; then
      packages+=(python3-dev)
    fi
    ;;
  openmpi)
    packages=(openmpi-bin libopenmpi-dev)
    ;;
  *)
    echo "usage: $0 [openmpi]" >&2
    exit 2
    ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

sudo=()
((EUID == 0)) || sudo=(sudo)
echo "setup: installing Debian packages: ${missing[*]}"
# Several set-ups may run at once (worktrees, CI beside a session): wait for
# dpkg's lock instead of failing on it.
lock=(-o DPkg::Lock::Timeout=600)
"${sudo[@]}" apt-get "${lock[@]}" update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get "${lock[@]}" install -y -qq --no-install-recommends "${missing[@]}"
# Debian's packages start munged (and would start slurmd/slurmctld) for the whole
# machine where the init system lets them; the tests run their own daemons with
# their own keys, sockets and ports, and nothing of the machine's is needed.
for daemon in slurmd slurmctld munge; do
  if [[ " ${missing[*]} " == *" $daemon "* ]]; then
    "${sudo[@]}" service "$daemon" stop >/dev/null 2>&1 || true
  fi
done
