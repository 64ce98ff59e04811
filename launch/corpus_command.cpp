// `seed corpus`: write the synthetic task corpora the zoo models train on.
#include <spdlog/spdlog.h>

#include <map>

#include "launch/commands.h"
#include "tasks/corpus.h"

namespace seed::launch {
namespace {

struct CorpusOptions {
  std::string out;
  std::string kind;  // empty = every kind
  tasks::CorpusConfig config;
};

void run_corpus(CorpusOptions options) {
  options.config.validate();
  const auto examples = options.kind.empty() ? tasks::generate_corpus(options.config)
                                             : tasks::generate_corpus_kind(options.config, options.kind);
  tasks::write_corpus_jsonl(options.out, examples);
  std::map<std::string, int> counts;
  for (const auto& example : examples) ++counts[example.task + "/" + example.kind];
  for (const auto& [kind, count] : counts) spdlog::info("{:>28}: {}", kind, count);
  spdlog::info("wrote {} examples to {}", examples.size(), options.out);
}

}  // namespace

void add_corpus_command(CLI::App& app, const GlobalOptions&) {
  auto options = std::make_shared<CorpusOptions>();
  options->config.game24_csv = tasks::kGame24CsvPath;
  tasks::CorpusConfig& c = options->config;
  CLI::App* cmd = app.add_subcommand(
      "corpus", "Write Game-of-24 and Blocksworld training corpora as JSONL (prompt, completion)");
  cmd->add_option("--out", options->out, "Output JSONL file")->required();
  cmd->add_option("--kind", options->kind,
                  "Only this kind: propose, value, cot, prm, prm_states, next_action, evaluate_action or plan");
  cmd->add_option("--seed", c.seed, "Seed; the same seed writes the same corpus")->capture_default_str();
  cmd->add_option("--game24-csv", c.game24_csv,
                  "Tree of Thoughts' 24.csv (puzzles 900-999 are the test split and never used)")
      ->capture_default_str();
  cmd->add_option("--game24-propose", c.game24_propose, "Game of 24 'propose' examples")->capture_default_str();
  cmd->add_option("--game24-value", c.game24_value, "Game of 24 'value' examples")->capture_default_str();
  cmd->add_option("--game24-cot", c.game24_cot, "Game of 24 chain-of-thought examples")->capture_default_str();
  cmd->add_option("--game24-prm", c.game24_prm, "Game of 24 step-reward examples (a process reward model's)")
      ->capture_default_str();
  cmd->add_flag("--game24-prm-states", c.game24_prm_states,
               "Game of 24 step-reward examples of the states one and two steps from each training puzzle");
  cmd->add_option("--blocksworld-next-action", c.blocksworld_next_action, "Blocksworld next-action examples")
      ->capture_default_str();
  cmd->add_option("--blocksworld-evaluate-action", c.blocksworld_evaluate_action,
                  "Blocksworld good/bad action examples")
      ->capture_default_str();
  cmd->add_option("--blocksworld-plan", c.blocksworld_plan, "Blocksworld optimal-plan examples")
      ->capture_default_str();
  cmd->add_option("--value-on-path-percent", c.game24_value_on_path_percent,
                  "Percent of value states on a path to 24 (the rest are random steps from a puzzle)")
      ->capture_default_str();
  cmd->add_option("--random-percent", c.game24_random_percent,
                  "Percent of Game-of-24 puzzles drawn at random instead of from 24.csv")
      ->capture_default_str();
  cmd->callback([options] { run_corpus(*options); });
}

}  // namespace seed::launch
