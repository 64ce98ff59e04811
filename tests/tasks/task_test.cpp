// Task folders: loading, validation errors naming the file and the field,
// prompts, thoughts and values.
#include <gtest/gtest.h>

#include "tasks/task.h"
#include "tests/search/task_fixture.h"
#include "tests/throws_error.h"

namespace seed::tasks {
namespace {

using seed::testing::TempTaskFolder;
using seed::testing::throws_error;
using nlohmann::json;

const char* kData = R"({"input": "x", "answer": "a"})" "\n";

void expect_load_error(const json& task_json, ErrorKind kind, const std::vector<std::string>& needles,
                       const std::string& data = kData) {
  TempTaskFolder folder(task_json, data);
  std::vector<std::string> all = needles;
  all.push_back(folder.task_json());
  EXPECT_TRUE(throws_error([&] { Task::load(folder.path()); }, kind, all));
}

TEST(TaskLoad, UnknownFieldsAreErrorsNamingTheFileAndField) {
  json j = seed::testing::toy_task_json();
  j["serach"] = {{"depth", 2}};
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'serach'"});
  j = seed::testing::toy_task_json();
  j["generate"]["promt"] = "x";
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'generate.promt'"});
  j = seed::testing::toy_task_json();
  j["search"] = {{"width", 3}};
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'search.width'"});
}

TEST(TaskLoad, AMisspeltRequiredFieldIsNamedBesideTheMissingOne) {
  json j = seed::testing::toy_task_json();
  j["generat"] = j["generate"];
  j.erase("generate");
  expect_load_error(j, ErrorKind::kInvalidArgument, {"required field 'generate' is missing", "'generat'"});
  j = seed::testing::toy_task_json();
  j["generate"]["mdoe"] = j["generate"]["mode"];
  j["generate"].erase("mode");
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'generate.mode' is missing", "'generate.mdoe'"});
  // A key far from the missing one is not offered as its misspelling.
  j = seed::testing::toy_task_json();
  j["generate"].erase("mode");
  j["generate"]["stop"] = json::array();
  TempTaskFolder folder(j, kData);
  try {
    Task::load(folder.path());
    FAIL() << "expected seed::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'generate.mode' is missing"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("misspelling"), std::string::npos) << e.what();
  }
}

TEST(TaskLoad, ATemplateNamingAMissingFieldIsAnError) {
  json j = seed::testing::toy_task_json();
  j["evaluate"]["prompt"] = "val {questoin}\n{steps}";
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'evaluate.prompt'", "{questoin}", "input"});
  j = seed::testing::toy_task_json();
  j["cot"]["prompt"] = "{steps}";  // no state in a chain-of-thought prompt
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'cot.prompt'", "{steps}"});
  j = seed::testing::toy_task_json();
  j["generate"]["prompt"] = "gen {input";
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'generate.prompt'", "unclosed"});
}

TEST(TaskLoad, AMissingDataFileNamesTheFieldAndThePath) {
  json j = seed::testing::toy_task_json();
  j["data"]["path"] = "nowhere.jsonl";
  expect_load_error(j, ErrorKind::kNotFound, {"'data.path'", "nowhere.jsonl"});
}

TEST(TaskLoad, ARelativeDataPathMissingFromTheFolderIsReadFromTheDataDir) {
  json j = seed::testing::toy_task_json();
  j["data"]["path"] = "rows.jsonl";
  TempTaskFolder folder(j, kData);
  TempTaskFolder data_dir({}, "");
  data_dir.write("rows.jsonl", std::string(kData) + R"({"input": "y", "answer": "b"})" "\n");
  const Task from_dir = Task::load(folder.path(), {"", data_dir.path()});
  EXPECT_EQ(from_dir.problems().size(), 2u);
  EXPECT_EQ(from_dir.spec().data.path, data_dir.path() + "/rows.jsonl");
  folder.write("rows.jsonl", kData);  // the task folder's own file comes first
  EXPECT_EQ(Task::load(folder.path(), {"", data_dir.path()}).problems().size(), 1u);
}

TEST(TaskLoad, AMissingDataFileSaysWhereItLookedAndHowToPointAtIt) {
  json j = seed::testing::toy_task_json();
  j["data"]["path"] = "sets/rows.jsonl";
  TempTaskFolder folder(j, kData);
  folder.write("README.md", "Download rows.jsonl from ...\n");
  TempTaskFolder data_dir({}, "");
  EXPECT_TRUE(throws_error([&] { Task::load(folder.path(), {"", data_dir.path()}); }, ErrorKind::kNotFound,
                           {folder.task_json(), "'data.path'", folder.path() + "/sets/rows.jsonl",
                            data_dir.path() + "/sets/rows.jsonl", "--data", "SEED_DATA_DIR",
                            folder.path() + "/README.md"}));
  EXPECT_TRUE(throws_error([&] { Task::load(folder.path()); }, ErrorKind::kNotFound,
                           {folder.task_json(), folder.path() + "/sets/rows.jsonl", "SEED_DATA_DIR is not set"}));
  EXPECT_TRUE(throws_error([&] { Task::load(folder.path(), {"/nonexistent/rows.jsonl", data_dir.path()}); },
                           ErrorKind::kNotFound, {folder.task_json(), "--data", "/nonexistent/rows.jsonl"}));
  EXPECT_TRUE(throws_error([&] { Task::load(folder.path(), {data_dir.path(), ""}); }, ErrorKind::kInvalidArgument,
                           {folder.task_json(), "--data", data_dir.path(), "is a folder"}));
}

TEST(TaskLoad, AnEmptyDataFileOrABackwardsSelectionSaysSo) {
  json j = seed::testing::toy_task_json();
  expect_load_error(j, ErrorKind::kInvalidArgument, {"data.jsonl", "holds no problems"}, "");
  j["data"]["begin"] = 1;
  j["data"]["end"] = 0;
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'data.begin' (1) is past 'data.end' (0)"});
}

TEST(TaskLoad, DataRowsMustHoldTheFieldsTheCheckerReads) {
  expect_load_error(seed::testing::toy_task_json(), ErrorKind::kInvalidArgument, {"'checker'", "answer"},
                    R"({"input": "x", "answer": "a"})" "\n" R"({"input": "y"})" "\n");
  expect_load_error(seed::testing::toy_task_json(), ErrorKind::kInvalidArgument, {":2", "JSON"},
                    R"({"input": "x", "answer": "a"})" "\n{oops\n");
  expect_load_error(seed::testing::toy_task_json(), ErrorKind::kInvalidArgument, {":2", "number overflow"},
                    R"({"input": "x", "answer": "a"})" "\n" R"({"input": 1e400, "answer": "a"})" "\n");
}

TEST(TaskLoad, WrongTypesBadRegexesAndUnknownNamesAreErrors) {
  json j = seed::testing::toy_task_json();
  j["search"] = {{"depth", "three"}};
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'search.depth'", "integer"});
  j = seed::testing::toy_task_json();
  j["state"] = {{"current", {{"initial", "{input}"}, {"pattern", "left: .*"}}}};
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'state.current.pattern'", "capture group"});
  // Numbers libstdc++'s regex compiler would overflow on (found by fuzzing).
  for (const char* pattern : {"(\\d+)\\66666666666666666666", "(a){1,99999999999999999999}", "(a){99999999999999999999}"}) {
    j = seed::testing::toy_task_json();
    j["state"] = {{"current", {{"initial", "{input}"}, {"pattern", pattern}}}};
    expect_load_error(j, ErrorKind::kInvalidArgument, {"'state.current.pattern'", "more than 9 digits"});
  }
  j = seed::testing::toy_task_json();
  j["state"] = {{"current", {{"initial", "{input}"}, {"pattern", "(a){2,123456789}\\1"}}}};
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'state.current.pattern'", "invalid regex"});
  j = seed::testing::toy_task_json();
  j["checker"]["name"] = "bleu";
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'checker'", "bleu"});
  j = seed::testing::toy_task_json();
  j["generate"]["mode"] = "beam";
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'generate.mode'", "beam"});
  j = seed::testing::toy_task_json();
  j["evaluate"]["labels"] = {{"good", 1}};  // as well as "number"
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'evaluate'", "exactly one"});
  j = seed::testing::toy_task_json();
  j["lookahead"] = {{"verifier", "oracle"}};
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'lookahead.verifier'", "oracle", "judge", "game24"});
  j = seed::testing::toy_task_json();
  j["lookahead"] = {{"verifier", "judge"}};
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'lookahead.verifier'", "judge_prompt"});
  j = seed::testing::toy_task_json();
  j["lookahead"] = {{"verifier", "judge"}, {"judge_prompt", "{s1} vs {s3}?"}};
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'lookahead.judge_prompt'", "{s3}"});
  j = seed::testing::toy_task_json();
  j["lookahead"] = {{"verifier", "judge"}, {"judge_prompt", "Is {s1} right?"}};
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'lookahead.judge_prompt'", "never shows {s2}"});
  j = seed::testing::toy_task_json();
  j["lookahead"] = {{"delimiter", ""}};
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'lookahead.delimiter'", "empty"});
}

// A prompt's sampling settings are checked as task.json names them; a
// negative temperature is an error, not greedy.
TEST(TaskLoad, BadSamplingSettingsNameTheirField) {
  json j = seed::testing::toy_task_json();
  j["generate"]["temperature"] = -1;
  expect_load_error(j, ErrorKind::kInvalidArgument, {"field 'generate.temperature': -1 is negative"});
  j = seed::testing::toy_task_json();
  j["generate"]["top_p"] = 2;
  expect_load_error(j, ErrorKind::kInvalidArgument, {"field 'generate.top_p': expected a value in (0, 1]", "got 2"});
  j = seed::testing::toy_task_json();
  j["generate"]["top_k"] = -2;
  expect_load_error(j, ErrorKind::kInvalidArgument, {"field 'generate.top_k': -2 is negative"});
}

TEST(TaskLoad, LookaheadSettingsDefaultToLinesAndTheNormalizedVerifier) {
  TempTaskFolder plain(seed::testing::toy_task_json(), kData);
  EXPECT_EQ(Task::load(plain.path()).spec().lookahead.delimiter, "\n");
  EXPECT_EQ(Task::load(plain.path()).spec().lookahead.verifier, "normalized");
  json j = seed::testing::toy_task_json();
  j["lookahead"] = {{"delimiter", "\n\n"}, {"verifier", "game24"}};
  TempTaskFolder set(j, kData);
  const LookaheadSpec spec = Task::load(set.path()).spec().lookahead;
  EXPECT_EQ(spec.delimiter, "\n\n");
  EXPECT_EQ(spec.verifier, "game24");
  j["lookahead"] = {{"verifier", "judge"}, {"judge_prompt", "A: {s1}\nB: {s2}\nSame? "}};
  TempTaskFolder judged(j, kData);
  EXPECT_EQ(Task::load(judged.path()).spec().lookahead.judge_prompt, "A: {s1}\nB: {s2}\nSame? ");
}

TEST(TaskLoad, ChatIsOffByDefaultAndTakesTrueOrASystemTurnAndVariables) {
  TempTaskFolder plain(seed::testing::toy_task_json(), kData);
  EXPECT_FALSE(Task::load(plain.path()).spec().chat_system.has_value());
  json j = seed::testing::toy_task_json();
  j["chat"] = true;
  TempTaskFolder on(j, kData);
  EXPECT_EQ(Task::load(on.path()).spec().chat_system, std::optional<std::string>(""));
  j["chat"] = {{"system", "You are a careful solver."}};
  TempTaskFolder system(j, kData);
  EXPECT_EQ(Task::load(system.path()).spec().chat_system, std::optional<std::string>("You are a careful solver."));
  j["chat"] = false;
  TempTaskFolder off(j, kData);
  EXPECT_FALSE(Task::load(off.path()).spec().chat_system.has_value());
  j["chat"] = "yes";
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'chat'", "true, false or"});
  j["chat"] = {{"sytem", "x"}};
  expect_load_error(j, ErrorKind::kInvalidArgument, {"chat.sytem"});
  j["chat"] = {{"variables", {{"enable_thinking", false}, {"date_string", "5 Dec"}}}};
  TempTaskFolder variables(j, kData);
  const TaskSpec spec = Task::load(variables.path()).spec();
  EXPECT_EQ(spec.chat_system, std::optional<std::string>(""));
  EXPECT_EQ(spec.chat_variables.dump(), R"({"date_string":"5 Dec","enable_thinking":false})");
  j["chat"] = {{"variables", json::array({"enable_thinking"})}};
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'chat.variables'", "enable_thinking"});
  j["chat"] = {{"variables", {{"messages", json::array()}}}};
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'chat.variables'", "'messages'"});
}

TEST(TaskLoad, NoTaskJsonIsNotFoundAndInvalidJsonIsCorruption) {
  EXPECT_TRUE(throws_error([] { Task::load("/nonexistent/task"); }, ErrorKind::kNotFound, {"task.json"}));
  TempTaskFolder folder(json::object(), kData);
  folder.write("task.json", "{\"name\": ");
  EXPECT_TRUE(throws_error([&] { Task::load(folder.path()); }, ErrorKind::kCorruption, {folder.task_json()}));
  // A number past double's range is nlohmann's out_of_range, not a parse error.
  folder.write("task.json", "{\"name\": 1e400}");
  EXPECT_TRUE(throws_error([&] { Task::load(folder.path()); }, ErrorKind::kCorruption,
                           {folder.task_json(), "number overflow"}));
}

TEST(Task, FillsStateFieldsFromTheLatestMatchingThought) {
  json j = seed::testing::toy_task_json();
  j["state"] = {{"current", {{"initial", "[{input}]"}, {"pattern", "\\(left: ([^)]*)\\)"}}}};
  j["generate"]["prompt"] = "now {current} after {depth}:\n{steps}";
  TempTaskFolder folder(j, kData);
  const Task task = Task::load(folder.path());
  const Problem& p = task.problems()[0];
  EXPECT_EQ(task.generation_prompt(0, p, State{}, {}), "now [x] after 0:\n");
  const State s = task.state_from_text("1 + 2 = 3 (left: 3 4)\nAnswer: 3 * 4\n");
  EXPECT_EQ(task.generation_prompt(0, p, s, {}), "now 3 4 after 2:\n1 + 2 = 3 (left: 3 4)\nAnswer: 3 * 4\n");
}

TEST(Task, ParsesLabelValuesByTheEarliestWholeWord) {
  json j = seed::testing::toy_task_json();
  j["evaluate"].erase("number");
  j["evaluate"]["labels"] = {{"sure", 20}, {"likely", 1}, {"impossible", 0.001}};
  TempTaskFolder folder(j, kData);
  const Task task = Task::load(folder.path());
  EXPECT_EQ(task.parse_value("sure\n"), 20);
  EXPECT_EQ(task.parse_value("Impossible, not likely"), 0.001);
  EXPECT_EQ(task.parse_value("unlikely"), std::nullopt);
  EXPECT_EQ(task.max_value(), 20);
}

TEST(Task, ParsesNumbersWithinTheirRange) {
  TempTaskFolder folder(seed::testing::toy_task_json(), kData);
  const Task task = Task::load(folder.path());
  EXPECT_EQ(task.parse_value("v=7 because"), 7);
  EXPECT_EQ(task.parse_value("v=11"), std::nullopt);
  EXPECT_EQ(task.parse_value("seven"), std::nullopt);
}

TEST(Task, MultiStageThoughtsFillPartsAndTheThoughtFormat) {
  TempTaskFolder folder(seed::testing::two_stage_task_json(), kData);
  const Task task = Task::load(folder.path());
  const Problem& p = task.problems()[0];
  Thought t = task.add_stage({}, 0, " what? ");
  EXPECT_EQ(task.generation_prompt(1, p, State{}, t), "A to what?:");
  t = task.add_stage(t, 1, "this\n");
  EXPECT_EQ(t.text, "what? -> this");
  EXPECT_EQ(task.evaluation_prompt(p, State{{t}, std::nullopt}), "val what?|this");
}

// A chain's thoughts are its lines, each the first stage's output; it has
// no later stage's part, so only a chain_prompt can score it.
TEST(Task, AChainIsScoredByTheChainPromptWithItsWholeText) {
  json j = seed::testing::two_stage_task_json();
  j["evaluate"]["chain_prompt"] = "whole {input}: {chain}| last {sub_question} of {depth}";
  TempTaskFolder folder(j, kData);
  const Task task = Task::load(folder.path());
  const Problem& p = task.problems()[0];
  EXPECT_NO_THROW(task.check_scores_chains("best-of-n"));
  EXPECT_EQ(task.evaluation_prompt(p, task.state_from_text("one\n\ntwo\n")), "whole x: one\n\ntwo\n| last two of 2");
  Thought t = task.add_stage(task.add_stage({}, 0, "what?"), 1, "this");
  EXPECT_EQ(task.evaluation_prompt(p, State{{t}, std::nullopt}), "val what?|this");  // a tree's states keep the prompt
}

TEST(Task, AChainIsScoredByThePromptWhereItHasEveryFieldItNames) {
  json j = seed::testing::toy_task_json();
  j["evaluate"]["prompt"] = "val {input}\n{steps}{thought}";
  TempTaskFolder folder(j, kData);
  const Task task = Task::load(folder.path());
  EXPECT_NO_THROW(task.check_scores_chains("best-of-n"));
  EXPECT_EQ(task.evaluation_prompt(task.problems()[0], task.state_from_text("a\nb")), "val x\na\nb\nb");
}

TEST(Task, AValuePromptNamingALaterStagesPartCannotScoreAChain) {
  TempTaskFolder folder(seed::testing::two_stage_task_json(), kData);
  const Task task = Task::load(folder.path());
  EXPECT_TRUE(throws_error([&] { task.check_scores_chains("best-of-n"); }, ErrorKind::kInvalidArgument,
                           {folder.task_json(), "best-of-n", "'evaluate.prompt'", "{sub_answer}", "chain_prompt"}));
}

TEST(TaskLoad, AChainPromptIsCheckedAndOnlyForValueMode) {
  json j = seed::testing::two_stage_task_json();
  j["evaluate"]["chain_prompt"] = "val {sub_answer}";
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'evaluate.chain_prompt'", "{sub_answer}"});
  j = seed::testing::toy_task_json();
  j["evaluate"] = {{"mode", "vote"}, {"prompt", "Which? {choices}"}, {"chain_prompt", "{chain}"}};
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'evaluate.chain_prompt'", "value mode"});
  j = seed::testing::toy_task_json();
  j["evaluate"]["prompt"] = "val {chain}";  // {chain} is a chain's only
  expect_load_error(j, ErrorKind::kInvalidArgument, {"'evaluate.prompt'", "{chain}"});
}

// The prefix and step of Qwen2.5-Math-PRM as tasks/README.md gives them:
// the text its reference renders ("<extra_0>" after each step).
TEST(Task, APrmPrefixAndStepsRenderAsThePrmReads) {
  json j = seed::testing::toy_task_json();
  j["evaluate"] = {{"mode", "prm"},
                   {"model", "prm"},
                   {"prefix", "<|im_start|>system\nPlease reason step by step, and put your final answer within "
                              "\\boxed{{}}.<|im_end|>\n<|im_start|>user\n{input}<|im_end|>\n<|im_start|>assistant\n"},
                   {"step", "{thought}<extra_0>"}};
  TempTaskFolder folder(j, kData);
  folder.write("prm/config.json", "{}");
  const Task task = Task::load(folder.path());
  EXPECT_EQ(task.prm_prefix(task.problems()[0]),
            "<|im_start|>system\nPlease reason step by step, and put your final answer within \\boxed{}.<|im_end|>\n"
            "<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(task.prm_steps(task.state_from_text("a = 1\nb = 2\n")),
            (std::vector<std::string>{"a = 1<extra_0>", "b = 2<extra_0>"}));
}

TEST(Task, VotePromptsListTheCandidates) {
  json j = seed::testing::toy_task_json();
  j["evaluate"] = {{"mode", "vote"}, {"prompt", "Which? {input}\n{choices}"}, {"samples", 3}};
  TempTaskFolder folder(j, kData);
  const Task task = Task::load(folder.path());
  const Thought a{"alpha", {}}, b{"beta", {}};
  EXPECT_EQ(task.vote_prompt(task.problems()[0], State{}, {&a, &b}), "Which? x\nChoice 1:\nalpha\nChoice 2:\nbeta\n");
  EXPECT_EQ(task.parse_vote("The best choice is 2", 2), 1u);
  EXPECT_EQ(task.parse_vote("The best choice is 3", 2), std::nullopt);
}

}  // namespace
}  // namespace seed::tasks
