// RankLayout: which world rank plays which role under mpirun (README.md,
// "Running under mpirun").
//
//   rank 0              coordinator: search, scheduler, the engine's event loop
//   ranks 1..T          target group (T = --tp), tensor parallel
//   ranks T+1..P-1      draft workers, one drafter each
//
// T = 0 (no --tp) keeps the target on the coordinator: every other rank is
// a draft worker. With T > 0 rank 0 drives the group through its leader,
// rank 1 (remote_target.h). P = 1, or no mpirun, runs every role in rank
// 0's process.
// A value type: copy freely.
#pragma once

#include <string>
#include <vector>

namespace seed::parallel {

enum class RankRole { kCoordinator, kTarget, kDraft };
const char* rank_role_name(RankRole role);  // "coordinator", "target", "draft"

struct RankLayout {
  int world_size = 1;
  int tp = 0;  // target group size; 0: the target runs on the coordinator

  // Validates: world_size >= 1, tp >= 0, world_size >= 1 + tp. Throws
  // kInvalidArgument naming --tp and -np with the fix.
  static RankLayout make(int world_size, int tp);

  bool distributed() const { return world_size > 1; }
  RankRole role(int rank) const;
  std::vector<int> target_ranks() const;  // 1..T (empty: on the coordinator)
  std::vector<int> draft_ranks() const;   // T+1..P-1
  // One line per role, printed by rank 0 at start.
  std::string summary() const;
};

// The device a rank computes on, given --device `device`: "cuda" without an
// index is GPU `node_rank` mod `gpus` of the rank's node (MpiSession::
// node_rank; `gpus` those it sees), so that ranks a node holds as many of
// as it has GPUs take one each (the target group's ranks on the first
// node, the draft ranks on the others) and more share them in turn.
// "cpu", an explicit "cuda:N", and "cuda" where no GPU is seen (gpus 0:
// loading then names the missing device) stay as given.
std::string rank_device(const std::string& device, int node_rank, int gpus);

// Tags of the coordinator's messages to draft rank `rank` and of its
// replies on MPI_COMM_WORLD: distinct per draft rank, and above any tag
// the rest of seed uses.
constexpr int kDraftTagBase = 1000;
constexpr int draft_request_tag(int rank) { return kDraftTagBase + 2 * rank; }
constexpr int draft_reply_tag(int rank) { return kDraftTagBase + 2 * rank + 1; }
// Tags of the coordinator's messages to the target group's leader and of
// its replies: below every draft rank's (rank 1 is never a draft rank).
constexpr int kTargetRequestTag = kDraftTagBase - 2;
constexpr int kTargetReplyTag = kDraftTagBase - 1;
constexpr int kTargetLeaderRank = 1;

}  // namespace seed::parallel
