// `seed train`: train a model from a JSON config (models/training/train_config.h),
// with a progress line on stderr.
#include <ATen/Parallel.h>
#include <cstdint>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "launch/commands.h"
#include "launch/cpu_features.h"
#include "launch/runtime.h"
#include "models/training/trainer.h"

namespace seed::launch {
namespace {

struct TrainOptions {
  std::string config_path;
  bool resume = false;
  int64_t stop_after = -1;
};

std::string format_duration(double seconds) {
  const auto total = static_cast<int64_t>(std::max(0.0, seconds));
  return fmt::format("{}:{:02}:{:02}", total / 3600, total / 60 % 60, total % 60);
}

// Renders TrainEvents: on a terminal one progress line redrawn in place (at
// most twice a second), elsewhere (a log file) a plain line every 10 s.
// Notes, evaluations and checkpoints go through spdlog after clearing the line.
class ProgressPrinter {
 public:
  ProgressPrinter() : terminal_(isatty(fileno(stderr)) != 0) {}

  void operator()(const models::TrainEvent& e) {
    using Kind = models::TrainEvent::Kind;
    switch (e.kind) {
      case Kind::kStep:
        show_step(e);
        return;
      case Kind::kEval:
        clear_line();
        spdlog::info("step {}/{}: eval loss {:.4f} (train loss {:.4f})", e.step, e.steps, e.eval_loss, e.loss_ema);
        return;
      case Kind::kCheckpoint:
        clear_line();
        spdlog::info("step {}/{}: checkpoint written to {}", e.step, e.steps, e.message);
        return;
      case Kind::kNote:
        clear_line();
        spdlog::info("{}", e.message);
        return;
    }
  }

  void finish() { clear_line(); }

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr double kTerminalPeriod = 0.5;  // seconds between redraws
  static constexpr double kLogPeriod = 10.0;      // seconds between lines in a log file

  void show_step(const models::TrainEvent& e) {
    const auto now = Clock::now();
    const double since = std::chrono::duration<double>(now - last_).count();
    const bool last_step = e.step == e.steps;
    if (shown_ && since < (terminal_ ? kTerminalPeriod : kLogPeriod) && !last_step) return;
    last_ = now;
    shown_ = true;
    std::string line = fmt::format("step {}/{}  loss {:.4f}", e.step, e.steps, e.loss_ema);
    if (e.kl != 0) line += fmt::format(" (ce {:.4f} kl {:.4f})", e.ce, e.kl);
    line += fmt::format("  lr {:.2e}  |g| {:.2f}  {:.0f} tok/s  ETA {}", e.lr, e.grad_norm, e.tokens_per_second,
                        format_duration(e.eta_seconds));
    if (!terminal_) {
      std::fprintf(stderr, "%s\n", line.c_str());
      return;
    }
    const size_t width = std::max(line.size(), drawn_);
    line.resize(width, ' ');
    std::fprintf(stderr, "\r%s", line.c_str());
    std::fflush(stderr);
    drawn_ = width;
  }

  void clear_line() {
    if (!terminal_ || drawn_ == 0) return;
    std::fprintf(stderr, "\r%s\r", std::string(drawn_, ' ').c_str());
    std::fflush(stderr);
    drawn_ = 0;
  }

  bool terminal_;
  bool shown_ = false;
  size_t drawn_ = 0;  // width of the progress line now on screen; 0 = none
  Clock::time_point last_;
};

void run_train(const TrainOptions& options, const GlobalOptions& global) {
  models::TrainConfig config = models::TrainConfig::from_file(options.config_path);
  config.resume = config.resume || options.resume;
  // --threads on the command line wins over the config's "threads".
  if (global.threads == 0 && config.threads > 0) at::set_num_threads(config.threads);
  const auto params = [&] {
    models::ModelConfig shape = config.model;
    shape.vocab_size = 0;
    return shape.num_parameters();
  }();
  spdlog::info("training {} ({} layers, hidden {}, {:.2f}M parameters without the embedding) for {} steps "
               "of {} x {} tokens on {}, {} matrix products",
               config.output, config.model.num_hidden_layers, config.model.hidden_size, params / 1e6, config.steps,
               config.batch_size, config.seq_len, config.device, config.precision);
  if (config.precision == "bfloat16" && config.device == "cpu" && !cpu_has_avx512_bf16()) {
    spdlog::warn("{}: \"precision\": \"bfloat16\" on a CPU without AVX512_BF16 emulates the products and may "
                 "train slower than \"float32\"",
                 config.source);
  }

  ProgressPrinter printer;
  models::TrainControl control;
  control.on_event = [&printer](const models::TrainEvent& e) { printer(e); };
  control.stop_after_step = options.stop_after;
  const models::TrainResult result = models::train(config, control);
  printer.finish();
  if (!result.finished) {
    spdlog::info("stopped at step {}/{} ({:.0f} tokens/s); continue with --resume", result.end_step, config.steps,
                 result.tokens_per_second);
    return;
  }
  spdlog::info("done: {} steps, train loss {:.4f}, eval loss {}, {:.0f} tokens/s, {} wall; model saved to {}",
               result.end_step, result.final_train_loss,
               std::isnan(result.final_eval_loss) ? std::string("n/a") : fmt::format("{:.4f}", result.final_eval_loss),
               result.tokens_per_second, format_duration(result.wall_seconds), config.output);
}

}  // namespace

void add_train_command(CLI::App& app, const GlobalOptions& global) {
  auto options = std::make_shared<TrainOptions>();
  CLI::App* cmd = app.add_subcommand("train", "Train a model (and its tokenizer) from a JSON config");
  cmd->add_option("--config", options->config_path, "Training config (JSON, see models/training/train_config.h)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_flag("--resume", options->resume, "Continue from OUTPUT/checkpoint if there is one");
  cmd->add_option("--stop-after", options->stop_after,
                  "Stop (with a checkpoint) once this many steps are done; resume later with --resume")
      ->check(positive_integer());
  cmd->callback([options, &global] { run_train(*options, global); });
}

}  // namespace seed::launch
