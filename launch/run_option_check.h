// Which keys a sweep config may hold: exactly `seed run`'s options, read
// from the run command itself so that a flag added to `seed run` is a sweep
// key at once.
#pragma once

#include "launch/commands.h"
#include "launch/sweep_config.h"

namespace seed::launch {

RunOptionCheck run_option_check(const GlobalOptions& global);

}  // namespace seed::launch
