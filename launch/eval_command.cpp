// `seed eval game24`: how competent a model (and a draft/target pair) is on
// the Game of 24 test puzzles. The numbers models/zoo/README.md reports.
#include <cstdint>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>

#include "eval/acceptance.h"
#include "eval/game24_eval.h"
#include "eval/prm_eval.h"
#include "launch/commands.h"
#include "launch/counted.h"
#include "launch/model_option.h"
#include "launch/runtime.h"
#include "launch/json_text.h"
#include "launch/progress_line.h"
#include "models/base/error.h"
#include "models/base/sampling.h"
#include "models/tokenizer.h"
#include "spec/engine/engine_factory.h"
#include "spec/engine/model_target.h"
#include "spec/reward/prm_scorer.h"
#include "tasks/corpus.h"
#include "tasks/corpus_formats.h"

namespace seed::launch {
namespace {

struct EvalOptions {
  std::string model_dir;
  std::string draft_dir;
  std::string game24_csv = tasks::kGame24CsvPath;
  int limit = 100;  // test puzzles
  eval::Game24EvalOptions eval;
  int draft_length = 4;
  std::string json_path;
  std::string value_out;  // JSONL, one value judgment per line
};

// Opens an output file before the (minutes-long) evaluation, so that a bad
// path fails at once instead of discarding the results at the end.
std::ofstream open_output(const std::string& path, const char* flag) {
  std::ofstream file(path);
  SEED_CHECK(file.good(), kIo) << flag << ": cannot write " << path;
  return file;
}

void close_output(std::ofstream& file, const std::string& path) {
  file.close();
  SEED_CHECK(!file.fail(), kIo) << "writing " << path << " failed (disk full?)";
}

void write_value_judgments(std::ofstream& file, const std::vector<eval::Game24ValueJudgment>& judgments) {
  for (const auto& j : judgments) {
    file << dump_model_output(nlohmann::ordered_json{
                {"state", j.state}, {"solver", tasks::game24_label_name(j.solver)}, {"model", j.model}})
         << "\n";
  }
}

void run_eval(EvalOptions options, const GlobalOptions& global) {
  check_temperature(options.eval.temperature, "--temperature");
  const auto all = tasks::load_game24_csv(options.game24_csv);
  SEED_CHECK(all.size() >= tasks::kGame24TestEnd, kInvalidArgument)
      << options.game24_csv << " has " << all.size() << " puzzles; the test split is rows 900-999";
  const size_t count = std::min<size_t>(options.limit, tasks::kGame24TestEnd - tasks::kGame24TestBegin);
  const std::vector<tasks::Numbers> puzzles(all.begin() + tasks::kGame24TestBegin,
                                            all.begin() + tasks::kGame24TestBegin + count);
  std::ofstream json_file, value_file;
  if (!options.json_path.empty()) json_file = open_output(options.json_path, "--json");
  if (!options.value_out.empty()) value_file = open_output(options.value_out, "--value-out");
  std::shared_ptr<models::CausalLM> model = models::CausalLM::load(options.model_dir, model_load_options(global, "cpu"));
  auto tokenizer = models::load_tokenizer(options.model_dir);
  options.eval.on_progress = [](const char* phase, int64_t done, int64_t total) {
    print_progress_line(done, total, phase);
  };
  // The model writes through its ar engine, on the model loaded once for
  // this and the acceptance measurement.
  spec::EngineOptions ar;
  ar.engine = spec::EngineKind::kAr;
  ar.target = options.model_dir;
  const std::unique_ptr<spec::Engine> engine = spec::make_engine(ar, std::make_unique<spec::ModelTarget>(model), {});
  const eval::Game24EvalResult r = eval::evaluate_game24(*engine, puzzles, options.eval);
  nlohmann::json out = {{"model", options.model_dir},
                        {"test_puzzles", count},
                        {"propose_step_lines", r.step_lines},
                        {"propose_step_validity", r.step_validity()},
                        {"value_states", r.value_states},
                        {"value_agreement", r.value_agreement()},
                        {"value_unparsed", r.value_unparsed},
                        {"cot_temperature", options.eval.temperature},
                        {"cot_accuracy", r.cot_accuracy()}};
  std::cout << fmt::format("Game of 24, {} test puzzles (rows 900-{}), model {}\n", count, 899 + count,
                           options.model_dir)
            << fmt::format("propose  {:5.1f}% of {} step lines well-formed and exact\n",
                           100 * r.step_validity(), r.step_lines)
            << fmt::format("value    {:5.1f}% of {} states agree with the solver ({} unparsed)\n",
                           100 * r.value_agreement(), r.value_states, r.value_unparsed);
  const char* names[] = {"sure", "likely", "impossible"};
  std::cout << "         solver \\ model   sure  likely  impossible\n";
  for (int t = 0; t < 3; ++t) {
    std::cout << fmt::format("         {:>14} {:6} {:7} {:11}\n", names[t], r.value_confusion[t][0],
                             r.value_confusion[t][1], r.value_confusion[t][2]);
  }
  std::cout << fmt::format("cot      {:5.1f}% single-sample accuracy at temperature {}\n", 100 * r.cot_accuracy(),
                           options.eval.temperature);

  if (!options.draft_dir.empty()) {
    std::shared_ptr<const models::CausalLM> draft =
        models::CausalLM::load(options.draft_dir, spec::draft_load_options(model_load_options(global, "cpu"),
                                                                            options.model_dir, options.draft_dir));
    std::vector<std::vector<int32_t>> prompts;
    for (const auto& puzzle : puzzles) {
      const std::string input = tasks::numbers_text(puzzle);
      prompts.push_back(tokenizer->encode(tasks::render_prompt(tasks::kGame24ProposePrompt, {{"input", input}}), true));
      prompts.push_back(tokenizer->encode(tasks::render_prompt(tasks::kGame24CotPrompt, {{"input", input}}), true));
    }
    eval::AcceptanceOptions acceptance;
    acceptance.draft_length = options.draft_length;
    acceptance.sampling = SamplingParams{0.7f, 0, 1.0f};
    acceptance.seed = options.eval.seed;
    acceptance.eos = tokenizer->eos_id();
    const eval::AcceptanceResult a = eval::measure_acceptance(model, draft, prompts, acceptance);
    const double alpha = a.alpha();
    const int k = options.draft_length;
    const double tau_max = spec::tau_max(alpha, k);
    std::cout << fmt::format("draft    {}: alpha {:.3f} ({} of {} tested draft tokens accepted; {:.3f} of all {} "
                             "drafted) at temperature 0.7, k = {}"
                             "\n         tokens per target forward {:.2f} (i.i.d. limit "
                             "(1 - alpha^(k+1)) / (1 - alpha) = {:.2f})\n",
                             options.draft_dir, alpha, a.accepted, a.accepted + a.rejections, a.accepted_fraction(),
                             a.proposed, k, a.tokens_per_round(), tau_max);
    out["draft"] = options.draft_dir;
    out["alpha"] = alpha;
    out["accepted_fraction"] = a.accepted_fraction();
    out["draft_length"] = k;
    out["tokens_per_target_forward"] = a.tokens_per_round();
    // Calibration as pruned trees rely on it: greedy chains of 10, the
    // draft's probability of each token against the target's acceptance.
    eval::AcceptanceOptions greedy = acceptance;
    greedy.sampling = SamplingParams{0.0f, 0, 1.0f};
    greedy.draft_length = 10;
    const eval::Calibration c = eval::measure_acceptance(model, draft, prompts, greedy).calibration;
    std::cout << fmt::format("         calibration: ECE {:.3f} over {} greedy draft tokens (chains of 10)\n"
                             "         confidence   tokens  accepted  mean confidence\n",
                             c.ece(), c.total());
    nlohmann::json bins = nlohmann::json::array();
    for (int b = 0; b < eval::Calibration::kBins; ++b) {
      const double n = static_cast<double>(c.tokens[b]);
      const double accepted = n > 0 ? static_cast<double>(c.accepted[b]) / n : 0.0;
      const double confidence = n > 0 ? c.confidence[b] / n : 0.0;
      std::cout << fmt::format("         {:>4.1f}-{:<4.1f} {:>10} {:>9.3f} {:>16.3f}\n", b / 10.0, (b + 1) / 10.0,
                               c.tokens[b], accepted, confidence);
      bins.push_back({{"tokens", c.tokens[b]}, {"accepted", accepted}, {"confidence", confidence}});
    }
    out["calibration"] = {{"ece", c.ece()}, {"tokens", c.total()}, {"bins", bins}};
  }
  if (value_file.is_open()) {
    write_value_judgments(value_file, r.value_judgments);
    close_output(value_file, options.value_out);
  }
  if (json_file.is_open()) {
    json_file << out.dump(2) << "\n";
    close_output(json_file, options.json_path);
  }
}

struct PrmEvalOptions {
  std::string model_dir;
  std::string game24_csv = tasks::kGame24CsvPath;
  int limit = 100;
  int paths = 8;
  uint64_t seed = 0;
  std::string json_path;
};

void run_prm_eval(const PrmEvalOptions& options, const GlobalOptions& global) {
  const auto all = tasks::load_game24_csv(options.game24_csv);
  SEED_CHECK(all.size() >= tasks::kGame24TestEnd, kInvalidArgument)
      << options.game24_csv << " has " << all.size() << " puzzles; the test split is rows 900-999";
  const std::vector<tasks::Numbers> puzzles(all.begin() + tasks::kGame24TestBegin,
                                            all.begin() + tasks::kGame24TestBegin + options.limit);
  std::ofstream json_file;
  if (!options.json_path.empty()) json_file = open_output(options.json_path, "--json");
  spec::EngineOptions engine;
  use_global_model_options(global, engine);
  const std::unique_ptr<spec::StepScorer> scorer = spec::load_prm_scorer(options.model_dir, engine);
  const eval::PrmEvalResult r = eval::evaluate_prm(*scorer, puzzles, options.paths, options.seed);
  std::cout << fmt::format("prm      {:5.1f}% of {} test-split states judged as the solver does ({:.1f}% can make 24)\n",
                           100 * r.accuracy(), r.total_states(),
                           r.total_states() ? 100.0 * r.solvable / r.total_states() : 0.0);
  nlohmann::json by_depth = nlohmann::json::object();
  for (int depth = 1; depth <= 3; ++depth) {
    std::cout << fmt::format("         after {}: {:5.1f}% of {}\n", counted(depth, "step"), 100 * r.accuracy(depth),
                             r.states[depth]);
    by_depth[std::to_string(depth)] = {{"states", r.states[depth]}, {"accuracy", r.accuracy(depth)}};
  }
  if (json_file.is_open()) {
    json_file << nlohmann::json{{"model", options.model_dir}, {"puzzles", puzzles.size()}, {"states", r.total_states()},
                                {"accuracy", r.accuracy()}, {"solvable", r.solvable}, {"by_depth", by_depth},
                                {"prm_tokens", r.computed_tokens}, {"prm_scored_tokens", r.scored_tokens}}
                     .dump(2)
              << "\n";
    close_output(json_file, options.json_path);
  }
}

}  // namespace

void add_eval_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* eval = app.add_subcommand("eval", "Measure a model's competence on a task's test split");
  eval->require_subcommand(1);
  auto options = std::make_shared<EvalOptions>();
  CLI::App* game24 = eval->add_subcommand(
      "game24", "Propose-step validity, value agreement with the solver, CoT accuracy (and draft acceptance)");
  add_model_option(game24, &options->model_dir, "Model folder");
  game24->add_option("--draft", options->draft_dir, "Draft model folder: also measure acceptance (alpha)")
      ->check(CLI::ExistingDirectory);
  game24->add_option("--game24-csv", options->game24_csv, "Tree of Thoughts' 24.csv")->capture_default_str();
  game24->add_option("--limit", options->limit, "Test puzzles to use (of 100)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  game24->add_option("--temperature", options->eval.temperature, "Chain-of-thought sampling temperature")
      ->capture_default_str();
  game24->add_option("--seed", options->eval.seed, "Seed of every draw")->capture_default_str();
  game24->add_option("--max-value-states", options->eval.max_value_states, "Cap on judged states (0 = all)")
      ->capture_default_str();
  game24->add_option("--draft-length", options->draft_length, "k for the acceptance measurement")
      ->check(positive_integer())
      ->capture_default_str();
  game24->add_option("--json", options->json_path, "Also write the figures to this JSON file");
  game24->add_option("--value-out", options->value_out,
                     "Also write every value judgment to this JSONL file (state, solver, model)");
  game24->callback([options, &global] { run_eval(*options, global); });

  auto prm = std::make_shared<PrmEvalOptions>();
  CLI::App* prm_cmd = eval->add_subcommand(
      "prm", "A process reward model's step accuracy on the test puzzles' states, against the exact solver");
  add_model_option(prm_cmd, &prm->model_dir, "Process reward model folder (config.json, prm.json)");
  prm_cmd->add_option("--game24-csv", prm->game24_csv, "Tree of Thoughts' 24.csv")->capture_default_str();
  prm_cmd->add_option("--limit", prm->limit, "Test puzzles to use (of 100)")->check(CLI::Range(1, 100))->capture_default_str();
  prm_cmd->add_option("--paths", prm->paths, "Random three-step paths per puzzle")->check(positive_integer())
      ->capture_default_str();
  prm_cmd->add_option("--seed", prm->seed, "Seed of the paths")->capture_default_str();
  prm_cmd->add_option("--json", prm->json_path, "Also write the figures to this JSON file");
  prm_cmd->callback([prm, &global] { run_prm_eval(*prm, global); });
}

}  // namespace seed::launch
