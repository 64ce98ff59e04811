#include "launch/process_signals.h"

#include <signal.h>
#include <unistd.h>

#include <cstring>

namespace seed::launch {
namespace {

// Built before the handlers are installed: a handler may only write them.
std::string g_interrupt_message, g_terminate_message;

void write_and_exit(int signal) {
  const std::string& message = signal == SIGINT ? g_interrupt_message : g_terminate_message;
  const ssize_t ignored = ::write(STDERR_FILENO, message.data(), message.size());
  (void)ignored;
  ::_exit(signal == SIGINT ? kInterruptedExit : kTerminatedExit);
}

}  // namespace

void fail_writes_beyond_file_size_limit() { ::signal(SIGXFSZ, SIG_IGN); }

void exit_on_interrupt(const std::string& what_is_kept) {
  g_interrupt_message = "\nseed: interrupted by SIGINT: " + what_is_kept + "\n";
  g_terminate_message = "\nseed: interrupted by SIGTERM: " + what_is_kept + "\n";
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = write_and_exit;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

}  // namespace seed::launch
