"""attn-inspect's analysis of a set of attention maps, and its markdown report."""
from dataclasses import dataclass, field

import numpy as np

import diagnostics
import plots
from progress import Progress


@dataclass
class Analysis:
    """Everything the report shows. maps[l] is a list over inputs of [H, n, n]."""

    maps: list
    layer_names: list
    stats: list = field(default_factory=list)  # HeadStats per layer
    similarity: np.ndarray = None  # [L*H, L*H]
    head_names: list = field(default_factory=list)
    dead: list = field(default_factory=list)
    redundant: list = field(default_factory=list)
    importance: np.ndarray = None  # [L, H] or None
    pruning: list = field(default_factory=list)  # (heads removed, 1 - mean cosine): the least important first


def analyse(maps, layer_names):
    a = Analysis(maps, layer_names)
    a.stats = [diagnostics.head_stats(layer) for layer in maps]
    heads = maps[0][0].shape[0]
    a.head_names = [f"{name}.h{h}" for name in layer_names for h in range(heads)]
    # Every head of every layer in one stack: [L*H, n, n] per input.
    stacked = [np.concatenate([layer[i] for layer in maps], axis=0) for i in range(len(maps[0]))]
    a.similarity = diagnostics.head_similarity(stacked)
    for l, stats in enumerate(a.stats):
        a.dead += diagnostics.dead_heads(stats, a.head_names[l * heads:(l + 1) * heads])
    a.redundant = diagnostics.redundant_pairs(a.similarity, a.head_names)
    return a


# A head's role, named in the report when its mean is at least this.
ROLE_SHARE = 0.5


def _roles(a):
    """Heads by what most of their mass goes to (ROLE_SHARE of it): lines of the report."""
    heads = len(a.stats[0].entropy)
    groups = {"the previous token": [], "the token itself": [], "[CLS] and [SEP] together": [],
              "broadly (entropy at least 0.8 of uniform)": []}
    for l, s in enumerate(a.stats):
        for h in range(heads):
            name = a.head_names[l * heads + h]
            if s.previous[h] >= ROLE_SHARE:
                groups["the previous token"].append(f"{name} ({s.previous[h]:.2f})")
            if s.self[h] >= ROLE_SHARE:
                groups["the token itself"].append(f"{name} ({s.self[h]:.2f})")
            if s.first[h] + s.last[h] >= ROLE_SHARE:
                groups["[CLS] and [SEP] together"].append(f"{name} ({s.first[h] + s.last[h]:.2f})")
            if s.entropy_share[h] >= 0.8:
                groups["broadly (entropy at least 0.8 of uniform)"].append(f"{name} ({s.entropy_share[h]:.2f})")
    return [f"- **{role}** ({len(names)}): " + (", ".join(names) if names else "none") for role, names in groups.items()]


def _table(a):
    heads = len(a.stats[0].entropy)
    lines = ["| head | entropy (nats) | of uniform | mean distance | [CLS] | [SEP] | self | previous |"
             + (" importance |" if a.importance is not None else ""),
             "| --- | --- | --- | --- | --- | --- | --- | --- |" + (" --- |" if a.importance is not None else "")]
    for l, s in enumerate(a.stats):
        for h in range(heads):
            row = (f"| {a.head_names[l * heads + h]} | {s.entropy[h]:.2f} | {s.entropy_share[h]:.2f} | "
                   f"{s.distance[h]:.2f} | {s.first[h]:.2f} | {s.last[h]:.2f} | {s.self[h]:.2f} | {s.previous[h]:.2f} |")
            if a.importance is not None:
                row += f" {a.importance[l, h]:.4f} |"
            lines.append(row)
    return "\n".join(lines)


