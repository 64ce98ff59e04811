// What a training run is built from before its first step (private to the
// trainer, models/training/trainer.h): the device check, the examples and
// their tokens, the run's tokenizer.model, the frozen models it learns from
// (a distillation teacher, an EDD target), the weights it starts from and
// the optimizer.
//
// Each check throws seed::Error naming config.source and the field at
// fault. Thread-safety: functions of their arguments; the ones that write
// into config.output assume one trainer per output folder.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/causal_lm.h"
#include "models/tokenizer.h"
#include "models/training/train_config.h"
#include "models/training/training_data.h"

namespace torch::optim {
class AdamW;
}

namespace seed::models {

// Throws kInvalidArgument unless config.device is "cpu" or a CUDA device
// this libtorch sees.
void check_device(const TrainConfig& config);

// Training reads and updates float32 weights, whatever a model folder
// stores, and so keeps the parameters beside their packed copies.
LoadOptions float32_on(const std::string& device);

// A frozen model whose logits the trained one learns from: a distillation
// teacher (`key` "distill.teacher") or an EDD's target ("edd.target").
std::unique_ptr<CausalLM> load_frozen(const TrainConfig& config, const std::string& dir, const std::string& key,
                                      const Tokenizer& tokenizer, const std::string& tokenizer_path);

// The weights training starts from: `config.init`'s model, which must have
// the configured shape and tokenizer, or a random initialisation; an EDD's
// embedding (and LM head when untied) is then its target's.
std::unique_ptr<CausalLM> initial_model(const TrainConfig& config, const ModelConfig& shape,
                                        const Tokenizer& tokenizer, const std::string& tokenizer_path,
                                        CausalLM* edd_target);

// The examples of all `files`, in order.
std::vector<Example> read_all(const std::vector<std::string>& files);

// `examples` tokenized; adds to *boundary_merges those with a token across
// the prompt/completion boundary.
std::vector<TokenizedExample> tokenize_all(const Tokenizer& tokenizer, const std::vector<Example>& examples,
                                           int64_t* boundary_merges);

// Puts the run's tokenizer.model into the output folder and returns its
// path: the checkpoint's when resuming (never retrained), else copied from
// tokenizer.from or trained on the training split.
std::string prepare_tokenizer(const TrainConfig& config, const std::string& checkpoint,
                              const std::vector<Example>& train_examples,
                              const std::function<void(const std::string&)>& note);

// AdamW over two groups: matrices (projections, embedding) with weight
// decay, vectors (norm gains, biases) without.
std::unique_ptr<torch::optim::AdamW> make_optimizer(const std::vector<at::Tensor>& params, const TrainConfig& config);

}  // namespace seed::models
