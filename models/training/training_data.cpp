#include "models/training/training_data.h"

#include <cstdint>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <utility>

#include "models/base/error.h"

namespace seed::models {
namespace {

// Open rows the packer may still add to. More rows pack denser but hold
// examples back from their shuffled place longer; a handful lets first fit
// find a gap for most examples when they are much shorter than a row.
constexpr size_t kOpenRows = 8;
// Stream of shuffled_indices() reserved for the eval split (epochs use 0, 1, ...).
constexpr uint64_t kEvalSplitStream = ~uint64_t{0};

uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct OpenRow {
  std::vector<int32_t> tokens;
  std::vector<uint8_t> mask;
};

}  // namespace

std::vector<Example> read_examples(const std::string& path) {
  std::error_code ec;
  SEED_CHECK(std::filesystem::is_regular_file(path, ec), kNotFound) << "corpus file " << path << " does not exist";
  std::ifstream in(path);
  SEED_CHECK(in.good(), kIo) << "cannot open corpus file " << path;
  std::vector<Example> examples;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(number);
    nlohmann::json value;
    try {
      value = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      SEED_FAIL(kInvalidArgument) << where << ": not valid JSON: " << e.what();
    }
    SEED_CHECK(value.is_object(), kInvalidArgument) << where << ": expected a JSON object per line";
    for (const char* key : {"prompt", "completion"}) {
      SEED_CHECK(value.contains(key) && value[key].is_string(), kInvalidArgument)
          << where << ": field '" << key << "' must be a string";
    }
    examples.push_back({value["prompt"].get<std::string>(), value["completion"].get<std::string>()});
  }
  SEED_CHECK(!in.bad(), kIo) << "error reading corpus file " << path;
  return examples;
}

TokenizedExample tokenize_example(const Tokenizer& tokenizer, const Example& example, bool* boundary_merged) {
  SEED_CHECK(tokenizer.bos_id() >= 0 && tokenizer.eos_id() >= 0, kInvalidArgument)
      << "training needs a tokenizer with bos and eos tokens";
  const std::vector<int32_t> prompt = tokenizer.encode(example.prompt, /*add_bos=*/false);
  const std::vector<int32_t> full = tokenizer.encode(example.prompt + example.completion, /*add_bos=*/false);
  size_t common = 0;
  while (common < prompt.size() && common < full.size() && prompt[common] == full[common]) ++common;
  if (boundary_merged != nullptr) *boundary_merged = common < prompt.size();
  TokenizedExample out;
  out.tokens.reserve(full.size() + 2);
  out.tokens.push_back(tokenizer.bos_id());
  out.tokens.insert(out.tokens.end(), full.begin(), full.end());
  out.tokens.push_back(tokenizer.eos_id());
  out.completion_begin = 1 + static_cast<int64_t>(common);
  return out;
}

PackedRows pack_examples(const std::vector<TokenizedExample>& examples, const std::vector<int64_t>& order,
                         int64_t row_length, int32_t pad_id) {
  SEED_CHECK(row_length > 1, kInvalidArgument) << "rows must hold at least 2 tokens";
  PackedRows out;
  out.row_length = row_length;
  std::vector<OpenRow> open;
  auto close = [&](size_t i) {
    OpenRow& row = open[i];
    out.used_tokens += static_cast<int64_t>(row.tokens.size());
    row.tokens.resize(row_length, pad_id);
    row.mask.resize(row_length, 0);
    out.tokens.insert(out.tokens.end(), row.tokens.begin(), row.tokens.end());
    out.loss_mask.insert(out.loss_mask.end(), row.mask.begin(), row.mask.end());
    open.erase(open.begin() + static_cast<std::ptrdiff_t>(i));
  };
  for (const int64_t index : order) {
    const TokenizedExample& example = examples.at(index);
    int64_t length = static_cast<int64_t>(example.tokens.size());
    if (length > row_length) {
      length = row_length;
      ++out.truncated;
    }
    size_t target = open.size();
    for (size_t i = 0; i < open.size(); ++i) {
      if (static_cast<int64_t>(open[i].tokens.size()) + length <= row_length) {
        target = i;
        break;
      }
    }
    if (target == open.size()) {
      if (open.size() == kOpenRows) {
        size_t fullest = 0;
        for (size_t i = 1; i < open.size(); ++i) {
          if (open[i].tokens.size() > open[fullest].tokens.size()) fullest = i;
        }
        close(fullest);
        target = open.size();
      }
      open.emplace_back();
    }
    OpenRow& row = open[target];
    for (int64_t i = 0; i < length; ++i) {
      row.tokens.push_back(example.tokens[i]);
      row.mask.push_back(i >= example.completion_begin ? 1 : 0);
    }
  }
  while (!open.empty()) close(0);
  return out;
}

