"""The Python binding against what a hostile or careless caller does (issue 32): closing a library
while another thread runs one of its kernels, outputs and in-outs that share memory with other
tensors, thread counts that do not fit, outputs that cannot be written in place, and broadcast
views too large for any kernel. Usage: test_binding_safety.py LIBRARY.so (the runtime from
$ATTNC_RUNTIME)."""
import os
import resource
import subprocess
import sys
import textwrap

import numpy as np

import attnc
import checks
import reference

LIBRARY = sys.argv[1]
CORE = "attn_core_h3_kv1_d16_f32_and_causal_pad_probs"
BF16 = "attn_core_h2_kv2_d16_bf16_tensor_probs"
CACHE = "attn_core_h2_kv2_d16_f32_causal_kvc"
lib = attnc.Library(LIBRARY)


def core_inputs(rng, batch, seq_q, seq_k):
    return {
        "q": rng.standard_normal((batch, seq_q, 3, 16)).astype(np.float32),
        "k": rng.standard_normal((batch, seq_k, 1, 16)).astype(np.float32),
        "v": rng.standard_normal((batch, seq_k, 1, 16)).astype(np.float32),
        "key_lengths": np.full(batch, seq_k, dtype=np.int32),
    }


def cache_inputs(rng, batch=2, seq_q=3, smax=8, cached=(2, 4)):
    return {
        "q": rng.standard_normal((batch, seq_q, 2, 16)).astype(np.float32),
        "k_new": rng.standard_normal((batch, seq_q, 2, 16)).astype(np.float32),
        "v_new": rng.standard_normal((batch, seq_q, 2, 16)).astype(np.float32),
        "k_cache": rng.standard_normal((batch, smax, 2, 16)).astype(np.float32),
        "v_cache": rng.standard_normal((batch, smax, 2, 16)).astype(np.float32),
        "cache_seqlens": np.array(cached, dtype=np.int32),
    }


# Run in a child process, so that a crash (the SIGSEGV this guards against) fails this test only: one
# thread runs a kernel for about a second (16 causal sequences of 8192 keys) while the main thread
# closes its library mid-call.
CLOSE_DURING_RUN = textwrap.dedent("""
    import sys, threading, time
    import numpy as np
    import attnc
    lib = attnc.Library(sys.argv[1])
    kernel = lib[sys.argv[2]]
    rng = np.random.default_rng(9)
    b, s = 16, 8192
    inputs = dict(q=rng.standard_normal((b, s, 2, 16), dtype=np.float32),
                  k_new=rng.standard_normal((b, s, 2, 16), dtype=np.float32),
                  v_new=rng.standard_normal((b, s, 2, 16), dtype=np.float32),
                  k_cache=np.zeros((b, s, 2, 16), np.float32), v_cache=np.zeros((b, s, 2, 16), np.float32),
                  cache_seqlens=np.zeros(b, np.int32))
    call, outputs = kernel.bind(**inputs)
    started, times = threading.Event(), {}
    def run():
        started.set()
        times["run_start"] = time.monotonic()
        call()
        times["run_end"] = time.monotonic()
    worker = threading.Thread(target=run)
    worker.start()
    started.wait()
    time.sleep(0.05)
    times["close_start"] = time.monotonic()
    lib.close()
    times["close_end"] = time.monotonic()
    worker.join()
    try:
        call()
        print("a call after close ran")
    except attnc.InvalidArgumentError as e:
        print("after close:", e.message)
    # Row 0 of each sequence attends to key 0 alone: out is v_new's row 0 there.
    ok = np.isfinite(outputs["out"]).all() and np.array_equal(outputs["out"][:, 0], inputs["v_new"][:, 0])
    print("overlapped" if times["close_start"] < times["run_end"] else "not overlapped",
          "waited" if times["close_end"] >= times["run_end"] else "did not wait",
          "correct" if ok else "wrong", round(times["run_end"] - times["run_start"], 3))
""")


