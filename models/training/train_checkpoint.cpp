#include "models/training/train_checkpoint.h"

#include <cstdint>
#include <torch/torch.h>

#include <filesystem>
#include <set>

#include "models/causal_lm.h"
#include "models/base/atomic_file.h"
#include "models/base/error.h"
#include "models/base/json_fields.h"
#include "models/training/train_config.h"

namespace seed::models {
namespace {

namespace fs = std::filesystem;

constexpr char kCheckpointDir[] = "checkpoint";
constexpr char kTempDir[] = "checkpoint.tmp";
constexpr char kOldDir[] = "checkpoint.old";
constexpr char kStateFormat[] = "seed-trainer-state";
constexpr int kStateVersion = 1;

// Config fields a resumed run may change: they do not alter the weights.
const std::set<std::string> kRunOnlyFields = {"eval_interval", "eval_batches", "checkpoint_interval",
                                              "output",        "resume",       "threads",
                                              "device",        "steps"};

bool has_state(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / kTrainerStateFile, ec);
}

void rename_or_throw(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  SEED_CHECK(!ec, kIo) << "cannot rename " << from.string() << " to " << to.string() << ": " << ec.message();
}

void remove_or_throw(const fs::path& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  SEED_CHECK(!ec, kIo) << "cannot remove " << dir.string() << ": " << ec.message();
}

}  // namespace

std::string find_checkpoint(const std::string& output) {
  for (const char* name : {kCheckpointDir, kOldDir}) {
    const fs::path dir = fs::path(output) / name;
    if (has_state(dir)) return dir.string();
  }
  return "";
}

std::string write_training_checkpoint(const std::string& output, const CausalLM& model,
                                      torch::optim::Optimizer& optimizer, nlohmann::json state,
                                      const std::string& tokenizer_path) {
  const fs::path root(output);
  const fs::path temp = root / kTempDir, final_dir = root / kCheckpointDir, old = root / kOldDir;
  remove_or_throw(temp);
  std::error_code ec;
  fs::create_directories(temp, ec);
  SEED_CHECK(!ec, kIo) << "cannot create " << temp.string() << ": " << ec.message();

  model.save(temp.string(), torch::kFloat);
  try {
    torch::save(optimizer, (temp / kOptimizerFile).string());
  } catch (const c10::Error& e) {
    SEED_FAIL(kIo) << "cannot write " << (temp / kOptimizerFile).string() << ": " << e.what_without_backtrace();
  }
  fs::copy_file(tokenizer_path, temp / kTokenizerFile, fs::copy_options::overwrite_existing, ec);
  SEED_CHECK(!ec, kIo) << "cannot copy " << tokenizer_path << " into " << temp.string() << ": " << ec.message();
  state["format"] = kStateFormat;
  state["version"] = kStateVersion;
  write_file_atomically((temp / kTrainerStateFile).string(), state.dump(2) + "\n");

  // checkpoint -> checkpoint.old, tmp -> checkpoint, drop old: at every
  // instant one complete checkpoint is found by find_checkpoint().
  if (has_state(final_dir)) {
    remove_or_throw(old);
    rename_or_throw(final_dir, old);
  } else {
    remove_or_throw(final_dir);
  }
  rename_or_throw(temp, final_dir);
  remove_or_throw(old);
  return final_dir.string();
}

nlohmann::json read_trainer_state(const std::string& checkpoint_dir) {
  const std::string path = (fs::path(checkpoint_dir) / kTrainerStateFile).string();
  const nlohmann::json state = read_json_file(path);
  SEED_CHECK(state.is_object() && state.value("format", "") == kStateFormat, kCorruption)
      << path << ": not a seed trainer state (expected \"format\": \"" << kStateFormat << "\")";
  SEED_CHECK(state.value("version", 0) == kStateVersion, kCorruption)
      << path << ": trainer state version " << state.value("version", 0) << ", this seed reads version "
      << kStateVersion;
  for (const char* key :
       {"step", "epoch", "row", "loss_ema", "tokens", "train_seconds", "wall_seconds", "history", "config"}) {
    SEED_CHECK(state.contains(key), kCorruption) << path << ": field '" << key << "' is missing";
  }
  return state;
}

std::string check_resumable(const TrainConfig& config, const nlohmann::json& state,
                            const std::string& checkpoint_dir) {
  const nlohmann::json now = config.to_json();
  const nlohmann::json& then = state.at("config");
  std::set<std::string> keys;
  for (const auto& item : now.items()) keys.insert(item.key());
  for (const auto& item : then.items()) keys.insert(item.key());
  for (const std::string& key : keys) {
    if (kRunOnlyFields.count(key) != 0) continue;
    const nlohmann::json was = then.contains(key) ? then[key] : nlohmann::json();
    const nlohmann::json is = now.contains(key) ? now[key] : nlohmann::json();
    SEED_CHECK(was == is, kInvalidArgument)
        << config.source << ": field '" << key << "' is " << is.dump() << " but the checkpoint " << checkpoint_dir
        << " was trained with " << was.dump()
        << "; resume with the same settings, or train into another output folder";
  }
  const int64_t step = state.at("step").get<int64_t>();
  SEED_CHECK(step <= config.steps, kInvalidArgument)
      << config.source << ": field 'steps' is " << config.steps << " but the checkpoint " << checkpoint_dir
      << " is already at step " << step;
  const int64_t old_steps = then.value("steps", config.steps);
  if (old_steps == config.steps) return "";
  return "steps changed from " + std::to_string(old_steps) + " to " + std::to_string(config.steps) +
         ": the learning-rate schedule changes from step " + std::to_string(step);
}

}  // namespace seed::models
