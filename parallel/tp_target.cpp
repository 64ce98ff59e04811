#include "parallel/tp_target.h"

#include <ATen/ATen.h>

#include <cstring>

#include "models/error.h"
#include "parallel/wire.h"

namespace seed::parallel {

namespace {

// Rank 0's `bytes` on every rank of `group`: the length, then the bytes.
std::vector<uint8_t> broadcast_bytes(Communicator& group, const std::vector<uint8_t>& bytes) {
  at::Tensor length = at::full({1}, static_cast<int64_t>(bytes.size()), at::kLong);
  group.broadcast(length, 0);
  at::Tensor data = at::empty({length.item<int64_t>()}, at::kByte);
  if (group.rank() == 0 && !bytes.empty()) std::memcpy(data.data_ptr(), bytes.data(), bytes.size());
  group.broadcast(data, 0);
  const uint8_t* begin = data.data_ptr<uint8_t>();
  return std::vector<uint8_t>(begin, begin + data.numel());
}

spec::TargetSettings target_settings(const spec::DraftSettings& s) { return {s.sampling, s.seed, s.stream}; }

}  // namespace

TpLeaderTarget::TpLeaderTarget(std::unique_ptr<spec::Target> local, Communicator* control)
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

void serve_tp_target(spec::Target& local, Communicator& control, int leader_rank) {
  while (true) {
    const wire::Message message = wire::decode(broadcast_bytes(control, {}), leader_rank);
    try {
      if (const auto* start = std::get_if<wire::StartMessage>(&message)) {
        local.start(start->slot, start->tokens, target_settings(start->settings));
      } else if (const auto* verify = std::get_if<wire::VerifyMessage>(&message)) {
        std::vector<spec::VerifyItem> items;
        for (const wire::ProposalMessage& item : verify->items) items.push_back({item.slot, &item.draft});
        local.verify(items);
      } else if (const auto* finish = std::get_if<wire::FinishMessage>(&message)) {
        local.finish(finish->slot);
      } else if (std::holds_alternative<wire::ShutdownMessage>(message)) {
        return;
      } else {
        SEED_FAIL(kCorruption) << "the tp group leader (rank " << leader_rank << ") sent a "
                               << wire::message_name(message) << " message, which a target does not take";
      }
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kCorruption) throw;
      // The leader's replay of this call threw the same error to its caller.
    }
  }
}

}  // namespace seed::parallel
