// The dual-block layout of EDD training (Zheng & Wang 2025, EDD-PCT, sec. 3.1, Eq. 3 and Figure 3a):
// which rows of the input X = [H(0..rows-1) ; E(t_0..t_{rows-1})] attend
// to which, and the block length each step uses.
//
// X holds a target's hidden states for positions 0..rows-1 (the first rows
// rows), then the embeddings of the tokens at the same positions. Blocks of
// `block` positions tile the row from position 0 (block b starts at s_b =
// b * block). The token row at position p, in block b, sees the hidden rows
// before its block (j < s_b) and the token rows of its block up to itself
// (s_b..p): as at inference, where the first token of a block is the bonus
// token, which has no hidden state yet, and the rest are drafts. It predicts
// t_{p+1}. Hidden rows are plainly causal; their outputs are not used.
//
// Thread-safety: pure functions.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace seed::models {

// allowed[i][j] (bool [2 * rows, 2 * rows], CPU): row i of X may attend to
// row j. rows >= 1, block >= 1.
at::Tensor edd_block_mask(int64_t rows, int64_t block);

// The block length of training step `step` (0-based), uniform in
// [block_min, block_max]: a pure function of (seed, step), so a resumed run
// draws the same lengths as an uninterrupted one.
int64_t edd_block_length(uint64_t seed, int64_t step, int64_t block_min, int64_t block_max);

}  // namespace seed::models
