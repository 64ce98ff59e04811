#include "parallel/mpi_event_loop.h"

#include <cstdint>
#include <mpi.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <future>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "models/base/error.h"
#include "parallel/idle_backoff.h"

namespace seed::parallel {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using Bytes = std::vector<uint8_t>;

namespace {

// What the loop thread hands a waiting call: the reply, or why the rank is
// unavailable. Text, not an exception: the caller throws its own, so that
// no exception object is shared by two threads (freed by whichever drops
// it last, through reference counts inside libstdc++).
struct Answer {
  Bytes bytes;
  std::string unavailable;
};

}  // namespace

struct MpiEventLoop::State {
  struct Send {
    int rank = 0;
    Bytes bytes;  // MPI reads it until the request completes
    MPI_Request request = MPI_REQUEST_NULL;
    Clock::time_point deadline;
    bool counted = true;
  };
  struct Reply {
    int rank = 0;
    int tag = 0;
    Clock::time_point deadline;
    std::promise<Answer> promise;
    bool counted = true;
  };

  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  asio::steady_timer timer{io};
  std::thread thread;

  // Loop thread only.
  std::list<Send> sends;
  std::list<Send> abandoned;  // to unavailable ranks; MPI may still read them
  std::list<Reply> replies;
  bool timer_armed = false;
  bool stopping = false;
  IdleBackoff backoff;

  mutable std::mutex mutex;  // guards the two below
  std::map<int, std::string> unavailable;  // rank -> why
  MessageCounts counts;

  std::string why_unavailable(int rank) const {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = unavailable.find(rank);
    return it == unavailable.end() ? std::string() : it->second;
  }

  // Fails the rank's waiting calls and stops testing its sends.
  void mark_unavailable(int rank, const std::string& why) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      unavailable.emplace(rank, why);
    }
    for (auto it = replies.begin(); it != replies.end();) {
      if (it->rank != rank) {
        ++it;
        continue;
      }
      it->promise.set_value({{}, why});
      it = replies.erase(it);
    }
    for (auto it = sends.begin(); it != sends.end();) {
      const auto next = std::next(it);
      if (it->rank == rank) abandoned.splice(abandoned.end(), sends, it);
      it = next;
    }
  }

  void start_send(int rank, int tag, Bytes bytes, Duration timeout, bool even_if_unavailable = false,
                  bool counted = true) {
    if (!even_if_unavailable && !why_unavailable(rank).empty()) return;
    sends.push_back({rank, std::move(bytes), MPI_REQUEST_NULL, Clock::now() + timeout, counted});
    Send& s = sends.back();
    const int code = MPI_Isend(s.bytes.data(), static_cast<int>(s.bytes.size()), MPI_BYTE, rank, tag,
                               MPI_COMM_WORLD, &s.request);
    if (code != MPI_SUCCESS) {
      sends.pop_back();
      mark_unavailable(rank, "rank " + std::to_string(rank) + " is unavailable: MPI_Isend failed (MPI code " +
                                 std::to_string(code) + ")");
    }
    backoff.reset();
    arm();
  }

  // One round of tests of everything outstanding.
  void poll() {
    const Clock::time_point now = Clock::now();
    for (auto it = sends.begin(); it != sends.end();) {
      int done = 0;
      const int code = MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
      if (code == MPI_SUCCESS && done) {
        if (it->counted) {
          std::lock_guard<std::mutex> lock(mutex);
          counts.sent += 1;
          counts.sent_bytes += static_cast<int64_t>(it->bytes.size());
        }
        it = sends.erase(it);
        backoff.reset();
      } else if (code != MPI_SUCCESS || now > it->deadline) {
        const int rank = it->rank;
        mark_unavailable(rank, code != MPI_SUCCESS
                                   ? "rank " + std::to_string(rank) + " is unavailable: a send to it failed (MPI code " +
                                         std::to_string(code) + ")"
                                   : "rank " + std::to_string(rank) + " stopped answering: a message to it was not "
                                         "taken within the rank timeout (--rank-timeout)");
        it = sends.begin();  // mark_unavailable moved this rank's sends away
      } else {
        ++it;
      }
    }
    for (auto it = replies.begin(); it != replies.end();) {
      int found = 0;
      MPI_Message message;
      MPI_Status status;
      MPI_Improbe(it->rank, it->tag, MPI_COMM_WORLD, &found, &message, &status);
      if (found) {
        int size = 0;
        MPI_Get_count(&status, MPI_BYTE, &size);
        Bytes bytes(static_cast<size_t>(size));
        MPI_Mrecv(bytes.data(), size, MPI_BYTE, &message, MPI_STATUS_IGNORE);
        if (it->counted) {
          std::lock_guard<std::mutex> lock(mutex);
          counts.received += 1;
          counts.received_bytes += size;
        }
        it->promise.set_value({std::move(bytes), {}});
        it = replies.erase(it);
        backoff.reset();
      } else if (now > it->deadline) {
        const int rank = it->rank;
        mark_unavailable(rank, "rank " + std::to_string(rank) + " stopped answering: no reply within the rank "
                                   "timeout (--rank-timeout)");
        it = replies.begin();  // mark_unavailable erased this rank's replies
      } else {
        ++it;
      }
    }
    if (stopping && sends.empty() && replies.empty()) work.reset();
  }

  // Tests again after IdleBackoff's sleep while anything is outstanding.
  void arm() {
    if (timer_armed || (sends.empty() && replies.empty())) return;
    timer_armed = true;
    timer.expires_after(backoff.next());
    timer.async_wait([this](const boost::system::error_code&) {
      timer_armed = false;
      poll();
      arm();
    });
  }
};

