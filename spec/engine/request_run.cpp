#include "spec/engine/request_run.h"

#include <algorithm>
#include <cstdint>

#include <filesystem>

#include "models/base/error.h"
#include "models/chat_template/chat_template.h"
#include "models/generation_config.h"

namespace seed::spec {
namespace {

int tree_depth(const DraftTree& draft) {
  std::vector<int> depth(draft.tokens.size());
  int deepest = 0;
  for (size_t i = 0; i < draft.parents.size(); ++i) {
    depth[i] = draft.parents[i] < 0 ? 1 : depth[static_cast<size_t>(draft.parents[i])] + 1;
    deepest = std::max(deepest, depth[i]);
  }
  return deepest;
}

std::vector<int32_t> tokenize(const GenRequest& r, size_t i, const RunSettings& settings, int64_t vocab) {
  if (!r.prompt_tokens.empty()) {
    for (int32_t t : r.prompt_tokens) {
      SEED_CHECK(t >= 0 && t < vocab, kInvalidArgument)
          << "request " << i << ": prompt_tokens holds " << t << ", outside the vocabulary [0, " << vocab << ")";
    }
    return r.prompt_tokens;
  }
  SEED_CHECK(!r.prompt.empty(), kInvalidArgument) << "request " << i << ": prompt and prompt_tokens are both empty";
  SEED_CHECK(settings.tokenizer != nullptr, kInvalidArgument)
      << "request " << i << ": a text prompt needs a tokenizer, and the target model folder has none "
      << "(pass prompt_tokens)";
  return encode_prompt(settings, r.prompt);
}

}  // namespace

RunSettings model_run_settings(const std::string& model_dir, const std::optional<std::string>& chat_system,
                               const nlohmann::ordered_json& chat_variables) {
  RunSettings settings;
  if (chat_system.has_value()) {
    std::optional<models::ChatTemplate> chat = models::ChatTemplate::load(model_dir);
    SEED_CHECK(chat.has_value(), kInvalidArgument)
        << "chat prompts need a chat template, and " << model_dir << "/tokenizer_config.json has none";
    settings.chat_template = std::make_shared<const models::ChatTemplate>(std::move(*chat));
    settings.chat_system = *chat_system;
    settings.chat_variables = chat_variables;
  }
  const std::filesystem::path dir(model_dir);
  if (std::filesystem::exists(dir / "tokenizer.model") || std::filesystem::exists(dir / "tokenizer.json")) {
    settings.tokenizer = models::load_tokenizer(model_dir);
  }
  const models::GenerationConfig config =
      models::GenerationConfig::from_file((dir / "generation_config.json").string());
  settings.stop_tokens = models::stop_token_ids(settings.tokenizer ? settings.tokenizer->eos_id() : -1, config);
  return settings;
}

std::vector<int32_t> encode_prompt(const RunSettings& settings, const std::string& prompt) {
  if (!settings.chat_template) return settings.tokenizer->encode(prompt, settings.tokenizer->bos_id() >= 0);
  return settings.chat_template->encode(
      *settings.tokenizer,
      settings.chat_template->render_prompt(settings.chat_system, prompt, settings.chat_variables));
}

std::vector<Sequence> prepare_sequences(const std::vector<GenRequest>& requests, const RunSettings& settings,
                                        const Target& target) {
  std::vector<Sequence> seqs(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    const GenRequest& r = requests[i];
    SEED_CHECK(r.max_new_tokens >= 0, kInvalidArgument)
        << "request " << i << ": max_new_tokens is " << r.max_new_tokens << ", expected >= 0";
    for (const std::string& s : r.stop) {
      SEED_CHECK(!s.empty(), kInvalidArgument) << "request " << i << ": an empty stop string";
    }
    SEED_CHECK(r.draft_length >= 0 && r.draft_length <= kMaxDraftLength, kInvalidArgument)
        << "request " << i << ": draft_length is " << r.draft_length << ", expected 0 to " << kMaxDraftLength;
    SEED_CHECK(r.stop.empty() || settings.tokenizer != nullptr, kInvalidArgument)
        << "request " << i << ": stop strings need a tokenizer, and the target model folder has none";
    try {
      r.sampling.validate();
    } catch (const Error& e) {
      SEED_FAIL(kInvalidArgument) << "request " << i << ": " << e.what();
    }
    Sequence& seq = seqs[i];
    seq.slot = i;
    seq.index = i;
    seq.request = &r;
    seq.prompt = tokenize(r, i, settings, target.vocab_size());
    seq.output.emplace(settings.tokenizer.get(), settings.stop_tokens, r.max_new_tokens, r.stop);
    if (static_cast<int64_t>(seq.prompt.size()) > target.max_positions()) {
      seq.output->end(FinishReason::kError, "request " + std::to_string(i) + ": prompt of " +
                                                std::to_string(seq.prompt.size()) +
                                                " tokens is longer than the target's context of " +
                                                std::to_string(target.max_positions()));
    } else {
      seq.stats.prompt_tokens = static_cast<int64_t>(seq.prompt.size());  // what the target is asked to read
    }
  }
  return seqs;
}

TargetSettings target_settings(const GenRequest& request) {
  return {request.sampling, request.seed, request.stream};
}

std::vector<int> draft_shape(const GenRequest& request, const std::vector<int>& k_config, bool pruned_tree) {
  const bool chain = !k_config.empty() && !pruned_tree &&
                     std::all_of(k_config.begin(), k_config.end(), [](int k) { return k == 1; });
  if (request.draft_length <= 0 || !chain) return k_config;
  return std::vector<int>(static_cast<size_t>(request.draft_length), 1);
}

DraftSettings draft_settings(const GenRequest& request, const std::vector<int>& k_config,
                             const std::optional<PrunedTree>& pruned_tree, bool sample_drafts) {
  return {request.sampling, request.seed,  request.stream, draft_shape(request, k_config, pruned_tree.has_value()),
          request.group,    pruned_tree,  sample_drafts};
}

int draft_depth(const Sequence& seq, const Target& target, int shape_depth) {
  const int64_t room = target.room(seq.slot);
  if (room < 0) return -1;
  const int64_t left = seq.output->remaining() - 1;
  return static_cast<int>(std::max<int64_t>(0, std::min<int64_t>({shape_depth, room, left})));
}

bool apply_verdict(Sequence& seq, const DraftTree& draft, const Verdict& verdict) {
  seq.stats.target_forwards += 1;
  seq.stats.drafted_tokens += static_cast<int64_t>(draft.tokens.size());
  seq.stats.accepted_tokens += static_cast<int64_t>(verdict.accepted.size());
  if (static_cast<int>(verdict.accepted.size()) < tree_depth(draft)) seq.stats.rejections += 1;
  for (int32_t token : verdict.tokens) {
    seq.stats.round_tokens += 1;
    if (seq.output->push(token)) return true;
  }
  return false;
}

void settle(Sequence& seq, double elapsed) {
  seq.stats.wall_s = elapsed;
  seq.completion = seq.output->take();
}

std::vector<Sequence*> cancelled_by(const CompletionCallback& on_complete, const Sequence& seq,
                                    std::vector<Sequence>& seqs) {
  if (!on_complete) return {};
  std::vector<Sequence*> out;
  for (const size_t index : on_complete(seq.index, *seq.completion)) {
    SEED_CHECK(index < seqs.size(), kInvalidArgument)
        << "on_complete cancelled request " << index << " of a batch of " << seqs.size();
    Sequence& other = seqs[index];
    if (other.output->finished()) continue;
    other.output->end(FinishReason::kCancelled);
    out.push_back(&other);
  }
  return out;
}

std::vector<Completion> take_completions(std::vector<Sequence>& seqs, EngineStats& stats) {
  std::vector<Completion> out;
  for (Sequence& seq : seqs) {
    Completion c = seq.completion ? std::move(*seq.completion) : seq.output->take();
    seq.stats.generated_tokens = c.stats.generated_tokens;
    c.stats = seq.stats;
    add_completion(stats, seq.request->kind, c.stats);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace seed::spec
