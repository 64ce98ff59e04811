// The trainer: trains a Llama-family model from scratch on prompt/completion
// examples and saves it as a Hugging Face model folder.
//
// What it does (TrainConfig, models/training/train_config.h, says how much):
//   tokenizer  trained with SentencePiece on the training split, or reused
//              from another model folder (a draft shares its target's);
//   data       examples packed into rows, only completions learned
//              (models/training/training_data.h), order fixed by (seed, epoch);
//   model      CausalLM::random(seed), trained through forward_full;
//   objective  masked cross-entropy, mean over learned tokens, optionally
//              mixed with forward KL from a teacher (DistillConfig);
//   EDD        with TrainConfig::edd, an EDD draft of a frozen target
//              (Zheng & Wang 2025, EDD-PCT, sec. 3.1): the target's shape
//              with one decoder layer, its embedding (and untied LM head)
//              copied from the target, the rest CausalLM::random(seed).
//              Each step the target runs forward_full on the batch, giving
//              its logits z_t and H, its hidden states after edd.target_layer;
//              the draft runs forward_inputs on [H ; embed_rows(tokens)]
//              (positions 0..T-1 twice) under edd_block_mask(T, L), L drawn
//              by edd_block_length(seed, step) in [block_min, block_max], and
//              its token rows give z_d. The objective (the step loss and
//              `kl`) is KL(softmax(z_t) || softmax(z_d)) at temperature 1,
//              in float32, mean over learned tokens; `ce` is the draft's
//              cross-entropy, reported only. Eval: the same KL, eval batch i
//              with L = block_min + i mod (block_max - block_min + 1).
//              config.json names the draft ("draft": {"kind": "edd", ...});
//   optimiser  AdamW, no decay on norm gains/biases, global-norm clipping,
//              linear warm-up then cosine decay to min_lr (learning_rate());
//   eval       mean cross-entropy (EDD: KL) on held-out rows every
//              eval_interval steps;
//   checkpoint every checkpoint_interval steps into output/checkpoint/
//              (model, optimizer state, tokenizer, data position), written
//              atomically, so an interrupted run resumes where the last
//              checkpoint left it and ends with the same weights as an
//              uninterrupted run (bitwise on the same machine and threads).
// What it does not do: data parallelism, gradient accumulation, dropout.
//
// The output folder, at the end:
//   config.json, model.safetensors (float32), tokenizer.model  the model, loadable by CausalLM::load
//   training_log.json   config, steps, final losses, wall time, tokens/s, eval history
//   checkpoint/         the last periodic checkpoint (delete it before shipping the folder)
//
// Thread-safety: train() runs on the calling thread (libtorch uses its
// intra-op threads, which the launcher sets); events are delivered on it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/causal_lm.h"
#include "models/training/train_config.h"

namespace seed::models {

// What the trainer reports while it runs.
struct TrainEvent {
  enum class Kind {
    kNote,        // a line of information in `message` (data statistics, resume)
    kStep,        // an optimizer step finished
    kEval,        // an evaluation finished: eval_loss
    kCheckpoint,  // a checkpoint was written to `message`
  };
  Kind kind = Kind::kNote;
  int64_t step = 0;    // steps done so far
  int64_t steps = 0;   // steps in all (config.steps)
  double loss = 0;     // this step's objective
  double loss_ema = 0; // its exponential moving average (what a progress bar shows)
  double ce = 0;       // this step's cross-entropy on learned tokens
  double kl = 0;       // this step's KL(teacher or EDD target || student); 0 without either
  double lr = 0;       // learning rate of this step
  double grad_norm = 0;          // global gradient norm before clipping
  double tokens_per_second = 0;  // tokens fed per second of training in this run
  double eta_seconds = 0;        // estimated time to `steps`
  double eval_loss = 0;          // kEval
  std::string message;           // kNote text, kCheckpoint folder
};

struct TrainControl {
  // Receives every event on the training thread; may be empty.
  std::function<void(const TrainEvent&)> on_event;
  // Stop once this many steps are done (writing a checkpoint), as an
  // interruption would, without the final save; -1 = run to config.steps.
  int64_t stop_after_step = -1;
};

struct TrainResult {
  int64_t start_step = 0;  // 0, or the checkpoint's step when resumed
  int64_t end_step = 0;    // steps done when train() returned
  bool finished = false;   // end_step == config.steps and the model folder was saved
  // One entry per step run by this call, in order.
  std::vector<double> losses;  // objective
  std::vector<double> ce;      // cross-entropy
  std::vector<double> kl;      // KL term (0 without distillation or EDD)
  double final_train_loss = 0; // EMA of the objective at end_step
  double final_eval_loss = 0;  // at end_step when finished; NaN without held-out data
  double tokens_per_second = 0;  // of this call's steps
  double wall_seconds = 0;       // of this call
  // The trained model, in inference form (no gradients, packed for forward()).
  std::unique_ptr<CausalLM> model;
};

// Trains as `config` says (see the top of this file), resuming from
// config.output/checkpoint when config.resume is set and one exists.
// Throws seed::Error: kInvalidArgument for a config the data or a teacher
// contradicts (each names the config file and field: a teacher or EDD target
// with another vocabulary or tokenizer, an existing checkpoint without resume, a resumed
// checkpoint trained with other settings), kNotFound/kInvalidArgument naming
// file:line for corpus problems, kIo for the output folder. A failure leaves
// the last complete checkpoint in place.
TrainResult train(const TrainConfig& config, const TrainControl& control = {});

// The learning rate of step `step` (0-based): linear warm-up over
// warmup_steps to lr, then cosine decay reaching min_lr at the last step.
double learning_rate(const TrainConfig& config, int64_t step);

}  // namespace seed::models
