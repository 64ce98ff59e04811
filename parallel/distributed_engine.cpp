#include "parallel/distributed_engine.h"

#include "models/causal_lm.h"
#include "models/error.h"
#include "parallel/remote_drafter.h"
#include "parallel/wire.h"
#include "spec/draft_model_drafter.h"

namespace seed::parallel {

namespace {

void check_supported(const RankLayout& layout) {
  SEED_CHECK(layout.tp == 0, kInvalidArgument)
      << "--tp " << layout.tp << ": a target group on ranks 1.." << layout.tp << " is not driven by the engines "
      << "yet (issue 6); leave --tp out to keep the target on rank 0 and make every other rank a draft worker";
}

}  // namespace

Coordinator::Coordinator(const MpiSession& session, const RankLayout& layout, std::chrono::milliseconds rank_timeout)
    : layout_(layout), rank_timeout_(rank_timeout), loop_(session) {
  SEED_CHECK(session.world_rank() == 0, kInternal) << "the coordinator runs on rank 0, not " << session.world_rank();
  check_supported(layout_);
}

Coordinator::~Coordinator() {
  for (int rank : layout_.draft_ranks()) {
    loop_.send_last(rank, draft_request_tag(rank), wire::encode(wire::ShutdownMessage{}), rank_timeout_);
  }
}

std::vector<int> Coordinator::lost_ranks() const {
  std::vector<int> lost;
  for (int rank : layout_.draft_ranks()) {
    if (!loop_.available(rank)) lost.push_back(rank);
  }
  return lost;
}

std::unique_ptr<spec::Engine> Coordinator::make_engine(const spec::EngineOptions& o) {
  if (o.engine != "seed" && o.engine != "seed-batch") return spec::make_engine(o);
  const std::vector<int> ranks = layout_.draft_ranks();
  SEED_CHECK(!ranks.empty(), kInvalidArgument)
      << "engine '" << o.engine << "' under mpirun drafts on draft ranks, but " << layout_.world_size
      << " rank(s) with --tp " << layout_.tp << " leave none; raise -np to at least " << layout_.tp + 2;
  std::vector<std::unique_ptr<spec::Drafter>> drafters;
  for (int rank : ranks) drafters.push_back(std::make_unique<RemoteDrafter>(loop_, rank, rank_timeout_));
  return spec::make_engine(o, std::move(drafters));
}

DraftWorkerStats serve_worker_rank(const MpiSession& session, const RankLayout& layout,
                                   const spec::EngineOptions& models, const DraftWorkerFault& fault) {
  check_supported(layout);
  const int rank = session.world_rank();
  SEED_CHECK(layout.role(rank) == RankRole::kDraft, kInternal) << "rank " << rank << " is not a draft rank";
  SEED_CHECK(!models.draft.empty(), kInvalidArgument) << "--draft: a draft rank needs a draft model folder";
  std::unique_ptr<models::CausalLM> model = models::CausalLM::load(models.draft, {models.device});
  spec::DraftModelDrafter drafter(*model);
  return serve_draft_requests(drafter, rank, /*coordinator=*/0, fault);
}

}  // namespace seed::parallel
