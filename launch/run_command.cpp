// `seed run`: a search algorithm over a task folder's problems with one
// engine. Writes one JSONL line per problem as it finishes (so --resume
// loses nothing and recomputes nothing), a summary table and summary.json,
// and with --tree-out the explored trees.
#include <cstdint>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "launch/commands.h"
#include "launch/distributed.h"
#include "launch/engine_counts.h"
#include "launch/json_text.h"
#include "launch/pct_options.h"
#include "launch/process_signals.h"
#include "launch/progress_line.h"
#include "launch/runtime.h"
#include "launch/run_results.h"
#include "models/base/error.h"
#include "models/chat_template/chat_template.h"
#include "search/search.h"
#include "launch/lookahead_run.h"
#include "spec/engine/engine_factory.h"
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
  std::string out_dir;
  bool resume = false;
  std::string tree_out;
  std::string baseline_dir;
  LookaheadOptions lookahead;
  // Search parameters given on the command line (the rest come from task.json).
  tasks::SearchParams flags;
  std::vector<std::string> given;
};

void apply_flags(const RunOptions& o, tasks::SearchParams* p) {
  const auto given = [&](const char* name) {
    return std::find(o.given.begin(), o.given.end(), name) != o.given.end();
  };
  if (given("depth")) p->depth = o.flags.depth;
  if (given("n")) p->n = o.flags.n;
  if (given("b")) p->b = o.flags.b;
  if (given("samples")) p->samples = o.flags.samples;
  if (given("beams")) p->beams = o.flags.beams;
  if (given("beam-width")) p->beam_width = o.flags.beam_width;
  if (given("simulations")) p->simulations = o.flags.simulations;
  if (given("parallel")) p->parallel = o.flags.parallel;
  if (given("c-puct")) p->c_puct = o.flags.c_puct;
  if (given("selection")) p->selection = o.flags.selection;
  if (given("rollout-depth")) p->rollout_depth = o.flags.rollout_depth;
  if (given("early-stop")) p->early_stop = o.flags.early_stop;
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
          {"k_config", o.engine.k_config}};
  // Only for pruned trees, so that runs from before them still resume.
  if (o.engine.tree == spec::kPrunedTree) {
    settings["pct"] = {{"threshold", o.engine.pct_threshold}, {"epsilon", o.engine.pct_epsilon}};
  }
  // Only when on, so that runs from before the option still resume.
  if (o.lookahead.gamma > 0) settings["lookahead"] = lookahead_json(o.lookahead);
  if (o.engine.chat_system) settings["chat"] = {{"system", *o.engine.chat_system}};
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
          {"wall_s", wall_s}};
  record.update(engine_counts_json(before, after));
  spec::EngineStats counts;
  add_engine_counts(record, &counts);
  record["alpha"] = counts.alpha();
  return record;
}

// One line of progress: problems done, accuracy so far, tokens/s.
void print_progress(const RunResults& results, size_t total) {
  int64_t correct = 0, tokens = 0;
  double wall = 0;
  for (const auto& [index, r] : results.done()) {
    correct += r["correct"].get<bool>() ? 1 : 0;
    tokens += r.value("tokens", int64_t{0});  // absent in lines older than the engine counters
    wall += r["wall_s"].get<double>();
  }
  const size_t done = results.done().size();
  print_progress_line(done, total,
                      fmt::format("accuracy {:.1f}%  {:.0f} tokens/s", done ? 100.0 * correct / done : 0.0,
                                  wall > 0 ? tokens / wall : 0.0));
}

// Speedup and answer agreement against an earlier run's output folder.
json compare_with_baseline(const std::string& dir, const RunResults& results) {
  const std::string path = (std::filesystem::path(dir) / "results.jsonl").string();
  std::ifstream in(path);
  SEED_CHECK(in.good(), kNotFound) << "--baseline: " << path << ": no such file";
  std::string engine;
  double base_wall = 0, wall = 0;
  int64_t compared = 0, same = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const json b = json::parse(line);
    const auto it = results.done().find(b.at("index").get<size_t>());
    if (it == results.done().end()) continue;
    ++compared;
    same += b.at("answer_text") == it->second.at("answer_text") ? 1 : 0;
    base_wall += b.at("wall_s").get<double>();
    wall += it->second.at("wall_s").get<double>();
  }
  std::ifstream run_json((std::filesystem::path(dir) / "run.json").string());
  if (run_json.good()) engine = json::parse(run_json).value("engine", "");
  return {{"dir", dir}, {"engine", engine}, {"compared", compared}, {"same_answers", same},
          {"speedup", wall > 0 ? base_wall / wall : 0.0}};
}

