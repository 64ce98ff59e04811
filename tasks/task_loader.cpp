// Task::load: task.json -> TaskSpec, validated field by field, then the data
// and the checks that tie them together (every template field exists, every
// data row has the fields the templates and the checker read).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "models/base/error.h"
#include "models/base/json_fields.h"
#include "tasks/prompt_template.h"
#include "tasks/step_checkers.h"
#include "tasks/task_data_path.h"
#include "tasks/task_regex.h"
#include "tasks/task.h"

namespace seed::tasks {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using models::JsonFields;

std::vector<std::string> read_strings(JsonFields& fields, const char* key) {
  std::vector<std::string> out;
  const json* value = fields.find(key);
  if (value == nullptr) return out;
  SEED_CHECK(value->is_array(), kInvalidArgument) << fields.where(key) << " must be an array of strings";
  for (const json& item : *value) {
    SEED_CHECK(item.is_string(), kInvalidArgument) << fields.where(key) << " must be an array of strings";
    out.push_back(item.get<std::string>());
  }
  return out;
}

// A nested object's fields; `prefix` is the dotted path ("generate.").
JsonFields nested(JsonFields& parent, const char* key, const json& value, const std::string& source,
                  const std::string& prefix) {
  SEED_CHECK(value.is_object(), kInvalidArgument) << parent.where(key) << " must be a JSON object";
  return JsonFields(value, source, prefix);
}

PromptSpec read_prompt(const json& object, const std::string& source, const std::string& prefix) {
  JsonFields fields(object, source, prefix);
  PromptSpec prompt;
  fields.required("prompt", &prompt.prompt);
  prompt.stop = read_strings(fields, "stop");
  fields.optional("max_new_tokens", &prompt.max_new_tokens);
  SEED_CHECK(prompt.max_new_tokens >= 1, kInvalidArgument) << fields.where("max_new_tokens") << " must be >= 1";
  double temperature = prompt.sampling.temperature, top_p = prompt.sampling.top_p;
  fields.optional("temperature", &temperature);
  fields.optional("top_k", &prompt.sampling.top_k);
  fields.optional("top_p", &top_p);
  prompt.sampling.temperature = static_cast<float>(temperature);
  prompt.sampling.top_p = static_cast<float>(top_p);
  prompt.sampling.validate([&fields](const std::string& field) { return fields.where(field); });
  fields.optional("output", &prompt.output);
  fields.reject_unknown("(known: prompt, stop, max_new_tokens, temperature, top_k, top_p, output)");
  return prompt;
}

void check_regex(const std::string& pattern, const std::string& where, bool needs_group) {
  const std::regex re = compile_task_regex(pattern, where);
  SEED_CHECK(!needs_group || re.mark_count() >= 1, kInvalidArgument)
      << where << ": the pattern needs a capture group '(...)'";
}

// The step verifiers a task may name (step_verifier_names).
void check_step_verifier(const std::string& name, const std::string& where) {
  std::optional<double> threshold;
  if (parse_hidden_verifier(name, where, &threshold)) return;
  const std::vector<std::string>& known = step_verifier_names();
  SEED_CHECK(std::find(known.begin(), known.end(), name) != known.end(), kInvalidArgument)
      << where << ": unknown step verifier '" << name << "' (known: " << step_verifier_list() << ")";
}

// A judge prompt fills {s1} and {s2} and nothing else.
void check_judge_prompt(const std::string& prompt, const std::string& where) {
  const std::vector<std::string> fields = template_fields(prompt, where);
  for (const std::string& field : fields) {
    SEED_CHECK(field == "s1" || field == "s2", kInvalidArgument)
        << where << ": unknown field {" << field << "} (known: s1, the target's step; s2, the drafted step)";
  }
  for (const char* needed : {"s1", "s2"}) {
    SEED_CHECK(std::find(fields.begin(), fields.end(), needed) != fields.end(), kInvalidArgument)
        << where << ": the prompt never shows {" << needed << "}";
  }
}

DataSpec read_data(JsonFields& top, const std::string& source) {
  const json& value = top.require("data");
  JsonFields fields = nested(top, "data", value, source, "data.");
  DataSpec data;
  fields.required("source", &data.source);
  const bool game24 = data.source == "game24-csv";
  if (game24) {
    data.begin = 900;  // the Tree-of-Thoughts test split
    data.end = 1000;
  }
  fields.optional("path", &data.path);
  fields.optional("field", &data.field);
  fields.optional("begin", &data.begin);
  fields.optional("end", &data.end);
  fields.optional("seed", &data.seed);
  fields.optional("count", &data.count);
  fields.optional("blocks_min", &data.blocks_min);
  fields.optional("blocks_max", &data.blocks_max);
  fields.reject_unknown("(known: source, path, field, begin, end, seed, count, blocks_min, blocks_max)");
  return data;
}

SearchParams read_search(JsonFields& top, const std::string& source) {
  SearchParams params;
  const json* value = top.find("search");
  if (value == nullptr) return params;
  JsonFields fields = nested(top, "search", *value, source, "search.");
  fields.optional("depth", &params.depth);
  fields.optional("n", &params.n);
  fields.optional("b", &params.b);
  fields.optional("samples", &params.samples);
  fields.optional("beams", &params.beams);
  fields.optional("beam_width", &params.beam_width);
  fields.optional("simulations", &params.simulations);
  fields.optional("parallel", &params.parallel);
  fields.optional("c_puct", &params.c_puct);
  fields.optional("selection", &params.selection);
  fields.optional("rollout_depth", &params.rollout_depth);
  fields.optional("early_stop", &params.early_stop);
  fields.reject_unknown(
      "(known: depth, n, b, samples, beams, beam_width, simulations, parallel, c_puct, selection, rollout_depth, "
      "early_stop)");
  params.validate(source + ": field 'search.");
  return params;
}

GenerateSpec read_generate(JsonFields& top, const std::string& source) {
  const json& value = top.require("generate");
  JsonFields fields = nested(top, "generate", value, source, "generate.");
  GenerateSpec generate;
  std::string mode;
  fields.required("mode", &mode);
  SEED_CHECK(mode == "propose" || mode == "sample", kInvalidArgument)
      << fields.where("mode") << " must be \"propose\" or \"sample\", not \"" << mode << "\"";
  generate.mode = mode == "propose" ? GenerateMode::kPropose : GenerateMode::kSample;
  const json* stages = fields.find("stages");
  if (stages != nullptr) {
    SEED_CHECK(stages->is_array() && !stages->empty(), kInvalidArgument)
        << fields.where("stages") << " must be a non-empty array of prompts";
    for (size_t i = 0; i < stages->size(); ++i) {
      generate.stages.push_back(read_prompt((*stages)[i], source, "generate.stages[" + std::to_string(i) + "]."));
    }
    SEED_CHECK(fields.find("prompt") == nullptr, kInvalidArgument)
        << source << ": field 'generate' takes 'prompt' or 'stages', not both";
  } else {
    // A single stage written inline: the generate object is the prompt.
    json inline_prompt = value;
    inline_prompt.erase("mode");
    inline_prompt.erase("thought");
    generate.stages.push_back(read_prompt(inline_prompt, source, "generate."));
    for (const char* key : {"prompt", "stop", "max_new_tokens", "temperature", "top_k", "top_p", "output"}) {
      fields.find(key);
    }
  }
  fields.optional("thought", &generate.thought);
  fields.reject_unknown("(known: mode, prompt, stop, max_new_tokens, temperature, top_k, top_p, output, "
                        "stages, thought)");
  SEED_CHECK(generate.mode == GenerateMode::kSample || generate.stages.size() == 1, kInvalidArgument)
      << source << ": field 'generate.stages': propose mode takes exactly one stage";
  std::set<std::string> outputs;
  for (size_t i = 0; i < generate.stages.size(); ++i) {
    SEED_CHECK(outputs.insert(generate.stages[i].output).second, kInvalidArgument)
        << source << ": field 'generate.stages[" << i << "].output': '" << generate.stages[i].output
        << "' is used by an earlier stage";
  }
  return generate;
}

ValueSpec read_value(JsonFields& parent, const std::string& source) {
  ValueSpec value;
  const json* labels = parent.find("labels");
  if (labels != nullptr) {
    SEED_CHECK(labels->is_object() && !labels->empty(), kInvalidArgument)
        << parent.where("labels") << " must be an object of label -> number";
    for (const auto& [label, number] : labels->items()) {
      SEED_CHECK(number.is_number() && !label.empty(), kInvalidArgument)
          << parent.where("labels") << ": label '" << label << "' must map to a number";
      value.labels.emplace_back(label, number.get<double>());
    }
  }
  parent.optional("number", &value.number);
  parent.optional("min", &value.min);
  parent.optional("max", &value.max);
  parent.optional("unparsed", &value.unparsed);
  return value;
}

// prm mode: the model's folder must hold a config.json.
PrmSpec read_prm(JsonFields& fields, const std::string& folder) {
  PrmSpec prm;
  fields.required("model", &prm.model);
  fields.required("prefix", &prm.prefix);
  fields.optional("step", &prm.step);
  std::string aggregate = "last";
  fields.optional("aggregate", &aggregate);
  prm.aggregate = parse_step_aggregate(aggregate, fields.where("aggregate"));
  fields.reject_unknown("(known in prm mode: mode, model, prefix, step, aggregate)");
  const fs::path model = fs::path(prm.model).is_absolute() ? fs::path(prm.model) : fs::path(folder) / prm.model;
  SEED_CHECK(fs::exists(model / "config.json"), kNotFound)
      << fields.where("model") << ": " << model.string() << " holds no config.json (a relative path is read from "
      << "the task folder)";
  prm.model = model.lexically_normal().string();
  return prm;
}

EvaluateSpec read_evaluate(JsonFields& top, const std::string& source, const std::string& folder) {
  const json& value = top.require("evaluate");
  JsonFields fields = nested(top, "evaluate", value, source, "evaluate.");
  EvaluateSpec evaluate;
  std::string mode;
  fields.required("mode", &mode);
  SEED_CHECK(mode == "value" || mode == "vote" || mode == "prm", kInvalidArgument)
      << fields.where("mode") << " must be \"value\", \"vote\" or \"prm\", not \"" << mode << "\"";
  if (mode == "prm") {
    evaluate.mode = EvaluateMode::kPrm;
    evaluate.prm = read_prm(fields, folder);
    return evaluate;
  }
  evaluate.mode = mode == "value" ? EvaluateMode::kValue : EvaluateMode::kVote;
  fields.optional("samples", &evaluate.samples);
  SEED_CHECK(evaluate.samples >= 1, kInvalidArgument) << fields.where("samples") << " must be >= 1";
  evaluate.value = read_value(fields, source);
  fields.optional("vote_pattern", &evaluate.vote_pattern);
  fields.optional("choice", &evaluate.choice);
  fields.optional("chain_prompt", &evaluate.chain_prompt);
  SEED_CHECK(evaluate.chain_prompt.empty() || evaluate.mode == EvaluateMode::kValue, kInvalidArgument)
      << fields.where("chain_prompt") << ": only value mode scores a chain by its own prompt";
  json prompt = value;
  for (const char* key : {"mode", "samples", "labels", "number", "min", "max", "unparsed", "vote_pattern", "choice",
                          "chain_prompt"}) {
    prompt.erase(key);
  }
  evaluate.prompt = read_prompt(prompt, source, "evaluate.");
  for (const char* key : {"prompt", "stop", "max_new_tokens", "temperature", "top_k", "top_p"}) fields.find(key);
  fields.reject_unknown("(known: mode, prompt, chain_prompt, stop, max_new_tokens, temperature, top_k, top_p, "
                        "samples, labels, number, min, max, unparsed, vote_pattern, choice)");
  if (evaluate.mode == EvaluateMode::kValue) {
    SEED_CHECK(evaluate.value.labels.empty() != evaluate.value.number.empty(), kInvalidArgument)
        << source << ": field 'evaluate': value mode needs exactly one of 'labels' and 'number'";
    if (!evaluate.value.number.empty()) {
      check_regex(evaluate.value.number, fields.where("number"), true);
      SEED_CHECK(evaluate.value.min < evaluate.value.max, kInvalidArgument)
          << fields.where("min") << " must be below 'max'";
    }
  } else {
    check_regex(evaluate.vote_pattern, fields.where("vote_pattern"), true);
  }
  return evaluate;
}

std::vector<StateFieldSpec> read_state(JsonFields& top, const std::string& source) {
  std::vector<StateFieldSpec> out;
  const json* value = top.find("state");
  if (value == nullptr) return out;
  SEED_CHECK(value->is_object(), kInvalidArgument) << top.where("state") << " must be a JSON object";
  for (const auto& [name, spec] : value->items()) {
    JsonFields fields(spec, source, "state." + name + ".");
    StateFieldSpec field;
    field.name = name;
    fields.required("initial", &field.initial);
    fields.required("pattern", &field.pattern);
    fields.reject_unknown("(known: initial, pattern)");
    check_regex(field.pattern, fields.where("pattern"), true);
    out.push_back(std::move(field));
  }
  return out;
}

std::string join(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// Every field `tmpl` names must be in `allowed`.
void check_template(const std::string& tmpl, const std::string& source, const std::string& field,
                    const std::set<std::string>& allowed) {
  const std::string where = source + ": field '" + field + "'";
  for (const std::string& name : template_fields(tmpl, where)) {
    SEED_CHECK(allowed.count(name) != 0, kInvalidArgument)
        << where << " names {" << name << "}, which is not a field here (known: " << join(allowed) << ")";
  }
}

}  // namespace

Task Task::load(const std::string& folder, const TaskLoadOptions& options) {
  Task task;
  task.folder_ = folder;
  task.source_ = (fs::path(folder) / "task.json").string();
  const std::string& source = task.source_;
  const json root = models::read_json_file(source);
  JsonFields top(root, source);
  TaskSpec& spec = task.spec_;
  top.required("name", &spec.name);
  top.optional("description", &spec.description);
  spec.data = read_data(top, source);
  std::string examples_file;
  top.optional("examples", &examples_file);
  spec.state_fields = read_state(top, source);
  spec.generate = read_generate(top, source);
  spec.evaluate = read_evaluate(top, source, folder);
  if (const json* answer = top.find("answer")) spec.answer = read_prompt(*answer, source, "answer.");
  if (const json* cot = top.find("cot")) spec.cot = read_prompt(*cot, source, "cot.");
  if (const json* final = top.find("final")) {
    JsonFields fields = nested(top, "final", *final, source, "final.");
    fields.optional("pattern", &spec.final_pattern);
    fields.optional("goal", &spec.final_at_goal);
    fields.reject_unknown("(known: pattern, goal)");
    if (!spec.final_pattern.empty()) check_regex(spec.final_pattern, fields.where("pattern"), false);
  }
  spec.search = read_search(top, source);
  const json& checker = top.require("checker");
  {
    JsonFields fields = nested(top, "checker", checker, source, "checker.");
    fields.required("name", &spec.checker.name);
    fields.optional("field", &spec.checker.field);
    fields.optional("pattern", &spec.checker.pattern);
    fields.reject_unknown("(known: name, field, pattern)");
  }
  if (const json* lookahead = top.find("lookahead")) {
    JsonFields fields = nested(top, "lookahead", *lookahead, source, "lookahead.");
    fields.optional("delimiter", &spec.lookahead.delimiter);
    fields.optional("verifier", &spec.lookahead.verifier);
    fields.optional("judge_prompt", &spec.lookahead.judge_prompt);
    fields.reject_unknown("(known: delimiter, verifier, judge_prompt)");
    SEED_CHECK(!spec.lookahead.delimiter.empty(), kInvalidArgument)
        << fields.where("delimiter") << ": empty step delimiter";
    check_step_verifier(spec.lookahead.verifier, fields.where("verifier"));
    SEED_CHECK(spec.lookahead.verifier != "judge" || !spec.lookahead.judge_prompt.empty(), kInvalidArgument)
        << fields.where("verifier") << ": the judge needs a question: add lookahead.judge_prompt, a template "
        << "over {s1} (the target's step) and {s2} (the drafted step)";
    if (!spec.lookahead.judge_prompt.empty()) check_judge_prompt(spec.lookahead.judge_prompt, fields.where("judge_prompt"));
  }
  if (const json* chat = top.find("chat")) {
    if (chat->is_boolean()) {
      if (chat->get<bool>()) spec.chat_system = "";
    } else {
      SEED_CHECK(chat->is_object(), kInvalidArgument)
          << top.where("chat") << " must be true, false or {\"system\": \"...\", \"variables\": {...}}";
      JsonFields fields = nested(top, "chat", *chat, source, "chat.");
      std::string system;
      fields.optional("system", &system);
      if (const json* variables = fields.find("variables")) {
        SEED_CHECK(variables->is_object(), kInvalidArgument)
            << fields.where("variables") << " must be an object of chat template variables, e.g. "
            << "{\"enable_thinking\": false}";
        for (const auto& [name, value] : variables->items()) {
          SEED_CHECK(name != "messages" && name != "add_generation_prompt", kInvalidArgument)
              << fields.where("variables") << ": '" << name << "' is the turns seed renders, not a variable to set";
          spec.chat_variables[name] = nlohmann::ordered_json::parse(value.dump());
        }
      }
      fields.reject_unknown("(known: system, variables)");
      spec.chat_system = system;
    }
  }
  top.reject_unknown("(known: name, description, data, examples, state, generate, evaluate, answer, cot, final, "
                     "search, checker, lookahead, chat)");
  try {
    task.checker_ = make_checker(spec.checker);
  } catch (const Error& e) {
    SEED_FAIL(kInvalidArgument) << source << ": field 'checker': " << e.what();
  }

  if (!examples_file.empty()) {
    const fs::path path = fs::path(folder) / examples_file;
    std::ifstream in(path);
    SEED_CHECK(in.good(), kNotFound) << source << ": field 'examples': " << path.string() << ": no such file";
    std::ostringstream text;
    text << in.rdbuf();
    spec.examples = text.str();
  }

  if (!spec.data.path.empty() || !options.data_path.empty()) {
    spec.data.path = resolve_data_path(spec.data.path, folder, options, source);
  }
  task.problems_ = load_problems(spec.data, source);

  // The data fields every template may use: those of every row.
  std::set<std::string> data_fields;
  for (const auto& [name, value] : task.problems_.front().fields) data_fields.insert(name);
  for (const Problem& problem : task.problems_) {
    for (auto it = data_fields.begin(); it != data_fields.end();) {
      it = problem.fields.count(*it) ? std::next(it) : data_fields.erase(it);
    }
  }
  const std::string required = task.checker_->required_field();
  SEED_CHECK(required.empty() || data_fields.count(required), kInvalidArgument)
      << source << ": field 'checker': the checker reads data field '" << required << "', which "
      << spec.data.path << " does not give every problem (fields: " << join(data_fields) << ")";

  std::set<std::string> base = data_fields;
  base.insert("examples");
  for (const StateFieldSpec& field : spec.state_fields) {
    check_template(field.initial, source, "state." + field.name + ".initial", base);
  }
  std::set<std::string> state = base;
  for (const char* name : {"steps", "prior_steps", "thought", "depth"}) state.insert(name);
  for (const StateFieldSpec& field : spec.state_fields) state.insert(field.name);

  std::set<std::string> parts;
  std::set<std::string> with_parts = state;
  for (size_t i = 0; i < spec.generate.stages.size(); ++i) {
    const std::string key = spec.generate.stages.size() == 1 && !root["generate"].contains("stages")
                                ? "generate.prompt"
                                : "generate.stages[" + std::to_string(i) + "].prompt";
    check_template(spec.generate.stages[i].prompt, source, key, with_parts);
    parts.insert(spec.generate.stages[i].output);
    with_parts.insert(spec.generate.stages[i].output);
  }
  check_template(spec.generate.thought, source, "generate.thought", parts);
  std::set<std::string> evaluate = with_parts;
  if (spec.evaluate.mode == EvaluateMode::kVote) {
    evaluate = state;
    evaluate.insert("choices");
    check_template(spec.evaluate.choice, source, "evaluate.choice", {"index", "thought"});
  }
  if (spec.evaluate.mode == EvaluateMode::kPrm) {
    check_template(spec.evaluate.prm.prefix, source, "evaluate.prefix", base);
    check_template(spec.evaluate.prm.step, source, "evaluate.step", {"thought", "index"});
  } else {
    check_template(spec.evaluate.prompt.prompt, source, "evaluate.prompt", evaluate);
  }
  if (spec.evaluate.mode == EvaluateMode::kValue) {
    // A chain's thoughts are its lines, each the first stage's output
    // (state_from_text): it has no later stage's parts.
    std::set<std::string> chain = state;
    chain.insert(spec.generate.stages.front().output);
    if (!spec.evaluate.chain_prompt.empty()) {
      chain.insert("chain");
      check_template(spec.evaluate.chain_prompt, source, "evaluate.chain_prompt", chain);
    } else {
      const std::string where = source + ": field 'evaluate.prompt'";
      for (const std::string& name : template_fields(spec.evaluate.prompt.prompt, where)) {
        if (chain.count(name) != 0) continue;
        task.chains_unscorable_ = "field 'evaluate.prompt' names {" + name + "}, a part of a generated thought, which "
                                  "a chain has not: add 'evaluate.chain_prompt', the prompt a chain is scored by "
                                  "({chain} is its text; the other fields: " + join(chain) + ")";
        break;
      }
    }
  }
  if (spec.answer) check_template(spec.answer->prompt, source, "answer.prompt", with_parts);
  if (spec.cot) check_template(spec.cot->prompt, source, "cot.prompt", base);
  return task;
}

void SearchParams::validate(const std::string& where) const {
  const std::pair<const char*, int> positive[] = {{"depth", depth},     {"n", n},
                                                  {"b", b},             {"samples", samples},
                                                  {"beams", beams},     {"beam_width", beam_width},
                                                  {"simulations", simulations}, {"parallel", parallel}};
  for (const auto& [name, value] : positive) {
    SEED_CHECK(value >= 1, kInvalidArgument) << where << name << "' must be >= 1, not " << value;
  }
  SEED_CHECK(beams % beam_width == 0, kInvalidArgument)
      << where << "beams' (" << beams << ") must be a multiple of 'beam_width' (" << beam_width << ")";
  SEED_CHECK(c_puct >= 0, kInvalidArgument) << where << "c_puct' must be >= 0";
  SEED_CHECK(selection == "uct" || selection == "puct", kInvalidArgument)
      << where << "selection' must be \"uct\" or \"puct\", not \"" << selection << "\"";
  SEED_CHECK(rollout_depth >= 0, kInvalidArgument) << where << "rollout_depth' must be >= 0";
}

}  // namespace seed::tasks
