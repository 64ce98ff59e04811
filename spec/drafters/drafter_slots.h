// DrafterSlots: a drafter's state per slot, kept alike by every drafter:
// start() sets a slot's state (afresh if it ran), propose() and advance()
// look it up, finish() drops it; SlotDrafter, the drafter that keeps it.
// Not thread-safe (the drafter's one caller).
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "models/base/error.h"
#include "spec/api/drafter.h"

namespace seed::spec {

template <typename Slot>
class DrafterSlots {
 public:
  // `drafter` names the drafter in errors ("lookup drafter"); a literal.
  explicit DrafterSlots(const char* drafter) : drafter_(drafter) {}

  // Sets the state of `slot`, started on `tokens`; throws kInvalidArgument
  // when there are none.
  Slot& start(uint64_t slot, const std::vector<int32_t>& tokens, Slot state) {
    SEED_CHECK(!tokens.empty(), kInvalidArgument) << drafter_ << ": slot " << slot << " started with no tokens";
    return slots_.insert_or_assign(slot, std::move(state)).first->second;
  }
  // Throws kInvalidArgument when `slot` was not started.
  Slot& at(uint64_t slot) {
    const auto it = slots_.find(slot);
    SEED_CHECK(it != slots_.end(), kInvalidArgument) << drafter_ << ": slot " << slot << " was not started";
    return it->second;
  }
  // Null when `slot` is not started.
  Slot* find(uint64_t slot) {
    const auto it = slots_.find(slot);
    return it == slots_.end() ? nullptr : &it->second;
  }
  void erase(uint64_t slot) { slots_.erase(slot); }
  const char* drafter() const { return drafter_; }

 private:
  const char* drafter_;
  std::map<uint64_t, Slot> slots_;
};

// A drafter whose per-slot state is a `Slot`, dropped by finish().
template <typename Slot>
class SlotDrafter : public Drafter {
 public:
  void finish(uint64_t slot) override { slots_.erase(slot); }

 protected:
  // `name` names the drafter in errors (a literal).
  explicit SlotDrafter(const char* name) : slots_(name) {}

  DrafterSlots<Slot> slots_;
};

}  // namespace seed::spec
