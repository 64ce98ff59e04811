// TrainConfig: everything `seed train` needs to train one model, read from a
// JSON file.
//
// One aggregate, parsed and validated once (by the launcher), then passed by
// const reference to train() (models/training/trainer.h). Parsing is strict: an
// unknown key, a key of the wrong type, a value out of range or a corpus file
// that does not exist is kInvalidArgument (kNotFound for files) naming the
// config file and the field ("model.hidden_size", "corpus[1]"). Relative paths
// in the file are resolved against the folder of the config file, so a config
// can be run from any working directory.
//
// Example (fields not shown take the defaults below):
//   {"model": {"hidden_size": 256, "intermediate_size": 688,
//              "num_hidden_layers": 4, "num_attention_heads": 4},
//    "corpus": ["game24.jsonl"], "eval_fraction": 0.02,
//    "tokenizer": {"train": {"vocab_size": 1024}},
//    "batch_size": 16, "seq_len": 256, "steps": 3000, "lr": 1e-3,
//    "output": "tiny-target"}
// A draft shares its target's tokenizer and may distil from it:
//    "tokenizer": {"from": "tiny-target"},
//    "distill": {"teacher": "tiny-target", "alpha": 0.5, "temperature": 1.0}
// An EDD draft of a target (no "model": its shape is the target's, with one
// decoder layer; the tokenizer defaults to the target's):
//    "edd": {"target": "tiny-target", "block_min": 5, "block_max": 10}
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "models/model_config.h"

namespace seed::models {

// Where the model's tokenizer comes from: exactly one of the two is set.
struct TokenizerSource {
  // "train": {"vocab_size": N}: train SentencePiece (train_sentencepiece) on
  // the prompt + completion text of the training split. 0 = not this source.
  int64_t train_vocab_size = 0;
  // "from": DIR: reuse DIR/tokenizer.model (a draft must share the target's
  // tokenizer). Empty = not this source.
  std::string from_dir;
};

// Knowledge distillation from a trained teacher with the same tokenizer:
// loss = (1 - alpha) * CE(data) + alpha * T^2 * KL(p_teacher^T || p_student^T)
// on completion tokens, p^T = softmax(logits / T). Forward KL (teacher
// first) as in EDD (Zheng & Wang 2025, Eq. 4): the student is pushed to
// cover the teacher's whole next-token distribution, which is what
// speculative sampling's acceptance rate sum_x min(p, q) rewards. T^2 keeps
// the gradient scale independent of T (Hinton et al., 2015).
struct DistillConfig {
  std::string teacher;       // HF model folder (with tokenizer.model); empty = off
  double alpha = 0.5;        // weight of the KL term, in [0, 1]
  double temperature = 1.0;  // > 0

  bool enabled() const { return !teacher.empty(); }
};

// EDD training (Zheng & Wang 2025, EDD-PCT, sec. 3.1; trainer.h says how a
// step runs): a one-layer draft of the target's width reading, for accepted
// positions, the target's hidden states after layer `target_layer`, trained
// by forward KL(p_target || p_draft) under the dual-block mask
// (edd_mask.h) with a block length drawn each step in [block_min,
// block_max].
struct EddConfig {
  std::string target;         // the target's HF model folder; empty = off
  // 0-based layer whose output feeds the draft (HF hidden_states[L + 1]).
  // from_json resolves -1 (absent) to the target's num_hidden_layers - 4, at
  // least 0 (HF hidden_states[-4]); edd_model_config() resolves it too.
  int64_t target_layer = -1;
  int64_t block_min = 5;      // >= 1
  int64_t block_max = 10;     // >= block_min

