#include "parallel/draft_worker.h"

#include <csignal>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/base/error.h"
#include "parallel/blocking_messages.h"
#include "parallel/rank_layout.h"
#include "parallel/wire.h"

namespace seed::parallel {

namespace {

// The slots this rank hosts, each with the drafter that drafts it, and the
// slots whose drafter threw, with why, until their next draft request.
class HostedSlots {
 public:
  explicit HostedSlots(const DrafterOfKind& drafter_of) : drafter_of_(drafter_of) {}

  // A slot restarted (a new engine, or a sequence moved back here) starts afresh.
  void start(const wire::StartMessage& m) {
    forget(m.slot);
    failed_.erase(m.slot);
    spec::Drafter& drafter = drafter_of_(m.drafter);
    warm_ups_.emplace(&drafter, drafter.graph_warm_ups());  // before its first start warms one up
    hosts_[m.slot] = &drafter;  // before start, so that a failed start is finished
    drafter.start(m.slot, m.tokens, m.settings);
  }
  void advance(const wire::VerdictMessage& m) {
    if (!failed_.count(m.slot)) host(m.slot).advance(m.slot, m.verdict);
  }
  void finish(uint64_t slot) {
    failed_.erase(slot);
    forget(slot);
  }
  void fail(uint64_t slot, const std::string& why) {
    failed_[slot] = why;
    forget(slot);
  }

  // The asks' drafts, each drafter's asks side by side (propose_batch); a
  // slot that failed earlier answers its error, once. With them, the
  // drafters' graph warm-ups since the last answer: the starts and
  // verdicts before this request are part of the time its asker measures.
  wire::ProposalMessage propose(const std::vector<spec::DraftAsk>& asks) {
    wire::ProposalMessage reply;
    reply.items.resize(asks.size());
    std::map<spec::Drafter*, std::vector<size_t>> by_drafter;  // the asks each drafter drafts, in order
    for (size_t i = 0; i < asks.size(); ++i) {
      const uint64_t slot = asks[i].slot;
      reply.items[i].slot = slot;
      const auto failed = failed_.find(slot);
      if (failed != failed_.end()) {
        reply.items[i].error = failed->second;
        failed_.erase(failed);
      } else if (!hosts_.count(slot)) {
        reply.items[i].error = "slot " + std::to_string(slot) + " was not started";
      } else {
        by_drafter[hosts_[slot]].push_back(i);
      }
    }
    for (const auto& [drafter, asked] : by_drafter) {
      std::vector<spec::DraftAsk> batch;
      for (const size_t i : asked) batch.push_back(asks[i]);
      std::vector<spec::DraftResult> results(batch.size());
      try {
        results = drafter->propose_batch(batch);
      } catch (...) {
        for (spec::DraftResult& result : results) result.error = std::current_exception();
      }
      for (size_t j = 0; j < asked.size(); ++j) {
        wire::ProposalMessage::Item& item = reply.items[asked[j]];
        if (!results[j].error) {
          item.draft = std::move(results[j].draft);
          continue;
        }
        try {
          std::rethrow_exception(results[j].error);
        } catch (const std::exception& e) {
          item.error = e.what();
        }
        forget(item.slot);
      }
    }
    for (auto& [drafter, reported] : warm_ups_) {
      const int64_t now = drafter->graph_warm_ups();
      reply.graph_warm_ups += now - reported;
      reported = now;
    }
    return reply;
  }

 private:
  // Stops hosting `slot` (unknown slots are ignored).
  void forget(uint64_t slot) {
    const auto it = hosts_.find(slot);
    if (it == hosts_.end()) return;
    it->second->finish(slot);
    hosts_.erase(it);
  }
  // The slot's drafter; throws kInvalidArgument for a slot never started.
  spec::Drafter& host(uint64_t slot) {
    const auto it = hosts_.find(slot);
    SEED_CHECK(it != hosts_.end(), kInvalidArgument) << "draft rank: slot " << slot << " was not started";
    return *it->second;
  }

  const DrafterOfKind& drafter_of_;
  std::map<uint64_t, spec::Drafter*> hosts_;
  std::map<uint64_t, std::string> failed_;
  std::map<spec::Drafter*, int64_t> warm_ups_;  // each drafter's graph warm-ups as last answered
};

}  // namespace

WorkerStats serve_draft_requests(const DrafterOfKind& drafter_of, const LearnLesson& learn, const EndGroup& end_group,
                                 int rank, int coordinator, const DraftWorkerFault& fault) {
  UsageMeter meter(rank);
  WorkerStats stats;
  HostedSlots slots(drafter_of);
  bool answering = true;
  while (true) {
    const wire::Message message = wire::decode(receive_message(coordinator, draft_request_tag(rank)), coordinator);
    stats.messages += 1;
    if (fault.kind == DraftWorkerFault::Kind::kStopAnswering && stats.requests >= fault.after_proposals) {
      answering = false;
    }
    if (std::holds_alternative<wire::ShutdownMessage>(message)) {
      stats.usage = meter.now();
      if (answering) send_message(coordinator, draft_reply_tag(rank), wire::encode(wire::UsageMessage{{stats.usage}}));
      return stats;
    }
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
    } else if (const auto* ended = std::get_if<wire::EndGroupMessage>(&message)) {
      end_group(ended->group);
    } else if (const auto* m = std::get_if<wire::DraftMessage>(&message)) {
      send_message(coordinator, draft_reply_tag(rank), wire::encode(slots.propose(m->asks)));
      stats.requests += static_cast<int64_t>(m->asks.size());
      stats.batches += 1;
      if (fault.kind == DraftWorkerFault::Kind::kKill && stats.requests >= fault.after_proposals) std::raise(SIGKILL);
    } else {
      uint64_t slot = 0;
      try {
        if (const auto* start = std::get_if<wire::StartMessage>(&message)) {
          slot = start->slot;
          slots.start(*start);
        } else if (const auto* verdict = std::get_if<wire::VerdictMessage>(&message)) {
          slot = verdict->slot;
          slots.advance(*verdict);
        } else if (const auto* finish = std::get_if<wire::FinishMessage>(&message)) {
          slots.finish(finish->slot);
        } else {
          SEED_FAIL(kCorruption) << "draft rank " << rank << ": the coordinator (rank " << coordinator
                                 << ") sent a " << wire::message_name(message) << " message, which a drafter "
                                 << "does not take";
        }
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::kCorruption) throw;
        slots.fail(slot, e.what());
      } catch (const std::exception& e) {
        slots.fail(slot, e.what());
      }
    }
    meter.add_busy(t0);
  }
}

}  // namespace seed::parallel
