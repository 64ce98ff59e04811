#include "parallel/distributed_engine.h"

#include <cstdint>
#include <filesystem>
#include <future>
#include <map>

#include "models/causal_lm.h"
#include "models/base/error.h"
#include "parallel/nccl_communicator.h"
#include "parallel/remote_drafter.h"
#include "parallel/remote_target.h"
#include "parallel/target_worker.h"
#include "parallel/tp_target.h"
#include "parallel/wire.h"
#include "spec/drafters/drafter_registry.h"
#include "spec/drafters/lesson.h"
#include "spec/engine/model_target.h"

namespace seed::parallel {

namespace {

// A target rank's part of the group until the coordinator's shutdown. The
// group's calls go over `control` (MPI, CPU tensors); the model's
// all-reduces too on the CPU, and over NCCL, bootstrapped from `control`,
// on a GPU. The session keeps both, and with them the shard
// models.loaded_models may hold for a later run (a sweep's next point).
WorkerStats serve_target_rank(MpiSession& session, Communicator& control, const spec::EngineOptions& models) {
  SEED_CHECK(!models.target.empty(), kInvalidArgument) << "--target: a target rank needs the target model folder";
  models::LoadOptions options = spec::load_options(models);
  const c10::Device device = models::parse_device(models.device);
  options.tp_group = &control;
  if (device.is_cuda()) {
    options.tp_group = session.kept("nccl over the target group on " + models.device, [&] {
      return make_nccl_communicator(control, device.has_index() ? device.index() : 0);
    });
  }
  auto local = std::make_unique<spec::ModelTarget>(spec::load_model(models, models.target, options, "--target"),
                                                   spec::target_cache_options(models, /*caches=*/1));
  if (control.rank() != 0) return serve_tp_target(*local, control, kTargetLeaderRank);
  TpLeaderTarget leader(std::move(local), &control);  // its destructor ends the peers' loops
  return serve_target_requests(leader, session.world_rank(), /*coordinator=*/0);
}

// The tables every slot of a group shares on a draft rank, made on first
// use and dropped when the group ends: its drafters draft from them and
// lessons from other ranks teach them.
class RankTables {
 public:
  explicit RankTables(const spec::EngineOptions& models) : models_(models) {}

  std::shared_ptr<spec::NgramStore> stand() {
    if (!stand_) stand_ = std::make_shared<spec::NgramStore>();
    return stand_;
  }
  std::shared_ptr<spec::TrigramStore> aded() {
    if (!aded_) {
      aded_ = std::make_shared<spec::TrigramStore>(std::make_shared<const spec::TrigramTable>(
          models_.trigrams.empty() ? spec::TrigramTable() : spec::TrigramTable::load(models_.trigrams)));
    }
    return aded_;
  }
  void learn(spec::DrafterKind kind, const spec::Lesson& lesson) {
    if (kind == spec::DrafterKind::kStand) spec::learn(*stand()->table(lesson.group), lesson);
    if (kind == spec::DrafterKind::kAded) spec::learn(*aded()->table(lesson.group), lesson);
  }
  void end_group(uint64_t group) {
    if (stand_) stand_->drop(group);
    if (aded_) aded_->drop(group);
  }

