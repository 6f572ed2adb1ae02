"""The Python binding (python/attnc) on a generated kernel library: listing, runs against the fp64
NumPy reference on odd sizes (core, bf16 with a broadcast mask, block), the checks made before a
call, and the runtime's statuses as exceptions. Usage: test_binding.py LIBRARY.so (the runtime
from $ATTNC_RUNTIME)."""
import sys

import numpy as np

import attnc
import checks
import reference

LIBRARY = sys.argv[1]
CORE = "attn_core_h3_kv1_d16_f32_and_causal_pad_probs"
BF16 = "attn_core_h2_kv2_d16_bf16_tensor_probs"
BLOCK = "attn_block_m48_h3_kv3_d16_f32_pad_fused_bias_probs"
lib = attnc.Library(LIBRARY)


def core_inputs(rng, batch, seq_q, seq_k, lengths):
    return {
        "q": rng.standard_normal((batch, seq_q, 3, 16)).astype(np.float32),
        "k": rng.standard_normal((batch, seq_k, 1, 16)).astype(np.float32),
        "v": rng.standard_normal((batch, seq_k, 1, 16)).astype(np.float32),
        "key_lengths": np.array(lengths, dtype=np.int32),
    }


def test_listing():
    assert sorted(k.id for k in lib.kernels) == sorted(
        [CORE, BF16, BLOCK, "attn_core_h2_kv2_d16_f32_causal_kvc", "attn_core_h2_kv2_d16_f32_causal_kvc_kvi8"])
    core = lib[CORE]
    assert "probs=true" in core.spec and "mask=causal&padding" in core.spec
    listed = [(a.name, a.dtype, a.shape, a.is_output) for a in core.args]
    assert listed == [
        ("q", "f32", ("B", "Sq", 3, 16), False),
        ("k", "f32", ("B", "Sk", 1, 16), False),
        ("v", "f32", ("B", "Sk", 1, 16), False),
        ("key_lengths", "i32", ("B",), False),
        ("out", "f32", ("B", "Sq", 3, 16), True),
        ("probs", "f32", ("B", 3, "Sq", "Sk"), True),
    ], listed
    assert core.args[1].labels == ("B", "Sk", "KVH", "D"), core.args[1].labels
    mask = lib[BF16].inputs[3]
    assert (mask.name, mask.dtype, mask.broadcast, mask.min_rank) == ("mask", "u8", (0, 1), 2)
    assert lib[BF16].inputs[0].dtype == "bf16" and lib[BF16].inputs[0].numpy_dtype == np.uint16
    assert [a.name for a in lib[BLOCK].outputs] == ["out", "probs"]
    # target is the dispatch list; selected_target the one variant of it that runs here.
    assert core.selected_target in core.target.split(","), (core.selected_target, core.target)


def test_core_matches_the_reference_on_odd_sizes():
    rng = np.random.default_rng(1)
    kernel = lib[CORE]
    for batch, seq_q, seq_k, lengths in [(2, 7, 13, [13, 0]), (1, 1, 1, [1]), (3, 37, 29, [29, 5, 17])]:
        inputs = core_inputs(rng, batch, seq_q, seq_k, lengths)
        got = kernel.run(**inputs)
        keep = reference.causal_padding_keep(batch, 3, seq_q, seq_k, inputs["key_lengths"])
        out, probs = reference.attention(inputs["q"], inputs["k"], inputs["v"], keep, 0.25)
        assert got["out"].shape == (batch, seq_q, 3, 16) and got["probs"].shape == (batch, 3, seq_q, seq_k)
        assert np.abs(got["out"] - out).max() < 2e-5, np.abs(got["out"] - out).max()
        assert np.abs(got["probs"] - probs).max() < 2e-6, np.abs(got["probs"] - probs).max()
        assert np.all(got["probs"][~keep] == 0.0)  # masked keys and empty rows exactly 0


