// `seed trigrams`: builds ADED's tri-gram table from a corpus, tokenized as
// the trainer does with the target's tokenizer, and writes it for
// `--drafter aded --trigrams FILE` (spec/drafters/aded/trigram_table.h).
#include <cstdint>
#include <fmt/format.h>

#include <iostream>

#include "launch/commands.h"
#include "models/base/error.h"
#include "models/tokenizer.h"
#include "models/training/training_data.h"
#include "spec/drafters/aded/trigram_table.h"

namespace seed::launch {
namespace {

struct TrigramsOptions {
  std::string model = "models/zoo/tiny-target";
  std::vector<std::string> corpus;
  std::string out;
  int top_k = spec::TrigramTable::kTopK;
};

void run_trigrams(const TrigramsOptions& o) {
  SEED_CHECK(o.top_k >= 1, kInvalidArgument) << "--top-k: " << o.top_k << " < 1";
  const std::unique_ptr<models::Tokenizer> tokenizer = models::load_tokenizer(o.model);
  std::vector<std::vector<int32_t>> documents;
  int64_t tokens = 0;
  for (const std::string& path : o.corpus) {
    for (const models::Example& example : models::read_examples(path)) {
      documents.push_back(models::tokenize_example(*tokenizer, example, nullptr).tokens);
      tokens += static_cast<int64_t>(documents.back().size());
    }
  }
  const spec::TrigramTable table = spec::TrigramTable::build(documents, o.top_k);
  table.save(o.out);
  std::cout << fmt::format("{}: {} contexts (top {} successors each) from {} documents, {} tokens\n", o.out,
                           table.contexts(), o.top_k, documents.size(), tokens);
}

}  // namespace

void add_trigrams_command(CLI::App& app) {
  auto o = std::make_shared<TrigramsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "trigrams", "Build ADED's tri-gram table from JSONL corpora (prompt, completion) with a model's tokenizer");
  cmd->add_option("--model", o->model, "Model folder whose tokenizer tokenizes the corpus (the target's)")
      ->check(CLI::ExistingDirectory)
      ->capture_default_str();
  cmd->add_option("--corpus", o->corpus, "JSONL corpus files, one {\"prompt\", \"completion\"} per line (seed corpus)")
      ->required();
  cmd->add_option("--out", o->out, "Tri-gram table file to write")->required();
  cmd->add_option("--top-k", o->top_k, "Successors kept per context")->capture_default_str();
  cmd->callback([o] { run_trigrams(*o); });
}

}  // namespace seed::launch
