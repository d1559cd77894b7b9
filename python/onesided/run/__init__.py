"""Starting ranks: ``python -m onesided run`` and ``onesided.launch``.

Holds:

* ``_launch``: the launcher (start N ranks, supervise them, exit with the
  job's status), around :mod:`onesided.comm._coordinator`;
* ``_exits``: how a rank's end is read (status, words, ended or not);
* ``_output``: the relay of the ranks' output, as whole lines;
* ``_hosts``: where ranks go across hosts (host lists, hostfiles, Slurm);
* ``_slurm``: inside a Slurm allocation, srun as the remote shell and the
  nodes' addresses (NodeAddr);
* ``_remote_rank``: the launcher's agent on another host, one per rank;
* ``_spawn``, ``_spawn_rank``: :func:`onesided.launch`, a function run on N
  fresh ranks, and what each of those ranks runs.

May import: ``onesided._core``, ``_errors`` and ``comm``. The launcher
never imports the Window API (a rank's program does); ``notebook``,
``pytest_onesided`` and the package root import this package, never the
reverse. Modules import each other's modules directly; this ``__init__``
re-exports nothing.
"""