std::vector<int64_t> shuffled_indices(int64_t n, uint64_t seed, uint64_t stream) {
  std::vector<int64_t> order(n);
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  uint64_t mix = stream;
  uint64_t state = seed ^ splitmix64(&mix);
  for (int64_t i = n - 1; i > 0; --i) {
    // Lemire's multiply-shift maps 64 random bits onto [0, i] (bias < 2^-40 here).
    const auto j = static_cast<int64_t>((static_cast<unsigned __int128>(splitmix64(&state)) *
                                         static_cast<uint64_t>(i + 1)) >> 64);
    std::swap(order[i], order[j]);
  }
  return order;
}

void split_examples(std::vector<Example> examples, double eval_fraction, uint64_t seed,
                    std::vector<Example>* train, std::vector<Example>* eval) {
  const auto n = static_cast<int64_t>(examples.size());
  int64_t held_out = static_cast<int64_t>(std::llround(eval_fraction * static_cast<double>(n)));
  if (eval_fraction > 0) held_out = std::max<int64_t>(held_out, 1);
  held_out = std::min(held_out, n);
  const std::vector<int64_t> order = shuffled_indices(n, seed, kEvalSplitStream);
  train->clear();
  eval->clear();
  // Keep corpus order within each split: the split is random, the files' order is the user's.
  std::vector<uint8_t> is_eval(n, 0);
  for (int64_t i = 0; i < held_out; ++i) is_eval[order[i]] = 1;
  for (int64_t i = 0; i < n; ++i) (is_eval[i] ? eval : train)->push_back(std::move(examples[i]));
}

TrainingData::TrainingData(std::vector<TokenizedExample> examples, int64_t row_length, int32_t pad_id,
                           uint64_t seed)
    : examples_(std::move(examples)), row_length_(row_length), pad_id_(pad_id), seed_(seed) {
  SEED_CHECK(!examples_.empty(), kInvalidArgument) << "no training examples: the corpus is empty";
  pack_epoch(0);
}

void TrainingData::pack_epoch(int64_t epoch) {
  rows_ = pack_examples(examples_, shuffled_indices(static_cast<int64_t>(examples_.size()), seed_,
                                                    static_cast<uint64_t>(epoch)),
                        row_length_, pad_id_);
  position_ = {epoch, 0};
}

void TrainingData::next_rows(int64_t count, std::vector<int32_t>* tokens, std::vector<uint8_t>* loss_mask) {
  for (int64_t i = 0; i < count; ++i) {
    if (position_.row == rows_.rows()) pack_epoch(position_.epoch + 1);
    const auto begin = position_.row * row_length_;
    tokens->insert(tokens->end(), rows_.tokens.begin() + begin, rows_.tokens.begin() + begin + row_length_);
    loss_mask->insert(loss_mask->end(), rows_.loss_mask.begin() + begin,
                      rows_.loss_mask.begin() + begin + row_length_);
    ++position_.row;
  }
}

void TrainingData::seek(DataPosition position) {
  SEED_CHECK(position.epoch >= 0, kInvalidArgument) << "data position has a negative epoch";
  if (position.epoch != position_.epoch) pack_epoch(position.epoch);
  SEED_CHECK(position.row >= 0 && position.row <= rows_.rows(), kInvalidArgument)
      << "data position row " << position.row << " is past the " << rows_.rows() << " rows of epoch "
      << position.epoch << "; was the corpus or seq_len changed since the checkpoint?";
  position_ = position;
}

}  // namespace seed::models
