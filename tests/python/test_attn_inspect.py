"""attn-inspect end to end: MiniLM's forward with the attnc kernel against the same forward with an
fp64 NumPy attention, the spec mode on .npy inputs and the minilm mode on two sentences, each run as
README.md documents it (tools/attn-inspect, whose python3 is the system's). Usage: test_attn_inspect.py INSPECT_LIBRARY.so
TEST_LIBRARY.so (the runtime from $ATTNC_RUNTIME)."""
import os
import pathlib
import shlex
import subprocess
import sys
import tempfile

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools" / "attn_inspect"))
import attnc  # noqa: E402
import checks  # noqa: E402
import minilm  # noqa: E402

INSPECT_LIBRARY, TEST_LIBRARY = sys.argv[1], sys.argv[2]


def test_minilm_kernel_forward_matches_the_fp64_attention():
    model = minilm.MiniLM(attnc.Library(INSPECT_LIBRARY)[minilm.KERNEL_ID])
    sentences = ["A man is eating food.", "Naïve café owners in Zürich serve crème brûlée.", "Why?"]
    ids, lengths, tokens = model.tokenize(sentences)
    assert tokens[2] == ["[CLS]", "why", "?", "[SEP]"], tokens[2]
    assert list(lengths) == [len(t) for t in tokens] and ids[2, 4:].sum() == 0  # padded with 0
    embeddings, probs, inputs = model.forward(ids, lengths)
    exact, exact_probs, _ = model.forward(ids, lengths, numpy_attention=True)
    cosine = (embeddings * exact).sum(-1)
    assert cosine.min() >= 0.99999, cosine
    for layer, (got, want) in enumerate(zip(probs, exact_probs)):
        for b, n in enumerate(lengths):
            error = np.abs(got[b, :, :n, :n] - want[b, :, :n, :n]).max()
            assert error < 1e-5, (layer, b, error)
            assert np.all(got[b, :, :, n:] == 0.0)  # padded keys exactly 0
    # ablating a head changes the embeddings, and only from its layer on
    assert 0.0 < 1.0 - (model.ablated(inputs, lengths, [(5, 0)]) * embeddings).sum(-1).min() < 0.5


def test_spec_mode_writes_a_report():
    rng = np.random.default_rng(0)
    batch, seq = 2, 6
    arrays = {
        "q": rng.standard_normal((batch, seq, 3, 16)).astype(np.float32),
        "k": rng.standard_normal((batch, seq, 1, 16)).astype(np.float32),
        "v": rng.standard_normal((batch, seq, 1, 16)).astype(np.float32),
        "key_lengths": np.array([6, 4], dtype=np.int32),
    }
    with tempfile.TemporaryDirectory() as folder:
        folder = pathlib.Path(folder)
        options = []
        for name, array in arrays.items():
            np.save(folder / f"{name}.npy", array)
            options += ["--input", f"{name}={folder / name}.npy"]
        # As README.md documents it: the script itself, whose python3 is the system's.
        command = [str(REPO / "tools" / "attn-inspect"), "--out", str(folder), "--name", "core",
                   "spec", "--library", TEST_LIBRARY, "--kernel", "attn_core_h3_kv1_d16_f32_and_causal_pad_probs",
                   *options]
        done = subprocess.run(command, capture_output=True, text=True, env=user_environment())
        assert done.returncode == 0, done.stderr
        text = (folder / "core.md").read_text()
        # causal: row 0 sees only key 0, so every head parks mass on the first key
        assert "# Heads of attn_core_h3_kv1_d16_f32_and_causal_pad_probs" in text and "| layer.h2 |" in text
        assert f"Made by `{shlex.join(command)}` (see tools/attn_inspect/README.md)." in text, text[:2000]
        assert sorted(p.name for p in (folder / "core").iterdir()) == ["layer.png", "similarity.png", "stats.png"]
        bad = subprocess.run(command[:-len(options)] + ["--input", "q=" + str(folder / "q.npy")],
                             capture_output=True, text=True, env=user_environment())
        assert bad.returncode != 0 and "ATTN_ERR_MISSING_TENSOR" in bad.stderr, bad.stderr


def test_minilm_report_says_how_it_was_made_and_where_it_was_timed():
    with tempfile.TemporaryDirectory() as folder:
        folder = pathlib.Path(folder)
        (folder / "two.txt").write_text("A man is eating food.\nWhy?\n")
        command = [str(REPO / "tools" / "attn-inspect"), "--out", str(folder), "--name", "two", "minilm",
                   "--library", INSPECT_LIBRARY, "--sentences", str(folder / "two.txt"), "--no-ablation"]
        done = subprocess.run(command, capture_output=True, text=True, env=user_environment())
        assert done.returncode == 0, done.stderr
        text = (folder / "two.md").read_text()
        assert f"Made by `{shlex.join(command)}` (see tools/attn_inspect/README.md)." in text, text[:2000]
        variant = attnc.Library(INSPECT_LIBRARY)[minilm.KERNEL_ID].selected_target
        count = os.cpu_count()
        assert f"(NumPy and the kernel; {count} logical CPU" in text and f"the kernel's {variant} variant)" in text, \
            text[:2000]
        assert "2-core" not in text, text[:2000]


def user_environment():
    """This environment without the .venv on PATH: `python3` is then what a user's shell finds."""
    venv = (REPO / ".venv").resolve()
    kept = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and ".venv" not in d and not pathlib.Path(d).resolve().is_relative_to(venv)]
    return {**os.environ, "PATH": os.pathsep.join(kept)}


checks.run(globals())
