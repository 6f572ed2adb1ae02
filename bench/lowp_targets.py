"""Issue 20's speed targets for the bf16 / f16 kernels, read off one run's rows.

Each target names the workloads it judges, the quantity (a column of the low-precision table)
and the bound. run_bench.py prints them after its tables and stores them in results.json;
`lowp_targets.py BUILD/bench/results.json` prints them again for a finished run.
"""
import json
import sys

# (what, workload labels, quantity, bound, unit): quantities are "pct_bf16_peak" and "pct_read" of
# attnc's low-precision row, and "speedup", attnc-f32's median over it.
PREFILL = ("W1 B1 H12 S1024 D64 none", "W3 B8 H8 S512 D64 none")
F16_PREFILL = PREFILL + ("W1 B1 H12 S1024 D64 causal", "W6 B1 H12 S1024 D64 causal gpt2 block")
DECODE = ("W4 B1 H32 Sq1 Sk4096 D128 none",)
TARGETS = (
    ("bf16 prefill, % of the bf16 dot-product peak", [w + " bf16" for w in PREFILL], "pct_bf16_peak", 75.0, "%"),
    ("bf16 prefill, speed-up over the fp32 kernel", [w + " bf16" for w in PREFILL], "speedup", 1.6, "x"),
    ("bf16 / f16 decode, % of DRAM read (2-byte K, V)", [w + d for w in DECODE for d in (" bf16", " f16")],
     "pct_read", 85.0, "%"),
    ("f16 prefill, speed-up over the fp32 kernel", [w + " f16" for w in F16_PREFILL], "speedup", 1.0, "x"),
)


def evaluate(rows):
    """One dict per (target, workload) that the rows hold: its value, the bound and whether it is met."""
    by_key = {(r["workload"], r["impl"]): r for r in rows if r.get("status") == "ok"}
    results = []
    for what, labels, quantity, bound, unit in TARGETS:
        for label in labels:
            attnc = by_key.get((label, "attnc"))
            if attnc is None:
                continue
            if quantity == "speedup":
                fp32 = by_key.get((label, "attnc-f32"))
                value = fp32["median_ms"] / attnc["median_ms"] if fp32 else None
            else:
                value = attnc.get(quantity)
            results.append({"target": what, "workload": label, "value": value, "bound": bound, "unit": unit,
                            "met": value is not None and value >= bound})
    return results


def text(results):
    lines = []
    for r in results:
        unit = r["unit"]
        value = "-" if r["value"] is None else f"{r['value']:.2f}{unit}"
        lines.append(f"  {r['target']}: {r['workload']}: {value} (target >= {r['bound']:g}{unit}: "
                     f"{'met' if r['met'] else 'not met'})")
    return "\n".join(lines)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: lowp_targets.py BUILD/bench/results.json")
    with open(sys.argv[1]) as f:
        document = json.load(f)
    print(text(evaluate(document["results"])) or "no bf16 / f16 rows in this run")


if __name__ == "__main__":
    main()
