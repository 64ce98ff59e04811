#include "parallel/draft_worker.h"

#include <csignal>
#include <cstdint>
#include <map>
#include <string>

#include "models/base/error.h"
#include "parallel/blocking_messages.h"
#include "parallel/rank_layout.h"
#include "parallel/wire.h"

namespace seed::parallel {

WorkerStats serve_draft_requests(const DrafterOfKind& drafter_of, const LearnLesson& learn, int rank,
                                 int coordinator, const DraftWorkerFault& fault) {
  UsageMeter meter(rank);
  WorkerStats stats;
  std::map<uint64_t, std::string> failed;  // slot -> why its drafter call threw
  std::map<uint64_t, spec::Drafter*> hosts;  // slot -> the drafter that hosts it
  // Stops hosting `slot` (unknown slots are ignored).
  const auto forget = [&hosts](uint64_t slot) {
    const auto it = hosts.find(slot);
    if (it == hosts.end()) return;
    it->second->finish(slot);
    hosts.erase(it);
  };
  // The slot's drafter; throws kInvalidArgument for a slot never started.
  const auto host = [&hosts](uint64_t slot) -> spec::Drafter& {
    const auto it = hosts.find(slot);
    SEED_CHECK(it != hosts.end(), kInvalidArgument) << "draft rank: slot " << slot << " was not started";
    return *it->second;
  };
  bool answering = true;
  while (true) {
    const wire::Message message = wire::decode(receive_message(coordinator, draft_request_tag(rank)), coordinator);
    stats.messages += 1;
    if (std::holds_alternative<wire::ShutdownMessage>(message)) break;
    if (!answering) continue;
    if (std::holds_alternative<wire::UsageRequestMessage>(message)) {
      send_message(coordinator, draft_reply_tag(rank), wire::encode(wire::UsageMessage{{meter.now()}}));
      continue;
    }
    const UsageMeter::Clock::time_point t0 = UsageMeter::Clock::now();
    if (const auto* lesson = std::get_if<wire::LessonMessage>(&message)) {
      // Between drafts, on this thread: the tables are never written while
      // a proposal reads them. What it throws belongs to no slot: the
      // caller reports it.
      learn(lesson->drafter, lesson->lesson);
    } else if (const auto* m = std::get_if<wire::DraftMessage>(&message)) {
      wire::Message reply = wire::ErrorMessage{};
      const auto it = failed.find(m->slot);
      if (it != failed.end()) {
        reply = wire::ErrorMessage{it->second};
        failed.erase(it);
      } else {
        try {
          reply = wire::ProposalMessage{m->slot, host(m->slot).propose(m->slot, m->max_depth)};
        } catch (const std::exception& e) {
          reply = wire::ErrorMessage{e.what()};
          forget(m->slot);
        }
      }
      send_message(coordinator, draft_reply_tag(rank), wire::encode(reply));
      stats.requests += 1;
      if (fault.kind != DraftWorkerFault::Kind::kNone && stats.requests >= fault.after_proposals) {
        if (fault.kind == DraftWorkerFault::Kind::kKill) std::raise(SIGKILL);
        answering = false;
      }
    } else {
      uint64_t slot = 0;
      try {
        if (const auto* start_message = std::get_if<wire::StartMessage>(&message)) {
          slot = start_message->slot;
          // A slot restarted (a new engine, or a sequence moved back here) starts afresh.
          forget(slot);
          failed.erase(slot);
          spec::Drafter& drafter = drafter_of(start_message->drafter);
          hosts[slot] = &drafter;  // before start, so that a failed start is finished
          drafter.start(slot, start_message->tokens, start_message->settings);
        } else if (const auto* verdict = std::get_if<wire::VerdictMessage>(&message)) {
          slot = verdict->slot;
          if (!failed.count(slot)) host(slot).advance(slot, verdict->verdict);
        } else if (const auto* finish = std::get_if<wire::FinishMessage>(&message)) {
          slot = finish->slot;
          failed.erase(slot);
          forget(slot);
        } else {
          SEED_FAIL(kCorruption) << "draft rank " << rank << ": the coordinator (rank " << coordinator
                                 << ") sent a " << wire::message_name(message) << " message, which a drafter "
                                 << "does not take";
        }
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::kCorruption) throw;
        failed[slot] = e.what();
        forget(slot);
      } catch (const std::exception& e) {
        failed[slot] = e.what();
        forget(slot);
      }
    }
    meter.add_busy(t0);
  }
  stats.usage = meter.now();
  return stats;
}

}  // namespace seed::parallel
