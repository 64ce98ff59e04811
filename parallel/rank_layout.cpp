#include "parallel/rank_layout.h"

#include <sstream>

#include "models/base/error.h"

namespace seed::parallel {

namespace {

std::string range_text(const std::vector<int>& ranks) {
  if (ranks.empty()) return "none";
  if (ranks.size() == 1) return "rank " + std::to_string(ranks.front());
  return "ranks " + std::to_string(ranks.front()) + ".." + std::to_string(ranks.back());
}

}  // namespace

const char* rank_role_name(RankRole role) {
  switch (role) {
    case RankRole::kCoordinator: return "coordinator";
    case RankRole::kTarget: return "target";
    case RankRole::kDraft: return "draft";
  }
  return "?";
}

RankLayout RankLayout::make(int world_size, int tp) {
  SEED_CHECK(world_size >= 1, kInvalidArgument) << "world size " << world_size << " < 1";
  SEED_CHECK(tp >= 0, kInvalidArgument) << "--tp " << tp << " < 0";
  SEED_CHECK(world_size >= 1 + tp, kInvalidArgument)
      << "--tp " << tp << " needs at least " << tp + 1 << " ranks (the coordinator and the target group), "
      << "but mpirun started " << world_size << "; raise -np or lower --tp";
  return {world_size, tp};
}

RankRole RankLayout::role(int rank) const {
  if (rank == 0) return RankRole::kCoordinator;
  if (rank <= tp) return RankRole::kTarget;
  return RankRole::kDraft;
}

std::vector<int> RankLayout::target_ranks() const {
  std::vector<int> ranks;
  for (int r = 1; r <= tp; ++r) ranks.push_back(r);
  return ranks;
}

std::vector<int> RankLayout::draft_ranks() const {
  std::vector<int> ranks;
  for (int r = tp + 1; r < world_size; ++r) ranks.push_back(r);
  return ranks;
}

std::string RankLayout::summary() const {
  std::ostringstream out;
  out << world_size << " rank(s): coordinator rank 0 (search, scheduler"
      << (tp == 0 ? ", target" : "") << "); target group "
      << (tp == 0 ? "on the coordinator" : range_text(target_ranks()) + " (tp " + std::to_string(tp) + ")")
      << "; draft workers " << range_text(draft_ranks());
  return out.str();
}

std::string rank_device(const std::string& device, int node_rank, int gpus) {
  if (device != "cuda" || gpus <= 0) return device;
  return "cuda:" + std::to_string(node_rank % gpus);
}

}  // namespace seed::parallel
