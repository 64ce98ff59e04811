#include "launch/sweep_table.h"

#include <cstdint>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "models/base/atomic_file.h"
#include "models/base/error.h"

namespace seed::launch {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Options that choose how the engine runs, not what is computed: a
// baseline row may differ from a row in these alone.
const std::set<std::string> kEngineKeys = {"engine", "draft", "draft-length", "k-config", "drafters", "max-batch",
                                           "drafter"};

json without_engine_keys(const json& params) {
  json out = json::object();
  for (const auto& [k, v] : params.items()) {
    if (!kEngineKeys.count(k)) out[k] = v;
  }
  return out;
}

std::string csv_field(const json& v) {
  if (v.is_null()) return "";
  std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

const std::vector<std::string> kFigures = {"problems",       "correct",         "accuracy", "accuracy_low",
                                           "accuracy_high",  "tokens_per_problem", "target_forwards", "wall_s",
                                           "tokens_per_s",   "alpha",           "tau",      "speedup",
                                           "baseline"};

}  // namespace

Interval wilson_interval(int64_t successes, int64_t trials, double z) {
  if (trials <= 0) return {0.0, 1.0};
  const double n = double(trials), p = double(successes) / n, z2 = z * z;
  const double center = (p + z2 / (2 * n)) / (1 + z2 / n);
  const double half = z / (1 + z2 / n) * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n));
  return {std::max(0.0, center - half), std::min(1.0, center + half)};
}

json sweep_row(const SweepPoint& point, const json& summary) {
  const int64_t problems = summary.at("problems").get<int64_t>(), correct = summary.at("correct").get<int64_t>();
  const Interval ci = wilson_interval(correct, problems);
  return {{"slug", point.slug},
          {"params", point.params},
          {"problems", problems},
          {"correct", correct},
          {"accuracy", summary.at("accuracy")},
          {"accuracy_low", ci.low},
          {"accuracy_high", ci.high},
          {"tokens_per_problem", summary.at("tokens_per_problem")},
          {"target_forwards", summary.at("target_forwards")},
          {"wall_s", summary.at("wall_s")},
          {"tokens_per_s", summary.at("tokens_per_s")},
          {"alpha", summary.value("alpha", 0.0)},
          {"tau", summary.value("tau", 0.0)},
          {"speedup", nullptr},
          {"baseline", nullptr}};
}

void add_speedups(std::vector<json>* rows, const std::string& baseline_engine) {
  for (json& row : *rows) {
    if (row["params"].value("engine", "") == baseline_engine) continue;
    const json key = without_engine_keys(row["params"]);
    for (const json& base : *rows) {
      if (base["params"].value("engine", "") != baseline_engine || without_engine_keys(base["params"]) != key ||
          base["problems"] != row["problems"]) {
        continue;
      }
      const double base_rate = base["tokens_per_s"].get<double>();
      row["speedup"] = base_rate > 0 ? row["tokens_per_s"].get<double>() / base_rate : 0.0;
      row["baseline"] = base["slug"];
      break;
    }
  }
}

std::vector<json> collect_sweep_rows(const std::string& dir, const SweepConfig& config) {
  std::vector<json> rows;
  for (const SweepPoint& point : config.points) {
    const fs::path path = fs::path(dir) / point.slug / "summary.json";
    std::ifstream in(path);
    if (!in.good()) continue;
    try {
      rows.push_back(sweep_row(point, json::parse(in)));
    } catch (const json::exception& e) {
      SEED_FAIL(kCorruption) << path.string() << ": " << e.what();
    }
  }
  add_speedups(&rows, config.baseline);
  return rows;
}

void write_sweep_tables(const std::string& dir, const std::vector<json>& rows) {
  std::string jsonl;
  for (const json& row : rows) jsonl += row.dump() + "\n";
  write_file_atomically((fs::path(dir) / "sweep.jsonl").string(), jsonl);

  std::set<std::string> param_keys;
  for (const json& row : rows) {
    for (const auto& [k, v] : row["params"].items()) param_keys.insert(k);
  }
  std::ostringstream csv;
  csv << "slug";
  for (const std::string& k : param_keys) csv << "," << csv_field(k);
  for (const std::string& f : kFigures) csv << "," << f;
  csv << "\n";
  for (const json& row : rows) {
    csv << csv_field(row["slug"]);
    for (const std::string& k : param_keys) csv << "," << csv_field(row["params"].value(k, json()));
    for (const std::string& f : kFigures) csv << "," << csv_field(row.value(f, json()));
    csv << "\n";
  }
  write_file_atomically((fs::path(dir) / "sweep.csv").string(), csv.str());
}

}  // namespace seed::launch
