// `seed run`: a search algorithm over a task folder's problems with one
// engine. Writes one JSONL line per problem as it finishes (so --resume
// loses nothing and recomputes nothing), a summary table and summary.json,
// and with --tree-out the explored trees.
#include <cstdint>
#include <unistd.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>

#include "launch/chat_variables.h"
#include "launch/commands.h"
#include "launch/counted.h"
#include "launch/distributed.h"
#include "launch/engine_counts.h"
#include "launch/json_text.h"
#include "launch/model_option.h"
#include "launch/pct_options.h"
#include "launch/problem_concurrency.h"
#include "launch/problem_engine.h"
#include "launch/process_signals.h"
#include "launch/progress_line.h"
#include "launch/runtime.h"
#include "launch/run_results.h"
#include "models/base/atomic_file.h"
#include "models/base/error.h"
#include "models/base/json_fields.h"
#include "models/chat_template/chat_template.h"
#include "search/concurrently.h"
#include "search/search.h"
#include "search/search_parameters.h"
#include "launch/lookahead_run.h"
#include "spec/engine/engine_factory.h"
#include "spec/reward/prm_scorer.h"
#include "tasks/step_checkers.h"
#include "tasks/task.h"

namespace seed::launch {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct RunOptions {
  std::string task_dir;
  std::string data_path;
  search::SearchConfig search;
  spec::EngineOptions engine;
  int limit = 0;  // 0 = every problem
  int concurrency = 0;  // problems in flight; 0 = auto (launch/concurrency.h)
  std::string out_dir;
  bool resume = false;
  std::string tree_out;
  std::string schedule_out;
  std::string baseline_dir;
  LookaheadOptions lookahead;
  std::vector<std::string> chat_variables;  // --chat-var NAME=JSON, over task.json's chat.variables
  // Search parameters given on the command line (the rest come from
  // task.json): their values, and for each one given, what sets it.
  tasks::SearchParams flags;
  std::vector<std::function<void(tasks::SearchParams&)>> given;
  std::vector<std::string> given_names;  // their flags, without "--"
};

void apply_flags(const RunOptions& o, tasks::SearchParams* p) {
  for (const auto& set : o.given) set(*p);
}

json params_json(const tasks::SearchParams& p) {
  return {{"depth", p.depth},           {"n", p.n},
          {"b", p.b},                   {"samples", p.samples},
          {"beams", p.beams},           {"beam_width", p.beam_width},
          {"simulations", p.simulations}, {"parallel", p.parallel},
          {"c_puct", p.c_puct},         {"selection", p.selection},
          {"rollout_depth", p.rollout_depth}, {"early_stop", p.early_stop}};
}

// What a resumed run must share with the run it continues.
json settings_json(const RunOptions& o, const tasks::Task& task) {
  json settings = {{"task", task.spec().name},
          {"task_folder", o.task_dir},
          {"data", task.spec().data.path},
          {"search", o.search.algorithm},
          {"params", params_json(o.search.params)},
          {"seed", o.search.seed},
          {"engine", o.engine.engine.name()},
          {"target", o.engine.target},
          {"draft", o.engine.draft},
          {"drafter", o.engine.drafter.name()},
          {"tree", o.engine.tree},
          {"device", o.engine.device},
          {"draft_length", o.engine.draft_length},
          {"adaptive_draft_length", o.engine.adaptive_draft_length},
          {"k_config", o.engine.k_config}};
  // Only for pruned trees, so that runs from before them still resume.
  if (o.engine.tree == spec::kPrunedTree) {
    settings["pct"] = {{"threshold", o.engine.pct_threshold}, {"epsilon", o.engine.pct_epsilon}};
  }
  // Only when on, so that runs from before these options still resume.
  if (o.engine.sample_drafts) settings["sampled_drafts"] = true;
  if (o.lookahead.gamma > 0) settings["lookahead"] = lookahead_json(o.lookahead);
  if (o.engine.chat_system) settings["chat"] = {{"system", *o.engine.chat_system}};
  if (!o.engine.chat_variables.empty()) settings["chat"]["variables"] = json::parse(o.engine.chat_variables.dump());
  return settings;
}

json problem_record(const tasks::Task& task, const tasks::Problem& problem, const search::SearchResult& result,
                    const spec::EngineStats& before, const spec::EngineStats& after, double wall_s) {
  const tasks::CheckResult check = task.checker().check(problem, result.answer);
  const search::TreeSummary tree = result.tree.summary();
  json record = {{"index", problem.index},
          {"problem", problem.fields},
          {"answer", check.answer},
          {"answer_text", result.answer},
          {"correct", check.correct},
          {"reason", check.reason},
          {"tree", {{"nodes", tree.nodes}, {"expanded", tree.expanded}, {"evaluated", tree.evaluated},
                    {"max_depth", tree.max_depth}, {"chosen_depth", tree.chosen_depth}}},
          {"batches", result.usage.batches},
          {"requests", result.usage.requests},
          {"failed_requests", result.usage.failed_requests},
          {"thought_tokens", result.usage.thought_tokens},
          {"evaluation_tokens", result.usage.evaluation_tokens},
          {"prm_tokens", result.usage.prm_tokens},
          {"prm_scored_tokens", result.usage.prm_scored_tokens},
          {"wall_s", wall_s}};
  if (result.usage.failed_requests > 0) record["error"] = result.usage.first_error;
  record.update(engine_counts_json(before, after));
  spec::EngineStats counts;
  add_engine_counts(record, &counts);
  record["alpha"] = counts.alpha();
  return record;
}

// One line of progress: problems done, accuracy so far, problems in
// flight, this invocation's tokens/s, and the time left at the rate this
// invocation has finished problems. `terminal_only`: as a problem starts.
void print_progress(const RunResults& results, size_t total, size_t in_flight, int64_t invocation, double elapsed,
                    bool terminal_only = false) {
  int64_t correct = 0, tokens = 0;
  size_t finished_here = 0;
  for (const auto& [index, r] : results.done()) {
    correct += r["correct"].get<bool>() ? 1 : 0;
    if (r.value("invocation", int64_t{-1}) == invocation) {
      tokens += r.value("tokens", int64_t{0});
      ++finished_here;
    }
  }
  const size_t done = results.done().size();
  const double left_s = finished_here ? elapsed / double(finished_here) * double(total - done) : -1.0;
  print_progress_line(done, total,
                      fmt::format("accuracy {:.1f}%  {} in flight  {:.0f} tokens/s  {}",
                                  done ? 100.0 * correct / done : 0.0, in_flight, elapsed > 0 ? tokens / elapsed : 0.0,
                                  done == total ? fmt::format("in {:.0f} s", elapsed) : eta_text(left_s)),
                      terminal_only);
}

// What one step of one problem's search sends the engine at once.
// The shared engine's figures for this invocation, for summary.json.
json engine_invocation_json(const spec::EngineStats& s, const ConcurrencyPlan& plan) {
  return {{"concurrency", plan.problems_in_flight},
          {"target_forwards", s.target_forwards},
          {"mean_sequences_per_forward", s.mean_forward_sequences()},
          {"peak_sequences_per_forward", s.peak_forward_sequences},
          {"target_busy", s.target_busy()},
          {"mean_draft_length", s.mean_draft_length()},
          {"wall_s", s.wall_s}};
}

// The engine's schedule as JSON lines: {"event": "proposed", "slot", "drafter"}
// or {"event": "verified", "slot", "forward"}, in the order they happened.
void write_schedule(const std::string& path, const std::vector<spec::ScheduleEvent>& events) {
  std::string text;
  for (const spec::ScheduleEvent& e : events) {
    const bool proposed = e.kind == spec::ScheduleEvent::kProposed;
    text += json{{"event", proposed ? "proposed" : "verified"}, {"slot", e.slot}, {proposed ? "drafter" : "forward", e.worker}}
                .dump() +
            "\n";
  }
  write_file_atomically(path, text);
}

// The settings of the earlier run in --baseline's folder, which must have
// run this task's problems with this search: a comparison of anything else
// would report a speedup that means nothing.
json baseline_settings(const std::string& dir, const json& settings) {
  const std::string path = (std::filesystem::path(dir) / "run.json").string();
  SEED_CHECK(std::filesystem::exists(path), kNotFound)
      << "--baseline: " << path << ": no such file (not a `seed run` --out folder)";
  const json base = models::read_json_file(path);
  for (const char* key : {"task", "search"}) {
    SEED_CHECK(base.value(key, json()) == settings.at(key), kInvalidArgument)
        << "--baseline: " << dir << " ran " << key << " " << base.value(key, json()).dump() << ", this run "
        << settings.at(key).dump() << ": compare runs of one task and search";
  }
  return base;
}

// Speedup and answer agreement against an earlier run's output folder
// (baseline_settings: its run.json); a torn last line, as an interrupted
// run leaves it, is not compared.
json compare_with_baseline(const std::string& dir, const json& base, const RunResults& results) {
  const std::string path = (std::filesystem::path(dir) / "results.jsonl").string();
  SEED_CHECK(std::filesystem::exists(path), kNotFound) << "--baseline: " << path << ": no such file";
  double base_wall = 0, wall = 0;
  int64_t compared = 0, same = 0;
  for (const auto& [index, b] : read_result_lines(path).by_index) {
    const auto it = results.done().find(index);
    if (it == results.done().end()) continue;
    SEED_CHECK(b.contains("answer_text"), kCorruption)
        << "--baseline: " << path << ": problem " << index << ": field 'answer_text' is missing";
    same += b.at("answer_text") == it->second.at("answer_text") ? 1 : 0;
    base_wall += b.at("wall_s").get<double>();
    wall += it->second.at("wall_s").get<double>();
    ++compared;
  }
  return {{"dir", dir}, {"engine", base.value("engine", "")}, {"compared", compared}, {"same_answers", same},
          {"speedup", wall > 0 ? base_wall / wall : 0.0}};
}

// A file an option writes at the end of the run: its folder must exist and
// be writable before the run starts, not after hours of it.
void check_writable(const char* flag, const std::string& path) {
  if (path.empty()) return;
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  const std::string shown = folder.empty() ? "." : folder.string();
  SEED_CHECK(std::filesystem::is_directory(shown), kNotFound) << flag << ": no folder " << shown << " for " << path;
  SEED_CHECK(::access(shown.c_str(), W_OK) == 0, kIo) << flag << ": cannot write in " << shown;
}

void print_summary(const json& s) {
  fmt::print("\n{:<18} {:<18} {:<11} {:>8} {:>8} {:>9} {:>9} {:>10} {:>7} {:>6} {:>8}\n", "task", "search", "engine",
             "problems", "correct", "accuracy", "tokens", "tokens/s", "tau", "alpha", "wall s");
  // alpha is "-" for a run that drafted nothing (ar), as the docs' tables show it.
  const std::string alpha = s["drafted_tokens"].get<int64_t>() > 0 ? fmt::format("{:.3f}", s["alpha"].get<double>())
                                                                   : std::string("-");
  fmt::print("{:<18} {:<18} {:<11} {:>8} {:>8} {:>8.1f}% {:>9} {:>10.1f} {:>7.2f} {:>6} {:>8.1f}\n",
             s["task"].get<std::string>(), s["search"].get<std::string>(), s["engine"].get<std::string>(),
             s["problems"].get<int64_t>(), s["correct"].get<int64_t>(), 100 * s["accuracy"].get<double>(),
             s["tokens"].get<int64_t>(), s["tokens_per_s"].get<double>(), s["tau"].get<double>(), alpha,
             s["wall_s"].get<double>());
  const int64_t prompt = s.value("prompt_tokens", int64_t{0}), prefill = s.value("prefill_tokens", int64_t{0});
  if (prompt > 0) {
    fmt::print("prompt tokens: {} requested, {} computed by the target ({:.1f}% reused from its prefix cache)\n",
               prompt, prefill, 100.0 * double(prompt - prefill) / double(prompt));
  }
  const int64_t prm = s.value("prm_tokens", int64_t{0}), prm_scored = s.value("prm_scored_tokens", int64_t{0});
  if (prm_scored > 0) {
    fmt::print("reward model: {} tokens computed for {} tokens of scored steps ({:.2f}x)\n", prm, prm_scored,
               double(prm) / double(prm_scored));
  }
  if (const int64_t failed = s.value("failed_requests", int64_t{0}); failed > 0) {
    fmt::print("failed requests: {} of {}; each one's problem says why in results.jsonl (field 'error')\n", failed,
               s["requests"].get<int64_t>());
  }
  if (s.contains("baseline")) {
    const json& b = s["baseline"];
    fmt::print("speedup vs {} ({}): {:.2f}x over {}; identical answers: {} of {}\n", b["engine"].get<std::string>(),
               b["dir"].get<std::string>(), b["speedup"].get<double>(),
               counted(b["compared"].get<int64_t>(), "problem"), b["same_answers"].get<int64_t>(),
               b["compared"].get<int64_t>());
  }
}

// How this run used the machine: recorded in run.json and summary.json, but
// not a setting a resumed run must share (results do not depend on it).
json runtime_json(const ThreadPlan& plan, const spec::EngineOptions& engine) {
  return {{"threads", plan.describe()},
          {"cores", plan.cores},
          {"target_threads", plan.target_threads},
          {"drafters", plan.drafters},
          {"draft_threads", plan.draft_threads},
          {"cpu_kernel", models::cpu_kernel_name(engine.cpu_kernel)},
          {"prefix_cache", engine.prefix_cache},
          {"schedule", engine.schedule ? spec::schedule_policy_name(*engine.schedule) : "default"},
          {"kv_cache_mb", engine.kv_cache_mb},
          {"weights_dtype", engine.weights_dtype ? models::weight_dtype_name(*engine.weights_dtype) : "as stored"}};
}

void run(RunOptions o, const EngineMaker& make_engine, const GlobalOptions& global) {
  const tasks::Task task = tasks::Task::load(o.task_dir, {o.data_path, global.data_dir});
  if (task.spec().chat_system) {
    try {
      models::ChatTemplate::load_required(o.engine.target, "--target");
    } catch (const Error& e) {
      SEED_FAIL(kInvalidArgument) << o.task_dir << "/task.json: field 'chat' renders prompts with the target's "
                                  << "chat template (drop 'chat' for a base model), but " << e.what();
    }
    o.engine.chat_system = task.spec().chat_system;
    o.engine.chat_variables = task.spec().chat_variables;
    const nlohmann::ordered_json given = parse_chat_variables(o.chat_variables);
    for (const auto& [name, value] : given.items()) o.engine.chat_variables[name] = value;
  } else {
    SEED_CHECK(o.chat_variables.empty(), kInvalidArgument)
        << "--chat-var: " << o.task_dir << "/task.json has no field 'chat': its prompts reach the model as "
        << "plain text, with no chat template to take variables";
  }
  o.search.params = task.spec().search;
  apply_flags(o, &o.search.params);
  SEED_CHECK(o.engine.tree.empty() || o.engine.tree == spec::kPrunedTree || !o.engine.drafter.needs_draft_model(),
             kInvalidArgument)
      << "--tree " << o.engine.tree << ": the " << o.engine.drafter.name()
      << " drafter takes only 'pct' (a tree file is for the stand drafter)";
  SEED_CHECK(o.lookahead.verifier.empty() || o.lookahead.gamma > 0, kInvalidArgument)
      << "--step-verifier " << o.lookahead.verifier << ": checks the steps --lookahead drafts, and it is not given";
  if (o.lookahead.verifier.empty()) o.lookahead.verifier = task.spec().lookahead.verifier;
  o.lookahead.delimiter = task.spec().lookahead.delimiter;
  o.lookahead.judge_prompt = task.spec().lookahead.judge_prompt;
  const std::unique_ptr<search::Search> search = search::make_search(o.search);
  search->check(task);
  for (const std::string& name : o.given_names) {
    SEED_CHECK(search::search_reads(o.search.algorithm, name), kInvalidArgument)
        << "--" << name << ": search " << o.search.algorithm << " has no such parameter";
  }
  if (o.out_dir.empty()) o.out_dir = "results/" + task.spec().name + "-" + o.search.algorithm + "-" + o.engine.engine.name();
  const json settings = settings_json(o, task);
  const json baseline = o.baseline_dir.empty() ? json() : baseline_settings(o.baseline_dir, settings);
  check_writable("--tree-out", o.tree_out);
  check_writable("--schedule-out", o.schedule_out);
  const json runtime = runtime_json(plan_engine_threads(global, o.engine, 0), o.engine);
  RunResults results(o.out_dir, settings, o.resume, runtime);
  exit_on_interrupt("every finished problem is kept in " + results.results_path() + "; " +
                    (global.resume_hint.empty() ? "finish the run with the same options and --resume"
                                                : global.resume_hint));

  const size_t total = o.limit > 0 ? std::min<size_t>(o.limit, task.problems().size()) : task.problems().size();
  results.keep_first(total);
  std::vector<const tasks::Problem*> todo;
  for (size_t i = 0; i < total; ++i) {
    if (!results.done().count(i)) todo.push_back(&task.problems()[i]);
  }
  const bool limit_beyond = o.limit > 0 && static_cast<size_t>(o.limit) > task.problems().size();
  spdlog::info("{}: {}{}, {} already done; search {}, engine {}; results in {}", task.spec().name,
               counted(static_cast<int64_t>(total), "problem"),
               limit_beyond ? fmt::format(" (all it has; --limit {})", o.limit) : "", total - todo.size(),
               o.search.algorithm, o.engine.engine.name(), results.results_path());
  json trees = json::array();
  json steps;
  json engine_json;
  if (!todo.empty()) {
    if (o.lookahead.gamma > 0) {
      o.engine.lookahead = lookahead_settings(o.lookahead);
      o.engine.step_verifier = step_verifier_maker(o.lookahead);
    }
    // A task that evaluates with a process reward model: it runs here, beside
    // the search (rank 0 under mpirun). It loads before the engine's models,
    // so that a sweep point whose draft is new does not let go of the PRM
    // the point before loaded (models/loaded_models.h).
    const std::unique_ptr<spec::StepScorer> scorer =
        task.spec().evaluate.mode == tasks::EvaluateMode::kPrm
            ? spec::load_prm_scorer(task.spec().evaluate.prm.model, o.engine)
            : nullptr;
    std::unique_ptr<spec::Engine> engine = make_engine(o.engine);
    if (!o.schedule_out.empty()) engine->record_schedule();
    // An engine that serves concurrent calls gives each problem its own
    // counts; the others are counted by the difference of their totals.
    const bool shares = engine->serves_concurrent_calls();
    const ConcurrencyPlan plan =
        plan_problem_concurrency(o.concurrency, *engine, o.engine, *search, global.cores, todo.size());
    // Lines of this invocation carry its id and when they finished in it, so
    // that summary.json's wall_s is elapsed time, over resumed invocations too.
    const int64_t invocation = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch()).count();
    const Clock::time_point invocation_start = Clock::now();
    const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - invocation_start).count(); };
    std::mutex mutex;  // guards results, trees, in_flight and problems_with_failures
    size_t in_flight = 0;
    constexpr int kFailuresLogged = 5;  // problems whose failed requests are logged
    int problems_with_failures = 0;
    print_progress(results, total, 0, invocation, 0);
    search::run_concurrently(todo.size(), plan.problems_in_flight, [&](size_t i) {
      const tasks::Problem& problem = *todo[i];
      {
        std::lock_guard<std::mutex> lock(mutex);
        ++in_flight;
        print_progress(results, total, in_flight, invocation, elapsed(), /*terminal_only=*/true);
      }
      ProblemEngine own(*engine);
      spec::Engine& used = shares ? own : *engine;
      const spec::EngineStats before = used.stats();
      const Clock::time_point start = Clock::now();
      search::SearchResult result = search->solve(task, problem, used, scorer.get());
      const double wall = std::chrono::duration<double>(Clock::now() - start).count();
      json record = problem_record(task, problem, result, before, used.stats(), wall);
      record["invocation"] = invocation;
      std::lock_guard<std::mutex> lock(mutex);
      --in_flight;
      record["finished_s"] = elapsed();
      results.append(record);
      if (result.usage.failed_requests > 0 && ++problems_with_failures <= kFailuresLogged) {
        spdlog::warn("problem {}: {} of {} requests failed: {}{}", problem.index, result.usage.failed_requests,
                     result.usage.requests, result.usage.first_error,
                     problems_with_failures == kFailuresLogged ? " (further failures: results.jsonl, field 'error')"
                                                               : "");
      }
      if (!o.tree_out.empty()) {
        trees.push_back({{"index", problem.index}, {"problem", problem.fields}, {"answer", record["answer"]},
                         {"correct", record["correct"]}, {"tree", result.tree.to_json()}});
      }
      print_progress(results, total, in_flight, invocation, elapsed());
    });
    engine_json = engine_invocation_json(engine->stats(), plan);
    if (!o.schedule_out.empty()) write_schedule(o.schedule_out, engine->schedule());
    if (o.lookahead.gamma > 0) steps = step_stats_json(engine->stats().steps);
  }
  json summary = results.summary(settings);
  summary["runtime"] = runtime;
  if (!engine_json.is_null()) summary["engine_invocation"] = engine_json;
  if (o.lookahead.gamma > 0) {
    // This invocation's steps (a resumed run's earlier ones are not counted).
    summary["lookahead"] = lookahead_json(o.lookahead);
    summary["step_acceptance"] = steps.is_null() ? json() : steps["step_acceptance"];
    summary["steps"] = steps;
  }
  results.write_summary(summary);
  if (!o.tree_out.empty()) {
    std::sort(trees.begin(), trees.end(), [](const json& a, const json& b) { return a["index"] < b["index"]; });
    std::ofstream out(o.tree_out);
    out << dump_model_output(json{{"task", task.spec().name}, {"search", o.search.algorithm}, {"problems", trees}}, 1)
        << "\n";
    SEED_CHECK(out.good(), kIo) << "--tree-out: cannot write " << o.tree_out;
  }
  if (!o.baseline_dir.empty()) {
    summary["baseline"] = compare_with_baseline(o.baseline_dir, baseline, results);
    results.write_summary(summary);
  }
  print_summary(summary);
}

}  // namespace

