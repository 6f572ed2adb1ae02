"""Head diagnostics on plain NumPy attention probabilities: per-head statistics, pairwise head
similarity (Jensen-Shannon divergence), dead heads. No kernel, no model: the inputs are maps.

A map is one input's probabilities for one layer, shaped [H, n, n] (head, query row, key), each row
summing to 1 over the keys it may see (0 for a row that sees none); n is the input's own length
(padding already cropped). Inputs of different lengths come as a list of maps.
"""
from dataclasses import dataclass

import numpy as np

# Dead-head thresholds (docs/minilm_heads.md states them with the results):
# near-uniform: the mean row entropy is at least this share of the uniform row's entropy, log(n).
UNIFORM_ENTROPY_SHARE = 0.90
# a sink: on average at least this share of every row's mass sits on one special token.
SINK_SHARE = 0.90
# redundant: two heads whose maps differ by a mean Jensen-Shannon divergence (bits, 0..1) below this.
REDUNDANT_JS_BITS = 0.10


@dataclass
class HeadStats:
    """Per-head means over every row of every input, each an array [H]."""

    entropy: np.ndarray  # nats, of a row's distribution
    entropy_share: np.ndarray  # entropy / log(kept keys): 1 = uniform, 0 = one key
    distance: np.ndarray  # sum_j p_ij |i - j|, in tokens
    first: np.ndarray  # mass on token 0 ([CLS])
    last: np.ndarray  # mass on the input's last token ([SEP])
    self: np.ndarray  # mass on the row's own token
    previous: np.ndarray  # mass on the token before (rows 1.. only)


def _entropy(p):
    """Row entropies in nats, 0 log 0 = 0: [..., n] -> [...]."""
    logs = np.log(np.where(p > 0, p, 1.0))
    return -(p * logs).sum(axis=-1)


def head_stats(maps):
    """HeadStats over a list of maps [H, n, n]."""
    sums = {name: 0.0 for name in HeadStats.__dataclass_fields__}
    rows = 0
    previous_rows = 0
    for m in maps:
        m = np.asarray(m, dtype=np.float64)
        heads, n, _ = m.shape
        kept = np.maximum((m > 0).sum(axis=-1), 1)  # [H, n]
        entropy = _entropy(m)
        uniform = np.log(kept)
        share = np.where(kept > 1, entropy / np.where(kept > 1, uniform, 1.0), 0.0)
        positions = np.arange(n)
        distance = np.abs(positions[:, None] - positions[None, :])
        sums["entropy"] = sums["entropy"] + entropy.sum(axis=1)
        sums["entropy_share"] = sums["entropy_share"] + share.sum(axis=1)
        sums["distance"] = sums["distance"] + (m * distance).sum(axis=(1, 2))
        sums["first"] = sums["first"] + m[:, :, 0].sum(axis=1)
        sums["last"] = sums["last"] + m[:, :, n - 1].sum(axis=1)
        sums["self"] = sums["self"] + np.trace(m, axis1=1, axis2=2)
        if n > 1:
            sums["previous"] = sums["previous"] + np.trace(m, offset=-1, axis1=1, axis2=2)
        rows += n
        previous_rows += n - 1
    means = {name: np.asarray(total) / (previous_rows if name == "previous" else rows) for name, total in sums.items()}
    if previous_rows == 0:
        means["previous"] = np.zeros_like(means["self"])
    return HeadStats(**means)


def js_divergence(p, q):
    """Jensen-Shannon divergence in bits (0..1) between distributions along the last axis."""
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    m = 0.5 * (p + q)

    def kl(a, b):
        ratio = np.where(a > 0, a / np.where(b > 0, b, 1.0), 1.0)
        return (a * np.log2(ratio)).sum(axis=-1)

    return 0.5 * kl(p, m) + 0.5 * kl(q, m)


def head_similarity(maps):
    """[H, H] mean Jensen-Shannon divergence (bits) between every two heads' rows, over every row of
    every input; maps as head_stats takes them (heads of several layers: stack them along H)."""
    total = None
    rows = 0
    for m in maps:
        m = np.asarray(m, dtype=np.float64)
        if total is None:
            total = np.zeros((m.shape[0], m.shape[0]))
        for a in range(m.shape[0]):  # one head against all at a time: [H, n, n] in memory, not [H, H, n, n]
            total[a] += js_divergence(m[a][None], m).sum(axis=-1)
        rows += m.shape[1]
    return total / rows


def redundant_pairs(similarity, names, threshold=REDUNDANT_JS_BITS):
    """[(name a, name b, js)] for every pair below the threshold, most similar first."""
    pairs = []
    count = similarity.shape[0]
    for a in range(count):
        for b in range(a + 1, count):
            if similarity[a, b] < threshold:
                pairs.append((names[a], names[b], float(similarity[a, b])))
    return sorted(pairs, key=lambda p: p[2])


def dead_heads(stats, names, uniform_share=UNIFORM_ENTROPY_SHARE, sink_share=SINK_SHARE):
    """[(name, reason)] for heads that attend near-uniformly or park their mass on [CLS] or [SEP]."""
    dead = []
    for h, name in enumerate(names):
        if stats.entropy_share[h] >= uniform_share:
            dead.append((name, f"near-uniform (entropy {stats.entropy_share[h]:.2f} of uniform)"))
        elif stats.first[h] >= sink_share:
            dead.append((name, f"sink on [CLS] ({stats.first[h]:.2f} of the mass)"))
        elif stats.last[h] >= sink_share:
            dead.append((name, f"sink on [SEP] ({stats.last[h]:.2f} of the mass)"))
    return dead


def importance(full, ablated):
    """Head importance by ablation (Michel et al. 2019): 1 - mean cosine similarity between the
    sentence embeddings with every head ([N, E]) and with one head's output zeroed ([N, E])."""
    full = np.asarray(full, dtype=np.float64)
    ablated = np.asarray(ablated, dtype=np.float64)
    cos = (full * ablated).sum(-1) / (np.linalg.norm(full, axis=-1) * np.linalg.norm(ablated, axis=-1))
    return float(1.0 - cos.mean())
