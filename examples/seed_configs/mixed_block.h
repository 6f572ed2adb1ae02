// mixed_block.h: the seed's mixed layer (4 heads of 128 + 8 of 64), block form: run, time, check.
#pragma once

#include <attn/spec.h>

// Runs the block spec (with head groups) on random x and weights at [B, S, d_model]; prints the
// median time and the largest error against fp64 on sampled rows; false on failure.
bool run_mixed_block(const attn::Spec &spec, int B, int S);
