// PrmScorer: tokenizing requests, finding their steps, batching forwards.
#include "spec/reward/prm_scorer.h"

#include <torch/torch.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "models/base/error.h"

namespace seed::spec {
namespace {

models::KvCacheOptions with_block_size(models::KvCacheOptions options) {
  options.block_size = PrmScorer::kBlockSize;
  return options;
}

// One request made ready for the model.
struct Prepared {
  std::vector<int32_t> tokens;     // prefix and steps, up to the last step's tag
  std::vector<int64_t> tags;       // position of each step's tag
  int64_t scored_from = 0;         // first token of step `first`
  models::SequenceId sequence = 0;
  bool started = false;            // `sequence` exists
  int64_t cached = 0;              // tokens the cache held
};

// The tokens of the prefix then the steps, as PrmTokenize says, with
// the position of each step's tag; `prefix`: the prefix's own tokens.
Prepared tokenize(const models::ProcessRewardModel& prm, const ScoreRequest& request, size_t index,
                  const std::vector<int32_t>& prefix) {
  const models::Tokenizer& tokenizer = prm.tokenizer();
  const std::string& tag_text = prm.format().step_tag;
  const int32_t tag = prm.step_tag_token();
  Prepared p;
  if (prm.format().tokenize == models::PrmTokenize::kSteps) {
    p.tokens = prefix;
    for (size_t j = 0; j < request.steps.size(); ++j) {
      const std::string& step = request.steps[j];
      const size_t at = step.find(tag_text);
      SEED_CHECK(at != std::string::npos && step.find(tag_text, at + 1) == std::string::npos, kInvalidArgument)
          << "PRM request " << index << ", step " << j << ": a step read apart (prm.json \"tokenize\": \"steps\") "
          << "must hold the step tag ('" << tag_text << "') once";
      const std::vector<int32_t> before = tokenizer.encode(step.substr(0, at), /*add_bos=*/false);
      const std::vector<int32_t> after = tokenizer.encode(step.substr(at + tag_text.size()), /*add_bos=*/false);
      p.tokens.insert(p.tokens.end(), before.begin(), before.end());
      p.tags.push_back(static_cast<int64_t>(p.tokens.size()));
      p.tokens.push_back(tag);
      p.tokens.insert(p.tokens.end(), after.begin(), after.end());
    }
    return p;
  }
  std::string text = request.prefix;
  for (const std::string& step : request.steps) text += step;
  p.tokens = tokenizer.encode(text, /*add_bos=*/true);
  for (int64_t i = std::max<int64_t>(static_cast<int64_t>(prefix.size()) - 1, 0);
       i < static_cast<int64_t>(p.tokens.size()); ++i) {
    if (p.tokens[i] == tag) p.tags.push_back(i);
  }
  SEED_CHECK(p.tags.size() == request.steps.size(), kInvalidArgument)
      << "PRM request " << index << ": its " << request.steps.size() << " steps hold " << p.tags.size()
      << " step tags ('" << tag_text << "', token " << tag
      << "); each step must end with the tag, and hold it nowhere else (where the PRM's tokenizer merges the tag "
      << "with the text before it, prm.json's \"tokenize\": \"steps\" reads each step apart, the tag's token "
      << "after it)";
  return p;
}

Prepared prepare(const models::ProcessRewardModel& prm, const ScoreRequest& request, size_t index) {
  SEED_CHECK(request.first < request.steps.size(), kInvalidArgument)
      << "PRM request " << index << ": no steps to score (" << request.steps.size() << " steps, first " << request.first
      << ")";
  const std::vector<int32_t> prefix = prm.tokenizer().encode(request.prefix, /*add_bos=*/true);
  const int64_t prefix_tokens = static_cast<int64_t>(prefix.size());
  Prepared p = tokenize(prm, request, index, prefix);
  p.tokens.resize(static_cast<size_t>(p.tags.back() + 1));
  p.scored_from = request.first == 0 ? std::min(prefix_tokens, p.tags.front()) : p.tags[request.first - 1] + 1;
  return p;
}

}  // namespace

PrmScorer::PrmScorer(std::shared_ptr<const models::ProcessRewardModel> prm, models::KvCacheOptions cache_options)
    : prm_(std::move(prm)), cache_(prm_->model().make_cache(with_block_size(cache_options))) {}

std::vector<StepScores> PrmScorer::score(const std::vector<ScoreRequest>& batch) {
  Job job;
  job.requests = &batch;
  std::unique_lock<std::mutex> lock(mutex_);
  queued_.push_back(&job);
  while (!job.done) {
    if (running_) {
      finished_.wait(lock);
      continue;
    }
    running_ = true;
    const std::vector<Job*> jobs = std::exchange(queued_, {});
    lock.unlock();
    run(jobs);
    lock.lock();
    running_ = false;
    for (Job* j : jobs) j->done = true;
    finished_.notify_all();
  }
  if (job.error) std::rethrow_exception(job.error);
  return std::move(job.results);
}

void PrmScorer::run(const std::vector<Job*>& jobs) {
  // Each job's requests prepared; a job whose request is bad fails alone.
  struct Item {
    Job* job;
    size_t request;
    Prepared prepared;
  };
  std::vector<Item> items;
  for (Job* job : jobs) {
    const std::vector<ScoreRequest>& requests = *job->requests;
    job->results.assign(requests.size(), {});
    try {
      std::vector<Item> mine;
      for (size_t r = 0; r < requests.size(); ++r) mine.push_back({job, r, prepare(*prm_, requests[r], r)});
      std::move(mine.begin(), mine.end(), std::back_inserter(items));
    } catch (...) {
      job->error = std::current_exception();
    }
  }
  // Chunks of at most kMaxRowsPerForward new tokens (a longer request alone).
  size_t begin = 0;
  while (begin < items.size()) {
    std::vector<models::SequenceInput> batch;
    size_t end = begin;
    std::exception_ptr error;
    bool preparing = true;  // an error while items[end] starts fails it too
    try {
      for (int64_t rows = 0; end < items.size() && (end == begin || rows < kMaxRowsPerForward); ++end) {
        Prepared& p = items[end].prepared;
        const models::CachedStart start = cache_.create_with_prefix(p.tokens);
        p.sequence = start.sequence;
        p.started = true;
        // The first scored tag's row must be computed, though the cache may
        // hold more.
        const int64_t first_tag = p.tags[(*items[end].job->requests)[items[end].request].first];
        p.cached = std::min(start.cached, first_tag);
        if (p.cached < start.cached) cache_.truncate(p.sequence, p.cached);
        models::SequenceInput input{p.sequence, {p.tokens.begin() + p.cached, p.tokens.end()}, {}};
        input.logits_from = static_cast<int32_t>(first_tag - p.cached);
        batch.push_back(std::move(input));
        rows += static_cast<int64_t>(p.tokens.size()) - p.cached;
      }
      preparing = false;
      const at::Tensor hidden = prm_->model().forward_hidden(batch, cache_, models::LogitsFor::kTail);
      const at::Tensor rewards = prm_->rewards(hidden).cpu().contiguous();
      const float* reward = rewards.data_ptr<float>();
      for (size_t i = begin; i < end; ++i) {
        Item& item = items[i];
        const ScoreRequest& request = (*item.job->requests)[item.request];
        const Prepared& p = item.prepared;
        const int64_t first_tag = p.tags[request.first];
        StepScores& out = item.job->results[item.request];
        for (size_t s = request.first; s < p.tags.size(); ++s) out.rewards.push_back(reward[p.tags[s] - first_tag]);
        reward += static_cast<int64_t>(p.tokens.size()) - first_tag;
        out.usage.computed_tokens = static_cast<int64_t>(p.tokens.size()) - p.cached;
        out.usage.scored_tokens = static_cast<int64_t>(p.tokens.size()) - p.scored_from;
      }
    } catch (...) {
      error = std::current_exception();
    }
    // On an error every request of the chunk fails its call.
    const size_t last = error && preparing ? end + 1 : end;
    for (size_t i = begin; i < last; ++i) {
      Prepared& p = items[i].prepared;
      if (error) items[i].job->error = error;
      if (p.started) cache_.release(p.sequence);
      p.started = false;
    }
    begin = last;
  }
}

std::unique_ptr<StepScorer> load_prm_scorer(const std::string& model_dir, const EngineOptions& engine) {
  std::shared_ptr<const models::ProcessRewardModel> prm = models::ProcessRewardModel::load(
      model_dir, [&] { return load_model(engine, model_dir, load_options(engine), "the PRM"); });
  return std::make_unique<PrmScorer>(std::move(prm), kv_cache_options(engine, 4));
}

}  // namespace seed::spec
