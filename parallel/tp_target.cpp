#include "parallel/tp_target.h"

#include <ATen/ATen.h>
#include <cstdint>

#include <cstring>

#include "models/base/error.h"
#include "parallel/wire.h"

namespace seed::parallel {

namespace {

// Rank 0's `bytes` on every rank of `group`: the length, then the bytes.
std::vector<uint8_t> broadcast_bytes(Communicator& group, const std::vector<uint8_t>& bytes) {
  at::Tensor length = at::full({1}, static_cast<int64_t>(bytes.size()), at::kLong);
  group.broadcast_idle(length, 0);  // the peers wait here between calls
  at::Tensor data = at::empty({length.item<int64_t>()}, at::kByte);
  if (group.rank() == 0 && !bytes.empty()) std::memcpy(data.data_ptr(), bytes.data(), bytes.size());
  group.broadcast(data, 0);
  const uint8_t* begin = data.data_ptr<uint8_t>();
  return std::vector<uint8_t>(begin, begin + data.numel());
}

spec::TargetSettings target_settings(const spec::DraftSettings& s) { return {s.sampling, s.seed, s.stream}; }

// Every rank's [busy_s, wall_s, cpu_s], gathered in group rank order: [size, 3].
at::Tensor gather_usage(Communicator& group, const RankUsage& own) {
  const at::Tensor mine = at::tensor({own.busy_s, own.wall_s, own.cpu_s}, at::kDouble).reshape({1, 3});
  return group.all_gather(mine, 0);
}

}  // namespace

TpLeaderTarget::TpLeaderTarget(std::unique_ptr<spec::ModelTarget> local, Communicator* control)
    : local_(std::move(local)), control_(control) {
  SEED_CHECK(control_ && control_->rank() == 0, kInvalidArgument)
      << "a TpLeaderTarget runs on rank 0 of its group; the other ranks call serve_tp_target";
}

TpLeaderTarget::~TpLeaderTarget() { broadcast_bytes(*control_, wire::encode(wire::ShutdownMessage{})); }

int64_t TpLeaderTarget::vocab_size() const { return local_->vocab_size(); }
int64_t TpLeaderTarget::max_positions() const { return local_->max_positions(); }
int64_t TpLeaderTarget::room(uint64_t slot) const { return local_->room(slot); }

void TpLeaderTarget::start(uint64_t slot, const std::vector<int32_t>& prompt, const spec::TargetSettings& settings) {
  wire::StartMessage message{slot, prompt, {}};
  message.settings.sampling = settings.sampling;
  message.settings.seed = settings.seed;
  message.settings.stream = settings.stream;
  broadcast_bytes(*control_, wire::encode(message));
  local_->start(slot, prompt, settings);
}

std::vector<spec::Verdict> TpLeaderTarget::verify(const std::vector<spec::VerifyItem>& items) {
  wire::VerifyMessage message;
  for (const spec::VerifyItem& item : items) {
    SEED_CHECK(item.draft != nullptr, kInvalidArgument) << "target: slot " << item.slot << " has no draft";
    message.items.push_back({item.slot, *item.draft});
  }
  broadcast_bytes(*control_, wire::encode(message));
  return local_->verify(items);
}

void TpLeaderTarget::finish(uint64_t slot) {
  broadcast_bytes(*control_, wire::encode(wire::FinishMessage{slot}));
  local_->finish(slot);
}

std::vector<RankUsage> TpLeaderTarget::group_usage(const RankUsage& leader) {
  broadcast_bytes(*control_, wire::encode(wire::UsageRequestMessage{}));
  const at::Tensor all = gather_usage(*control_, leader).contiguous();
  std::vector<RankUsage> out;
  for (int64_t i = 0; i < all.size(0); ++i) {
    const double* row = all[i].data_ptr<double>();
    out.push_back({leader.rank + static_cast<int>(i), row[0], row[1], row[2]});
  }
  return out;
}

WorkerStats serve_tp_target(spec::Target& local, Communicator& control, int leader_rank) {
  UsageMeter meter(leader_rank + control.rank());
  WorkerStats stats;
  while (true) {
    const wire::Message message = wire::decode(broadcast_bytes(control, {}), leader_rank);
    stats.messages += 1;
    if (std::holds_alternative<wire::UsageRequestMessage>(message)) {
      gather_usage(control, meter.now());
      continue;
    }
    const UsageMeter::Clock::time_point t0 = UsageMeter::Clock::now();
    try {
      if (const auto* start = std::get_if<wire::StartMessage>(&message)) {
        local.start(start->slot, start->tokens, target_settings(start->settings));
      } else if (const auto* verify = std::get_if<wire::VerifyMessage>(&message)) {
        std::vector<spec::VerifyItem> items;
        for (const wire::SlotDraft& item : verify->items) items.push_back({item.slot, &item.draft});
        local.verify(items);
        stats.requests += 1;
      } else if (const auto* finish = std::get_if<wire::FinishMessage>(&message)) {
        local.finish(finish->slot);
      } else if (std::holds_alternative<wire::ShutdownMessage>(message)) {
        stats.usage = meter.now();
        return stats;
      } else {
        SEED_FAIL(kCorruption) << "the tp group leader (rank " << leader_rank << ") sent a "
                               << wire::message_name(message) << " message, which a target does not take";
      }
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kCorruption) throw;
      // The leader's replay of this call threw the same error to its caller.
    }
    meter.add_busy(t0);
  }
}

spec::PrefillStats TpLeaderTarget::prefill_stats() const { return local_->prefill_stats(); }

}  // namespace seed::parallel