  bool enabled() const { return !target.empty(); }
};

struct TrainConfig {
  // --- What is trained -----------------------------------------------------
  // The model's shape. From the file's "model" object: hidden_size,
  // intermediate_size, num_hidden_layers, num_attention_heads (required),
  // num_key_value_heads (default: num_attention_heads),
  // max_position_embeddings (default: seq_len), tie_word_embeddings (default
  // true: at these sizes the embedding is a large share of the parameters),
  // rope_theta (default 10000), rms_norm_eps (default 1e-6). vocab_size and
  // the bos/eos ids come from the tokenizer when training starts.
  // With "edd" the file has no "model": from_json fills this with
  // edd_model_config().
  ModelConfig model;
  // JSONL files, one {"prompt": str, "completion": str, ...} object a line
  // (other keys ignored, blank lines skipped). Required, at least one.
  std::vector<std::string> corpus;
  // Held-out evaluation examples: either this fraction of the corpus (a
  // random subset, fixed by `seed`) or every example of eval_file (then no
  // corpus example is held out). 0 and no eval_file = no evaluation.
  double eval_fraction = 0.02;  // in [0, 0.5]
  std::string eval_file;        // JSONL like `corpus`; empty = use eval_fraction
  // Required, except with "edd", where it defaults to {"from": edd.target}
  // (a draft must use its target's tokenizer; "train" is an error).
  TokenizerSource tokenizer;
  DistillConfig distill;        // optional; not with "edd" (its KL is the objective)
  EddConfig edd;                // optional
  // "init": DIR: start from this trained HF model folder's weights instead of
  // a random initialisation (continued training, fine-tuning). Its shape must
  // equal `model` and its tokenizer.model the tokenizer's. Empty = random.
  std::string init;

  // --- Optimisation ----------------------------------------------------------
  int64_t batch_size = 8;   // rows per step
  int64_t seq_len = 256;    // tokens per row fed to the model (rows hold seq_len + 1)
  int64_t steps = 1000;     // optimizer steps in all
  double lr = 1e-3;         // peak learning rate
  double min_lr = 1e-4;     // floor of the cosine decay; from_json: lr / 10 if absent
  int64_t warmup_steps = 100;  // linear warm-up from lr / warmup_steps to lr, then cosine
  // AdamW decoupled weight decay, applied to matrices (projections and the
  // embedding) but not to norm gains or biases: the common practice of
  // GPT-2/nanoGPT/HF, since decaying a gain towards 0 rescales activations
  // rather than regularising.
  double weight_decay = 0.1;
  double beta1 = 0.9;   // "betas": [beta1, beta2]
  double beta2 = 0.95;
  double adam_eps = 1e-8;
  double grad_clip = 1.0;  // max global L2 norm of the gradient; 0 = no clipping

  // --- Evaluation and checkpoints ---------------------------------------------
  int64_t eval_interval = 100;        // steps between evaluations; 0 = only at the end
  int64_t eval_batches = 8;           // batches of held-out rows per evaluation
  int64_t checkpoint_interval = 200;  // steps between checkpoints; 0 = none
  std::string output;                 // output folder (required)
  bool resume = false;                // continue from output/checkpoint if there is one

  // --- Run ---------------------------------------------------------------------
  uint64_t seed = 0;           // initialisation, data order and the eval split
  int threads = 0;             // intra-op threads (the launcher applies it); 0 = all
  std::string device = "cpu";  // "cpu" or "cuda:N"
  // The dtype of the matrix products: "float32", or "bfloat16" for mixed
  // precision (weights, gradients, optimizer state, norms, the residual
  // stream and the loss stay float32). bfloat16 is faster where the hardware
  // multiplies it natively (AVX512_BF16 or AMX CPUs, recent GPUs) and may be
  // slower elsewhere.
  std::string precision = "float32";

  // The file this came from, for error messages ("" if built in code).
  std::string source;

  // Throws kInvalidArgument naming the field for a value out of range (see
  // each field) or an inconsistent model shape (with "edd": the target's
  // shape, checked by edd_model_config()).
  void validate() const;

  // Parses a config object; `source` names it in errors and `base_dir`
  // resolves relative paths. Checks that corpus, eval and tokenizer/teacher
  // paths exist (kNotFound naming the field). Calls validate().
  static TrainConfig from_json(const nlohmann::json& json, const std::string& source, const std::string& base_dir);
  // Reads and parses `path`: kNotFound if absent, kCorruption naming the file
  // if it is not valid JSON; relative paths are resolved against its folder.
  static TrainConfig from_file(const std::string& path);

  // The config as JSON, in the file's layout, with resolved paths (stored in
  // checkpoints and training_log.json).
  nlohmann::json to_json() const;
};

// The EDD's shape (config.edd must be enabled): the target's config.json
// with num_hidden_layers 1 and edd_target_layer the resolved target layer.
// Throws kNotFound naming 'edd.target' for a folder without config.json,
// kInvalidArgument naming 'edd.target_layer' for a layer the target lacks or
// 'seq_len' for rows longer than the target's context.
ModelConfig edd_model_config(const TrainConfig& config);

}  // namespace seed::models
