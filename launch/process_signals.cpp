#include "launch/process_signals.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <deque>

namespace seed::launch {
namespace {

struct Messages {
  std::string interrupt, terminate;
};

// Set before the handlers are installed, and replaced whole (`seed sweep`
// runs one `seed run` after another): a handler loads the pointer once and
// only writes what it points to. Replaced messages are kept, as a handler
// may still be writing them; there is one per run. A deque never moves what
// it holds, and the process never frees it.
std::atomic<const Messages*> g_messages{nullptr};
std::deque<Messages>* const g_kept_messages = new std::deque<Messages>;

void write_and_exit(int signal) {
  const Messages* messages = g_messages.load();
  const std::string& message = signal == SIGINT ? messages->interrupt : messages->terminate;
  const ssize_t ignored = ::write(STDERR_FILENO, message.data(), message.size());
  (void)ignored;
  ::_exit(signal == SIGINT ? kInterruptedExit : kTerminatedExit);
}

}  // namespace

void fail_writes_beyond_file_size_limit() { ::signal(SIGXFSZ, SIG_IGN); }

void exit_on_interrupt(const std::string& what_is_kept) {
  g_kept_messages->push_back(Messages{"\nseed: interrupted by SIGINT: " + what_is_kept + "\n",
                                      "\nseed: interrupted by SIGTERM: " + what_is_kept + "\n"});
  g_messages.store(&g_kept_messages->back());
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = write_and_exit;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

}  // namespace seed::launch
