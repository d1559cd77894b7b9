"""PNG charts of the latency and bandwidth figures (matplotlib, imported lazily)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._common import fmt_size


def have_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _save(plt: Any, fig: Any, ax: Any, path: Path) -> Path:
    """Legend, layout, PNG at 90 dpi; the figure is closed."""
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def write_charts(directory: str, latency: dict[str, Any] | None, bandwidth: dict[str, Any] | None,
                 title: str) -> list[Path]:
    """Write latency.png (bars, log scale) and bandwidth.png (log-log lines)
    under ``directory``; return their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    if latency is not None:
        names = list(latency["rows"])
        series = [("shared", "onesided shared-memory path"), ("shm", "onesided libfabric shm"), ("mpi", "MPI.Win")]
        fig, ax = plt.subplots(figsize=(10, 4.8))
        width = 0.27
        for i, (key, label) in enumerate(series):
            xs = [j + (i - 1) * width for j, n in enumerate(names) if latency["rows"][n][key] is not None]
            ys = [latency["rows"][n][key] for n in names if latency["rows"][n][key] is not None]
            ax.bar(xs, ys, width, label=label)
        ax.set_yscale("log")
        values = [v for n in names for v in latency["rows"][n].values() if v is not None]
        ax.set_yticks([v for v in (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
                       if min(values) / 2 <= v <= max(values) * 2])
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=25, ha="right", fontsize=8)
        ax.set_ylabel("us per op + Flush (log scale, lower is better)")
        ax.set_title(f"8 B latency, 2 ranks on one host\n{title}", fontsize=9)
        ax.grid(axis="y", which="both", alpha=0.3)
        written.append(_save(plt, fig, ax, out / "latency.png"))
    if bandwidth is not None:
        sizes = list(bandwidth["rows"])
        fig, ax = plt.subplots(figsize=(8, 4.8))
        for key, label, style in (("put onesided", "put, onesided shared-memory path", "o-"),
                                  ("put mpi", "put, MPI.Win", "s-"),
                                  ("get onesided", "get, onesided shared-memory path", "o--"),
                                  ("get mpi", "get, MPI.Win", "s--"),
                                  ("memcpy", "memcpy (np.copyto, one process)", "k:")):
            ax.loglog(sizes, [bandwidth["rows"][n][key] for n in sizes], style, label=label, markersize=3)
        ticks = [n for n in sizes if sizes.index(n) % 2 == 0] if len(sizes) > 12 else sizes
        ax.set_xticks(ticks)
        ax.set_xticklabels([fmt_size(n) for n in ticks], rotation=30, fontsize=8)
        ax.minorticks_off()
        ax.set_xlabel("message size")
        ax.set_ylabel("GB/s (64 ops per Flush)")
        ax.set_title(f"put / get bandwidth, 2 ranks on one host\n{title}", fontsize=9)
        ax.grid(which="both", alpha=0.3)
        written.append(_save(plt, fig, ax, out / "bandwidth.png"))
    return written
