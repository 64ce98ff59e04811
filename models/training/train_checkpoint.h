// Training checkpoints: output/checkpoint/, written atomically (private to
// the trainer, models/training/trainer.h).
//
// A checkpoint folder holds the model as a loadable HF folder (config.json,
// model.safetensors), tokenizer.model, optimizer.pt (torch::save of the
// AdamW state) and trainer_state.json (step, data position, loss EMA,
// history, and the config it was trained with). It is written to
// checkpoint.tmp/ and renamed into place; the previous one is first renamed
// to checkpoint.old/ and removed last. If a run dies between the two
// renames, checkpoint.old/ is complete and find_checkpoint() returns it.
//
// Not thread-safe: one trainer per output folder.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace torch::optim {
class Optimizer;
}

namespace seed::models {

class CausalLM;
struct TrainConfig;

constexpr char kTrainerStateFile[] = "trainer_state.json";
constexpr char kOptimizerFile[] = "optimizer.pt";
constexpr char kTokenizerFile[] = "tokenizer.model";

// The newest complete checkpoint folder under `output`, or "" if none.
std::string find_checkpoint(const std::string& output);

// Writes a checkpoint of `model`, `optimizer` and `state` (trainer_state.json
// without its format fields, which this adds) under `output`, with a copy of
// `tokenizer_path`. Returns the checkpoint folder. Throws kIo; on a throw the
// previous checkpoint is still found by find_checkpoint().
std::string write_training_checkpoint(const std::string& output, const CausalLM& model,
                                      torch::optim::Optimizer& optimizer, nlohmann::json state,
                                      const std::string& tokenizer_path);

// Reads and checks trainer_state.json of a checkpoint folder: kCorruption
// naming the file if it is not seed's trainer state.
nlohmann::json read_trainer_state(const std::string& checkpoint_dir);

// Checks that `config` would continue the trajectory `state` was trained on:
// kInvalidArgument naming config.source, each differing field and both
// values. Settings that do not change the weights (eval, checkpoint
// interval, threads, device, output) may differ. `steps` may differ too (to
// extend a run); returns a note saying the schedule changes from there, or "".
std::string check_resumable(const TrainConfig& config, const nlohmann::json& state,
                            const std::string& checkpoint_dir);

}  // namespace seed::models
