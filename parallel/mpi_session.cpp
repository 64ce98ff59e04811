#include "parallel/mpi_session.h"

#include <mpi.h>

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "models/base/error.h"

namespace seed::parallel {

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  SEED_FAIL(kInternal) << call << " failed: " << std::string(text, length);
}

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  SEED_CHECK(!initialized, kInternal) << "MPI is initialised already; create one MpiSession per process";
  int provided = MPI_THREAD_SINGLE;
  check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  thread_multiple_ = provided == MPI_THREAD_MULTIPLE;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size_);
}

MpiSession::~MpiSession() {
  if (finalize_limit_.count() == 0) {
    MPI_Finalize();
    return;
  }
  std::mutex mutex;
  std::condition_variable finalized;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mutex);
    if (!finalized.wait_for(lock, finalize_limit_, [&] { return done; })) on_finalize_hang_();
  });
  MPI_Finalize();
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  finalized.notify_one();
  watchdog.join();
}

void MpiSession::limit_finalize(std::chrono::milliseconds limit, std::function<void()> on_hang) {
  finalize_limit_ = limit;
  on_finalize_hang_ = std::move(on_hang);
}

void MpiSession::abort_job(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

}  // namespace seed::parallel
