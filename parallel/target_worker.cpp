#include "parallel/target_worker.h"

#include <cstdint>
#include <map>
#include <string>

#include "models/base/error.h"
#include "parallel/blocking_messages.h"
#include "parallel/rank_layout.h"
#include "parallel/wire.h"

namespace seed::parallel {

namespace {

// The verdicts of `request`, or the error that stops it.
// `reported`: the target's prefill totals as of the last reply.
wire::Message verify(TpLeaderTarget& target, const wire::VerifyMessage& request,
                     std::map<uint64_t, std::string>& failed, spec::PrefillStats& reported) {
  std::vector<spec::VerifyItem> items;
  for (const wire::SlotDraft& item : request.items) {
    const auto it = failed.find(item.slot);
    if (it != failed.end()) {
      wire::ErrorMessage error{it->second};
      failed.erase(it);
      return error;
    }
    items.push_back({item.slot, &item.draft});
  }
  try {
    // Each engine's drafters read their own number of the target's top
    // entries (STAND: 10, the others: none).
    target.set_distribution_top_k(request.target_top_k);
    std::vector<spec::Verdict> verdicts = target.verify(items);
    wire::VerdictsMessage reply;
    for (size_t i = 0; i < items.size(); ++i) reply.items.push_back({items[i].slot, std::move(verdicts[i])});
    // What the starts and verifies since the last reply added: the
    // coordinator's engines come and go while this target's counters live on.
    const spec::PrefillStats now = target.prefill_stats();
    reply.prefill = now.since(reported);
    reported = now;
    return reply;
  } catch (const std::exception& e) {
    return wire::ErrorMessage{e.what()};
  }
}

}  // namespace

WorkerStats serve_target_requests(TpLeaderTarget& target, int rank, int coordinator) {
  UsageMeter meter(rank);
  WorkerStats stats;
  std::map<uint64_t, std::string> failed;  // slot -> why its start threw
  spec::PrefillStats reported;
  while (true) {
    const wire::Message message = wire::decode(receive_message(coordinator, kTargetRequestTag), coordinator);
    stats.messages += 1;
    if (std::holds_alternative<wire::ShutdownMessage>(message)) {
      stats.usage = meter.now();
      send_message(coordinator, kTargetReplyTag, wire::encode(wire::UsageMessage{target.group_usage(stats.usage)}));
      return stats;
    }
    if (std::holds_alternative<wire::UsageRequestMessage>(message)) {
      send_message(coordinator, kTargetReplyTag, wire::encode(wire::UsageMessage{target.group_usage(meter.now())}));
      continue;
    }
    const UsageMeter::Clock::time_point t0 = UsageMeter::Clock::now();
    if (const auto* request = std::get_if<wire::VerifyMessage>(&message)) {
      send_message(coordinator, kTargetReplyTag, wire::encode(verify(target, *request, failed, reported)));
      stats.requests += 1;
    } else if (const auto* start = std::get_if<wire::StartMessage>(&message)) {
      failed.erase(start->slot);
      try {
        target.start(start->slot, start->tokens, {start->settings.sampling, start->settings.seed,
                                                  start->settings.stream});
      } catch (const std::exception& e) {
        failed[start->slot] = e.what();
      }
    } else if (const auto* finish = std::get_if<wire::FinishMessage>(&message)) {
      failed.erase(finish->slot);
      target.finish(finish->slot);
    } else {
      SEED_FAIL(kCorruption) << "target group leader: the coordinator (rank " << coordinator << ") sent a "
                             << wire::message_name(message) << " message, which a target does not take";
    }
    meter.add_busy(t0);
  }
}

}  // namespace seed::parallel