void print_summary(const json& s) {
  fmt::print("\n{:<18} {:<17} {:<11} {:>8} {:>8} {:>9} {:>9} {:>10} {:>7} {:>6} {:>8}\n", "task", "search", "engine",
             "problems", "correct", "accuracy", "tokens", "tokens/s", "tau", "alpha", "wall s");
  fmt::print("{:<18} {:<17} {:<11} {:>8} {:>8} {:>8.1f}% {:>9} {:>10.1f} {:>7.2f} {:>6.3f} {:>8.1f}\n",
             s["task"].get<std::string>(), s["search"].get<std::string>(), s["engine"].get<std::string>(),
             s["problems"].get<int64_t>(), s["correct"].get<int64_t>(), 100 * s["accuracy"].get<double>(),
             s["tokens"].get<int64_t>(), s["tokens_per_s"].get<double>(),
             s["tau"].get<double>(), s["alpha"].get<double>(), s["wall_s"].get<double>());
  const int64_t prompt = s.value("prompt_tokens", int64_t{0}), prefill = s.value("prefill_tokens", int64_t{0});
  if (prompt > 0) {
    fmt::print("prompt tokens: {} requested, {} computed by the target ({:.1f}% reused from its prefix cache)\n",
               prompt, prefill, 100.0 * double(prompt - prefill) / double(prompt));
  }
  if (s.contains("baseline")) {
    const json& b = s["baseline"];
    fmt::print("speedup vs {} ({}): {:.2f}x over {} problems; identical answers: {} of {}\n",
               b["engine"].get<std::string>(), b["dir"].get<std::string>(), b["speedup"].get<double>(),
               b["compared"].get<int64_t>(), b["same_answers"].get<int64_t>(), b["compared"].get<int64_t>());
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
    SEED_CHECK(models::ChatTemplate::load(o.engine.target).has_value(), kInvalidArgument)
        << o.task_dir << "/task.json: field 'chat' renders prompts with the target's chat template, but "
        << o.engine.target << "/tokenizer_config.json has none (drop 'chat' for a base model)";
    o.engine.chat_system = task.spec().chat_system;
  }
  o.search.params = task.spec().search;
  apply_flags(o, &o.search.params);
  if (o.lookahead.verifier.empty()) o.lookahead.verifier = task.spec().lookahead.verifier;
  o.lookahead.delimiter = task.spec().lookahead.delimiter;
  o.lookahead.judge_prompt = task.spec().lookahead.judge_prompt;
  const std::unique_ptr<search::Search> search = search::make_search(o.search);
  if (o.out_dir.empty()) o.out_dir = "results/" + task.spec().name + "-" + o.search.algorithm + "-" + o.engine.engine.name();
  const json settings = settings_json(o, task);
  const json runtime = runtime_json(plan_engine_threads(global, o.engine, 0), o.engine);
  RunResults results(o.out_dir, settings, o.resume, runtime);
  exit_on_interrupt("every finished problem is kept in " + results.results_path() +
                    "; finish the run with the same options and --resume");

  const size_t total = o.limit > 0 ? std::min<size_t>(o.limit, task.problems().size()) : task.problems().size();
  std::vector<const tasks::Problem*> todo;
  for (size_t i = 0; i < total; ++i) {
    if (!results.done().count(i)) todo.push_back(&task.problems()[i]);
  }
  spdlog::info("{}: {} problems, {} already done; search {}, engine {}; results in {}", task.spec().name, total,
               total - todo.size(), o.search.algorithm, o.engine.engine.name(), results.results_path());
  json trees = json::array();
  json steps;
  if (!todo.empty()) {
    std::unique_ptr<spec::Engine> engine = make_engine(o.engine);
    if (o.lookahead.gamma > 0) engine = with_lookahead(std::move(engine), o.engine, o.lookahead);
    print_progress(results, total);
    for (const tasks::Problem* problem : todo) {
      const spec::EngineStats before = engine->stats();
      const Clock::time_point start = Clock::now();
      search::SearchResult result = search->solve(task, *problem, *engine);
      const double wall = std::chrono::duration<double>(Clock::now() - start).count();
      const json record = problem_record(task, *problem, result, before, engine->stats(), wall);
      results.append(record);
      if (!o.tree_out.empty()) {
        trees.push_back({{"index", problem->index}, {"problem", problem->fields}, {"answer", record["answer"]},
                         {"correct", record["correct"]}, {"tree", result.tree.to_json()}});
      }
      print_progress(results, total);
    }
    if (const auto* lookahead = dynamic_cast<const spec::LookaheadEngine*>(engine.get())) {
      steps = step_stats_json(lookahead->step_stats());
    }
  }
  json summary = results.summary(settings);
  summary["runtime"] = runtime;
  if (o.lookahead.gamma > 0) {
    // This session's steps (a resumed run's earlier ones are not counted).
    summary["lookahead"] = lookahead_json(o.lookahead);
    summary["step_acceptance"] = steps.is_null() ? json() : steps["step_acceptance"];
    summary["steps"] = steps;
  }
  if (!o.baseline_dir.empty()) summary["baseline"] = compare_with_baseline(o.baseline_dir, results);
  results.write_summary(summary);
  print_summary(summary);
  if (!o.tree_out.empty()) {
    std::ofstream out(o.tree_out);
    out << dump_model_output(json{{"task", task.spec().name}, {"search", o.search.algorithm}, {"problems", trees}}, 1)
        << "\n";
    SEED_CHECK(out.good(), kIo) << "--tree-out: cannot write " << o.tree_out;
  }
}

}  // namespace