def write(a, folder, name, title, preamble, example, max_pairs=25):
    """Writes folder/name.md and its pictures in folder/name/. example: (input index, its tokens)
    for the per-layer grids. Returns the report's path."""
    pictures = folder / name
    pictures.mkdir(parents=True, exist_ok=True)
    heads = len(a.stats[0].entropy)
    index, tokens = example
    grids = []
    drawing = Progress("drawing the pictures", total=len(a.layer_names) + 2)
    for l, layer_name in enumerate(a.layer_names):
        path = pictures / f"{layer_name}.png"
        plots.layer_grid(path, a.maps[l][index], tokens,
                         f"{layer_name}, input {index}: each head's probabilities (rows: queries, columns: keys)")
        grids.append(path)
        drawing.update(note=path.name)
    plots.similarity_matrix(pictures / "similarity.png", a.similarity, a.head_names, heads,
                            "mean Jensen-Shannon divergence between heads' attention rows")
    drawing.update(note="similarity.png")
    tables = {"entropy / uniform": np.stack([s.entropy_share for s in a.stats]),
              "mean distance": np.stack([s.distance for s in a.stats]),
              "[CLS] + [SEP]": np.stack([s.first + s.last for s in a.stats]),
              "previous token": np.stack([s.previous for s in a.stats])}
    if a.importance is not None:
        tables["importance (ablation)"] = a.importance
    plots.stat_tables(pictures / "stats.png", tables, "per-head statistics (rows: layers, columns: heads)")
    drawing.update(note="stats.png")
    drawing.finish()

    t = diagnostics
    out = [f"# {title}", "", *preamble, "",
           "## Thresholds", "",
           f"- **Dead, near-uniform**: mean row entropy at least {t.UNIFORM_ENTROPY_SHARE:.2f} of the uniform "
           "row's (log of the keys the row sees).",
           f"- **Dead, sink**: on average at least {t.SINK_SHARE:.2f} of each row's mass on one special token "
           "([CLS], the first token, or [SEP], the input's last).",
           f"- **Redundant pair**: mean Jensen-Shannon divergence (base 2, 0 = same rows, 1 = disjoint) between "
           f"the two heads' rows below {t.REDUNDANT_JS_BITS:.2f}, averaged over every row of every input.",
           "", "## Dead heads", ""]
    out += [f"- {name}: {why}" for name, why in a.dead] or ["None by these thresholds."]
    out += ["", f"## Head roles (at least {ROLE_SHARE:.1f} of the mass on average)", "", *_roles(a)]
    same_layer = [p for p in a.redundant if p[0].split(".")[0] == p[1].split(".")[0]]
    across = [p for p in a.redundant if p[0].split(".")[0] != p[1].split(".")[0]]
    for label, pairs in ((f"Redundant pairs within a layer ({len(same_layer)})", same_layer),
                         (f"Redundant pairs across layers ({len(across)})", across)):
        out += ["", f"## {label}", ""]
        out += [f"- {x} ~ {y}: {js:.3f} bits" for x, y, js in pairs[:max_pairs]] or ["None below the threshold."]
        if len(pairs) > max_pairs:
            out.append(f"- ... and {len(pairs) - max_pairs} more")
    if a.importance is not None:
        order = np.argsort(a.importance, axis=None)[::-1]
        names = [a.head_names[i] for i in order]
        values = a.importance.reshape(-1)[order]
        out += ["", "## Importance by ablation", "",
                "Each head's output is zeroed before the output projection (its columns of W_o set to 0) and "
                "the sentence embeddings are computed again; importance = 1 - mean cosine similarity to the "
                "embeddings with every head (Michel et al. 2019, \"Are Sixteen Heads Really Better than One?\", "
                "measured on the embeddings instead of a task metric).", "",
                "Most important: " + ", ".join(f"{n} ({v:.4f})" for n, v in zip(names[:8], values[:8])) + ".", "",
                "Least important: " + ", ".join(f"{n} ({v:.5f})" for n, v in zip(names[-8:], values[-8:])) + "."]
    if a.pruning:
        out += ["", "Removed together, the least important heads first (1 - mean cosine to the full model's "
                "embeddings):", "", "| heads removed | of all | 1 - mean cosine |", "| --- | --- | --- |"]
        out += [f"| {count} | {count / a.importance.size:.0%} | {gap:.4f} |" for count, gap in a.pruning]
    rel = lambda p: f"{name}/{p.name}"  # noqa: E731
    out += ["", "## Pictures", "", f"![per-head statistics]({rel(pictures / 'stats.png')})", "",
            f"![head similarity]({rel(pictures / 'similarity.png')})", ""]
    out += [f"![{p.stem}]({rel(p)})" for p in grids]
    out += ["", "## Per-head statistics", "",
            "Means over every row of every input: entropy of the row, the same as a share of the uniform "
            "row's, mean |query - key| distance in tokens, and the mass on [CLS], [SEP], the token itself "
            "and the token before.", "", _table(a), ""]
    path = folder / f"{name}.md"
    path.write_text("\n".join(out))
    return path
