#include "models/prefix_table.h"

#include <algorithm>

#include "models/base/counter_rng.h"

namespace seed::models {

uint64_t PrefixTable::chain(uint64_t parent, const int32_t* tokens, int64_t count) {
  uint64_t h = mix64(parent);
  for (int64_t i = 0; i < count; ++i) h = mix64(h ^ (static_cast<uint64_t>(static_cast<uint32_t>(tokens[i])) + 1));
  return h;
}

int32_t PrefixTable::find(uint64_t parent, const int32_t* tokens, int64_t count) const {
  const auto it = entries_.find(chain(parent, tokens, count));
  if (it == entries_.end()) return -1;
  const Entry& e = it->second;
  const bool same = e.parent == parent && static_cast<int64_t>(e.tokens.size()) == count &&
                    std::equal(e.tokens.begin(), e.tokens.end(), tokens);
  return same ? e.block : -1;
}

bool PrefixTable::insert(int32_t block, uint64_t parent, const int32_t* tokens, int64_t count) {
  const uint64_t name = chain(parent, tokens, count);
  if (entries_.count(name) || names_.count(block)) return false;
  entries_.emplace(name, Entry{block, parent, std::vector<int32_t>(tokens, tokens + count)});
  names_.emplace(block, name);
  return true;
}

void PrefixTable::erase(int32_t block) {
  const auto it = names_.find(block);
  if (it == names_.end()) return;
  entries_.erase(it->second);
  names_.erase(it);
}

}  // namespace seed::models
