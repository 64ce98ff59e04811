// How `seed` ends on signals that are not bugs: an interrupt from the user
// or a job manager, and a write beyond the file size limit.
#pragma once

#include <string>

namespace seed::launch {

// Exit statuses of a run ended by SIGINT and SIGTERM (the shell's 128 + signal).
constexpr int kInterruptedExit = 130;
constexpr int kTerminatedExit = 143;

// Makes a write beyond RLIMIT_FSIZE fail with EFBIG, which the writer
// reports naming its file, instead of SIGXFSZ ending the process with a
// core dump.
void fail_writes_beyond_file_size_limit();

// From now on (until the next call) SIGINT and SIGTERM print "interrupted
// by SIGINT: " (or SIGTERM) and `what_is_kept` on stderr and end the
// process at once with kInterruptedExit or kTerminatedExit. What was
// written before stays whole on disk; a write in progress may be cut short
// (a torn last line of results.jsonl, which --resume drops).
void exit_on_interrupt(const std::string& what_is_kept);

}  // namespace seed::launch
