#include "tasks/task_data.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "models/base/error.h"
#include "tasks/blocksworld.h"
#include "tasks/game24.h"
#include "tasks/random_draw.h"

namespace seed::tasks {
namespace {

std::ifstream open_data_file(const DataSpec& spec, const std::string& where) {
  SEED_CHECK(!spec.path.empty(), kInvalidArgument)
      << where << ": field 'data.path' is required for source '" << spec.source << "'";
  std::error_code ec;
  SEED_CHECK(std::filesystem::is_regular_file(spec.path, ec), kNotFound)
      << where << ": field 'data.path': " << spec.path
      << ": no such file (download it, or pass another path with --data)";
  std::ifstream in(spec.path);
  SEED_CHECK(in.good(), kIo) << where << ": field 'data.path': cannot open " << spec.path;
  return in;
}

std::vector<Problem> read_jsonl(const DataSpec& spec, const std::string& where) {
  std::ifstream in = open_data_file(spec, where);
  std::vector<Problem> problems;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json row;
    try {
      row = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      SEED_FAIL(kInvalidArgument) << where << ": field 'data.path': " << spec.path << ":" << number
                                  << ": not valid JSON: " << e.what();
    }
    SEED_CHECK(row.is_object(), kInvalidArgument)
        << where << ": field 'data.path': " << spec.path << ":" << number << ": a row must be a JSON object";
    Problem problem;
    for (const auto& [key, value] : row.items()) {
      if (value.is_string()) {
        problem.fields[key] = value.get<std::string>();
      } else if (value.is_number() || value.is_boolean()) {
        problem.fields[key] = value.dump();
      } else {
        SEED_FAIL(kInvalidArgument) << where << ": field 'data.path': " << spec.path << ":" << number << ": field '" << key
                                    << "' must be a string, number or bool";
      }
    }
    problems.push_back(std::move(problem));
  }
  return problems;
}

std::vector<Problem> read_lines(const DataSpec& spec, const std::string& where) {
  std::ifstream in = open_data_file(spec, where);
  std::vector<Problem> problems;
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty()) continue;
    Problem problem;
    problem.fields[spec.field] = line;
    problems.push_back(std::move(problem));
  }
  return problems;
}

std::vector<Problem> read_game24_csv(const DataSpec& spec, const std::string& where) {
  open_data_file(spec, where);
  std::vector<Problem> problems;
  for (const Numbers& puzzle : load_game24_csv(spec.path)) {
    Problem problem;
    problem.fields["input"] = numbers_text(puzzle);
    problems.push_back(std::move(problem));
  }
  return problems;
}

std::vector<Problem> generate_blocksworld(const DataSpec& spec, const std::string& where) {
  SEED_CHECK(spec.count >= 1, kInvalidArgument) << where << ": field 'data.count' must be at least 1";
  SEED_CHECK(spec.blocks_min >= 2 && spec.blocks_min <= spec.blocks_max && spec.blocks_max <= kBlocksMax,
             kInvalidArgument)
      << where << ": fields 'data.blocks_min'..'data.blocks_max' must satisfy 2 <= min <= max <= " << kBlocksMax;
  std::mt19937_64 rng = derive_engine(spec.seed, /*stream=*/0);
  std::vector<Problem> problems;
  for (int i = 0; i < spec.count; ++i) {
    const int blocks = static_cast<int>(draw_between(rng, spec.blocks_min, spec.blocks_max));
    const BlocksInstance instance = blocks_random_instance(rng, blocks);
    const auto plan = blocks_optimal_plan(instance.start, instance.goal);
    SEED_CHECK(plan.has_value(), kInternal) << "blocksworld generator: an unreachable goal";
    Problem problem;
    problem.fields["statement"] = blocks_statement(instance);
    problem.fields["optimal_length"] = std::to_string(plan->size());
    problems.push_back(std::move(problem));
  }
  return problems;
}

}  // namespace

const std::string& Problem::field(const std::string& name) const {
  const auto it = fields.find(name);
  SEED_CHECK(it != fields.end(), kInvalidArgument) << "problem " << index << " has no field '" << name << "'";
  return it->second;
}

const std::vector<std::string>& data_source_names() {
  static const std::vector<std::string> names = {"jsonl", "lines", "game24-csv", "blocksworld"};
  return names;
}

std::vector<Problem> load_problems(const DataSpec& spec, const std::string& where) {
  std::vector<Problem> problems;
  if (spec.source == "jsonl") {
    problems = read_jsonl(spec, where);
  } else if (spec.source == "lines") {
    problems = read_lines(spec, where);
  } else if (spec.source == "game24-csv") {
    problems = read_game24_csv(spec, where);
  } else if (spec.source == "blocksworld") {
    problems = generate_blocksworld(spec, where);
  } else {
    std::string known;
    for (const std::string& name : data_source_names()) known += (known.empty() ? "" : ", ") + name;
    SEED_FAIL(kInvalidArgument) << where << ": field 'data.source': unknown source '" << spec.source
                                << "' (known: " << known << ")";
  }
  const int64_t size = static_cast<int64_t>(problems.size());
  const int64_t end = spec.end < 0 ? size : spec.end;
  const std::string data = spec.path.empty() ? std::string("the data") : spec.path;
  SEED_CHECK(size > 0, kInvalidArgument) << where << ": " << data << " holds no problems";
  SEED_CHECK(spec.begin <= end, kInvalidArgument)
      << where << ": field 'data.begin' (" << spec.begin << ") is past 'data.end' (" << end << ")";
  SEED_CHECK(spec.begin >= 0 && end <= size, kInvalidArgument)
      << where << ": fields 'data.begin'/'data.end' select rows [" << spec.begin << ", " << end << ") but " << data
      << " has " << size << (size == 1 ? " row" : " rows");
  SEED_CHECK(end > spec.begin, kInvalidArgument) << where << ": the data selects no problems";
  std::vector<Problem> selected(problems.begin() + spec.begin, problems.begin() + end);
  for (size_t i = 0; i < selected.size(); ++i) selected[i].index = i;
  return selected;
}

}  // namespace seed::tasks
