#include "spec/drafters/stand/ngram_table.h"

#include <algorithm>
#include <cstdint>
#include <map>

namespace seed::spec {

size_t NgramTable::KeyHash::operator()(const Key& k) const {
  uint64_t h = 1469598103934665603ull ^ static_cast<uint64_t>(k.length);
  for (int i = 0; i < k.length; ++i) {  // FNV-1a over the tokens
    h = (h ^ static_cast<uint32_t>(k.tokens[static_cast<size_t>(i)])) * 1099511628211ull;
  }
  return static_cast<size_t>(h);
}

NgramTable::Key NgramTable::suffix(const int32_t* end, int length) {
  Key key;
  key.length = length;
  std::copy(end - length, end, key.tokens.begin());
  return key;
}

void NgramTable::merge(Entry& entry, const TopTokens& next) {
  const double k = entry.count;
  std::map<int32_t, double> merged;
  for (size_t i = 0; i < entry.next.ids.size(); ++i) merged[entry.next.ids[i]] += k / (k + 1) * entry.next.probs[i];
  for (size_t i = 0; i < next.ids.size(); ++i) merged[next.ids[i]] += 1.0 / (k + 1) * next.probs[i];
  std::vector<std::pair<int32_t, double>> ranked(merged.begin(), merged.end());
  // Most likely first, ties to the lower id (std::map gave ascending ids).
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (ranked.size() > static_cast<size_t>(kTopK)) ranked.resize(kTopK);
  entry.next.ids.clear();
  entry.next.probs.clear();
  for (const auto& [id, prob] : ranked) {
    entry.next.ids.push_back(id);
    entry.next.probs.push_back(static_cast<float>(prob));
  }
  entry.count += 1;
}

void NgramTable::add(const std::vector<int32_t>& tokens, size_t end, const TopTokens& next) {
  const int longest = static_cast<int>(std::min<size_t>(end, kMaxContext));
  std::lock_guard<std::mutex> lock(mutex_);
  for (int length = 1; length <= longest; ++length) merge(entries_[suffix(tokens.data() + end, length)], next);
}

bool NgramTable::lookup(const std::vector<int32_t>& context, Entry* out) const {
  const int longest = static_cast<int>(std::min<size_t>(context.size(), kMaxContext));
  std::lock_guard<std::mutex> lock(mutex_);
  for (int length = longest; length >= 1; --length) {
    const auto it = entries_.find(suffix(context.data() + context.size(), length));
    if (it == entries_.end()) continue;
    *out = it->second;
    return true;
  }
  return false;
}

}  // namespace seed::spec
