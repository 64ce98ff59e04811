// `seed convert`: a model folder with its matrices in another dtype, say
// float32 -> bfloat16 for half the bytes on disk, in memory and per decoded
// token. Norms and biases stay float32; the tokenizer and other files are
// copied as they are.
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <filesystem>

#include "launch/commands.h"
#include "launch/model_option.h"
#include "models/causal_lm.h"
#include "models/base/error.h"

namespace seed::launch {
namespace {

namespace fs = std::filesystem;

struct ConvertOptions {
  std::string model_dir;
  std::string out_dir;
  std::string dtype = "bfloat16";
};

// Weight files are rewritten, every other file is copied.
bool is_weight_file(const fs::path& file) {
  const std::string name = file.filename().string();
  return name == "config.json" || (name.rfind("model", 0) == 0 && name.find(".safetensors") != std::string::npos);
}

void run_convert(const ConvertOptions& o) {
  const models::WeightDtype dtype = models::parse_weight_dtype(o.dtype, "--dtype");
  std::error_code ec;
  SEED_CHECK(!fs::equivalent(o.model_dir, o.out_dir, ec), kInvalidArgument)
      << "--out: " << o.out_dir << " is the model folder itself; write the converted model elsewhere";
  SEED_CHECK(!fs::exists(o.out_dir) || fs::is_empty(o.out_dir), kInvalidArgument)
      << "--out: " << o.out_dir << " exists and is not empty";
  models::LoadOptions load;
  load.weights_dtype = dtype;
  const auto model = models::CausalLM::load(o.model_dir, load);
  fs::create_directories(o.out_dir, ec);
  SEED_CHECK(!ec, kIo) << "--out: cannot create " << o.out_dir << ": " << ec.message();
  model->save(o.out_dir, std::nullopt);
  for (const fs::directory_entry& entry : fs::directory_iterator(o.model_dir)) {
    if (!entry.is_regular_file() || is_weight_file(entry.path())) continue;
    fs::copy_file(entry.path(), fs::path(o.out_dir) / entry.path().filename(), ec);
    SEED_CHECK(!ec, kIo) << "cannot copy " << entry.path().string() << " to " << o.out_dir << ": " << ec.message();
  }
  spdlog::info("wrote {} with {} matrices ({:.1f} MB read per token)", o.out_dir, o.dtype,
               model->weights().parameter_bytes() / 1e6);
}

}  // namespace

void add_convert_command(CLI::App& app, const GlobalOptions&) {
  auto options = std::make_shared<ConvertOptions>();
  CLI::App* cmd = app.add_subcommand("convert", "Write a model folder with its matrices in another dtype");
  add_model_option(cmd, &options->model_dir, "Hugging Face model folder");
  cmd->add_option("--out", options->out_dir, "New model folder (must not exist, or be empty)")->required();
  cmd->add_option("--dtype", options->dtype, "float32 | bfloat16 | float16")->capture_default_str();
  cmd->callback([options] { run_convert(*options); });
}

}  // namespace seed::launch
