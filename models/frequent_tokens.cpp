#include "models/frequent_tokens.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "models/base/error.h"

namespace seed::models {

namespace {

// Adds the tokens of `text` to `counts`; `where` names the text in errors.
void count_text(const Tokenizer& tokenizer, std::string_view text, TokenCounts& counts, const std::string& where) {
  const auto vocab = static_cast<int64_t>(counts.per_token.size());
  for (const int32_t token : tokenizer.encode(text, /*add_bos=*/false)) {
    SEED_CHECK(token >= 0 && token < vocab, kInvalidArgument)
        << where << ": the tokenizer gives token " << token << ", outside the model's vocabulary of " << vocab
        << "; count with the model's own tokenizer";
    ++counts.per_token[static_cast<size_t>(token)];
    ++counts.total;
  }
}

// Every string value within `value`, depth first.
void count_strings(const Tokenizer& tokenizer, const nlohmann::json& value, TokenCounts& counts,
                   const std::string& where) {
  if (value.is_string()) {
    count_text(tokenizer, value.get_ref<const std::string&>(), counts, where);
  } else if (value.is_structured()) {
    for (const nlohmann::json& item : value) count_strings(tokenizer, item, counts, where);
  }
}

}  // namespace

double TokenCounts::coverage(const std::vector<int64_t>& tokens) const {
  if (total == 0) return 0.0;
  int64_t covered = 0;
  for (const int64_t t : tokens) covered += per_token[static_cast<size_t>(t)];
  return static_cast<double>(covered) / static_cast<double>(total);
}

TokenCounts count_corpus_tokens(const Tokenizer& tokenizer, const std::vector<std::string>& files, int64_t vocab) {
  TokenCounts counts;
  counts.per_token.assign(static_cast<size_t>(vocab), 0);
  for (const std::string& file : files) {
    std::ifstream in(file);
    SEED_CHECK(in.good(), kNotFound) << file << ": cannot open the corpus file";
    const bool jsonl = std::filesystem::path(file).extension() == ".jsonl";
    std::string line;
    for (int64_t number = 1; std::getline(in, line); ++number) {
      const std::string where = file + ":" + std::to_string(number);
      if (!jsonl) {
        count_text(tokenizer, line + "\n", counts, where);
        continue;
      }
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const nlohmann::json value = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      SEED_CHECK(!value.is_discarded(), kCorruption) << where << ": not a JSON value (a .jsonl file holds one a line)";
      count_strings(tokenizer, value, counts, where);
    }
  }
  return counts;
}

std::vector<int64_t> most_frequent_tokens(const TokenCounts& counts, int64_t count, std::vector<int64_t> always,
                                          const std::string& what) {
  const auto vocab = static_cast<int64_t>(counts.per_token.size());
  std::sort(always.begin(), always.end());
  always.erase(std::unique(always.begin(), always.end()), always.end());
  SEED_CHECK(count >= static_cast<int64_t>(always.size()) && count <= vocab, kInvalidArgument)
      << what << " is " << count << "; it must be in [" << always.size() << ", " << vocab
      << "]: the vocabulary's size at most, and room for the " << always.size()
      << " tokens always kept (the model's bos, eos and added tokens)";
  std::vector<bool> taken(static_cast<size_t>(vocab), false);
  for (const int64_t t : always) {
    SEED_CHECK(t >= 0 && t < vocab, kInvalidArgument) << "token " << t << " is outside the vocabulary of " << vocab;
    taken[static_cast<size_t>(t)] = true;
  }
  std::vector<int64_t> order(static_cast<size_t>(vocab));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return counts.per_token[static_cast<size_t>(a)] > counts.per_token[static_cast<size_t>(b)];
  });
  std::vector<int64_t> out = always;
  for (size_t i = 0; i < order.size() && static_cast<int64_t>(out.size()) < count; ++i) {
    if (!taken[static_cast<size_t>(order[i])]) out.push_back(order[i]);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace seed::models