 private:
  const spec::EngineOptions& models_;
  std::shared_ptr<spec::NgramStore> stand_;
  std::shared_ptr<spec::TrigramStore> aded_;
};

// A draft rank's drafter of `kind`, with its own resources: the draft model
// and its KV cache, or the rank's tables.
std::unique_ptr<spec::Drafter> make_rank_drafter(spec::DrafterKind kind, const spec::EngineOptions& models,
                                                 RankTables& tables) {
  spec::DrafterResources resources;
  if (kind.needs_draft_model()) {
    SEED_CHECK(!models.draft.empty(), kInvalidArgument) << "--draft: a draft rank needs a draft model folder";
    resources.draft_model = spec::load_model(models, models.draft, spec::draft_load_options(models), "--draft");
    resources.draft_cache = spec::kv_cache_options(models, /*caches=*/1);
    resources.draft_cut = models.draft_cut;
  } else if (kind == spec::DrafterKind::kStand) {
    resources.tables = tables.stand();
    resources.vocab = models::ModelConfig::from_file((std::filesystem::path(models.target) / "config.json").string())
                          .vocab_size;
    if (!models.tree.empty()) resources.tree = spec::StaticTree::load(models.tree);
  } else if (kind == spec::DrafterKind::kAded) {
    resources.trigrams = tables.aded();
  }
  return spec::make_drafter(kind, resources);
}

// Worker rank `rank`'s usage, asked on its tags: one rank's, or the target
// group's.
std::vector<RankUsage> ask_usage(MpiEventLoop& loop, int rank, int tag, int reply_tag,
                                 std::chrono::milliseconds timeout) {
  std::vector<uint8_t> reply;
  try {
    reply = loop.call(rank, tag, wire::encode(wire::UsageRequestMessage{}), reply_tag, timeout, /*counted=*/false);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kUnavailable) throw;
    return {};  // lost on the way: reported with the lost ranks
  }
  wire::Message message = wire::decode(reply, rank);
  auto* usage = std::get_if<wire::UsageMessage>(&message);
  SEED_CHECK(usage, kCorruption) << "rank " << rank << " answered a usage request with a "
                                 << wire::message_name(message) << " message";
  return std::move(usage->ranks);
}

}  // namespace

Coordinator::Coordinator(const MpiSession& session, const RankLayout& layout, std::chrono::milliseconds rank_timeout,
                         DraftTables tables)
    : layout_(layout), rank_timeout_(rank_timeout), tables_(tables), loop_(session) {
  SEED_CHECK(session.world_rank() == 0, kInternal) << "the coordinator runs on rank 0, not " << session.world_rank();
}

Coordinator::~Coordinator() { shut_down(); }

void Coordinator::on_every_worker(const std::function<void(int, int, int)>& ask) {
  std::vector<std::future<void>> asks;
  for (int rank : layout_.draft_ranks()) {
    asks.push_back(std::async(std::launch::async, ask, rank, draft_request_tag(rank), draft_reply_tag(rank)));
  }
  if (layout_.tp > 0) {
    asks.push_back(std::async(std::launch::async, ask, kTargetLeaderRank, kTargetRequestTag, kTargetReplyTag));
  }
  for (std::future<void>& a : asks) a.get();
}

void Coordinator::wait_for_workers() {
  on_every_worker([this](int rank, int tag, int reply_tag) {
    ask_usage(loop_, rank, tag, reply_tag, kLoadTimeoutFactor * rank_timeout_);  // unanswered: counted lost
  });
}

void Coordinator::shut_down() {
  if (shut_down_) return;
  shut_down_ = true;
  on_every_worker([this](int rank, int tag, int reply_tag) {
    const std::vector<uint8_t> shutdown = wire::encode(wire::ShutdownMessage{});
    if (!loop_.available(rank)) {
      loop_.send_last(rank, tag, shutdown, rank_timeout_);
      return;
    }
    try {
      loop_.call(rank, tag, shutdown, reply_tag, rank_timeout_, /*counted=*/false);
    } catch (const Error&) {
      // No answer within the rank timeout: the loop counts the rank lost.
    }
  });
}

bool Coordinator::target_lost() const { return layout_.tp > 0 && !loop_.available(kTargetLeaderRank); }

std::vector<int> Coordinator::lost_ranks() const {
  std::vector<int> lost;
  for (int rank : layout_.draft_ranks()) {
    if (!loop_.available(rank)) lost.push_back(rank);
  }
  return lost;
}

std::vector<RankUsage> Coordinator::usage() {
  RankUsage own = meter_.now();
  own.busy_s = own.cpu_s;
  std::vector<RankUsage> out = {own};
  if (layout_.tp > 0 && loop_.available(kTargetLeaderRank)) {
    for (const RankUsage& u : ask_usage(loop_, kTargetLeaderRank, kTargetRequestTag, kTargetReplyTag, rank_timeout_)) {
      out.push_back(u);
    }
  }
  for (int rank : layout_.draft_ranks()) {
    if (!loop_.available(rank)) continue;
    for (const RankUsage& u : ask_usage(loop_, rank, draft_request_tag(rank), draft_reply_tag(rank), rank_timeout_)) {
      out.push_back(u);
    }
  }
  return out;
}

