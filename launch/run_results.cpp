#include "launch/run_results.h"

#include <cstdint>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <spdlog/spdlog.h>

#include "launch/engine_counts.h"
#include "launch/json_text.h"
#include "models/base/atomic_file.h"
#include "models/base/error.h"
#include "models/base/json_fields.h"

namespace seed::launch {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The largest count a line may hold: 2^53, past which a JSON number is no
// longer exact. It also keeps summary()'s sums far from int64 overflow.
constexpr int64_t kMaxCount = int64_t{1} << 53;

// Checks the fields summary() reads, so that a damaged line is an error
// naming the file, the line and the field rather than a failed lookup later.
// Counters a line predates are absent and count as 0 (engine_counts.h).
void check_record(const json& record, const std::string& where) {
  SEED_CHECK(record.is_object(), kCorruption) << where << ": not a JSON object";
  const auto count = [&](const char* key, bool required) {
    const auto it = record.find(key);
    if (it == record.end() && !required) return;
    SEED_CHECK(it != record.end(), kCorruption) << where << ": field '" << key << "' is missing";
    SEED_CHECK(it->is_number_unsigned() && it->get<uint64_t>() <= uint64_t{kMaxCount}, kCorruption)
        << where << ": field '" << key << "' must be an integer in [0, 2^53], not " << it->dump();
  };
  const auto seconds = [&](const char* key, bool required) {
    const auto it = record.find(key);
    if (it == record.end() && !required) return;
    SEED_CHECK(it != record.end(), kCorruption) << where << ": field '" << key << "' is missing";
    SEED_CHECK(it->is_number() && it->get<double>() >= 0 && it->get<double>() <= double(kMaxCount), kCorruption)
        << where << ": field '" << key << "' must be a number of seconds in [0, 2^53], not " << it->dump();
  };
  count("index", true);
  SEED_CHECK(record.contains("correct") && record.at("correct").is_boolean(), kCorruption)
      << where << ": field 'correct' must be true or false";
  count("requests", true);
  count("failed_requests", true);
  seconds("wall_s", true);
  for (const char* key : {"tokens", "target_forwards", "drafted_tokens", "accepted_tokens", "rejections",
                          "sequence_forwards", "sequence_tokens", "prompt_tokens", "prefill_tokens", "prm_tokens",
                          "prm_scored_tokens"}) {
    count(key, false);
  }
  seconds("draft_s", false);
  seconds("finished_s", false);
  SEED_CHECK(!record.contains("invocation") || record.at("invocation").is_number_integer(), kCorruption)
      << where << ": field 'invocation' must be an integer";
}

// Where a setting differs from a run's: the dotted path of the first key
// whose values differ (an object's key, not the whole object), and the two.
struct SettingDifference {
  std::string path;
  json now, before;  // null: absent
};

SettingDifference first_difference(const json& now, const json& before, const std::string& path) {
  if (now.is_object() && before.is_object()) {
    for (const auto& [key, value] : now.items()) {
      if (!before.contains(key) || before[key] != value) {
        return first_difference(value, before.value(key, json()), path + "." + key);
      }
    }
    for (const auto& [key, value] : before.items()) {
      if (!now.contains(key)) return {path + "." + key, json(), value};
    }
  }
  return {path, now, before};
}

std::string shown(const json& value) { return value.is_null() ? "none" : value.dump(); }

}  // namespace

ResultLines read_result_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  ResultLines lines;
  std::string line;
  size_t number = 0;
  // Each line is written whole with its '\n', so only the last can lack it.
  while (std::getline(in, line) && !in.eof()) {
    const std::string where = path + ": line " + std::to_string(++number);
    json record;
    try {
      record = json::parse(line);
    } catch (const json::exception& e) {
      SEED_FAIL(kCorruption) << where << ": not valid JSON (" << e.what() << "); repair or delete that line";
    }
    check_record(record, where);
    const size_t index = record.at("index").get<size_t>();
    lines.by_index[index] = std::move(record);
    lines.complete_bytes += line.size() + 1;
  }
  return lines;
}