def test_bf16_with_a_broadcast_mask():
    rng = np.random.default_rng(2)
    kernel = lib[BF16]
    batch, seq_q, seq_k = 2, 9, 11
    q, k, v = (attnc.to_bf16(rng.standard_normal((batch, s, 2, 16))) for s in (seq_q, seq_k, seq_k))
    mask = (rng.random((seq_q, seq_k)) < 0.6).astype(np.uint8)  # [Sq,Sk]: every batch and head
    mask[3] = 0  # a row with no kept key
    got = kernel.run(q=q, k=k, v=v, mask=mask)
    assert got["out"].dtype == np.uint16 and got["probs"].dtype == np.float32
    keep = np.broadcast_to(mask.astype(bool), (batch, 2, seq_q, seq_k))
    out, probs = reference.attention(attnc.from_bf16(q), attnc.from_bf16(k), attnc.from_bf16(v), keep, 0.25)
    # out is rounded to bf16 once: 2^-8 relative.
    assert np.all(np.abs(attnc.from_bf16(got["out"]) - out) <= np.abs(out) * 2.0**-8 + 1e-6)
    assert np.abs(got["probs"] - probs).max() < 2e-6
    assert np.all(got["probs"][:, :, 3] == 0.0) and np.all(attnc.from_bf16(got["out"])[:, 3] == 0.0)


def test_block_matches_the_reference():
    rng = np.random.default_rng(3)
    kernel = lib[BLOCK]
    batch, seq = 3, 10
    bound = 1 / np.sqrt(48)
    t = {
        "x": rng.uniform(-1, 1, (batch, seq, 48)),
        "w_qkv": rng.uniform(-bound, bound, (144, 48)),
        "b_qkv": rng.uniform(-bound, bound, 144),
        "w_o": rng.uniform(-bound, bound, (48, 48)),
        "b_o": rng.uniform(-bound, bound, 48),
    }
    t = {name: a.astype(np.float32) for name, a in t.items()}
    lengths = np.array([10, 1, 6], dtype=np.int32)
    got = kernel.run(key_lengths=lengths, **t)
    x = t["x"].astype(np.float64)
    qkv = x @ t["w_qkv"].T.astype(np.float64) + t["b_qkv"]
    q, k, v = (qkv[..., 48 * n:48 * (n + 1)].reshape(batch, seq, 3, 16) for n in range(3))
    keep = np.zeros((batch, 3, seq, seq), dtype=bool)
    for b, length in enumerate(lengths):
        keep[b, :, :, :length] = True
    attended, probs = reference.attention(q, k, v, keep, 0.25)
    out = attended.reshape(batch, seq, 48) @ t["w_o"].T.astype(np.float64) + t["b_o"]
    assert np.abs(got["out"] - out).max() < 2e-5, np.abs(got["out"] - out).max()
    assert np.abs(got["probs"] - probs).max() < 2e-6, np.abs(got["probs"] - probs).max()


def test_outputs_given_are_written_in_place():
    rng = np.random.default_rng(4)
    inputs = core_inputs(rng, 1, 4, 4, [4])
    out = np.full((1, 4, 3, 16), 7.0, dtype=np.float32)
    got = lib[CORE].run(out=out, **inputs)
    assert got["out"] is out and not np.any(out == 7.0)
    bad = checks.raises(attnc.ShapeError, lib[CORE].run, out=np.zeros((1, 4, 3, 8), np.float32), **inputs)
    assert "output 'out'" in bad.message


def test_dtype_and_shape_are_checked_before_the_call():
    rng = np.random.default_rng(5)
    kernel = lib[CORE]
    inputs = core_inputs(rng, 2, 5, 6, [6, 6])
    e = checks.raises(attnc.DTypeError, kernel.run, **{**inputs, "q": inputs["q"].astype(np.float64)})
    assert e.status == 6 and e.status_name == "ATTN_ERR_DTYPE" and "'q' must be f32" in e.message
    e = checks.raises(attnc.DTypeError, lib[BF16].run, q=np.zeros((1, 2, 2, 16), np.float32),
                      k=np.zeros((1, 2, 2, 16), np.uint16), v=np.zeros((1, 2, 2, 16), np.uint16),
                      mask=np.ones((2, 2), np.uint8))
    assert "to_bf16" in e.message
    e = checks.raises(attnc.ShapeError, kernel.run, **{**inputs, "k": inputs["k"][:1]})
    assert "B = 1" in e.message and "B = 2" in e.message, e.message
    e = checks.raises(attnc.ShapeError, kernel.run, **{**inputs, "q": np.zeros((2, 5, 3, 8), np.float32)})
    assert "(D) must be 16" in e.message, e.message
    assert "looks like" not in e.message, e.message
    # PyTorch's head-major order is named, and the layout the kernel takes.
    e = checks.raises(attnc.ShapeError, kernel.run, **{**inputs, "q": np.swapaxes(inputs["q"], 1, 2).copy()})
    assert "'q' dim 2 (H) must be 3" in e.message, e.message
    assert "this looks like [B,H,Sq,D]" in e.message and "the kernel takes [B,Sq,H,D]" in e.message, e.message
    swapped = kernel.run(**{**inputs, "q": np.swapaxes(np.swapaxes(inputs["q"], 1, 2).copy(), 1, 2)})
    assert np.array_equal(swapped["out"], kernel.run(**inputs)["out"])
    checks.raises(attnc.RankError, kernel.run, **{**inputs, "v": inputs["v"][0]})
    checks.raises(attnc.RankError, lib[BF16].run, q=np.zeros((1, 2, 2, 16), np.uint16),
                  k=np.zeros((1, 2, 2, 16), np.uint16), v=np.zeros((1, 2, 2, 16), np.uint16),
                  mask=np.ones(2, np.uint8))
    checks.raises(attnc.MissingTensorError, kernel.run, q=inputs["q"], k=inputs["k"], v=inputs["v"])
    checks.raises(attnc.UnknownTensorError, kernel.run, mask=np.ones((5, 6), np.uint8), **inputs)


