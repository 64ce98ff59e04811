// `seed report DIR`: DIR/report.html from a sweep folder. The table is
// collected afresh from the point folders first (and sweep.jsonl/.csv
// rewritten), so that the report of a sharded sweep holds every shard's
// points whichever shard finished last.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "launch/commands.h"
#include "launch/report_html.h"
#include "launch/run_option_check.h"
#include "launch/sweep_folder.h"
#include "launch/sweep_table.h"
#include "models/base/error.h"

namespace seed::launch {
namespace {

void report(const std::string& dir, const GlobalOptions& global) {
  const SweepConfig config = read_sweep_folder(dir, run_option_check(global));
  const std::vector<nlohmann::json> rows = collect_sweep_rows(dir, config);
  write_sweep_tables(dir, rows);
  const std::string path = (std::filesystem::path(dir) / "report.html").string();
  std::ofstream out(path);
  out << sweep_report_html(std::filesystem::path(dir).lexically_normal().filename().string(), rows);
  SEED_CHECK(out.good(), kIo) << "cannot write " << path;
  fmt::print("report: {} ({} of {} points)\n", path, rows.size(), config.points.size());
}

}  // namespace

void add_report_command(CLI::App& app, const GlobalOptions& global) {
  auto dir = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("report", "Write DIR/report.html from a `seed sweep` folder (self-contained)");
  cmd->add_option("dir", *dir, "The sweep's --out folder")->required();
  cmd->callback([dir, &global] { report(*dir, global); });
}

}  // namespace seed::launch
