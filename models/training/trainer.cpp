// The training loop of `seed train` (models/training/trainer.h): set-up (tokenizer,
// data, model, optimizer, teacher or EDD target, resume), steps, evaluation,
// checkpoints and the final model folder.
#include "models/training/trainer.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <utility>

#include "models/base/error.h"
#include "models/tokenizer.h"
#include "models/training/edd_mask.h"
#include "models/training/train_checkpoint.h"
#include "models/training/train_objective.h"
#include "models/training/train_setup.h"
#include "models/training/training_data.h"

namespace seed::models {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr double kLossEmaDecay = 0.9;  // progress display: ~10-step memory
// EDD's objective as a distillation: all KL, temperature 1 (edd-pct.md, section 4).
const DistillConfig kEddObjective{"", 1.0, 1.0};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

json number_or_null(double value) { return std::isfinite(value) ? json(value) : json(); }

// output/training_log.json: what was trained, how long it took, how it went.
void write_training_log(const TrainConfig& config, const CausalLM& model, const json& state, double eval_loss,
                        const json& data_stats) {
  const double train_seconds = state["train_seconds"].get<double>();
  const json log = {{"config", config.to_json()},
                    {"steps", state["step"]},
                    {"parameters", model.config().num_parameters()},
                    {"final_train_loss", state["loss_ema"]},
                    {"final_eval_loss", number_or_null(eval_loss)},
                    {"train_seconds", train_seconds},          // in optimizer steps, all runs
                    {"wall_seconds", state["wall_seconds"]},  // set-up, evals and checkpoints included
                    {"tokens", state["tokens"]},
                    {"tokens_per_second", state["tokens"].get<double>() / std::max(1e-9, train_seconds)},
                    {"data", data_stats},
                    {"history", state["history"]}};
  const std::string path = (fs::path(config.output) / "training_log.json").string();
  std::ofstream out(path);
  out << log.dump(2) << "\n";
  SEED_CHECK(out.good(), kIo) << "cannot write " << path;
}

}  // namespace

double learning_rate(const TrainConfig& c, int64_t step) {
  if (step < c.warmup_steps) return c.lr * static_cast<double>(step + 1) / static_cast<double>(c.warmup_steps);
  const int64_t decay_steps = c.steps - c.warmup_steps;
  if (decay_steps <= 1) return c.lr;
  const double progress = std::min(1.0, static_cast<double>(step - c.warmup_steps) / (decay_steps - 1));
  return c.min_lr + 0.5 * (c.lr - c.min_lr) * (1.0 + std::cos(M_PI * progress));
}

