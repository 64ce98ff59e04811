// Searches that evaluate with a process reward model, on the scripted
// engine and a scripted scorer: states kept by the aggregate of their step
// scores, each step scored once per solve, PRM-weighted best-of-N, and the
// loader's and the search's errors.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "search/search.h"
#include "tasks/step_aggregate.h"
#include "tests/search/scripted_engine.h"
#include "tests/search/task_fixture.h"
#include "tests/throws_error.h"

namespace seed::search {
namespace {

// A StepScorer that scores each step by its text (the table), recording
// every request.
class ScriptedScorer : public spec::StepScorer {
 public:
  explicit ScriptedScorer(std::map<std::string, double> scores) : scores_(std::move(scores)) {}
  std::vector<spec::StepScores> score(const std::vector<spec::ScoreRequest>& batch) override {
    std::vector<spec::StepScores> out;
    for (const spec::ScoreRequest& r : batch) {
      requests_.push_back(r);
      spec::StepScores s;
      for (size_t i = r.first; i < r.steps.size(); ++i) {
        s.rewards.push_back(scores_.at(r.steps[i]));
        s.usage.computed_tokens += static_cast<int64_t>(r.steps[i].size());
      }
      s.usage.scored_tokens = s.usage.computed_tokens;
      out.push_back(std::move(s));
    }
    return out;
  }
  const std::vector<spec::ScoreRequest>& requests() const { return requests_; }

 private:
  std::map<std::string, double> scores_;
  std::vector<spec::ScoreRequest> requests_;
};

// The toy task (task_fixture.h) evaluated by a PRM that reads "Q: x\n" and
// then "- step;" per thought.
class PrmTask {
 public:
  explicit PrmTask(const std::string& aggregate)
      : folder_(task_json(aggregate), R"({"input": "x", "answer": "cf"})" "\n") {
    folder_.write("prm/config.json", "{}");
  }
  tasks::Task load() const { return tasks::Task::load(folder_.path()); }
  const testing::TempTaskFolder& folder() const { return folder_; }

  static nlohmann::json task_json(const std::string& aggregate) {
    nlohmann::json task = testing::toy_task_json();
    task["evaluate"] = {{"mode", "prm"}, {"model", "prm"}, {"prefix", "Q: {input}\n"}, {"step", "- {thought};"},
                        {"aggregate", aggregate}};
    return task;
  }