RunResults::RunResults(const std::string& dir, const json& settings, bool resume, const json& runtime)
    : dir_(dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  SEED_CHECK(!ec, kIo) << "--out: cannot create " << dir << ": " << ec.message();
  const std::string results = results_path();
  const std::string run_json = (fs::path(dir) / "run.json").string();
  const bool has_results = fs::exists(results) && fs::file_size(results) > 0;
  if (has_results) {
    SEED_CHECK(resume, kInvalidArgument)
        << results << " already holds results; pass --resume to continue that run, or another --out";
    SEED_CHECK(fs::exists(run_json), kNotFound) << run_json << ": missing, so the run cannot be resumed safely";
    const json previous = models::read_json_file(run_json);
    for (const auto& [key, value] : settings.items()) {
      if (previous.contains(key) && previous[key] == value) continue;
      const SettingDifference d = first_difference(value, previous.value(key, json()), key);
      SEED_FAIL(kInvalidArgument) << "--resume: setting '" << d.path << "' is " << shown(d.now) << " but the run in "
                                  << dir << " used " << shown(d.before);
    }
    ResultLines lines = read_result_lines(results);
    done_ = std::move(lines.by_index);
    if (lines.complete_bytes < fs::file_size(results)) {
      spdlog::warn("{}: its last line was cut off by an interruption; that problem runs again", results);
      fs::resize_file(results, lines.complete_bytes, ec);
      SEED_CHECK(!ec, kIo) << results << ": cannot drop the interrupted last line: " << ec.message();
    }
  }
  json written = settings;
  if (!runtime.is_null()) written["runtime"] = runtime;
  write_file_atomically(run_json, written.dump(2) + "\n");
  fd_ = ::open(results.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  SEED_CHECK(fd_ >= 0, kIo) << "cannot write " << results << ": " << std::strerror(errno);
}

RunResults::~RunResults() {
  if (fd_ >= 0) ::close(fd_);
}

void RunResults::append(const json& record) {
  // The whole line in one write call (more only if the system takes part
  // of it): a line is torn only where the system cut it.
  SEED_CHECK(write_all(fd_, dump_model_output(record) + "\n"), kIo)
      << "cannot write " << results_path() << ": " << std::strerror(errno)
      << "; the problems before this one are kept (make room, then finish with --resume)";
  done_[record.at("index").get<size_t>()] = record;
}

json RunResults::summary(const json& settings) const {
  int64_t correct = 0, requests = 0, failed = 0, prm_tokens = 0, prm_scored_tokens = 0;
  double wall = 0;
  std::map<int64_t, double> invocations;  // invocation -> when its last line finished in it
  spec::EngineStats counts;
  for (const auto& [index, r] : done_) {
    correct += r.at("correct").get<bool>() ? 1 : 0;
    add_engine_counts(r, &counts);
    requests += r.at("requests").get<int64_t>();
    failed += r.at("failed_requests").get<int64_t>();
    prm_tokens += r.value("prm_tokens", int64_t{0});
    prm_scored_tokens += r.value("prm_scored_tokens", int64_t{0});
    if (r.contains("invocation") && r.contains("finished_s")) {
      double& last = invocations[r.at("invocation").get<int64_t>()];
      last = std::max(last, r.at("finished_s").get<double>());
    } else {
      wall += r.at("wall_s").get<double>();  // older lines: problems ran one at a time
    }
  }
  for (const auto& [invocation, last] : invocations) wall += last;
  const int64_t problems = static_cast<int64_t>(done_.size());
  const int64_t tokens = counts.generated_tokens;
  json s = {{"task", settings.at("task")},
            {"search", settings.at("search")},
            {"engine", settings.at("engine")},
            {"drafter", settings.value("drafter", "model")},  // runs before --drafter drafted with the model
            {"problems", problems},
            {"correct", correct},
            {"accuracy", problems ? double(correct) / double(problems) : 0.0},
            {"tokens", tokens},
            {"tokens_per_problem", problems ? double(tokens) / double(problems) : 0.0},
            {"target_forwards", counts.target_forwards},
            {"tokens_per_target_forward",
             counts.target_forwards ? double(tokens) / double(counts.target_forwards) : 0.0},
            {"drafted_tokens", counts.drafted_tokens},
            {"accepted_tokens", counts.accepted_tokens},
            {"alpha", counts.alpha()},
            {"tau", counts.tau()},
            {"draft_s", counts.draft_s},
            {"draft_ms_per_token", tokens > 0 ? 1000.0 * counts.draft_s / double(tokens) : 0.0},
            {"requests", requests},
            {"failed_requests", failed},
            {"prompt_tokens", counts.prefill.prompt_tokens},
            {"prefill_tokens", counts.prefill.computed_tokens},
            {"prm_tokens", prm_tokens},
            {"prm_scored_tokens", prm_scored_tokens},
            {"wall_s", wall},
            {"problems_per_s", wall > 0 ? double(problems) / wall : 0.0},
            {"tokens_per_s", wall > 0 ? double(tokens) / wall : 0.0}};
  return s;
}

void RunResults::write_summary(const json& summary) const { write_file_atomically(summary_path(), summary.dump(2) + "\n"); }

std::string RunResults::results_path() const { return (fs::path(dir_) / "results.jsonl").string(); }
std::string RunResults::summary_path() const { return (fs::path(dir_) / "summary.json").string(); }

}  // namespace seed::launch
