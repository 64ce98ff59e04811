// The output folder of `seed run`: results.jsonl (one line per problem,
// appended and flushed as each finishes), run.json (the settings, so that a
// resumed run can refuse to mix settings) and summary.json.
//
// Resuming reads the finished lines back; a last line cut off by an
// interruption or a full disk is dropped (and recomputed), never half-kept,
// and any other line that is not a result is an error naming it.
// run.json is replaced whole or not at all, so a failed write never leaves
// a run that cannot be resumed. Not thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>

namespace seed::launch {

// The results of a results.jsonl by problem index, and the bytes of its
// complete lines. A last line without its '\n' (torn by an interrupted
// write) is left out; any other line that is not a result (check_record's
// fields) is kCorruption naming the file and the line.
struct ResultLines {
  std::map<size_t, nlohmann::json> by_index;
  size_t complete_bytes = 0;
};
ResultLines read_result_lines(const std::string& path);

class RunResults {
 public:
  // Creates `dir` if needed. Without `resume`, a non-empty results.jsonl is
  // an error (kInvalidArgument: pass --resume or another --out). With it,
  // `settings` must equal run.json's (kInvalidArgument naming the first
  // differing key). Writes run.json: the settings, and `runtime` (how the
  // run used the machine: threads, kernel) under "runtime", never compared.
  RunResults(const std::string& dir, const nlohmann::json& settings, bool resume,
             const nlohmann::json& runtime = nullptr);
  ~RunResults();
  RunResults(const RunResults&) = delete;
  RunResults& operator=(const RunResults&) = delete;

  // Finished problems by index (the lines of results.jsonl).
  const std::map<size_t, nlohmann::json>& done() const { return done_; }

  // Leaves the problems from index `problems` on out of done() and so of
  // the summary (a run resumed with a lower --limit reports its own
  // problems); their lines stay in the file.
  void keep_first(size_t problems) { done_.erase(done_.lower_bound(problems), done_.end()); }

  // Appends one problem's line (it must hold "index") and flushes; bytes of
  // model output that are not UTF-8 are written as U+FFFD (json_text.h).
  // Throws kIo naming the file and the system's reason (a full disk, a
  // file size limit) if the write fails; the line may then be torn, and a
  // resumed run drops it.
  void append(const nlohmann::json& record);

  // Totals over every finished problem: the summary.json object. Its
  // wall_s is elapsed time: per invocation of `seed run` (lines with
  // "invocation" and "finished_s", seconds into it), the last line's
  // finished_s, summed over invocations (a resumed run has several); lines
  // without them add their own wall_s.
  nlohmann::json summary(const nlohmann::json& settings) const;
  void write_summary(const nlohmann::json& summary) const;

  std::string results_path() const;
  std::string summary_path() const;

 private:
  std::string dir_;
  std::map<size_t, nlohmann::json> done_;
  int fd_ = -1;  // results.jsonl, opened for appending
};

}  // namespace seed::launch
