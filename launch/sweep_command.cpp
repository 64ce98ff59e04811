// `seed sweep`: a grid of `seed run`s (launch/sweep_config.h), each in its
// own folder under --out, run in this process one after another through
// `seed run`'s own command line, so that every run option is a sweep key
// and a point's folder is exactly a `seed run --out` folder. Points whose
// engines load a model folder with the same options share one loaded copy
// (models/loaded_models.h). Rerunning the same command finishes an
// interrupted sweep: a finished point is skipped, a half-finished one
// continues with `run --resume`. Under mpirun every rank walks the same
// points and each point uses the rank layout as `seed run` does; rank 0
// writes the tables.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "launch/commands.h"
#include "launch/counted.h"
#include "launch/progress_line.h"
#include "launch/run_option_check.h"
#include "launch/sweep_config.h"
#include "launch/sweep_folder.h"
#include "launch/sweep_table.h"
#include "models/base/error.h"
#include "models/loaded_models.h"
#include "parallel/mpi_session.h"

namespace seed::launch {
namespace {

using Clock = std::chrono::steady_clock;

struct SweepOptions {
  std::string config_path;
  std::string out_dir;
  std::string shard = "0/1";
};

// "I/N" -> {I, N}; shard_points checks the range.
std::pair<int, int> parse_shard(const std::string& text) {
  size_t slash = text.find('/');
  size_t index_end = 0, count_end = 0;
  int index = -1, count = 0;
  try {
    index = std::stoi(text.substr(0, slash), &index_end);
    count = std::stoi(text.substr(slash + 1), &count_end);
  } catch (const std::exception&) {
    slash = std::string::npos;
  }
  SEED_CHECK(slash != std::string::npos && index_end == slash && count_end == text.size() - slash - 1,
             kInvalidArgument)
      << "--shard '" << text << "': expected I/N, e.g. 0/4";
  return {index, count};
}

// Runs one point as `seed run ARGS --out DIR/SLUG --resume`.
void run_point(const SweepPoint& point, const std::string& dir, const GlobalOptions& global) {
  std::vector<std::string> args = {"run"};
  for (std::string& a : point.run_args()) args.push_back(std::move(a));
  args.insert(args.end(), {"--out", (std::filesystem::path(dir) / point.slug).string(), "--resume"});
  CLI::App app;
  add_run_command(app, global);
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector last argument first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    SEED_FAIL(kInvalidArgument) << e.what();  // the sweep names the point
  }
}

void sweep(const SweepOptions& o, const GlobalOptions& global) {
  const RunOptionCheck is_run_option = run_option_check(global);
  const nlohmann::json raw = read_sweep_config(o.config_path);
  const SweepConfig config = expand_sweep_config(raw, o.config_path, is_run_option);
  const auto [shard, shards] = parse_shard(o.shard);
  const std::vector<SweepPoint> points = shard_points(config.points, shard, shards);
  const bool distributed = global.mpi && global.mpi->world_size() > 1;
  const bool writer = !distributed || global.mpi->world_rank() == 0;
  if (writer) open_sweep_folder(o.out_dir, raw, config, is_run_option);
  spdlog::info("sweep: {}{}; folders under {}", counted(static_cast<int64_t>(points.size()), "point"),
               shards > 1 ? fmt::format(" (shard {}/{} of {})", shard, shards, config.points.size()) : "", o.out_dir);

  GlobalOptions point_global = global;
  point_global.resume_hint = "run the same `seed sweep` again: it goes on where it stopped";
  // The points an earlier sweep finished; rank 0 alone sees them, and under
  // mpirun the worker ranks enter every point (below), so they read none.
  std::vector<bool> finished_before(points.size(), false);
  if (writer) {
    for (size_t i = 0; i < points.size(); ++i) finished_before[i] = sweep_point_finished(o.out_dir, points[i]);
  }
  // The ETA times only the points this sweep computes.
  size_t done = 0, computed = 0;
  const size_t to_compute = static_cast<size_t>(std::count(finished_before.begin(), finished_before.end(), false));
  double computed_s = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const SweepPoint& point = points[i];
    // Under mpirun the worker ranks cannot see which points are finished as
    // rank 0 does, so every rank enters every point; a finished one then
    // only rewrites its summary from its results.
    if (!distributed && finished_before[i]) {
      ++done;
      continue;
    }
    if (writer && !finished_before[i]) {
      const size_t left = to_compute - computed;
      print_progress_line(done, points.size(),
                          fmt::format("now {}  {}", point.slug,
                                      eta_text(computed ? computed_s / double(computed) * double(left) : -1.0)));
    }
    const Clock::time_point start = Clock::now();
    // A point reuses the models of the points before it that it asks for.
    if (global.loaded_models) global.loaded_models->next_run();
    try {
      run_point(point, o.out_dir, point_global);
    } catch (const Error& e) {
      // The points finished so far keep their rows in the tables.
      if (writer) {
        try {
          write_sweep_tables(o.out_dir, collect_sweep_rows(o.out_dir, config));
        } catch (const Error&) {  // the point's own error is the one to report
        }
      }
      throw Error(e.kind(), "sweep point " + point.slug + " (" + o.config_path + "): " + e.what());
    }
    if (!finished_before[i]) {
      computed_s += std::chrono::duration<double>(Clock::now() - start).count();
      ++computed;
    }
    ++done;
  }
  if (!writer) return;
  print_progress_line(done, points.size(), "points done");
  const std::vector<nlohmann::json> rows = collect_sweep_rows(o.out_dir, config);
  write_sweep_tables(o.out_dir, rows);
  fmt::print("sweep: {} of {} points finished in {}; table {}/sweep.jsonl (and .csv)\n", rows.size(),
             config.points.size(), o.out_dir, o.out_dir);
}

}  // namespace

void add_sweep_command(CLI::App& app, const GlobalOptions& global) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* cmd = app.add_subcommand("sweep", "Run a grid of `seed run`s from a config file, resumable and shardable");
  cmd->add_option("--config", o->config_path, "Sweep config (JSON): run options, and lists under \"grid\"")->required();
  cmd->add_option("--out", o->out_dir, "Sweep folder: one run folder per point, sweep.jsonl and sweep.csv")
      ->required();
  cmd->add_option("--shard", o->shard, "Run shard I of N: every N-th point from the I-th (e.g. a Slurm array task)")
      ->capture_default_str();
  cmd->callback([o, &global] { sweep(*o, global); });
}

}  // namespace seed::launch
