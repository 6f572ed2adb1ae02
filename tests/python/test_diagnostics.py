"""attn-inspect's diagnostics on synthetic heads whose answers are known: a uniform head, a head
always on token 0, two identical heads, a previous-token head (tools/attn_inspect/diagnostics.py),
and the report written from them."""
import os
import pathlib
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "attn_inspect"))
import checks  # noqa: E402
import diagnostics  # noqa: E402
import plots  # noqa: E402
import provenance  # noqa: E402
import report  # noqa: E402

LENGTHS = [5, 9, 2, 13]  # inputs of different lengths, as sentences are


def uniform(n):
    return np.full((n, n), 1.0 / n)


def on_first(n):
    m = np.zeros((n, n))
    m[:, 0] = 1.0
    return m


def previous(n):
    m = np.zeros((n, n))
    m[0, 0] = 1.0
    for i in range(1, n):
        m[i, i - 1] = 1.0
    return m


def softmax_rows(rng, n):
    s = rng.standard_normal((n, n)) * 2.0
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def layer_maps(seed=0):
    """Per input [5, n, n]: uniform, on token 0, a random head twice, previous token."""
    rng = np.random.default_rng(seed)
    maps = []
    for n in LENGTHS:
        random_head = softmax_rows(rng, n)
        maps.append(np.stack([uniform(n), on_first(n), random_head, random_head.copy(), previous(n)]))
    return maps


def test_row_statistics():
    s = diagnostics.head_stats(layer_maps())
    rows = sum(LENGTHS)
    # uniform: entropy log(n) per row, its share 1, mass 1/n on each special token
    assert np.isclose(s.entropy[0], sum(n * np.log(n) for n in LENGTHS) / rows)
    assert np.isclose(s.entropy_share[0], 1.0)
    assert np.isclose(s.first[0], sum(1.0 for n in LENGTHS) / rows)  # each row gives 1/n: n rows -> 1
    # on token 0: entropy 0, every row's mass on [CLS], distance = mean row index
    assert s.entropy[1] == 0.0 and s.entropy_share[1] == 0.0 and np.isclose(s.first[1], 1.0)
    assert np.isclose(s.distance[1], sum(n * (n - 1) / 2 for n in LENGTHS) / rows)
    # previous token: all the mass one token back (rows 1..), distance 1 there
    assert np.isclose(s.previous[4], 1.0) and s.previous[1] < 0.5
    assert np.isclose(s.distance[4], sum(n - 1 for n in LENGTHS) / rows)
    assert np.isclose(s.self[4], len(LENGTHS) / rows)  # row 0 only
    # the identical heads have identical statistics
    assert np.isclose(s.entropy[2], s.entropy[3]) and np.isclose(s.distance[2], s.distance[3])


def test_js_divergence():
    p = np.array([1.0, 0.0])
    q = np.array([0.0, 1.0])
    assert np.isclose(diagnostics.js_divergence(p, q), 1.0)  # disjoint: 1 bit
    assert diagnostics.js_divergence(p, p) == 0.0
    u = np.array([0.5, 0.5])
    assert np.isclose(diagnostics.js_divergence(p, u), 0.5 * np.log2(4 / 3) + 0.5 * 0.5 * np.log2(2 / 3) + 0.25)


def test_similarity_and_redundant_pairs():
    sim = diagnostics.head_similarity(layer_maps())
    names = ["uniform", "first", "a", "a_copy", "previous"]
    assert sim.shape == (5, 5) and np.allclose(sim, sim.T) and np.allclose(np.diag(sim), 0.0)
    assert sim[2, 3] < 1e-12
    # token 0 against the token before: the same in rows 0 and 1, disjoint (1 bit) in every other row
    rows = sum(LENGTHS)
    assert np.isclose(sim[1, 4], (rows - 2 * len(LENGTHS)) / rows)
    pairs = diagnostics.redundant_pairs(sim, names)
    assert pairs[0][:2] == ("a", "a_copy"), pairs
    assert all(("uniform" not in p[:2]) or p[2] < diagnostics.REDUNDANT_JS_BITS for p in pairs)


def test_dead_heads():
    stats = diagnostics.head_stats(layer_maps())
    dead = dict(diagnostics.dead_heads(stats, ["uniform", "first", "a", "a_copy", "previous"]))
    assert set(dead) == {"uniform", "first"}, dead
    assert "near-uniform" in dead["uniform"] and "[CLS]" in dead["first"]
    # a head on the last token ([SEP]) is a sink too
    last = [np.flip(on_first(n), axis=1)[None] for n in LENGTHS]
    assert "[SEP]" in dict(diagnostics.dead_heads(diagnostics.head_stats(last), ["sep"]))["sep"]


def test_importance():
    rng = np.random.default_rng(3)
    full = rng.standard_normal((6, 8))
    assert diagnostics.importance(full, full) < 1e-12
    assert np.isclose(diagnostics.importance(full, -full), 2.0)


def test_report_names_the_answers():
    maps = layer_maps()
    analysis = report.analyse([maps, maps], ["A", "B"])  # two layers, the same heads
    with tempfile.TemporaryDirectory() as folder:
        path = report.write(analysis, pathlib.Path(folder), "synthetic", "Synthetic heads", ["test"],
                            (1, [str(i) for i in range(LENGTHS[1])]))
        text = path.read_text()
        pictures = sorted(p.name for p in (pathlib.Path(folder) / "synthetic").iterdir())
    assert "- A.h0: near-uniform" in text and "- B.h1: sink on [CLS]" in text
    assert "A.h2 ~ A.h3: 0.000 bits" in text and "A.h4 ~ B.h4" in text  # the same head in both layers
    assert pictures == ["A.png", "B.png", "similarity.png", "stats.png"], pictures


def test_layer_grid_has_one_probability_scale():
    maps = np.stack([uniform(5), on_first(5), previous(5)])
    fig = plots.layer_grid_figure(maps, [f"t{i}" for i in range(5)], "three heads", columns=2)
    bars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    assert len(bars) == 1, [ax.get_label() for ax in fig.axes]
    assert bars[0].get_ylabel() == "probability" and bars[0].get_ylim() == (0.0, 1.0), bars[0].get_ylim()


def test_provenance_from_the_command_and_the_machine():
    line = provenance.made_by(["tools/attn-inspect", "--out", "my reports", "--name", "m", "minilm"])
    assert line == "Made by `tools/attn-inspect --out 'my reports' --name m minilm` (see tools/attn_inspect/README.md).", line
    with tempfile.TemporaryDirectory() as folder:
        cpuinfo = pathlib.Path(folder) / "cpuinfo"
        cpuinfo.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n")
        assert provenance.cpu_model(str(cpuinfo)) == "AMD EPYC 7B13"
        assert provenance.cpu_model(str(pathlib.Path(folder) / "absent")) is None

    class Kernel:
        selected_target = "x86-64-linux-avx2"

    count = os.cpu_count()
    model = provenance.cpu_model()
    cpus = f"{count} logical CPU{'s' if count != 1 else ''}" + (f" ({model})" if model else "")
    assert provenance.machine(Kernel()) == f"{cpus}, the kernel's x86-64-linux-avx2 variant"


checks.run(globals())
