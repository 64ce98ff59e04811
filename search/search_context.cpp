#include "search/search_context.h"

#include <algorithm>
#include <set>

#include "models/base/error.h"

namespace seed::search {
namespace {

// What a request is for; part of its stream key. Never renumber: streams,
// and so sampled answers, would change.
enum class Purpose : uint64_t { kGenerate = 1, kEvaluate = 2, kVote = 3, kChain = 4, kAnswer = 5, kRollout = 6 };

uint64_t key(Purpose purpose, uint64_t a) { return mix_key(static_cast<uint64_t>(purpose), a); }

// FNV-1a: a platform-independent hash of prompt text (std::hash is not).
uint64_t text_hash(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

uint64_t mix_key(uint64_t a, uint64_t b) {
  uint64_t z = a * 0x9E3779B97F4A7C15ull + b + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

SearchContext::SearchContext(const tasks::Task& task, const tasks::Problem& problem, spec::Engine& engine,
                             uint64_t seed, spec::StepScorer* scorer)
    : task_(task), problem_(problem), engine_(engine), seed_(mix_key(seed, problem.index)), scorer_(scorer) {}

SearchContext::~SearchContext() { engine_.end_group(seed_); }

tasks::State SearchContext::state(int id) const {
  const Node& n = tree_.node(id);
  if (n.chain) return task_.state_from_text(n.thought.text);
  tasks::State s;
  for (const int at : tree_.path(id)) {
    if (at != 0) s.thoughts.push_back(tree_.node(at).thought);
  }
  return s;
}

bool SearchContext::terminal(int id, int depth_limit) const {
  const Node& n = tree_.node(id);
  return n.final || n.depth >= depth_limit;
}

spec::GenRequest SearchContext::request(const tasks::PromptSpec& prompt, std::string text, uint64_t stream,
                                        spec::RequestKind kind, double priority) const {
  spec::GenRequest r;
  r.prompt = std::move(text);
  r.max_new_tokens = prompt.max_new_tokens;
  r.stop = prompt.stop;
  r.sampling = prompt.sampling;
  r.seed = seed_;
  r.stream = stream;
  r.kind = kind;
  r.priority = priority;
  r.group = seed_;  // one problem: its requests share what drafters learn
  return r;
}

std::vector<spec::Completion> SearchContext::run(const std::vector<spec::GenRequest>& batch,
                                                const spec::CompletionCallback& on_complete) {
  if (batch.empty()) return {};
  std::vector<spec::Completion> out = engine_.generate(batch, on_complete);
  SEED_CHECK(out.size() == batch.size(), kInternal)
      << "engine " << engine_.name() << " returned " << out.size() << " completions for " << batch.size()
      << " requests";
  ++usage_.batches;
  usage_.requests += static_cast<int64_t>(batch.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t tokens = static_cast<int64_t>(out[i].tokens.size());
    usage_.generated_tokens += tokens;
    (batch[i].kind == spec::RequestKind::kThought ? usage_.thought_tokens : usage_.evaluation_tokens) += tokens;
    if (out[i].finish == spec::FinishReason::kError) {
      ++usage_.failed_requests;
      if (usage_.first_error.empty()) usage_.first_error = out[i].error;
      out[i].text.clear();  // a failed request contributes nothing
    }
  }
  return out;
}

std::vector<std::vector<tasks::Thought>> SearchContext::generate(const std::vector<tasks::State>& states,
                                                                 const std::vector<uint64_t>& keys,
                                                                 const std::vector<double>& priorities, int n) {
  const tasks::GenerateSpec& spec = task_.spec().generate;
  std::vector<std::vector<tasks::Thought>> out(states.size());
  // Candidate thoughts per state, before de-duplication.
  std::vector<std::vector<tasks::Thought>> raw(states.size());
  if (spec.mode == tasks::GenerateMode::kPropose) {
    std::vector<spec::GenRequest> batch;
    for (size_t s = 0; s < states.size(); ++s) {
      batch.push_back(request(spec.stages[0], task_.generation_prompt(0, problem_, states[s], {}),
                              mix_key(keys[s], 0), spec::RequestKind::kThought, priorities[s]));
    }
    const std::vector<spec::Completion> done = run(batch);
    for (size_t s = 0; s < states.size(); ++s) raw[s] = task_.split_proposals(done[s].text);
  } else {
    // Stage by stage, every state's n samples in one batch.
    struct Pending {
      size_t state;
      int sample;
      tasks::Thought partial;
    };
    std::vector<Pending> pending;
    for (size_t s = 0; s < states.size(); ++s) {
      for (int j = 0; j < n; ++j) pending.push_back({s, j, {}});
    }
    for (size_t stage = 0; stage < spec.stages.size() && !pending.empty(); ++stage) {
      std::vector<spec::GenRequest> batch;
      for (const Pending& p : pending) {
        batch.push_back(request(spec.stages[stage], task_.generation_prompt(stage, problem_, states[p.state], p.partial),
                                mix_key(mix_key(keys[p.state], stage), static_cast<uint64_t>(p.sample)),
                                spec::RequestKind::kThought, priorities[p.state]));
      }
      const std::vector<spec::Completion> done = run(batch);
      std::vector<Pending> next;
      for (size_t i = 0; i < pending.size(); ++i) {
        if (done[i].finish == spec::FinishReason::kError) continue;
        next.push_back({pending[i].state, pending[i].sample, task_.add_stage(pending[i].partial, stage, done[i].text)});
      }
      pending = std::move(next);
    }
    for (Pending& p : pending) raw[p.state].push_back(std::move(p.partial));
  }
  for (size_t s = 0; s < states.size(); ++s) {
    std::set<std::string> seen;
    for (tasks::Thought& thought : raw[s]) {
      if (static_cast<int>(out[s].size()) >= n) break;
      if (thought.text.empty() || !seen.insert(thought.text).second) continue;
      out[s].push_back(std::move(thought));
    }
  }
  return out;
}

std::vector<int> SearchContext::expand(const std::vector<int>& nodes, int n, const std::vector<double>& priorities) {
  SEED_CHECK(priorities.empty() || priorities.size() == nodes.size(), kInternal)
      << "expand: " << priorities.size() << " priorities for " << nodes.size() << " nodes";
  std::vector<tasks::State> states;
  std::vector<uint64_t> keys;
  std::vector<double> ranks = priorities;
  for (const int id : nodes) {
    states.push_back(state(id));
    keys.push_back(key(Purpose::kGenerate, static_cast<uint64_t>(id)));
    if (priorities.empty()) ranks.push_back(normalized_value(id));
  }
  std::vector<std::vector<tasks::Thought>> thoughts = generate(states, keys, ranks, n);
  std::vector<int> children;
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node& parent = tree_.node(nodes[i]);
    parent.expanded = true;
    parent.order = expansions_++;
    for (tasks::Thought& thought : thoughts[i]) {
      const int child = tree_.add_child(nodes[i], std::move(thought));
      tree_.node(child).final = task_.is_final(problem_, state(child));
      children.push_back(child);
    }
  }
  return children;
}

std::vector<double> SearchContext::values(const std::vector<tasks::State>& states) {
  const tasks::EvaluateSpec& spec = task_.spec().evaluate;
  if (spec.mode == tasks::EvaluateMode::kPrm) return prm_values(states);
  std::vector<std::string> prompts;
  std::vector<spec::GenRequest> batch;
  std::map<std::string, size_t> first_request;  // prompt -> its first request in the batch
  for (const tasks::State& s : states) {
    prompts.push_back(task_.evaluation_prompt(problem_, s));
    const std::string& prompt = prompts.back();
    if (value_cache_.count(prompt) || first_request.count(prompt)) continue;
    first_request[prompt] = batch.size();
    for (int j = 0; j < spec.samples; ++j) {
      batch.push_back(request(spec.prompt, prompt, mix_key(key(Purpose::kEvaluate, text_hash(prompt)), j),
                              spec::RequestKind::kEvaluation));
    }
  }
  const std::vector<spec::Completion> done = run(batch);
  for (const auto& [prompt, first] : first_request) {
    double sum = 0;
    for (int j = 0; j < spec.samples; ++j) {
      sum += task_.parse_value(done[first + j].text).value_or(spec.value.unparsed);
    }
    value_cache_[prompt] = sum;
  }
  std::vector<double> out;
  for (const std::string& prompt : prompts) out.push_back(value_cache_.at(prompt));
  return out;
}

std::vector<double> SearchContext::prm_values(const std::vector<tasks::State>& states) {
  SEED_CHECK(scorer_ != nullptr, kInvalidArgument)
      << task_.folder() << "/task.json: the task evaluates with a process reward model, which was not loaded";
  const std::string prefix = task_.prm_prefix(problem_);
  // step_key(steps, i): what identifies steps 0..i of a state.
  const auto step_key = [](const std::vector<std::string>& steps, size_t i) {
    std::string key;
    for (size_t s = 0; s <= i; ++s) key += steps[s] + '\x1f';
    return key;
  };
  std::vector<std::vector<std::string>> steps_of;
  std::vector<spec::ScoreRequest> batch;
  std::set<std::string> asked;  // step_key of each request's last step
  for (const tasks::State& s : states) {
    steps_of.push_back(task_.prm_steps(s));
    const std::vector<std::string>& steps = steps_of.back();
    if (steps.empty() || step_scores_.count(step_key(steps, steps.size() - 1))) continue;
    if (!asked.insert(step_key(steps, steps.size() - 1)).second) continue;
    size_t first = 0;
    while (step_scores_.count(step_key(steps, first))) ++first;
    batch.push_back({prefix, steps, first});
  }
  if (!batch.empty()) {
    const std::vector<spec::StepScores> scored = scorer_->score(batch);
    for (size_t r = 0; r < batch.size(); ++r) {
      const spec::ScoreRequest& request = batch[r];
      for (size_t i = request.first; i < request.steps.size(); ++i) {
        step_scores_[step_key(request.steps, i)] = scored[r].rewards.at(i - request.first);
      }
      usage_.prm_tokens += scored[r].usage.computed_tokens;
      usage_.prm_scored_tokens += scored[r].usage.scored_tokens;
    }
  }
  std::vector<double> out;
  for (const std::vector<std::string>& steps : steps_of) {
    std::vector<double> scores;
    for (size_t i = 0; i < steps.size(); ++i) scores.push_back(step_scores_.at(step_key(steps, i)));
    out.push_back(scores.empty() ? 0.0 : tasks::aggregate_step_scores(scores, task_.spec().evaluate.prm.aggregate));
  }
  return out;
}

void SearchContext::evaluate(const std::vector<int>& nodes) {
  const tasks::EvaluateSpec& spec = task_.spec().evaluate;
  if (spec.mode != tasks::EvaluateMode::kVote) {
    std::vector<tasks::State> states;
    for (const int id : nodes) states.push_back(state(id));
    const std::vector<double> v = values(states);
    for (size_t i = 0; i < nodes.size(); ++i) tree_.node(nodes[i]).value = v[i];
    return;
  }
  // Vote: one prompt per parent listing its candidates among `nodes`.
  std::vector<int> parents;
  std::map<int, std::vector<int>> groups;
  for (const int id : nodes) {
    const int parent = tree_.node(id).parent;
    if (!groups.count(parent)) parents.push_back(parent);
    groups[parent].push_back(id);
  }
  std::vector<spec::GenRequest> batch;
  for (const int parent : parents) {
    std::vector<const tasks::Thought*> candidates;
    for (const int id : groups[parent]) candidates.push_back(&tree_.node(id).thought);
    const std::string prompt = task_.vote_prompt(problem_, state(parent), candidates);
    for (int j = 0; j < spec.samples; ++j) {
      batch.push_back(request(spec.prompt, prompt, mix_key(key(Purpose::kVote, text_hash(prompt)), j),
                              spec::RequestKind::kEvaluation));
    }
  }
  const std::vector<spec::Completion> done = run(batch);
  size_t at = 0;
  for (const int parent : parents) {
    const std::vector<int>& group = groups[parent];
    std::vector<int> votes(group.size(), 0);
    for (int j = 0; j < spec.samples; ++j, ++at) {
      if (const auto choice = task_.parse_vote(done[at].text, group.size())) ++votes[*choice];
    }
    for (size_t c = 0; c < group.size(); ++c) {
      tree_.node(group[c]).value = static_cast<double>(votes[c]) / spec.samples;
    }
  }
}

double SearchContext::normalized_value(int id) const {
  const Node& n = tree_.node(id);
  if (!n.value) return 0;
  const tasks::EvaluateSpec& spec = task_.spec().evaluate;
  const double scale = spec.mode == tasks::EvaluateMode::kVote ? 1.0 : task_.max_value() * spec.samples;
  if (scale <= 0) return 0;
  return std::clamp(*n.value / scale, 0.0, 1.0);
}

std::vector<double> SearchContext::rollout(const std::vector<int>& nodes, int steps, int depth_limit) {
  std::vector<tasks::State> states;
  for (const int id : nodes) states.push_back(state(id));
  for (int step = 1; step <= steps; ++step) {
    std::vector<size_t> active;
    std::vector<tasks::State> from;
    std::vector<uint64_t> keys;
    std::vector<double> priorities;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const tasks::State& s = states[i];
      const bool done = static_cast<int>(s.thoughts.size()) >= depth_limit || task_.is_final(problem_, s);
      if (done) continue;
      active.push_back(i);
      from.push_back(s);
      keys.push_back(mix_key(key(Purpose::kRollout, static_cast<uint64_t>(nodes[i])), step));
      priorities.push_back(normalized_value(nodes[i]));
    }
    if (active.empty()) break;
    const std::vector<std::vector<tasks::Thought>> next = generate(from, keys, priorities, 1);
    for (size_t a = 0; a < active.size(); ++a) {
      if (!next[a].empty()) states[active[a]].thoughts.push_back(next[a].front());
    }
  }
  const std::vector<double> v = values(states);
  const double scale = task_.max_value() * task_.spec().evaluate.samples;
  std::vector<double> out;
  for (const double x : v) out.push_back(scale > 0 ? std::clamp(x / scale, 0.0, 1.0) : 0.0);
  return out;
}

std::vector<int> SearchContext::sample_chains(int count, const std::function<bool(const std::string&)>& enough) {
  const tasks::PromptSpec& cot = *task_.spec().cot;
  const std::string prompt = task_.cot_prompt(problem_);
  std::vector<spec::GenRequest> batch;
  for (int i = 0; i < count; ++i) {
    batch.push_back(request(cot, prompt, key(Purpose::kChain, static_cast<uint64_t>(i)), spec::RequestKind::kThought));
  }
  spec::CompletionCallback on_complete;
  if (enough) {
    std::vector<bool> completed(batch.size(), false);
    on_complete = [&enough, completed](size_t index, const spec::Completion& c) mutable {
      completed[index] = true;
      std::vector<size_t> cancel;
      if (!enough(c.text)) return cancel;
      for (size_t i = 0; i < completed.size(); ++i) {
        if (!completed[i]) cancel.push_back(i);
      }
      return cancel;
    };
  }
  const std::vector<spec::Completion> done = run(batch, on_complete);
  tree_.node(0).expanded = true;
  tree_.node(0).order = expansions_++;
  std::vector<int> ids;
  for (const spec::Completion& c : done) {
    if (c.finish == spec::FinishReason::kCancelled) continue;
    tasks::Thought thought;
    thought.text = c.text;
    const int id = tree_.add_child(0, std::move(thought));
    tree_.node(id).chain = true;
    tree_.node(id).final = true;
    ids.push_back(id);
  }
  return ids;
}

std::string SearchContext::answer(int id) {
  tree_.set_chosen(id);
  const Node& n = tree_.node(id);
  const auto& answer = task_.spec().answer;
  if (!answer || n.chain) return n.chain ? n.thought.text : task_.steps_text(state(id));
  const std::vector<spec::Completion> done =
      run({request(*answer, task_.answer_prompt(problem_, state(id)), key(Purpose::kAnswer, static_cast<uint64_t>(id)),
                   spec::RequestKind::kThought)});
  return done.front().text;
}

}  // namespace seed::search
