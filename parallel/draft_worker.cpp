#include "parallel/draft_worker.h"

#include <mpi.h>

#include <chrono>
#include <csignal>
#include <ctime>
#include <map>
#include <string>
#include <thread>

#include "models/error.h"
#include "parallel/idle_backoff.h"
#include "parallel/mpi_session.h"
#include "parallel/rank_layout.h"
#include "parallel/wire.h"

namespace seed::parallel {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double process_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The next message from `source` on `tag`, waiting without spinning.
std::vector<uint8_t> receive(int source, int tag) {
  IdleBackoff backoff;
  while (true) {
    int found = 0;
    MPI_Message message;
    MPI_Status status;
    check_mpi(MPI_Improbe(source, tag, MPI_COMM_WORLD, &found, &message, &status), "MPI_Improbe");
    if (found) {
      int size = 0;
      MPI_Get_count(&status, MPI_BYTE, &size);
      std::vector<uint8_t> bytes(static_cast<size_t>(size));
      check_mpi(MPI_Mrecv(bytes.data(), size, MPI_BYTE, &message, MPI_STATUS_IGNORE), "MPI_Mrecv");
      return bytes;
    }
    std::this_thread::sleep_for(backoff.next());
  }
}

// Sends `bytes` and waits for MPI to take them, without spinning.
void send(int dest, int tag, const std::vector<uint8_t>& bytes) {
  MPI_Request request;
  check_mpi(MPI_Isend(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD, &request),
            "MPI_Isend");
  IdleBackoff backoff;
  while (true) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    std::this_thread::sleep_for(backoff.next());
  }
}

}  // namespace

DraftWorkerStats serve_draft_requests(spec::Drafter& drafter, int rank, int coordinator,
                                      const DraftWorkerFault& fault) {
  const Clock::time_point start = Clock::now();
  const double cpu_start = process_cpu_s();
  DraftWorkerStats stats;
  std::map<uint64_t, std::string> failed;  // slot -> why its drafter call threw
  bool answering = true;
  while (true) {
    const wire::Message message = wire::decode(receive(coordinator, draft_request_tag(rank)), coordinator);
    stats.messages += 1;
    if (std::holds_alternative<wire::ShutdownMessage>(message)) break;
    if (!answering) continue;
    const Clock::time_point t0 = Clock::now();
    if (const auto* m = std::get_if<wire::DraftMessage>(&message)) {
      wire::Message reply = wire::ErrorMessage{};
      const auto it = failed.find(m->slot);
      if (it != failed.end()) {
        reply = wire::ErrorMessage{it->second};
        failed.erase(it);
      } else {
        try {
          reply = wire::ProposalMessage{m->slot, drafter.propose(m->slot, m->max_depth)};
        } catch (const std::exception& e) {
          reply = wire::ErrorMessage{e.what()};
          drafter.finish(m->slot);
        }
      }
      send(coordinator, draft_reply_tag(rank), wire::encode(reply));
      stats.proposals += 1;
      if (fault.kind != DraftWorkerFault::Kind::kNone && stats.proposals >= fault.after_proposals) {
        if (fault.kind == DraftWorkerFault::Kind::kKill) std::raise(SIGKILL);
        answering = false;
      }
    } else {
      uint64_t slot = 0;
      try {
        if (const auto* start_message = std::get_if<wire::StartMessage>(&message)) {
          slot = start_message->slot;
          // A slot restarted (a new engine, or a sequence moved back here) starts afresh.
          drafter.finish(slot);
          failed.erase(slot);
          drafter.start(slot, start_message->tokens, start_message->settings);
        } else if (const auto* verdict = std::get_if<wire::VerdictMessage>(&message)) {
          slot = verdict->slot;
          if (!failed.count(slot)) drafter.advance(slot, verdict->verdict);
        } else if (const auto* finish = std::get_if<wire::FinishMessage>(&message)) {
          slot = finish->slot;
          failed.erase(slot);
          drafter.finish(slot);
        } else {
          SEED_FAIL(kCorruption) << "draft rank " << rank << ": the coordinator (rank " << coordinator
                                 << ") sent a " << wire::message_name(message) << " message, which a drafter "
                                 << "does not take";
        }
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::kCorruption) throw;
        failed[slot] = e.what();
        drafter.finish(slot);
      } catch (const std::exception& e) {
        failed[slot] = e.what();
        drafter.finish(slot);
      }
    }
    stats.busy_s += seconds_since(t0);
  }
  stats.wall_s = seconds_since(start);
  stats.cpu_s = process_cpu_s() - cpu_start;
  return stats;
}

}  // namespace seed::parallel