def test_runtime_statuses_raise_with_the_runtime_message():
    rng = np.random.default_rng(6)
    inputs = core_inputs(rng, 2, 3, 4, [4, 9])  # 9 > Sk: the kernel's own value check
    e = checks.raises(attnc.InvalidValueError, lib[CORE].run, **inputs)
    assert e.status == 15 and "key_lengths" in e.message and "Sk = 4" in e.message, e.message
    assert isinstance(e, attnc.AttnError) and str(e).startswith("ATTN_ERR_INVALID_VALUE: ")
    e = checks.raises(attnc.UnknownKernelError, lib.kernel, "attn_core_nothing")
    assert "attn_core_nothing" in e.message
    e = checks.raises(attnc.AttnError, attnc.Library, LIBRARY + ".missing")
    assert e.status in (11, 16) and e.message, e


class FakeCudaArray:
    """What a PyTorch CUDA tensor shows of itself: __cuda_array_interface__ (never dereferenced
    here: no kernel in this library has a CUDA variant, so the runtime refuses it first). Each at
    its own address, 1 MiB apart, as separate allocations would be (the same address twice is
    aliasing, refused as such)."""

    allocated = 0

    def __init__(self, shape, typestr, strides=None):
        FakeCudaArray.allocated += 1
        address = 0x7F0000000000 + FakeCudaArray.allocated * 2**20
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (address, False),
                                         "strides": strides, "version": 3}


def test_cuda_arrays_go_as_device_tensors():
    rng = np.random.default_rng(7)
    inputs = core_inputs(rng, 2, 5, 6, [6, 3])
    # A CUDA q (rows padded to 20 floats) to a CPU-only kernel: the runtime says why not.
    inputs["q"] = FakeCudaArray((2, 5, 3, 16), "<f4", (5 * 3 * 20 * 4, 3 * 20 * 4, 20 * 4, 4))
    e = checks.raises(attnc.DeviceTensorError, lib[CORE].run, **inputs)
    assert e.status == 18 and "CUDA device pointers" in e.message and "no cuda variant" in e.message, e.message
    # bf16 as a torch.bfloat16 tensor's int16 view, and a CUDA output.
    bf16 = {name: FakeCudaArray((1, 4, 2, 16), "<i2") for name in ("q", "k", "v")}
    e = checks.raises(attnc.DeviceTensorError, lib[BF16].run, mask=np.ones((4, 4), np.uint8),
                      out=FakeCudaArray((1, 4, 2, 16), "<i2"), **bf16)
    assert e.status == 18, e.message
    # Checked in the binding first: dtype, shape, strides that are not whole elements.
    inputs["q"] = FakeCudaArray((2, 5, 3, 16), "<f8")
    checks.raises(attnc.DTypeError, lib[CORE].run, **inputs)
    inputs["q"] = FakeCudaArray((2, 5, 4, 16), "<f4")
    checks.raises(attnc.ShapeError, lib[CORE].run, **inputs)
    inputs["q"] = FakeCudaArray((2, 5, 3, 16), "<f4", (960, 192, 64, 6))
    e = checks.raises(attnc.AttnError, lib[CORE].run, **inputs)
    assert "not multiples" in str(e), e


checks.run(globals())
