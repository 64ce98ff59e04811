#include "models/hf_tokenizer/bpe_model.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <queue>

#include "models/base/error.h"
#include "models/hf_tokenizer/json_read.h"
#include "models/hf_tokenizer/utf8.h"

namespace seed::models::hf {
namespace {

using json = nlohmann::json;

// Words up to this many bytes are cached; the cache is emptied when it holds
// this many words (a cheap bound on memory that keeps the common words hot).
constexpr size_t kMaxCachedWordBytes = 256;
constexpr size_t kCacheCapacity = 1 << 16;

std::pair<std::string, std::string> parse_merge(const json& merge, const Field& field) {
  if (merge.is_string()) {
    const std::string text = merge.get<std::string>();
    const size_t space = text.find(' ');
    SEED_CHECK(space != std::string::npos && space > 0 && space + 1 < text.size() &&
                   text.find(' ', space + 1) == std::string::npos,
               kInvalidArgument)
        << field.str() << " must be two tokens separated by one space, not \"" << text << "\"";
    return {text.substr(0, space), text.substr(space + 1)};
  }
  SEED_CHECK(merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string(), kInvalidArgument)
      << field.str() << " must be \"a b\" or [\"a\", \"b\"]";
  return {merge[0].get<std::string>(), merge[1].get<std::string>()};
}

}  // namespace

BpeModel::BpeModel(const json& value, const Field& field) {
  const json& vocab = read_member(value, "vocab", field);
  SEED_CHECK(vocab.is_object(), kInvalidArgument) << (field / "vocab").str() << " must be an object of token: id";
  int32_t max_id = -1;
  vocab_.reserve(vocab.size());
  for (const auto& [token, id] : vocab.items()) {
    SEED_CHECK(id.is_number_integer() && id.get<int64_t>() >= 0 && id.get<int64_t>() < kMaxTokenId, kInvalidArgument)
        << (field / "vocab").str() << ": the id of \"" << token << "\" must be an integer in [0, " << kMaxTokenId
        << ")";
    vocab_.emplace(token, static_cast<int32_t>(id.get<int64_t>()));
    max_id = std::max(max_id, static_cast<int32_t>(id.get<int64_t>()));
  }
  tokens_.resize(static_cast<size_t>(max_id + 1));
  for (const auto& [token, id] : vocab_) tokens_[id] = token;

  const json& merges = read_array(value, "merges", field);
  merges_.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const Field merge_field = (field / "merges")[i];
    const auto [left, right] = parse_merge(merges[i], merge_field);
    const auto find = [&](const std::string& token) {
      const auto it = vocab_.find(token);
      SEED_CHECK(it != vocab_.end(), kInvalidArgument)
          << merge_field.str() << ": \"" << token << "\" is not in " << (field / "vocab").path;
      return it->second;
    };
    const int32_t left_id = find(left), right_id = find(right), result_id = find(left + right);
    merges_[pair_key(left_id, right_id)] = Merge{static_cast<int32_t>(i), result_id};  // a repeated pair keeps its last rank, as in the Rust crate
  }

  const std::string unk = read_string(value, "unk_token", field, "");
  if (!unk.empty()) {
    const auto it = vocab_.find(unk);
    SEED_CHECK(it != vocab_.end(), kInvalidArgument) << (field / "unk_token").str() << ": \"" << unk << "\" is not in the vocab";
    unk_id_ = it->second;
  }
  fuse_unk_ = read_bool(value, "fuse_unk", field, false);
  byte_fallback_ = read_bool(value, "byte_fallback", field, false);
  ignore_merges_ = read_bool(value, "ignore_merges", field, false);
  continuing_subword_prefix_ = read_string(value, "continuing_subword_prefix", field, "");
  end_of_word_suffix_ = read_string(value, "end_of_word_suffix", field, "");
  SEED_CHECK(read_string(value, "type", field, "BPE") == "BPE", kInvalidArgument)
      << (field / "type").str() << ": model type '" << read_string(value, "type", field)
      << "' is not supported (seed reads BPE)";
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    const auto it = vocab_.find(name);
    byte_ids_[b] = it == vocab_.end() ? -1 : it->second;
  }
}

