// GroupTables: one drafting table per request group (GenRequest::group),
// created on first use and kept until the group ends (Engine::end_group),
// so that every request of a problem -- every branch and trajectory of the
// search, on whichever drafter of the engine -- drafts from and adds to the
// same table, and a long run holds the tables of the problems in flight
// only. STAND's n-gram tables (NgramStore) and ADED's adaptive tri-grams
// (TrigramStore) are kept so. Owned jointly (shared_ptr) by the drafters of
// one engine. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

namespace seed::spec {

template <typename Table>
class GroupTables {
 public:
  // `make` gives a new group's table.
  explicit GroupTables(std::function<std::shared_ptr<Table>()> make) : make_(std::move(make)) {}

  // The table of `group`, created by `make` on first use; lives until
  // drop(group), or as long as the returned pointer.
  std::shared_ptr<Table> table(uint64_t group) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::shared_ptr<Table>& t = tables_[group];
    if (!t) t = make_();
    return t;
  }
  // Lets go of `group`'s table (its slots still drafting keep it until they
  // finish); a later table(group) starts afresh. Unknown groups are ignored.
  void drop(uint64_t group) {
    std::shared_ptr<Table> dropped;  // freed outside the lock
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = tables_.find(group);
    if (it == tables_.end()) return;
    dropped = std::move(it->second);
    tables_.erase(it);
  }

 private:
  std::function<std::shared_ptr<Table>()> make_;
  std::mutex mutex_;  // guards tables_
  std::map<uint64_t, std::shared_ptr<Table>> tables_;
};

}  // namespace seed::spec