std::unique_ptr<spec::Engine> Coordinator::make_engine(const spec::EngineOptions& o) {
  const bool pool = o.engine.drafter_pool();
  const std::vector<int> ranks = layout_.draft_ranks();
  if (layout_.tp > 0) {
    // The group's model answers room() and friends from its config, here.
    const models::ModelConfig config =
        models::ModelConfig::from_file((std::filesystem::path(o.target) / "config.json").string());
    auto target = std::make_unique<RemoteTarget>(loop_, kTargetLeaderRank, config.vocab_size,
                                                 config.max_position_embeddings, rank_timeout_,
                                                 o.engine.drafts() ? o.drafter.target_top_k() : 0);
    std::vector<std::unique_ptr<spec::Drafter>> drafters;
    for (int rank : pool ? ranks : std::vector<int>{}) drafters.push_back(remote_drafter(rank, o.drafter));
    return spec::make_engine(o, std::move(target), std::move(drafters));
  }
  if (!pool) return spec::make_engine(o);
  SEED_CHECK(!ranks.empty(), kInvalidArgument)
      << "engine '" << o.engine.name() << "' under mpirun drafts on draft ranks, but " << layout_.world_size
      << " rank(s) with --tp " << layout_.tp << " leave none; raise -np to at least " << layout_.tp + 2;
  std::vector<std::unique_ptr<spec::Drafter>> drafters;
  for (int rank : ranks) drafters.push_back(remote_drafter(rank, o.drafter));
  return spec::make_engine(o, std::move(drafters));
}

std::unique_ptr<spec::Drafter> Coordinator::remote_drafter(int rank, spec::DrafterKind drafter) {
  std::vector<int> peers;
  for (const int peer : tables_ == DraftTables::kShared ? layout_.draft_ranks() : std::vector<int>{}) {
    if (peer != rank) peers.push_back(peer);
  }
  return std::make_unique<RemoteDrafter>(loop_, rank, rank_timeout_, drafter, std::move(peers));
}

WorkerStats serve_worker_rank(MpiSession& session, const RankLayout& layout, const spec::EngineOptions& models,
                              const DraftWorkerFault& fault) {
  const int rank = session.world_rank();
  SEED_CHECK(layout.role(rank) != RankRole::kCoordinator, kInternal) << "rank " << rank << " is the coordinator";
  if (layout.role(rank) == RankRole::kTarget) {
    // Made by the group's ranks alone: a peer stopped before it keeps the
    // leader from serving, which the coordinator's bounded wait reports.
    return serve_target_rank(session, *session.group(kTargetLeaderRank, layout.tp), models);
  }
  RankTables tables(models);
  std::map<spec::DrafterKind::Value, std::unique_ptr<spec::Drafter>> drafters;  // others made on first use
  const auto drafter_of = [&](spec::DrafterKind kind) -> spec::Drafter& {
    std::unique_ptr<spec::Drafter>& d = drafters[kind.value()];
    if (!d) d = make_rank_drafter(kind, models, tables);
    return *d;
  };
  // The run's drafter is made before the rank serves, so that loading a
  // draft model falls inside the coordinator's wait for every rank to serve
  // (Coordinator::wait_for_workers), not inside its first start's rank
  // timeout, and a draft folder that does not load fails the rank at once.
  if (models.engine.drafter_pool() && (!models.drafter.needs_draft_model() || !models.draft.empty())) {
    drafter_of(models.drafter);
  }
  const auto learn = [&](spec::DrafterKind kind, const spec::Lesson& lesson) { tables.learn(kind, lesson); };
  const auto end_group = [&](uint64_t group) { tables.end_group(group); };
  return serve_draft_requests(drafter_of, learn, end_group, rank, /*coordinator=*/0, fault);
}

}  // namespace seed::parallel
