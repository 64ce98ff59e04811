#include "parallel/remote_target.h"

#include <cstdint>

#include "models/base/error.h"
#include "parallel/rank_layout.h"
#include "parallel/wire.h"

namespace seed::parallel {

RemoteTarget::RemoteTarget(MpiEventLoop& loop, int leader, int64_t vocab_size, int64_t max_positions,
                           std::chrono::milliseconds timeout, int target_top_k)
    : loop_(loop),
      leader_(leader),
      vocab_size_(vocab_size),
      max_positions_(max_positions),
      timeout_(timeout),
      target_top_k_(target_top_k) {}

RemoteTarget::~RemoteTarget() {
  while (!slots_.empty()) finish(slots_.begin()->first);
}

void RemoteTarget::check_available() const {
  SEED_CHECK(loop_.available(leader_), kUnavailable)
      << "the target group's leader, rank " << leader_ << ", is unavailable (it died or stopped answering); "
      << "no target is left to verify drafts";
}

const RemoteTarget::Slot& RemoteTarget::slot_state(uint64_t slot) const {
  const auto it = slots_.find(slot);
  SEED_CHECK(it != slots_.end(), kInvalidArgument) << "target: slot " << slot << " was not started";
  return it->second;
}

void RemoteTarget::start(uint64_t slot, const std::vector<int32_t>& prompt, const spec::TargetSettings& settings) {
  SEED_CHECK(!prompt.empty(), kInvalidArgument) << "target: slot " << slot << " started with an empty prompt";
  check_available();
  wire::StartMessage message{slot, prompt, {}};
  message.settings.sampling = settings.sampling;
  message.settings.seed = settings.seed;
  message.settings.stream = settings.stream;
  loop_.send(leader_, kTargetRequestTag, wire::encode(message), timeout_);
  slots_[slot] = Slot{0, static_cast<int64_t>(prompt.size())};
}

int64_t RemoteTarget::room(uint64_t slot) const {
  const Slot& s = slot_state(slot);
  const int64_t free = max_positions_ - s.length - s.pending;
  return free < 0 ? -1 : free;
}

std::vector<spec::Verdict> RemoteTarget::verify(const std::vector<spec::VerifyItem>& items) {
  wire::VerifyMessage request;
  request.target_top_k = target_top_k_;
  std::chrono::milliseconds timeout = timeout_;
  for (const spec::VerifyItem& item : items) {
    SEED_CHECK(item.draft != nullptr, kInvalidArgument) << "target: slot " << item.slot << " has no draft";
    if (slot_state(item.slot).length == 0) timeout = kPrefillTimeoutFactor * timeout_;
    request.items.push_back({item.slot, *item.draft});
  }
  check_available();
  std::vector<uint8_t> reply;
  try {
    reply = loop_.call(leader_, kTargetRequestTag, wire::encode(request), kTargetReplyTag, timeout);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kUnavailable) throw;
    SEED_FAIL(kUnavailable) << "target group leader rank " << leader_ << ": " << e.what() << " ("
                            << timeout.count() << " ms); no target is left to verify drafts";
  }
  wire::Message message = wire::decode(reply, leader_);
  if (auto* error = std::get_if<wire::ErrorMessage>(&message)) {
    SEED_FAIL(kInternal) << "target group leader rank " << leader_ << ": " << error->text;
  }
  auto* verdicts = std::get_if<wire::VerdictsMessage>(&message);
  SEED_CHECK(verdicts, kCorruption) << "target group leader rank " << leader_ << " answered a verify request "
                                    << "with a " << wire::message_name(message) << " message";
  SEED_CHECK(verdicts->items.size() == items.size(), kCorruption)
      << "target group leader rank " << leader_ << " sent " << verdicts->items.size() << " verdicts for "
      << items.size() << " items";
  std::vector<spec::Verdict> out;
  for (size_t i = 0; i < items.size(); ++i) {
    wire::VerdictMessage& v = verdicts->items[i];
    SEED_CHECK(v.slot == items[i].slot, kCorruption) << "target group leader rank " << leader_ << " answered for "
                                                     << "slot " << v.slot << ", expected slot " << items[i].slot;
    // As ModelTarget: the forward cached the pending tokens and the
    // accepted path; the bonus token is pending.
    Slot& s = slots_.at(v.slot);
    s.length += s.pending + static_cast<int64_t>(v.verdict.accepted.size());
    s.pending = 1;
    out.push_back(std::move(v.verdict));
  }
  prefill_ += verdicts->prefill;
  return out;
}

void RemoteTarget::finish(uint64_t slot) {
  if (slots_.erase(slot) == 0) return;
  if (!loop_.available(leader_)) return;  // its caches died with it
  loop_.send(leader_, kTargetRequestTag, wire::encode(wire::FinishMessage{slot}), timeout_);
}

}  // namespace seed::parallel
