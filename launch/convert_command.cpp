// `seed convert`: a model folder with its matrices in another dtype, say
// float32 -> bfloat16 for half the bytes on disk, in memory and per decoded
// token, and, for a draft, its LM head cut to the tokens a corpus uses
// most (models/frequent_tokens.h). Norms and biases stay float32; the
// tokenizer and other files are copied as they are.
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <filesystem>

#include "launch/commands.h"
#include "launch/model_option.h"
#include "models/base/error.h"
#include "models/causal_lm.h"
#include "models/frequent_tokens.h"
#include "models/generation_config.h"

namespace seed::launch {
namespace {

namespace fs = std::filesystem;

struct ConvertOptions {
  std::string model_dir;
  std::string out_dir;
  std::string dtype = "bfloat16";
  int64_t draft_vocab_size = 0;
  std::vector<std::string> corpus;
  std::vector<std::string> held_out;
};

// Weight files are rewritten, every other file is copied.
bool is_weight_file(const fs::path& file) {
  const std::string name = file.filename().string();
  return name == "config.json" || (name.rfind("model", 0) == 0 && name.find(".safetensors") != std::string::npos);
}

// `model` with its LM head cut to the o.draft_vocab_size tokens o.corpus
// uses most, and the tokens that end or begin a generation and those the
// tokenizer adds (chat markers a generation writes).
std::unique_ptr<models::CausalLM> with_corpus_head(const models::CausalLM& model, const ConvertOptions& o) {
  const models::ModelConfig& config = model.config();
  const std::unique_ptr<models::Tokenizer> tokenizer = models::load_tokenizer(o.model_dir);
  const models::TokenCounts counts = models::count_corpus_tokens(*tokenizer, o.corpus, config.vocab_size);
  SEED_CHECK(counts.total > 0, kInvalidArgument) << "--corpus: the files hold no text to count tokens in";
  std::vector<int64_t> always(config.eos_token_ids.begin(), config.eos_token_ids.end());
  always.push_back(config.bos_token_id);
  const models::GenerationConfig generation =
      models::GenerationConfig::from_file(o.model_dir + "/generation_config.json");
  for (const int32_t t : models::stop_token_ids(tokenizer->eos_id(), generation)) always.push_back(t);
  if (tokenizer->bos_id() >= 0) always.push_back(tokenizer->bos_id());
  for (const int32_t t : tokenizer->added_token_ids()) {
    if (t < config.vocab_size) always.push_back(t);
  }
  const std::vector<int64_t> tokens =
      models::most_frequent_tokens(counts, o.draft_vocab_size, always, "--draft-vocab-size");
  spdlog::info("the LM head keeps {} of {} tokens: {:.2f}% of the {} tokens of the corpus", tokens.size(),
               config.vocab_size, 100.0 * counts.coverage(tokens), counts.total);
  if (!o.held_out.empty()) {
    const models::TokenCounts held_out = models::count_corpus_tokens(*tokenizer, o.held_out, config.vocab_size);
    spdlog::info("they are {:.2f}% of the {} tokens of the held-out text", 100.0 * held_out.coverage(tokens),
                 held_out.total);
  }
  return model.with_head_rows(torch::tensor(tokens));
}

void run_convert(const ConvertOptions& o) {
  const models::WeightDtype dtype = models::parse_weight_dtype(o.dtype, "--dtype");
  std::error_code ec;
  SEED_CHECK(!fs::equivalent(o.model_dir, o.out_dir, ec), kInvalidArgument)
      << "--out: " << o.out_dir << " is the model folder itself; write the converted model elsewhere";
  SEED_CHECK(!fs::exists(o.out_dir) || fs::is_empty(o.out_dir), kInvalidArgument)
      << "--out: " << o.out_dir << " exists and is not empty";
  SEED_CHECK((o.draft_vocab_size > 0) == !o.corpus.empty(), kInvalidArgument)
      << "--draft-vocab-size and --corpus go together: the head keeps the tokens the corpus uses most";
  SEED_CHECK(o.held_out.empty() || !o.corpus.empty(), kInvalidArgument)
      << "--held-out measures the tokens --corpus chose; give --draft-vocab-size and --corpus too";
  models::LoadOptions load;
  load.weights_dtype = dtype;
  std::unique_ptr<models::CausalLM> model = models::CausalLM::load(o.model_dir, load);
  if (o.draft_vocab_size > 0) model = with_corpus_head(*model, o);
  fs::create_directories(o.out_dir, ec);
  SEED_CHECK(!ec, kIo) << "--out: cannot create " << o.out_dir << ": " << ec.message();
  model->save(o.out_dir, std::nullopt);
  for (const fs::directory_entry& entry : fs::directory_iterator(o.model_dir)) {
    if (!entry.is_regular_file() || is_weight_file(entry.path())) continue;
    fs::copy_file(entry.path(), fs::path(o.out_dir) / entry.path().filename(), ec);
    SEED_CHECK(!ec, kIo) << "cannot copy " << entry.path().string() << " to " << o.out_dir << ": " << ec.message();
  }
  spdlog::info("wrote {} with {} matrices ({:.1f} MB read per token)", o.out_dir, o.dtype,
               model->weights().bytes_read_per_token() / 1e6);
}

}  // namespace

void add_convert_command(CLI::App& app, const GlobalOptions&) {
  auto options = std::make_shared<ConvertOptions>();
  CLI::App* cmd = app.add_subcommand(
      "convert", "Write a model folder with its matrices in another dtype, or a draft's head cut to a corpus's tokens");
  add_model_option(cmd, &options->model_dir, "Hugging Face model folder");
  cmd->add_option("--out", options->out_dir, "New model folder (must not exist, or be empty)")->required();
  cmd->add_option("--dtype", options->dtype, "float32 | bfloat16 | float16")->capture_default_str();
  cmd->add_option("--draft-vocab-size", options->draft_vocab_size,
                  "Keep the LM head's rows of this many tokens, those --corpus uses most (a draft's; "
                  "verification stays exact)");
  cmd->add_option("--corpus", options->corpus,
                  "Text files whose tokens are counted for --draft-vocab-size (.jsonl: every string value)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--held-out", options->held_out,
                  "Text files, not counted, whose tokens the kept ones are measured against (the share they cover)")
      ->check(CLI::ExistingFile);
  cmd->callback([options] { run_convert(*options); });
}

}  // namespace seed::launch