void add_run_command(CLI::App& app, const GlobalOptions& global) {
  auto o = std::make_shared<RunOptions>();
  o->engine.target = "models/zoo/tiny-target";
  o->engine.draft = "models/zoo/tiny-draft";
  // Every ready proposal in one forward, greedy requests drafting where it
  // pays: the engine no workload finds slower than plain batching.
  o->engine.engine = spec::EngineKind::kSeedBatch;
  CLI::App* cmd = app.add_subcommand("run", "Run a search algorithm over a task folder's problems");
  cmd->add_option("--task", o->task_dir, "Task folder (task.json)")->required();
  std::string searches;
  for (const auto& s : search::search_names()) searches += (searches.empty() ? "" : " | ") + s;
  std::vector<std::string> engines;
  for (const spec::EngineKind kind : spec::kEngineKinds) engines.push_back(kind.name());
  cmd->add_option("--search", o->search.algorithm, searches)->capture_default_str();
  cmd->add_option_function<std::string>(
         "--engine", [o](const std::string& name) { o->engine.engine = spec::EngineKind::parse(name); },
         spec::engine_kind_names())
      ->check(CLI::IsMember(engines))
      ->default_str(o->engine.engine.name());
  cmd->add_option("--target", o->engine.target, "Target model folder")->capture_default_str();
  cmd->add_option("--draft", o->engine.draft, "Draft model folder (speculative engines)")->capture_default_str();
  cmd->add_option_function<std::string>(
         "--drafter", [o](const std::string& name) { o->engine.drafter = spec::DrafterKind::parse(name); },
         "What drafts for the speculative engines: " + spec::drafter_kind_names())
      ->default_str(o->engine.drafter.name());
  cmd->add_option("--tree", o->engine.tree,
                  "Draft trees: pct for pruned candidate trees (a draft model; --k-config bounds them, default 5 "
                  "children to depth 10), or for stand a static tree file (default: the draft shape)");
  add_pct_options(cmd, &o->engine.pct_threshold, &o->engine.pct_epsilon);
  cmd->add_option("--trigrams", o->engine.trigrams,
                  "aded: tri-gram table file from `seed trigrams` (default: learned from the target's outputs)");
  cmd->add_option("--device", o->engine.device, "cpu or cuda:N; under mpirun, cuda: each rank a GPU of its node in turn")
      ->capture_default_str();
  cmd->add_option("--draft-length", o->engine.draft_length,
                  "Draft chain length k: the longest a request drafts, each round as long as the measured "
                  "acceptance and costs make best, down to none at all")
      ->capture_default_str();
  cmd->add_flag_callback("--fixed-draft-length", [o] { o->engine.adaptive_draft_length = false; },
                         "Every round drafts --draft-length tokens");
  cmd->add_flag("--sampled-drafts", o->engine.sample_drafts,
                "Sampled requests draw their drafts from the draft's distribution (model and stand drafters), "
                "verified by rejection sampling: their tokens then depend on the draft, and each round drafts "
                "--draft-length tokens. Default: the winner of the race the target samples by, run over the "
                "draft's distribution, kept where it is the target's own token, so that tokens equal ar's");
  cmd->add_option("--k-config", o->engine.k_config, "Draft tree shape, children per depth (e.g. 2 2 1)");
  cmd->add_option("--drafters", o->engine.drafters, "seed engines: drafter threads (0 = automatic)")
      ->check(non_negative_integer())
      ->capture_default_str();
  cmd->add_option("--max-batch", o->engine.max_batch, "Proposals per target forward: batched engines, and seed's fcfs across problems in flight")
      ->capture_default_str();
  cmd->add_option_function<std::string>(
      "--lookahead", [o](const std::string& value) { parse_lookahead(value, o->lookahead); },
      "Step-level speculation: the draft model (--draft) drafts this many steps ahead and the engine's "
      "target writes the step after each (Lookahead Reasoning; not lossless); auto: each round the lookahead "
      "the measured step acceptance and draft/target costs make best (0 when drafting does not pay)");
  add_lookahead_shape_options(cmd, &o->lookahead);
  cmd->add_option("--judge-model", o->lookahead.judge_model,
                  "--step-verifier judge: the model that judges (default: the target)");
  cmd->add_option("--step-verifier", o->lookahead.verifier,
                  "--lookahead: when a drafted step counts as the target's: " + tasks::step_verifier_list() +
                      " (hidden: the target's hidden states, cosine >= 0.95; default: the task's, task.json "
                      "\"lookahead\")");
  cmd->add_option_function<std::string>(
      "--schedule", [o](const std::string& name) { o->engine.schedule = spec::parse_schedule_policy(name); },
      "seed and batched engines: what each target forward verifies: fcfs | batch | priority (default: fcfs "
      "for seed, batch for seed-batch and ar-batch)");
  cmd->add_flag("--no-prefix-cache{false}", o->engine.prefix_cache,
               "Prefill every prompt in full instead of reusing the KV of prefixes computed before");
  cmd->add_option("--kv-cache-mb", o->engine.kv_cache_mb,
                  "KV cache budget per model in MiB; cached prefixes are evicted beyond it (0 = half the available "
                  "memory)")
      ->check(non_negative_integer())
      ->capture_default_str();
  cmd->add_option("--seed", o->search.seed, "Run seed: every request's random stream derives from it")
      ->capture_default_str();
  using Params = tasks::SearchParams;
  const auto param = [&](const std::string& name, auto Params::*field, const std::string& help) {
    cmd->add_option("--" + name, o->flags.*field, help + " (default: task.json's search object)")
        ->each([o, field, name](const std::string&) {
          o->given.push_back([o, field](Params& p) { p.*field = o->flags.*field; });
          o->given_names.push_back(name);
        });
  };
  param("depth", &Params::depth, "Thought steps T");
  param("n", &Params::n, "Thoughts per expanded state");
  param("b", &Params::b, "bfs: states kept per level");
  param("samples", &Params::samples, "best-of-n, self-consistency: chains sampled");
  param("beams", &Params::beams, "dvts: beams N");
  param("beam-width", &Params::beam_width, "dvts: subtree width M (N/M subtrees)");
  param("simulations", &Params::simulations, "mcts: simulations");
  param("parallel", &Params::parallel, "mcts: simulations per batched round");
  param("c-puct", &Params::c_puct, "mcts: exploration constant");
  param("selection", &Params::selection, "mcts: uct | puct");
  param("rollout-depth", &Params::rollout_depth, "mcts: rollout thoughts below a new node");
  param("early-stop", &Params::early_stop,
        "self-consistency: stop sampling once the majority answer is decided (true | false)");
  cmd->add_option("--limit", o->limit, "Run the first N problems (0 = all)")->check(non_negative_integer());
  add_concurrency_option(cmd, &o->concurrency);
  add_chat_variable_option(*cmd, nullptr, &o->chat_variables);
  cmd->add_option("--data", o->data_path, "Data file replacing task.json's data.path");
  cmd->add_option("--out", o->out_dir, "Output folder (default results/TASK-SEARCH-ENGINE)")
      ->check([](const std::string& dir) { return dir.empty() ? std::string("an empty folder name") : std::string(); });
  cmd->add_flag("--resume", o->resume, "Continue an interrupted run in --out, skipping finished problems");
  cmd->add_option("--tree-out", o->tree_out, "Write the explored trees (nodes, thoughts, values, chosen path) as JSON");
  cmd->add_option("--schedule-out", o->schedule_out,
                  "Write the engine's schedule as JSON lines: each proposal as it was queued and as it was verified, "
                  "in which target forward");
  cmd->add_option("--baseline", o->baseline_dir,
                  "An earlier run's --out folder, of the same task and search: report the speedup over it and "
                  "whether answers agree");
  cmd->callback([o, &global] {
    check_text_model_folder(o->engine.target, "--target");
    run_with_engines(global, o->engine, [&](const EngineMaker& make_engine) { run(*o, make_engine, global); });
  });
}

}  // namespace seed::launch