void add_run_command(CLI::App& app, const GlobalOptions& global) {
  auto o = std::make_shared<RunOptions>();
  o->engine.target = "models/zoo/tiny-target";
  o->engine.draft = "models/zoo/tiny-draft";
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
  cmd->add_option("--device", o->engine.device, "cpu or cuda:N")->capture_default_str();
  cmd->add_option("--draft-length", o->engine.draft_length, "Draft chain length k")->capture_default_str();
  cmd->add_option("--k-config", o->engine.k_config, "Draft tree shape, children per depth (e.g. 2 2 1)");
  cmd->add_option("--drafters", o->engine.drafters, "seed engines: drafter threads (0 = automatic)")
      ->capture_default_str();
  cmd->add_option("--max-batch", o->engine.max_batch, "Batched engines: proposals per target forward")
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
                  "--lookahead: when a drafted step counts as the target's: exact | normalized | judge | "
                  "hidden[:THRESHOLD] (the target's hidden states, cosine >= 0.95) | game24 | blocksworld "
                  "(default: the task's, task.json \"lookahead\")");
  cmd->add_option_function<std::string>(
      "--schedule", [o](const std::string& name) { o->engine.schedule = spec::parse_schedule_policy(name); },
      "seed and batched engines: what each target forward verifies: fcfs | batch | priority (default: fcfs "
      "for seed, batch for seed-batch and ar-batch)");
  cmd->add_flag("--no-prefix-cache{false}", o->engine.prefix_cache,
               "Prefill every prompt in full instead of reusing the KV of prefixes computed before");
  cmd->add_option("--kv-cache-mb", o->engine.kv_cache_mb,
                  "KV cache budget per model in MiB; cached prefixes are evicted beyond it (0 = half the free "
                  "memory)")
      ->capture_default_str();
  cmd->add_option("--seed", o->search.seed, "Run seed: every request's random stream derives from it")
      ->capture_default_str();
  const auto param = [&](const std::string& name, auto* target, const std::string& help) {
    cmd->add_option("--" + name, *target, help + " (default: task.json's search object)")
        ->each([o, name](const std::string&) { o->given.push_back(name); });
  };
  param("depth", &o->flags.depth, "Thought steps T");
  param("n", &o->flags.n, "Thoughts per expanded state");
  param("b", &o->flags.b, "bfs: states kept per level");
  param("samples", &o->flags.samples, "best-of-n, self-consistency: chains sampled");
  param("beams", &o->flags.beams, "dvts: beams N");
  param("beam-width", &o->flags.beam_width, "dvts: subtree width M (N/M subtrees)");
  param("simulations", &o->flags.simulations, "mcts: simulations");
  param("parallel", &o->flags.parallel, "mcts: simulations per batched round");
  param("c-puct", &o->flags.c_puct, "mcts: exploration constant");
  param("selection", &o->flags.selection, "mcts: uct | puct");
  param("rollout-depth", &o->flags.rollout_depth, "mcts: rollout thoughts below a new node");
  param("early-stop", &o->flags.early_stop,
        "self-consistency: stop sampling once the majority answer is decided (true | false)");
  cmd->add_option("--limit", o->limit, "Run the first N problems (0 = all)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--data", o->data_path, "Data file replacing task.json's data.path");
  cmd->add_option("--out", o->out_dir, "Output folder (default results/TASK-SEARCH-ENGINE)");
  cmd->add_flag("--resume", o->resume, "Continue an interrupted run in --out, skipping finished problems");
  cmd->add_option("--tree-out", o->tree_out, "Write the explored trees (nodes, thoughts, values, chosen path) as JSON");
  cmd->add_option("--baseline", o->baseline_dir,
                  "An earlier run's --out folder: report the speedup over it and whether answers agree");
  cmd->callback([o, &global] {
    run_with_engines(global, o->engine, [&](const EngineMaker& make_engine) { run(*o, make_engine, global); });
  });
}

}  // namespace seed::launch