def test_close_waits_for_a_call_in_flight():
    env = dict(os.environ)
    done = subprocess.run([sys.executable, "-c", CLOSE_DURING_RUN, LIBRARY, CACHE], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("after close:") and "is closed" in lines[0], lines
    # The close began while the call ran (else this run proved nothing), and returned after it.
    assert lines[1].startswith("overlapped waited correct"), lines


def test_outputs_and_inouts_sharing_memory_are_refused():
    rng = np.random.default_rng(10)
    inputs = core_inputs(rng, 2, 4, 5)
    q_before = inputs["q"].copy()
    e = checks.raises(attnc.AliasedError, lib[CORE].run, out=inputs["q"], **inputs)
    assert e.status == 19 and e.status_name == "ATTN_ERR_ALIASED", e
    assert "output tensor 'out' shares memory with tensor 'q'" in e.message, e.message
    assert np.array_equal(inputs["q"], q_before)  # nothing written
    # Views of one buffer count: probs over the last 120 of k's 160 floats.
    buffer = rng.standard_normal(160).astype(np.float32)
    k, probs = buffer.reshape(2, 5, 1, 16), buffer[40:].reshape(2, 3, 4, 5)
    e = checks.raises(attnc.AliasedError, lib[CORE].run, probs=probs, **{**inputs, "k": k})
    assert "output tensor 'probs' shares memory with tensor 'k'" in e.message, e.message
    # k_cache and v_cache one array: the values would overwrite the keys.
    cache = cache_inputs(rng)
    cache["v_cache"] = cache["k_cache"]
    before = cache["k_cache"].copy()
    e = checks.raises(attnc.AliasedError, lib[CACHE].run, **cache)
    assert "in-out tensor 'k_cache' shares memory with tensor 'v_cache'" in e.message, e.message
    assert np.array_equal(cache["k_cache"], before)
    # Separate arrays run, and the cache call gives the reference's result.
    cache = cache_inputs(rng)
    k_cache, v_cache = cache["k_cache"].copy(), cache["v_cache"].copy()
    got = lib[CACHE].run(**cache)
    for b, cached in enumerate(cache["cache_seqlens"]):
        k_cache[b, cached:cached + 3], v_cache[b, cached:cached + 3] = cache["k_new"][b], cache["v_new"][b]
        keys = cached + 3
        keep = np.tril(np.ones((3, keys), bool), keys - 3)[None, None]
        out, _ = reference.attention(cache["q"][b:b + 1], k_cache[b:b + 1, :keys], v_cache[b:b + 1, :keys], keep,
                                     0.25)
        assert np.abs(got["out"][b] - out[0]).max() < 2e-5
    assert np.array_equal(cache["k_cache"], k_cache) and np.array_equal(cache["v_cache"], v_cache)


def test_thread_counts_are_bounded():
    kernel = lib[CORE]
    for threads in (10**12, 2**31 - 1, 257, -1):
        e = checks.raises(attnc.InvalidArgumentError, kernel.set_threads, threads)
        assert f"threads is {threads}, must be 0 (one per core) to 256" in e.message, e.message
    kernel.set_threads(256)
    kernel.set_threads(0)


def test_outputs_that_cannot_be_written_in_place_raise_stride_errors():
    rng = np.random.default_rng(11)
    inputs = core_inputs(rng, 1, 4, 4)
    read_only = np.empty((1, 4, 3, 16), np.float32)
    read_only.flags.writeable = False
    e = checks.raises(attnc.StrideError, lib[CORE].run, out=read_only, **inputs)
    assert e.status == 9 and "read-only" in e.message, e.message
    strided = np.empty((1, 4, 3, 32), np.float32)[..., ::2]
    e = checks.raises(attnc.StrideError, lib[CORE].run, out=strided, **inputs)
    assert "not C-contiguous" in e.message, e.message
    cache = cache_inputs(rng)
    cache["k_cache"].flags.writeable = False
    e = checks.raises(attnc.StrideError, lib[CACHE].run, **cache)
    assert "in-out tensor 'k_cache'" in e.message and "read-only" in e.message, e.message


def test_a_broadcast_view_too_large_for_any_kernel_is_refused_before_copying():
    # mask [B, H, Sq, Sk] with B and H broadcast: a view of 2^31 elements that costs nothing to make.
    seq_q, seq_k = 65536, 32768
    q = np.zeros((1, seq_q, 2, 16), np.uint16)
    k = v = np.zeros((1, seq_k, 2, 16), np.uint16)
    mask = np.broadcast_to(np.ones((1, 1, 1, 1), np.uint8), (1, 1, seq_q, seq_k))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    e = checks.raises(attnc.ShapeError, lib[BF16].run, q=q, k=k, v=v, mask=mask)
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert "tensor 'mask' has shape (1, 1, 65536, 32768), 2147483648 elements" in e.message, e.message
    assert grown_mib < 64, grown_mib  # no 2 GiB copy


checks.run(globals())