std::optional<int32_t> BpeModel::token_to_id(std::string_view token) const {
  const auto it = vocab_.find(std::string(token));
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* BpeModel::id_to_token(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= tokens_.size() || tokens_[id].empty()) return nullptr;
  return &tokens_[id];
}

std::vector<int32_t> BpeModel::initial_symbols(std::string_view word) const {
  std::vector<int32_t> symbols;
  symbols.reserve(word.size());
  bool previous_unk = false;
  std::string key;
  for (size_t pos = 0; pos < word.size();) {
    const size_t start = pos;
    pos += utf8_char_length(static_cast<unsigned char>(word[pos]));
    pos = std::min(pos, word.size());
    const std::string_view ch = word.substr(start, pos - start);
    key.clear();
    if (start > 0) key += continuing_subword_prefix_;
    key += ch;
    if (pos == word.size()) key += end_of_word_suffix_;
    if (const auto it = vocab_.find(key); it != vocab_.end()) {
      symbols.push_back(it->second);
      previous_unk = false;
      continue;
    }
    if (byte_fallback_) {
      bool all = true;
      for (const char c : ch) all = all && byte_ids_[static_cast<unsigned char>(c)] >= 0;
      if (all) {
        for (const char c : ch) symbols.push_back(byte_ids_[static_cast<unsigned char>(c)]);
        previous_unk = false;
        continue;
      }
    }
    if (unk_id_) {
      if (!(fuse_unk_ && previous_unk)) symbols.push_back(*unk_id_);
      previous_unk = true;
    }
  }
  return symbols;
}

// Rust tokenizers' Word::merge_all: a heap of candidate merges ordered by
// (rank, position); a popped candidate is applied only if both symbols are
// still there and unchanged.
void BpeModel::merge_all(std::vector<int32_t>* symbols) const {
  const int n = static_cast<int>(symbols->size());
  if (n < 2) return;
  std::vector<int32_t>& id = *symbols;
  std::vector<int> prev(n), next(n);
  std::vector<bool> alive(n, true);
  for (int i = 0; i < n; ++i) {
    prev[i] = i - 1;
    next[i] = i + 1 < n ? i + 1 : -1;
  }
  struct Candidate {
    int32_t rank;
    int pos;
    int32_t left, right;  // the ids this candidate merges, to detect stale entries
    bool operator>(const Candidate& other) const {
      return rank != other.rank ? rank > other.rank : pos > other.pos;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  const auto push = [&](int pos) {
    if (pos < 0 || next[pos] < 0) return;
    const auto it = merges_.find(pair_key(id[pos], id[next[pos]]));
    if (it != merges_.end()) queue.push({it->second.rank, pos, id[pos], id[next[pos]]});
  };
  for (int i = 0; i + 1 < n; ++i) push(i);
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    const int right = next[top.pos];
    if (!alive[top.pos] || right < 0 || id[top.pos] != top.left || id[right] != top.right) continue;
    id[top.pos] = merges_.at(pair_key(top.left, top.right)).result;
    alive[right] = false;
    next[top.pos] = next[right];
    if (next[right] >= 0) prev[next[right]] = top.pos;
    push(prev[top.pos]);
    push(top.pos);
  }
  std::vector<int32_t> merged;
  for (int i = 0; i >= 0; i = next[i]) merged.push_back(id[i]);
  symbols->swap(merged);
}

void BpeModel::encode(std::string_view word, std::vector<int32_t>* ids) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    if (const auto it = vocab_.find(std::string(word)); it != vocab_.end()) {
      ids->push_back(it->second);
      return;
    }
  }
  const bool cacheable = word.size() <= kMaxCachedWordBytes;
  std::string key;
  if (cacheable) {
    key.assign(word);
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (const auto it = cache_.find(key); it != cache_.end()) {
      ids->insert(ids->end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> symbols = initial_symbols(word);
  merge_all(&symbols);
  ids->insert(ids->end(), symbols.begin(), symbols.end());
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (cache_.size() >= kCacheCapacity) cache_.clear();
    cache_.emplace(std::move(key), std::move(symbols));
  }
}

}  // namespace seed::models::hf
