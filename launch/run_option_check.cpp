#include "launch/run_option_check.h"

#include <memory>

namespace seed::launch {

RunOptionCheck run_option_check(const GlobalOptions& global) {
  auto app = std::make_shared<CLI::App>();
  add_run_command(*app, global);
  const CLI::App* run = app->get_subcommand("run");
  return [app, run](const std::string& key) { return run->get_option_no_throw("--" + key) != nullptr; };
}

}  // namespace seed::launch
