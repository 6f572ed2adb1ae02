"""Issue 24's rows as one line per workload: attnc's contiguous kernel against its limit, and each
other implementation as a ratio to the row it is judged against.

Usage: llm_summary.py BUILD/bench/llm.json   (llm_bench.py prints and writes the same table)
"""
import json
import sys

# (column, implementation, the implementation its time is divided by)
RATIOS = (("paged16 ÷ contiguous", "attnc-paged16", "attnc"), ("paged128 ÷ contiguous", "attnc-paged128", "attnc"),
          ("RoPE ÷ none", "attnc-rope", "attnc"), ("core (no cache) ÷ cache", "attnc-core", "attnc"),
          ("ORT GQA ÷ attnc", "onnxruntime-gqa", "attnc"), ("ORT GQA+rotary ÷ attnc RoPE", "onnxruntime-gqa-rope",
                                                              "attnc-rope"),
          ("NumPy unfused ÷ attnc", "numpy-unfused", "attnc"), ("bf16 cache ÷ f32", "attnc-bf16", "attnc"),
          ("int8 ÷ bf16 cache", "attnc-int8", "attnc-bf16"), ("fp8 ÷ bf16 cache", "attnc-fp8", "attnc-bf16"),
          ("llama.cpp f16 ÷ attnc bf16", "llamacpp-f16", "attnc-bf16"),
          ("llama.cpp q8_0 ÷ attnc int8", "llamacpp-q8_0", "attnc-int8"),
          ("llama.cpp f16 no flash ÷ attnc bf16", "llamacpp-f16-nofa", "attnc-bf16"))


def summary(rows):
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    present = [c for c in RATIOS if any(r["impl"] == c[1] for r in rows)]
    lines = ["| workload | attnc ms | GB/s or GFLOP/s | % of limit (limit) | " + " | ".join(c[0] for c in present) + " |",
             "| --- | ---: | ---: | ---: | " + " | ".join("---:" for _ in present) + " |"]
    for label in workloads:
        by = {r["impl"]: r for r in rows if r["workload"] == label}
        base = by.get("attnc", {})
        if "median_ms" not in base:
            lines.append(f"| {label} | {base.get('status', 'missing')} |" + " |" * (len(present) + 2))
            continue
        decode = base["kind"] == "decode"
        rate = f"{base['kv_gbps']:.1f} GB/s" if decode else f"{base['gflops']:.1f} GFLOP/s"
        limit = (f"{base['pct_limit']:.1f}% ({base['limit_value']:.1f} {'GB/s' if decode else 'GFLOP/s'})"
                 if "pct_limit" in base else "-")
        cells = []
        for _, impl, against in present:
            r, a = by.get(impl, {}), by.get(against, {})
            if r.get("ratio_to") == against:  # attnc's kernels: the median of per-round ratios
                cells.append(f"{r['ratio']:.2f}")
            else:
                cells.append(f"{r['median_ms'] / a['median_ms']:.2f}" if "median_ms" in r and "median_ms" in a
                             else r.get("status", "-"))
        lines.append(f"| {label} | {base['median_ms']:.3f} | {rate} | {limit} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        print(summary(json.load(f)["rows"]))
