// Training data: prompt/completion examples, tokenized and packed into
// fixed-length rows, in an order that is a pure function of (seed, epoch).
//
// An example becomes [bos] prompt completion [eos]; only the completion and
// the eos are learned (loss mask 1), so the model learns to answer prompts,
// not to write them. Examples are packed whole into rows of seq_len + 1
// tokens (inputs are row[0, seq_len), targets row[1, seq_len]); the rest of
// a row is padding with mask 0. An example longer than a row is cut to the
// row and counted in `truncated`.
//
// Packed examples share a row and attend to earlier examples of the row
// (forward_full is plainly causal, positions 0..seq_len-1). That is the
// GPT-2/Llama pre-training practice and costs little here: every example
// starts with bos, which the model learns to treat as a boundary, and RoPE
// makes attention depend on relative positions only, so an example placed
// mid-row sees the same relative geometry as one at the start. Resetting
// positions and masking across examples would need a block-diagonal mask in
// CausalLM::forward_full, for rows that are mostly a single example anyway.
//
// Thread-safety: plain values and a single-threaded cursor (TrainingData).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/tokenizer.h"

namespace seed::models {

struct Example {
  std::string prompt;
  std::string completion;
};

// Reads a JSONL file of {"prompt": str, "completion": str, ...} objects (other
// keys ignored, blank lines skipped). kNotFound if the file is missing,
// kInvalidArgument naming file:line for a line that is not such an object.
std::vector<Example> read_examples(const std::string& path);

struct TokenizedExample {
  std::vector<int32_t> tokens;  // [bos] prompt completion [eos]
  int64_t completion_begin = 0; // tokens[completion_begin..] are learned
};

// Tokenizes an example so that it matches inference, where the prompt is
// encoded alone and the model continues it: the tokens are
// encode(prompt + completion) and the completion starts after the longest
// prefix shared with encode(prompt). `boundary_merged` (may be null) is set
// when a token straddles the prompt/completion boundary (that token is then
// learned as part of the completion). Requires bos and eos ids.
TokenizedExample tokenize_example(const Tokenizer& tokenizer, const Example& example, bool* boundary_merged);

// Rows of packed examples.
struct PackedRows {
  int64_t row_length = 0;          // seq_len + 1
  std::vector<int32_t> tokens;     // [rows, row_length]
  std::vector<uint8_t> loss_mask;  // [rows, row_length]: 1 where the token is learned
  int64_t truncated = 0;           // examples cut to fit a row
  int64_t used_tokens = 0;         // tokens that are not padding

  int64_t rows() const { return row_length == 0 ? 0 : static_cast<int64_t>(tokens.size()) / row_length; }
};

// Packs examples (taken in `order`) into rows: each goes into the first of a
// few open rows with room for it (first fit over a small window, so packing
// is dense yet the order stays random); when none has room, the fullest
// open row is closed. Padding is `pad_id` with mask 0. Deterministic.
PackedRows pack_examples(const std::vector<TokenizedExample>& examples, const std::vector<int64_t>& order,
                         int64_t row_length, int32_t pad_id);

// A permutation of 0..n-1 that is a pure function of (seed, stream), the same
// on every platform (SplitMix64 + Fisher-Yates; std::shuffle is not portable).
std::vector<int64_t> shuffled_indices(int64_t n, uint64_t seed, uint64_t stream);

// Splits `examples` into (train, eval): a random `eval_fraction` of them
// (at least one if the fraction is positive), fixed by `seed`.
void split_examples(std::vector<Example> examples, double eval_fraction, uint64_t seed,
                    std::vector<Example>* train, std::vector<Example>* eval);

// How far the trainer has read: row `row` of epoch `epoch`.
struct DataPosition {
  int64_t epoch = 0;
  int64_t row = 0;
};

// The stream of training rows: epoch e packs the examples in the order
// shuffled_indices(n, seed, e), and batches take consecutive rows, running
// on into the next epoch. Seeking to a saved position reproduces the rest of
// the stream exactly (resume).
class TrainingData {
 public:
  // Throws kInvalidArgument if `examples` is empty.
  TrainingData(std::vector<TokenizedExample> examples, int64_t row_length, int32_t pad_id, uint64_t seed);

  // Appends the next `count` rows to `tokens` and `loss_mask` ([count,
  // row_length] row-major) and advances.
  void next_rows(int64_t count, std::vector<int32_t>* tokens, std::vector<uint8_t>* loss_mask);

  DataPosition position() const { return position_; }
  // Moves to `position`; kInvalidArgument if the row is past its epoch.
  void seek(DataPosition position);

  // The packing of the current epoch (for statistics).
  const PackedRows& epoch_rows() const { return rows_; }

 private:
  void pack_epoch(int64_t epoch);

  std::vector<TokenizedExample> examples_;
  int64_t row_length_;
  int32_t pad_id_;
  uint64_t seed_;
  DataPosition position_;
  PackedRows rows_;  // packing of position_.epoch
};

}  // namespace seed::models
