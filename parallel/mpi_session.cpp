#include "parallel/mpi_session.h"

#include <mpi.h>

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "models/base/error.h"
#include "parallel/mpi_communicator.h"

namespace seed::parallel {

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  SEED_FAIL(kInternal) << call << " failed: " << std::string(text, length);
}

namespace {

// Runs `work`; if it has not returned within `limit` (0: no bound),
// `on_hang` runs on a watchdog thread meanwhile, to end the process.
void bounded(std::chrono::milliseconds limit, const std::function<void()>& on_hang, const std::function<void()>& work) {
  if (limit.count() == 0) return work();
  std::mutex mutex;
  std::condition_variable done_changed;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mutex);
    if (!done_changed.wait_for(lock, limit, [&] { return done; })) on_hang();
  });
  const auto finish = [&] {
    {
      std::lock_guard<std::mutex> lock(mutex);
      done = true;
    }
    done_changed.notify_one();
    watchdog.join();
  };
  try {
    work();
  } catch (...) {
    finish();
    throw;
  }
  finish();
}

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv, std::chrono::milliseconds start_limit,
                       std::function<void()> on_start_hang) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  SEED_CHECK(!initialized, kInternal) << "MPI is initialised already; create one MpiSession per process";
  bounded(start_limit, on_start_hang, [&] {
    int provided = MPI_THREAD_SINGLE;
    check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
    thread_multiple_ = provided == MPI_THREAD_MULTIPLE;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size_);
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    MPI_Comm node = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank_, MPI_INFO_NULL, &node),
              "MPI_Comm_split_type");
    MPI_Comm_rank(node, &node_rank_);
    MPI_Comm_free(&node);
  });
}

MpiSession::~MpiSession() {
  bounded(finalize_limit_, on_finalize_hang_, [this] {
    while (!kept_.empty()) kept_.pop_back();
    MPI_Finalize();
  });
}

void MpiSession::limit_finalize(std::chrono::milliseconds limit, std::function<void()> on_hang) {
  finalize_limit_ = limit;
  on_finalize_hang_ = std::move(on_hang);
}

Communicator* MpiSession::group(int first_world_rank, int count) {
  return kept("mpi ranks " + std::to_string(first_world_rank) + "+" + std::to_string(count),
              [&] { return make_mpi_communicator(first_world_rank, count); });
}

Communicator* MpiSession::kept(const std::string& name, const std::function<std::unique_ptr<Communicator>()>& make) {
  for (const auto& [kept_name, communicator] : kept_) {
    if (kept_name == name) return communicator.get();
  }
  kept_.emplace_back(name, make());
  return kept_.back().second.get();
}

void MpiSession::abort_job(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

}  // namespace seed::parallel
