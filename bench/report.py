"""The benchmark's outputs: the printed table (and the same as Markdown), results.json, the sweep plot."""
import json


def format_row(row):
    if row["status"] not in ("ok", "wrong"):  # skipped or error: the reason in the last column
        return [row["workload"], row["impl"]] + ["-"] * 5 + [f"{row['status']}: {row.get('message', '')[:50]}"]

    def number(key, fmt):
        return format(row[key], fmt) if row.get(key) is not None else "-"
    return [row["workload"], row["impl"], number("median_ms", ".2f"), number("gflops", ".1f"),
            number("pct_fma_peak", ".1f") + "%", number("kv_gbps", ".1f"),
            f"{row['ratio']:.2f}x" if row.get("ratio") is not None else "-",
            f"{row['max_abs_err']:.1e}" + ("" if row["status"] == "ok" else " WRONG")]


HEADER = ["workload", "impl", "median ms", "GFLOP/s", "% FMA peak", "KV GB/s", "peer/attnc", "max abs err"]


def table_text(rows):
    lines = [HEADER] + [format_row(r) for r in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(HEADER))]
    out = []
    for n, line in enumerate(lines):
        cells = [c.ljust(w) if i < 2 or i == len(widths) - 1 else c.rjust(w)
                 for i, (c, w) in enumerate(zip(line, widths))]
        out.append("  ".join(cells).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def table_markdown(rows):
    lines = ["| " + " | ".join(HEADER) + " |", "| --- | --- |" + " ---: |" * (len(HEADER) - 3) + " --- |"]
    lines += ["| " + " | ".join(format_row(r)) + " |" for r in rows]
    return "\n".join(lines)


def write_json(path, document):
    with open(path, "w") as f:
        json.dump(document, f, indent=2)


def plot_sweep(path, rows):
    """GFLOP/s against S of the rows on the sweep line, per implementation; returns a skip reason or None."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib not installed"
    series = {}
    for row in rows:
        if row["on_sweep"] and row["status"] == "ok":
            series.setdefault(row["impl"], []).append((row["seq_q"], row["gflops"]))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for impl, points in series.items():
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=impl)
    ax.set_xscale("log", base=2)
    lengths = sorted({s for points in series.values() for s, _ in points})
    ax.set_xticks(lengths, [str(s) for s in lengths])
    ax.set_xlabel("sequence length S (B1 H12 D64, no mask, f32)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title("attention forward, GFLOP/s against sequence length")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None