MpiEventLoop::MpiEventLoop(const MpiSession& session) : state_(std::make_unique<State>()) {
  SEED_CHECK(session.thread_multiple(), kUnavailable)
      << "this MPI library did not grant MPI_THREAD_MULTIPLE, which the coordinator needs (its event loop and "
         "main thread both call MPI); use an Open MPI built with thread support (ompi_info | grep THREAD_MULTIPLE)";
  state_->thread = std::thread([s = state_.get()] { s->io.run(); });
}

MpiEventLoop::~MpiEventLoop() {
  State* s = state_.get();
  asio::post(s->io, [s] {
    s->stopping = true;
    for (State::Reply& r : s->replies) {
      r.promise.set_value({{}, "the event loop stopped"});
    }
    s->replies.clear();
    s->poll();
  });
  s->thread.join();
  for (State::Send& send : s->abandoned) MPI_Request_free(&send.request);
  // A rank that stopped answering may still be sent to by MPI (a
  // rendezvous that never completes): the buffers must outlive MPI, so
  // they are released on purpose rather than freed.
  if (!s->abandoned.empty()) static_cast<void>(new std::list<State::Send>(std::move(s->abandoned)));
}

void MpiEventLoop::send(int rank, int tag, std::vector<uint8_t> bytes, Duration timeout) {
  State* s = state_.get();
  asio::post(s->io, [s, rank, tag, timeout, bytes = std::move(bytes)]() mutable {
    s->start_send(rank, tag, std::move(bytes), timeout);
  });
}

void MpiEventLoop::send_last(int rank, int tag, std::vector<uint8_t> bytes, Duration timeout) {
  State* s = state_.get();
  asio::post(s->io, [s, rank, tag, timeout, bytes = std::move(bytes)]() mutable {
    s->start_send(rank, tag, std::move(bytes), timeout, /*even_if_unavailable=*/true);
  });
}

std::vector<uint8_t> MpiEventLoop::call(int rank, int tag, std::vector<uint8_t> request, int reply_tag,
                                        Duration timeout, bool counted) {
  State* s = state_.get();
  auto promise = std::make_shared<std::promise<Answer>>();
  std::future<Answer> reply = promise->get_future();
  asio::post(s->io, [s, rank, tag, reply_tag, timeout, counted, promise, request = std::move(request)]() mutable {
    const std::string why = s->why_unavailable(rank);
    if (!why.empty()) {
      promise->set_value({{}, why});
      return;
    }
    s->replies.push_back({rank, reply_tag, Clock::now() + timeout, std::move(*promise), counted});
    s->start_send(rank, tag, std::move(request), timeout, /*even_if_unavailable=*/false, counted);
  });
  Answer answer = reply.get();
  if (!answer.unavailable.empty()) SEED_FAIL(kUnavailable) << answer.unavailable;
  return std::move(answer.bytes);
}

bool MpiEventLoop::available(int rank) const { return state_->why_unavailable(rank).empty(); }

MessageCounts MpiEventLoop::counts() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->counts;
}

}  // namespace seed::parallel
