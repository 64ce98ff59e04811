#include "parallel/remote_drafter.h"

#include <cstdint>
#include <exception>
#include <string>

#include "models/base/error.h"
#include "parallel/rank_layout.h"
#include "parallel/wire.h"

namespace seed::parallel {

RemoteDrafter::RemoteDrafter(MpiEventLoop& loop, int rank, std::chrono::milliseconds timeout,
                             spec::DrafterKind drafter, std::vector<int> peers)
    : loop_(loop), rank_(rank), timeout_(timeout), drafter_(drafter), peers_(std::move(peers)) {
  if (spec::lesson_context(drafter_) == 0) peers_.clear();  // no tables to share
}

void RemoteDrafter::teach(const spec::Lesson& lesson) {
  if (!spec::teaches(drafter_, lesson)) return;
  const std::vector<uint8_t> bytes = wire::encode(wire::LessonMessage{drafter_, lesson});
  for (const int peer : peers_) {
    if (loop_.available(peer)) loop_.send(peer, draft_request_tag(peer), bytes, timeout_);
  }
}

void RemoteDrafter::check_available() const {
  SEED_CHECK(loop_.available(rank_), kUnavailable) << "draft rank " << rank_
                                                   << " is unavailable (it died or stopped answering)";
}

void RemoteDrafter::start(uint64_t slot, const std::vector<int32_t>& tokens, const spec::DraftSettings& settings) {
  check_available();
  loop_.send(rank_, draft_request_tag(rank_), wire::encode(wire::StartMessage{slot, tokens, settings, drafter_}), timeout_);
  if (peers_.empty()) return;
  spec::Lesson lesson = spec::make_lesson(drafter_, settings.group, tokens, {}, {});
  teach(lesson);
  taught_[slot] = Taught{settings.group, std::move(lesson.context)};
}

spec::DraftTree RemoteDrafter::propose(uint64_t slot, int max_depth) {
  spec::DraftResult result = std::move(propose_batch({{slot, max_depth}}).front());
  if (result.error) std::rethrow_exception(result.error);
  return std::move(result.draft);
}

std::vector<spec::DraftResult> RemoteDrafter::propose_batch(const std::vector<spec::DraftAsk>& asks) {
  if (asks.empty()) return {};
  check_available();
  std::vector<uint8_t> reply;
  try {
    reply = loop_.call(rank_, draft_request_tag(rank_), wire::encode(wire::DraftMessage{asks}),
                       draft_reply_tag(rank_), timeout_);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kUnavailable) throw;
    SEED_FAIL(kUnavailable) << "draft rank " << rank_ << ": " << e.what() << " (" << timeout_.count() << " ms); "
                            << asks.size() << " drafts asked, the first for slot " << asks.front().slot;
  }
  wire::Message message = wire::decode(reply, rank_);
  auto* proposal = std::get_if<wire::ProposalMessage>(&message);
  SEED_CHECK(proposal, kCorruption) << "draft rank " << rank_ << " answered a draft request with a "
                                    << wire::message_name(message) << " message";
  SEED_CHECK(proposal->items.size() == asks.size(), kCorruption)
      << "draft rank " << rank_ << " answered " << proposal->items.size() << " of " << asks.size() << " drafts asked";
  graph_warm_ups_ += proposal->graph_warm_ups;
  std::vector<spec::DraftResult> results(asks.size());
  for (size_t i = 0; i < asks.size(); ++i) {
    wire::ProposalMessage::Item& item = proposal->items[i];
    SEED_CHECK(item.slot == asks[i].slot, kCorruption) << "draft rank " << rank_ << " answered for slot " << item.slot
                                                       << " where slot " << asks[i].slot << " was asked";
    if (item.error) {
      results[i].error = std::make_exception_ptr(Error(ErrorKind::kInternal, "draft rank " + std::to_string(rank_) +
                                                                                 ": " + *item.error));
    } else {
      results[i].draft = std::move(item.draft);
    }
  }
  return results;
}

void RemoteDrafter::advance(uint64_t slot, const spec::Verdict& verdict) {
  // The peers learn the verdict even if this drafter's rank is lost now.
  const auto it = taught_.find(slot);
  if (it != taught_.end()) {
    Taught& t = it->second;
    teach(spec::make_lesson(drafter_, t.group, t.tail, verdict.tokens, verdict.target_top));
    t.tail.insert(t.tail.end(), verdict.tokens.begin(), verdict.tokens.end());
    const size_t keep = spec::lesson_context(drafter_);
    if (t.tail.size() > keep) t.tail.erase(t.tail.begin(), t.tail.end() - static_cast<std::ptrdiff_t>(keep));
  }
  check_available();
  loop_.send(rank_, draft_request_tag(rank_), wire::encode(wire::VerdictMessage{slot, verdict}), timeout_);
}

void RemoteDrafter::end_group(uint64_t group) noexcept {
  // After the group's last generate() returned: its verdicts' lessons were
  // all handed to the loop before this, and reach each peer before it.
  if (spec::lesson_context(drafter_) == 0 || !loop_.available(rank_)) return;  // no tables there
  loop_.send(rank_, draft_request_tag(rank_), wire::encode(wire::EndGroupMessage{group}), timeout_);
}

void RemoteDrafter::finish(uint64_t slot) {
  taught_.erase(slot);
  if (!loop_.available(rank_)) return;  // its state died with it
  loop_.send(rank_, draft_request_tag(rank_), wire::encode(wire::FinishMessage{slot}), timeout_);
}

}  // namespace seed::parallel
