// NgramStore: one NgramTable per request group (GenRequest::group), created
// on first use and kept for the store's lifetime, so that every request of
// a problem -- every branch and trajectory of the search, on whichever
// drafter of the engine -- drafts from and adds to the same table.
// Owned jointly (shared_ptr) by the drafters of one engine. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "spec/drafters/stand/ngram_table.h"

namespace seed::spec {

class NgramStore {
 public:
  // The table of `group`, created empty on first use; lives as long as the
  // store or the returned pointer.
  std::shared_ptr<NgramTable> table(uint64_t group) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::shared_ptr<NgramTable>& t = tables_[group];
    if (!t) t = std::make_shared<NgramTable>();
    return t;
  }

 private:
  std::mutex mutex_;  // guards tables_
  std::map<uint64_t, std::shared_ptr<NgramTable>> tables_;
};

}  // namespace seed::spec
