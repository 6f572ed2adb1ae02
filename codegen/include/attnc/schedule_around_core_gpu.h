// attnc/schedule_around_core_gpu.h: GPU schedules of the stages around the core (RoPE, append, probs).
#pragma once

#include <Halide.h>

#include "attnc/probs_output.h"

namespace attnc {

// x(d, g, j, b), pure (rotated keys, the append's new cache slots): computed at the root on the
// GPU, a thread per element of rows_per_block rows of one head, blocks over (head, rows, batch).
void schedule_head_rows_gpu(Halide::Func rows);

// A pure 2-D table (RoPE's angles over (pair, position)) at the root on the GPU: 16 x 16 threads.
void schedule_table_gpu(Halide::Func table);

// The probs output on the GPU: a thread per (key, query row), its scaled q . k summed in the
// thread, blocks of probs_keys x probs_rows (key, row) over every head and batch element.
void schedule_probs_gpu(ProbsFuncs &probs);

}  // namespace attnc
