#include "launch/sweep_folder.h"

#include <filesystem>
#include <fstream>

#include "models/base/atomic_file.h"
#include "models/base/error.h"

namespace seed::launch {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string stored_path(const std::string& dir) { return (fs::path(dir) / "sweep.json").string(); }

json read_stored(const std::string& path) {
  std::ifstream in(path);
  SEED_CHECK(in.good(), kNotFound) << path << ": no such file; is this a `seed sweep --out` folder?";
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    SEED_FAIL(kCorruption) << path << ": not valid JSON: " << e.what();
  }
}

// The first key whose value differs between two normalized configs.
std::string first_difference(const json& a, const json& b) {
  for (const auto& [k, v] : a["base"].items()) {
    if (!b["base"].contains(k) || b["base"][k] != v) return k;
  }
  for (const auto& [k, v] : b["base"].items()) {
    if (!a["base"].contains(k)) return k;
  }
  return a["grid"] != b["grid"] ? "grid" : "baseline";
}

}  // namespace

void open_sweep_folder(const std::string& dir, const json& config, const SweepConfig& expanded,
                       const RunOptionCheck& is_run_option) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  SEED_CHECK(!ec, kIo) << "--out: cannot create " << dir << ": " << ec.message();
  const std::string path = stored_path(dir);
  if (fs::exists(path)) {
    const SweepConfig stored = expand_sweep_config(read_stored(path), path, is_run_option);
    SEED_CHECK(stored.normalized == expanded.normalized, kInvalidArgument)
        << "--out " << dir << ": the sweep there was started with another config (key '"
        << first_difference(expanded.normalized, stored.normalized) << "' differs from " << path
        << "); rerun with that config, or pass another --out";
    return;
  }
  // A shard starting at the same moment stores the same text.
  write_file_atomically(path, config.dump(2) + "\n");
}

SweepConfig read_sweep_folder(const std::string& dir, const RunOptionCheck& is_run_option) {
  const std::string path = stored_path(dir);
  return expand_sweep_config(read_stored(path), path, is_run_option);
}

bool sweep_point_finished(const std::string& dir, const SweepPoint& point) {
  return fs::exists(fs::path(dir) / point.slug / "summary.json");
}

}  // namespace seed::launch