TrainResult train(const TrainConfig& config, const TrainControl& control) {
  config.validate();
  const auto wall_start = Clock::now();
  auto emit = [&](TrainEvent event) {
    event.steps = config.steps;
    if (control.on_event) control.on_event(event);
  };
  auto note = [&](const std::string& message) {
    TrainEvent event;
    event.message = message;
    emit(event);
  };
  check_device(config);
  const torch::Device device(config.device);
  const c10::ScalarType matmul_dtype = config.precision == "bfloat16" ? torch::kBFloat16 : torch::kFloat;
  std::error_code ec;
  fs::create_directories(config.output, ec);
  SEED_CHECK(!ec, kIo) << "cannot create the output folder " << config.output << ": " << ec.message();

  // Resume: the checkpoint must continue this config's trajectory.
  const std::string checkpoint = find_checkpoint(config.output);
  SEED_CHECK(checkpoint.empty() || config.resume, kInvalidArgument)
      << config.output << " already holds a checkpoint (" << checkpoint << "); pass --resume (or set \"resume\": "
      << "true in " << config.source << ") to continue it, or choose another output folder";
  json state = {{"step", 0},          {"epoch", 0},           {"row", 0},
                {"loss_ema", 0.0},    {"tokens", 0},          {"train_seconds", 0.0},
                {"wall_seconds", 0.0}, {"history", json::array()}};
  if (!checkpoint.empty()) {
    state = read_trainer_state(checkpoint);
    const std::string change = check_resumable(config, state, checkpoint);
    if (!change.empty()) note(change);
    note("resuming from " + checkpoint + " at step " + std::to_string(state["step"].get<int64_t>()));
  } else if (config.resume) {
    note("no checkpoint in " + config.output + "; starting from step 0");
  }

  // Examples and tokenizer.
  std::vector<Example> train_examples, eval_examples;
  if (config.eval_file.empty()) {
    split_examples(read_all(config.corpus), config.eval_fraction, config.seed, &train_examples, &eval_examples);
  } else {
    train_examples = read_all(config.corpus);
    eval_examples = read_examples(config.eval_file);
  }
  SEED_CHECK(!train_examples.empty(), kInvalidArgument)
      << config.source << ": field 'corpus': the files hold no training examples";
  const std::string tokenizer_path = prepare_tokenizer(config, checkpoint, train_examples, note);
  const std::unique_ptr<Tokenizer> tokenizer = load_tokenizer(config.output);
  const std::unique_ptr<CausalLM> teacher =
      config.distill.enabled()
          ? load_frozen(config, config.distill.teacher, "distill.teacher", *tokenizer, tokenizer_path)
          : nullptr;
  const std::unique_ptr<CausalLM> edd_target =
      config.edd.enabled() ? load_frozen(config, config.edd.target, "edd.target", *tokenizer, tokenizer_path)
                           : nullptr;

  // Packed rows.
  const int64_t row_length = config.seq_len + 1;
  const int32_t pad_id = tokenizer->eos_id();
  int64_t boundary_merges = 0;
  TrainingData data(tokenize_all(*tokenizer, train_examples, &boundary_merges), row_length, pad_id, config.seed);
  std::vector<TokenizedExample> eval_tokens = tokenize_all(*tokenizer, eval_examples, &boundary_merges);
  std::vector<int64_t> eval_order(eval_tokens.size());
  for (size_t i = 0; i < eval_order.size(); ++i) eval_order[i] = static_cast<int64_t>(i);
  const PackedRows eval_rows = pack_examples(eval_tokens, eval_order, row_length, pad_id);
  const PackedRows& epoch0 = data.epoch_rows();
  const double fill = static_cast<double>(epoch0.used_tokens) / static_cast<double>(epoch0.tokens.size());
  const json data_stats = {{"train_examples", train_examples.size()}, {"eval_examples", eval_examples.size()},
                           {"rows_per_epoch", epoch0.rows()},         {"row_fill", fill},
                           {"truncated_per_epoch", epoch0.truncated},  {"boundary_merges", boundary_merges}};
  note(std::to_string(train_examples.size()) + " training examples in " + std::to_string(epoch0.rows()) +
       " rows of " + std::to_string(row_length) + " tokens (" + std::to_string(static_cast<int>(100 * fill)) +
       "% filled, " + std::to_string(epoch0.truncated) + " truncated), " + std::to_string(eval_examples.size()) +
       " eval examples in " + std::to_string(eval_rows.rows()) + " rows; " + std::to_string(boundary_merges) +
       " examples with a token across the prompt/completion boundary");

  // Model and optimizer.
  ModelConfig shape = config.edd.enabled() ? edd_model_config(config) : config.model;
  shape.vocab_size = tokenizer->vocab_size();
  shape.bos_token_id = tokenizer->bos_id();
  shape.eos_token_ids = {tokenizer->eos_id()};
  std::unique_ptr<CausalLM> model =
      checkpoint.empty() ? initial_model(config, shape, *tokenizer, tokenizer_path, edd_target.get())
                         : CausalLM::load(checkpoint, float32_on(config.device));
  const std::vector<at::Tensor> params = model->weights().parameters();
  for (const at::Tensor& p : params) p.requires_grad_(true);
  const std::unique_ptr<torch::optim::AdamW> optimizer = make_optimizer(params, config);
  if (!checkpoint.empty()) {
    const std::string path = (fs::path(checkpoint) / kOptimizerFile).string();
    try {
      torch::load(*optimizer, path, device);
    } catch (const c10::Error& e) {
      SEED_FAIL(kCorruption) << path << ": cannot restore the optimizer: " << e.what_without_backtrace();
    }
    data.seek({state["epoch"].get<int64_t>(), state["row"].get<int64_t>()});
  }

  TrainResult result;
  result.start_step = state["step"].get<int64_t>();
  double loss_ema = state["loss_ema"].get<double>();
  int64_t step = result.start_step;
  int64_t last_checkpoint = step;
  const int64_t tokens_per_step = config.batch_size * config.seq_len;
  double step_seconds = 0;  // in optimizer steps, this call
  // Time of earlier calls (resumed runs), so that totals cover the whole run.
  const double train_seconds_before = state["train_seconds"].get<double>();
  const double wall_seconds_before = state["wall_seconds"].get<double>();
  auto update_times = [&] {
    state["train_seconds"] = train_seconds_before + step_seconds;
    state["wall_seconds"] = wall_seconds_before + seconds_since(wall_start);
  };
  const int64_t max_eval_rows = config.eval_batches * config.batch_size;

  auto save_checkpoint = [&] {
    const DataPosition position = data.position();
    state.update({{"step", step},
                  {"epoch", position.epoch},
                  {"row", position.row},
                  {"loss_ema", loss_ema},
                  {"config", config.to_json()}});
    update_times();
    TrainEvent event;
    event.kind = TrainEvent::Kind::kCheckpoint;
    event.step = step;
    event.message = write_training_checkpoint(config.output, *model, *optimizer, state, tokenizer_path);
    last_checkpoint = step;
    emit(event);
  };
  // Eval batch i of an EDD uses block length block_min + i mod (the range's
  // size): every length, the same ones at every evaluation.
  auto run_eval = [&] {
    const double loss = evaluate(eval_rows, config.batch_size, max_eval_rows, device, [&](const Batch& b, int64_t i) {
      if (!edd_target) return token_nll(torch::log_softmax(model->forward_full(b.inputs, matmul_dtype), -1), b.targets);
      const int64_t block = config.edd.block_min + i % (config.edd.block_max - config.edd.block_min + 1);
      const EddLogits logits = edd_logits(*model, *edd_target, b.inputs, block, matmul_dtype);
      return token_kl(logits.target, torch::log_softmax(logits.draft, -1));
    });
    state["history"].push_back({{"step", step}, {"train_loss", loss_ema}, {"eval_loss", number_or_null(loss)}});
    TrainEvent event;
    event.kind = TrainEvent::Kind::kEval;
    event.step = step;
    event.loss_ema = loss_ema;
    event.eval_loss = loss;
    emit(event);
    return loss;
  };

  const int64_t stop = control.stop_after_step < 0 ? config.steps : std::min(config.steps, control.stop_after_step);
  std::vector<int32_t> tokens;
  std::vector<uint8_t> mask;
  while (step < stop) {
    const auto step_start = Clock::now();
    const double lr = learning_rate(config, step);
    for (auto& group : optimizer->param_groups()) group.options().set_lr(lr);
    tokens.clear();
    mask.clear();
    data.next_rows(config.batch_size, &tokens, &mask);
    const Batch batch = make_batch(tokens, mask, row_length, device);
    Losses losses;
    if (edd_target) {
      const int64_t block = edd_block_length(config.seed, step, config.edd.block_min, config.edd.block_max);
      const EddLogits logits = edd_logits(*model, *edd_target, batch.inputs, block, matmul_dtype);
      losses = compute_losses(logits.draft, batch, logits.target, kEddObjective);
    } else {
      at::Tensor teacher_logits;
      if (teacher) {
        torch::NoGradGuard no_grad;
        teacher_logits = teacher->forward_full(batch.inputs, matmul_dtype);
      }
      losses = compute_losses(model->forward_full(batch.inputs, matmul_dtype), batch, teacher_logits, config.distill);
    }
    optimizer->zero_grad();
    losses.total.backward();
    double grad_norm = 0;
    if (config.grad_clip > 0) {
      grad_norm = torch::nn::utils::clip_grad_norm_(params, config.grad_clip);
    } else {
      for (const at::Tensor& p : params) grad_norm += p.grad().pow(2).sum().item<double>();
      grad_norm = std::sqrt(grad_norm);
    }
    optimizer->step();

    TrainEvent event;
    event.kind = TrainEvent::Kind::kStep;
    event.loss = losses.total.item<double>();
    event.ce = losses.ce.item<double>();
    event.kl = losses.kl.defined() ? losses.kl.item<double>() : 0.0;
    SEED_CHECK(std::isfinite(event.loss), kOutOfRange)
        << "the loss diverged to " << event.loss << " at step " << step + 1 << "; lower lr or lengthen "
        << "warmup_steps in " << config.source << " and train into a new output folder";
    step_seconds += seconds_since(step_start);
    ++step;
    loss_ema = step == 1 ? event.loss : kLossEmaDecay * loss_ema + (1 - kLossEmaDecay) * event.loss;
    state["tokens"] = state["tokens"].get<int64_t>() + tokens_per_step;
    result.losses.push_back(event.loss);
    result.ce.push_back(event.ce);
    result.kl.push_back(event.kl);
    const auto run_steps = static_cast<double>(result.losses.size());
    event.step = step;
    event.loss_ema = loss_ema;
    event.lr = lr;
    event.grad_norm = grad_norm;
    event.tokens_per_second = run_steps * tokens_per_step / step_seconds;
    event.eta_seconds = step_seconds / run_steps * static_cast<double>(config.steps - step);
    emit(event);

    if (config.eval_interval > 0 && step % config.eval_interval == 0 && step < config.steps && eval_rows.rows() > 0) {
      run_eval();
    }
    if (config.checkpoint_interval > 0 && step % config.checkpoint_interval == 0 && step < config.steps) {
      save_checkpoint();
    }
  }

  const double run_seconds = step_seconds;
  result.end_step = step;
  result.final_train_loss = loss_ema;
  result.final_eval_loss = std::numeric_limits<double>::quiet_NaN();
  result.tokens_per_second =
      run_seconds > 0 ? static_cast<double>(result.losses.size() * tokens_per_step) / run_seconds : 0.0;
  if (step < config.steps) {
    if (last_checkpoint != step) save_checkpoint();
  } else {
    if (eval_rows.rows() > 0) result.final_eval_loss = run_eval();
    model->save(config.output, torch::kFloat);
    state.update({{"step", step}, {"loss_ema", loss_ema}});
    update_times();
    write_training_log(config, *model, state, result.final_eval_loss, data_stats);
    result.finished = true;
  }
  result.wall_seconds = seconds_since(wall_start);

  for (const at::Tensor& p : params) p.requires_grad_(false);
  model->weights().prepare_for_inference();
  result.model = std::move(model);
  return result;
}

}  // namespace seed::models
