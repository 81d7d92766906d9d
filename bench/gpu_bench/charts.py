"""The report's PNG charts, drawn with matplotlib when it imports: tcjit/cuBLASLt and
tcjit/cuDNN speed ratios per problem, and % of the GPU's peak per problem."""

import os


def draw(stamp, parts, out_dir):
    """Draws <stamp>-gemm.png, -conv.png and -peak.png from `parts`, a list of (kind, anchor, chart
    data) as report.race_table gives them; returns ([file names], why not drawn)."""
    try:
        import matplotlib  # noqa: PLC0415 (optional)
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except Exception as e:
        return [], f"matplotlib does not import here ({type(e).__name__})"
    files = []
    for kind, anchor, data in parts:
        if not any(d["heuristic"] or d["best"] for d in data):
            continue
        name = f"{stamp}-{kind}.png"
        _bars(plt, data, ("heuristic", "best"),
              (f"tcjit heuristic / {anchor} heuristic", f"tcjit tuned / {anchor} best"),
              f"tcjit / {anchor} (speed ratio, above 1: tcjit faster)", "x",
              os.path.join(out_dir, name), line=1.0)
        files.append(name)
    peak = [d for _, _, data in parts for d in data]
    if any(d["peak_tcjit"] or d["peak_anchor"] for d in peak):
        name = f"{stamp}-peak.png"
        _bars(plt, peak, ("peak_tcjit", "peak_anchor"), ("tcjit tuned", "cuBLASLt / cuDNN best"),
              "% of the GPU's peak", "%", os.path.join(out_dir, name))
        files.append(name)
    return files, None


def _bars(plt, data, keys, labels, title, unit, path, line=None):
    height = max(3.0, 0.32 * len(data) + 1.5)
    fig, ax = plt.subplots(figsize=(10, height))
    ys = range(len(data))
    for i, (key, label) in enumerate(zip(keys, labels)):
        values = [d[key] or 0 for d in data]
        ax.barh([y + i * 0.4 for y in ys], values, height=0.4, label=label)
    ax.set_yticks([y + 0.2 for y in ys])
    ax.set_yticklabels([d["label"] for d in data], fontsize=7)
    ax.invert_yaxis()
    if line is not None:
        ax.axvline(line, color="black", linewidth=0.8)
    ax.set_xlabel(unit)
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