 private:
  testing::TempTaskFolder folder_;
};

testing::ScriptedEngine dvts_engine() {
  return testing::ScriptedEngine({
      {"gen\n", {"a\nb\n"}},
      {"gen\na\n", {"c\nd\n"}},
      {"ans\na\nc\n", {"ac"}},
      {"ans\na\nd\n", {"ad"}},
  });
}

SearchConfig dvts_config() {
  SearchConfig config;
  config.algorithm = "dvts";
  config.params.beams = 2;
  config.params.beam_width = 2;
  config.params.depth = 2;
  return config;
}

// One subtree: a (0.9) beats b (0.5); of a's children c (0.3) beats d
// (0.2) under every aggregate.
const std::map<std::string, double> kScores = {
    {"- a;", 0.9}, {"- b;", 0.5}, {"- c;", 0.3}, {"- d;", 0.2},
};

TEST(PrmSearch, DvtsKeepsTheStateWithTheBestAggregateAndScoresEachStepOnce) {
  for (const auto& [aggregate, answer] : std::vector<std::pair<std::string, std::string>>{
           {"last", "ac"}, {"min", "ac"}, {"prod", "ac"}}) {
    const PrmTask prm(aggregate);
    const tasks::Task task = prm.load();
    testing::ScriptedEngine engine = dvts_engine();
    ScriptedScorer scorer(kScores);
    const SearchResult result = make_search(dvts_config())->solve(task, task.problems()[0], engine, &scorer);
    EXPECT_EQ(result.answer, answer) << aggregate;
    ASSERT_EQ(scorer.requests().size(), 4u) << aggregate;
    EXPECT_EQ(scorer.requests()[0].prefix, "Q: x\n");
    EXPECT_EQ(scorer.requests()[0].steps, std::vector<std::string>({"- a;"}));
    // a's children: step 1 (a) was scored with a; only step 2 is asked.
    EXPECT_EQ(scorer.requests()[2].steps, std::vector<std::string>({"- a;", "- c;"}));
    EXPECT_EQ(scorer.requests()[2].first, 1u);
    EXPECT_EQ(result.usage.prm_scored_tokens, 4 * 4);  // four steps of four characters
    EXPECT_EQ(result.usage.prm_tokens, result.usage.prm_scored_tokens);
  }
}

TEST(PrmSearch, TheAggregateDecidesBetweenAStrongStartAndAStrongEnd) {
  // b then e: a weak start (0.2), a strong end (0.95); a then c: 0.9, 0.5.
  const std::map<std::string, double> scores = {{"- a;", 0.9}, {"- b;", 0.2}, {"- c;", 0.5}, {"- e;", 0.95}};
  const std::map<std::string, std::vector<std::string>> script = {
      {"gen\n", {"a\nb\n"}}, {"gen\na\n", {"c\n"}}, {"gen\nb\n", {"e\n"}},
      {"ans\na\nc\n", {"ac"}}, {"ans\nb\ne\n", {"be"}}};
  SearchConfig bfs;
  bfs.algorithm = "bfs";
  bfs.params.depth = 2;
  bfs.params.n = 2;
  bfs.params.b = 2;
  const std::map<std::string, std::string> expected = {{"last", "be"}, {"min", "ac"}, {"prod", "ac"}};
  for (const auto& [aggregate, answer] : expected) {
    const PrmTask prm(aggregate);
    const tasks::Task task = prm.load();
    testing::ScriptedEngine engine(script);
    ScriptedScorer scorer(scores);
    EXPECT_EQ(make_search(bfs)->solve(task, task.problems()[0], engine, &scorer).answer, answer) << aggregate;
  }
}

TEST(PrmSearch, WeightedBestOfNVotesWithTheScoresWhereMajorityVotingDisagrees) {
  // Two chains answer "b" with weak steps, one answers "cf" with strong ones.
  nlohmann::json task_json = PrmTask::task_json("last");
  task_json["checker"] = {{"name", "exact"}, {"field", "answer"}};
  testing::TempTaskFolder folder(task_json, R"({"input": "x", "answer": "cf"})" "\n");
  folder.write("prm/config.json", "{}");
  const tasks::Task task = tasks::Task::load(folder.path());
  const std::map<std::string, double> scores = {{"- b;", 0.2}, {"- cf;", 0.9}};
  SearchConfig config;
  config.params.samples = 3;
  for (const auto& [algorithm, answer] :
       std::vector<std::pair<std::string, std::string>>{{"self-consistency", "b"}, {"weighted-best-of-n", "cf"}}) {
    testing::ScriptedEngine engine(
        {{"cot x", {"b\n", "cf\n", "b\n"}}, {"ans\nb\n", {"b"}}, {"ans\ncf\n", {"cf"}}});
    ScriptedScorer scorer(scores);
    config.algorithm = algorithm;
    config.params.early_stop = false;
    const SearchResult result = make_search(config)->solve(task, task.problems()[0], engine, &scorer);
    EXPECT_EQ(task.checker().extract(result.answer), answer) << algorithm;
  }
}

TEST(PrmSearch, AnAggregateIsTheLastTheWeakestOrTheProductOfTheSteps) {
  const std::vector<double> scores = {0.5, 0.9, 0.4, 0.8};
  EXPECT_DOUBLE_EQ(tasks::aggregate_step_scores(scores, tasks::StepAggregate::kLast), 0.8);
  EXPECT_DOUBLE_EQ(tasks::aggregate_step_scores(scores, tasks::StepAggregate::kMin), 0.4);
  EXPECT_DOUBLE_EQ(tasks::aggregate_step_scores(scores, tasks::StepAggregate::kProd), 0.5 * 0.9 * 0.4 * 0.8);
}

TEST(PrmSearch, BadPrmFieldsAreNamedAndAPrmTaskNeedsAScorer) {
  const auto load_error = [](const nlohmann::json& evaluate, const std::string& needle) {
    nlohmann::json task_json = testing::toy_task_json();
    task_json["evaluate"] = evaluate;
    testing::TempTaskFolder folder(task_json, R"({"input": "x", "answer": "cf"})" "\n");
    folder.write("prm/config.json", "{}");
    return testing::throws_error([&] { tasks::Task::load(folder.path()); }, ErrorKind::kInvalidArgument, {needle});
  };
  const nlohmann::json good = {{"mode", "prm"}, {"model", "prm"}, {"prefix", "Q: {input}\n"}};
  struct BadField {
    const char* field;
    nlohmann::json value;  // null: the field left out
    const char* named;
  };
  for (const BadField& c : {BadField{"aggregate", "mean", "evaluate.aggregate"},
                            BadField{"prefix", "Q: {question}\n", "evaluate.prefix"},
                            BadField{"step", "{thought} {score}", "evaluate.step"},
                            BadField{"prompt", "val\n{steps}", "prompt"}, BadField{"prefix", nullptr, "prefix"}}) {
    nlohmann::json bad = good;
    if (c.value.is_null()) {
      bad.erase(c.field);
    } else {
      bad[c.field] = c.value;
    }
    EXPECT_TRUE(load_error(bad, c.named)) << c.field;
  }
  {
    nlohmann::json task_json = testing::toy_task_json();
    task_json["evaluate"] = good;
    task_json["evaluate"]["model"] = "no-such-prm";
    testing::TempTaskFolder folder(task_json, R"({"input": "x", "answer": "cf"})" "\n");
    EXPECT_TRUE(testing::throws_error([&] { tasks::Task::load(folder.path()); }, ErrorKind::kNotFound,
                                      {"evaluate.model", "no-such-prm"}));
  }
  const PrmTask prm("last");
  const tasks::Task task = prm.load();
  testing::ScriptedEngine engine = dvts_engine();
  EXPECT_TRUE(testing::throws_error([&] { make_search(dvts_config())->solve(task, task.problems()[0], engine); },
                                    ErrorKind::kInvalidArgument, {"task.json", "process reward model"}));
}

}  // namespace
}  // namespace seed::search
