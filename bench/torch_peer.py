"""PyTorch's torch.nn.functional.scaled_dot_product_attention on the CPU, as an attention peer.

Optional: prints {"skipped": ...} when torch is not installed. The [B,S,H,D] inputs are viewed as
[B,H,S,D] (no copy); the output is made contiguous [B,Sq,H,Dv] inside the timed call.
Usage: torch_peer.py IN_DIR OUT.npy none|causal THREADS WARMUP RUNS (see peer_common.py)
"""
import sys

from peer_common import PeerArgs, causal_keep, skip, time_and_report


def main():
    args = PeerArgs(sys.argv)
    try:
        import torch
    except ImportError:
        skip("torch not installed")
    if not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
        skip(f"torch {torch.__version__} has no scaled_dot_product_attention (needs 2.0)")
    torch.set_num_threads(args.threads)
    q, k, v = (torch.from_numpy(a).permute(0, 2, 1, 3) for a in args.load_qkv())
    sq, sk = q.shape[2], k.shape[2]
    # is_causal aligns top-left; the contract is bottom-right, which differs when Sq != Sk.
    mask = torch.from_numpy(causal_keep(sq, sk)) if args.causal and sq != sk else None
    is_causal = args.causal and sq == sk

    def run():
        with torch.inference_mode():
            out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal)
            return out.permute(0, 2, 1, 3).contiguous().numpy()

    time_and_report(args, run, version=f"torch {torch.__version__}")


if __name__ == "__main__":
    main()
