"""The benchmark's outputs: the printed tables (and the same as Markdown), results.json, the sweep plot.

Two tables: the fp32 rows, and issue 20's bf16 / f16 rows (only when there are any), each row
also naming the type its implementation stores tensors in.
"""
import json


def number(row, key, fmt, suffix=""):
    return format(row[key], fmt) + suffix if row.get(key) is not None else "-"


def ratio(row):
    return f"{row['ratio']:.2f}x" if row.get("ratio") is not None else "-"


def max_abs_err(row):
    return f"{row['max_abs_err']:.1e}" + ("" if row["status"] == "ok" else " WRONG")


# (header, cell) per column; the first two and the last are text, the rest numbers.
COLUMNS = [("workload", lambda r: r["workload"]), ("impl", lambda r: r["impl"]),
           ("median ms", lambda r: number(r, "median_ms", ".2f")), ("GFLOP/s", lambda r: number(r, "gflops", ".1f")),
           ("% FMA peak", lambda r: number(r, "pct_fma_peak", ".1f", "%")),
           ("KV GB/s", lambda r: number(r, "kv_gbps", ".1f")), ("peer/attnc", ratio), ("max abs err", max_abs_err)]
LOWP_COLUMNS = [("workload", lambda r: r["workload"]), ("impl", lambda r: f"{r['impl']} ({r['storage']})"),
                ("median ms", lambda r: number(r, "median_ms", ".2f")),
                ("GFLOP/s", lambda r: number(r, "gflops", ".1f")),
                ("% FMA peak", lambda r: number(r, "pct_fma_peak", ".1f", "%")),
                ("% bf16 peak", lambda r: number(r, "pct_bf16_peak", ".1f", "%")),
                ("KV GB/s", lambda r: number(r, "kv_gbps", ".1f")),
                ("% DRAM read", lambda r: number(r, "pct_read", ".1f", "%")),
                ("time/attnc", ratio), ("max abs err", max_abs_err)]
HEADER = [header for header, _ in COLUMNS]


def format_row(row, columns=COLUMNS):
    cells = [cell(row) if i < 2 else "-" for i, (_, cell) in enumerate(columns)]
    if row["status"] not in ("ok", "wrong"):  # skipped or error: the reason in the last column
        return cells[:-1] + [f"{row['status']}: {row.get('message', '')[:50]}"]
    return [cell(row) for _, cell in columns]


def split(rows):
    """(the fp32 rows, the bf16 / f16 rows)."""
    return [r for r in rows if r.get("dtype", "f32") == "f32"], [r for r in rows if r.get("dtype", "f32") != "f32"]


def one_table_text(rows, columns):
    header = [h for h, _ in columns]
    lines = [header] + [format_row(r, columns) for r in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = []
    for n, line in enumerate(lines):
        cells = [c.ljust(w) if i < 2 or i == len(widths) - 1 else c.rjust(w)
                 for i, (c, w) in enumerate(zip(line, widths))]
        out.append("  ".join(cells).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def one_table_markdown(rows, columns):
    header = [h for h, _ in columns]
    lines = ["| " + " | ".join(header) + " |", "| --- | --- |" + " ---: |" * (len(header) - 3) + " --- |"]
    lines += ["| " + " | ".join(format_row(r, columns)) + " |" for r in rows]
    return "\n".join(lines)


def both_tables(rows, one_table):
    """The fp32 table and the bf16 / f16 one, each where it has rows, a blank line apart."""
    return "\n\n".join(one_table(part, columns) for part, columns in zip(split(rows), (COLUMNS, LOWP_COLUMNS))
                        if part)


def table_text(rows):
    return both_tables(rows, one_table_text)


def table_markdown(rows):
    return both_tables(rows, one_table_markdown)


def write_json(path, document):
    with open(path, "w") as f:
        json.dump(document, f, indent=2)


def plot_sweep(path, rows):
    """GFLOP/s against S of the rows on the sweep line, per implementation and storage type (the bf16
    kernel is a curve of its own); returns a skip reason or None."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib not installed"
    series = {}
    for row in rows:
        dtype = row.get("dtype", "f32")
        # On a bf16 line, only what computes in bf16 (not W1's fp32 comparison rows).
        if row["on_sweep"] and row["status"] == "ok" and row.get("storage", "f32") == dtype:
            label = row["impl"] if dtype == "f32" or row["impl"].endswith(dtype) else f"{row['impl']} {dtype}"
            series.setdefault(label, []).append((row["seq_q"], row["gflops"]))
    if not series:
        return "no rows on the sweep line (BENCH_WORKLOADS leaves the sweep out)"
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for impl, points in series.items():
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=impl,
                linestyle="--" if impl.endswith("bf16") else "-")
    ax.set_xscale("log", base=2)
    lengths = sorted({s for points in series.values() for s, _ in points})
    ax.set_xticks(lengths, [str(s) for s in lengths])
    ax.set_xlabel("sequence length S (B1 H12 D64, no mask; f32 unless marked bf16)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title("attention forward, GFLOP/s against sequence length")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None
