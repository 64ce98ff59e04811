// The tokens a corpus uses most: a draft's reduced vocabulary (FR-Spec,
// Zhao et al. 2025). A large vocabulary's LM head is most of a small
// draft's work (151,936 rows of a 42M draft's 42M parameters), while a
// text's tokens come mostly from a small part of it; a head over that part
// drafts in a fraction of the time, and verification stays exact whatever
// the draft proposes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/tokenizer.h"

namespace seed::models {

// How often each token of a vocabulary occurs in a corpus.
struct TokenCounts {
  std::vector<int64_t> per_token;  // [vocab]
  int64_t total = 0;

  // The fraction of the corpus's tokens that are among `tokens`.
  double coverage(const std::vector<int64_t>& tokens) const;
};

// Counts the tokens `tokenizer` gives each file of `files`: a .jsonl file's
// every string value on each line (each string encoded on its own, so that
// keys and quoting do not count), any other file's text line by line.
// kNotFound names a missing file; kCorruption names a .jsonl file and line
// that is not JSON; kInvalidArgument a token outside `vocab` (a tokenizer
// of another model).
TokenCounts count_corpus_tokens(const Tokenizer& tokenizer, const std::vector<std::string>& files, int64_t vocab);

// The `count` most frequent tokens of `counts` (ties to the lower id),
// `always` among them whatever their counts, ascending by id.
// kInvalidArgument, naming `what` (the option that set count), unless
// `always` fits in count and count in the vocabulary.
std::vector<int64_t> most_frequent_tokens(const TokenCounts& counts, int64_t count, std::vector<int64_t> always,
                                          const std::string& what);

}  // namespace seed::models
