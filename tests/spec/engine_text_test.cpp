// Text in, text out: the engines on the shipped zoo pair, whose folder has a
// tokenizer. Stop strings, EOS and max_new_tokens end a request at the same
// token under every engine, and the text is the decoded tokens with the stop
// string cut off.
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include "models/tokenizer.h"
#include "spec/engine/engine_factory.h"
#include "spec/lookahead/lookahead_engine.h"
#include "tests/throws_error.h"

namespace seed::spec {
namespace {

using ::seed::testing::throws_error;

const std::string kZoo = SEED_ZOO_DIR;

EngineOptions zoo_options(const std::string& name, const std::string& device = "cpu") {
  EngineOptions o;
  o.engine = EngineKind::parse(name);
  o.target = kZoo + "/tiny-target";
  o.draft = kZoo + "/tiny-draft";
  o.drafters = 2;
  o.device = device;
  return o;
}

std::unique_ptr<Engine> zoo_engine(const std::string& name, const std::string& device = "cpu") {
  return make_engine(zoo_options(name, device));
}

std::vector<GenRequest> propose_requests(float temperature) {
  std::vector<GenRequest> out;
  for (const char* puzzle : {"4 9 10 13", "1 4 8 8", "2 5 7 11"}) {
    GenRequest r;
    r.prompt = std::string("Input: ") + puzzle + "\nPossible next steps:\n";
    r.max_new_tokens = 200;
    r.sampling.temperature = temperature;
    r.seed = 3;
    r.stream = out.size();
    out.push_back(r);
  }
  // The same prompt, cut at the first line, and one cut by max_new_tokens.
  out.push_back(out[0]);
  out.back().stop = {"\n"};
  out.push_back(out[1]);
  out.back().max_new_tokens = 5;
  return out;
}

TEST(EngineTextTest, StopStringsEosAndLengthEndRequestsAlikeInEveryEngine) {
  const auto tokenizer = models::load_tokenizer(kZoo + "/tiny-target");
  for (float temperature : {0.0f, 0.7f}) {
    const std::vector<Completion> ar = zoo_engine("ar")->generate(propose_requests(temperature));
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(ar[i].finish, FinishReason::kEos) << ar[i].text;
      EXPECT_EQ(ar[i].text, tokenizer->decode(ar[i].tokens));
      EXPECT_NE(ar[i].text.find(" = "), std::string::npos) << "a list of steps: " << ar[i].text;
    }
    EXPECT_EQ(ar[3].finish, FinishReason::kStop);
    EXPECT_EQ(ar[3].text.find('\n'), std::string::npos) << ar[3].text;
    EXPECT_EQ(ar[4].finish, FinishReason::kLength);
    EXPECT_EQ(ar[4].tokens.size(), 5u);
    if (temperature == 0.0f) {
      // Greedy: the stopped request is the first line of the full one.
      EXPECT_EQ(ar[3].text, ar[0].text.substr(0, ar[0].text.find('\n')));
    }
    for (const std::string name : {"sd", "seed", "seed-batch"}) {
      const std::vector<Completion> out = zoo_engine(name)->generate(propose_requests(temperature));
      if (temperature > 0.0f && name != "sd") {
        // Sampled engines agree with serial sd, not with ar.
        const std::vector<Completion> sd = zoo_engine("sd")->generate(propose_requests(temperature));
        for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i].text, sd[i].text) << name << " " << i;
      }
      for (size_t i = 0; i < out.size(); ++i) {
        EXPECT_EQ(out[i].finish, ar[i].finish) << name << " " << i;
        if (temperature == 0.0f) {
          EXPECT_EQ(out[i].text, ar[i].text) << name << " " << i;
        }
      }
    }
  }
}

// Greedy, with the exact verifier, a drafted step is committed only when it
// is the target's own next step: lookahead writes the target's text, over a
// speculative target engine too. make_engine builds it from the options.
TEST(EngineTextTest, GreedyLookaheadWithTheExactVerifierWritesTheTargetsText) {
  const std::vector<GenRequest> requests = propose_requests(0.0f);
  const std::vector<Completion> ar = zoo_engine("ar")->generate(requests);
  for (const std::string target : {"ar", "sd"}) {
    EngineOptions o = zoo_options(target);
    o.lookahead.emplace();
    o.lookahead->gamma = 2;
    o.step_verifier = [](Engine&, const EngineOptions&) { return make_step_verifier("exact"); };
    const std::unique_ptr<Engine> lookahead = make_engine(o);
    EXPECT_EQ(lookahead->name(), "lookahead(" + target + ")");
    EXPECT_EQ(lookahead->draft_plan().k_config, zoo_engine(target)->draft_plan().k_config);
    const std::vector<Completion> out = lookahead->generate(requests);
    for (size_t i = 0; i < out.size(); ++i) {
      EXPECT_EQ(out[i].text, ar[i].text) << target << " request " << i;
      EXPECT_EQ(out[i].finish, ar[i].finish) << target << " request " << i;
    }
    const StepStats steps = lookahead->stats().steps;
    EXPECT_GT(steps.accepted_steps, 0) << "the zoo pair agrees on some steps";
    EXPECT_EQ(steps.mean_gamma(), 2.0);
  }
  EngineOptions unjudged = zoo_options("ar");
  unjudged.lookahead.emplace();
  EXPECT_TRUE(throws_error([&] { make_engine(unjudged); }, ErrorKind::kInvalidArgument, {"--lookahead", "verifier"}));
}

// What a round commits at a step depends only on the text before it: the
// target's step there and the drafted alternatives for it, each drawn from
// its own stream. So the asynchronous engine, whose rounds and batches
// depend on timing, commits what the synchronous one does, sampled and with
// several alternatives; greedy with the exact verifier, the target's text.
TEST(EngineTextTest, AsynchronousLookaheadCommitsWhatTheSynchronousOneDoes) {
  const RunSettings settings = model_run_settings(kZoo + "/tiny-target");
  const auto lookahead = [&](bool async, int width, const std::string& verifier) {
    EngineOptions draft;
    draft.engine = EngineKind::parse("ar-batch");
    draft.target = kZoo + "/tiny-draft";
    LookaheadSettings steps;
    steps.gamma = async ? 3 : 2;
    steps.width = width;
    steps.async = async;
    return LookaheadEngine(make_engine(draft), zoo_engine("ar"), settings, steps, make_step_verifier(verifier));
  };
  const std::vector<GenRequest> greedy = propose_requests(0.0f);
  const std::vector<Completion> ar = zoo_engine("ar")->generate(greedy);
  const std::vector<Completion> async_greedy = lookahead(true, 1, "exact").generate(greedy);
  for (size_t i = 0; i < ar.size(); ++i) EXPECT_EQ(async_greedy[i].text, ar[i].text) << "request " << i;
  const std::vector<GenRequest> sampled = propose_requests(0.7f);
  LookaheadEngine sync = lookahead(false, 2, "normalized");
  LookaheadEngine async = lookahead(true, 2, "normalized");
  const std::vector<Completion> a = sync.generate(sampled);
  const std::vector<Completion> b = async.generate(sampled);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(b[i].text, a[i].text) << "request " << i;
    EXPECT_EQ(b[i].finish, a[i].finish) << "request " << i;
  }
  EXPECT_EQ(async.stats().steps.accepted_steps, sync.stats().steps.accepted_steps);
}

// On a GPU the asynchronous engine's draft thread queues its kernels on a
// CUDA stream of its own, beside the target's: greedy with the exact
// verifier it must still write the target's own text.
TEST(EngineTextTest, OnCudaTheAsynchronousDraftOnItsOwnStreamChangesNoText) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const std::string cuda = "cuda:0";
  EngineOptions draft;
  draft.engine = EngineKind::parse("ar-batch");
  draft.target = kZoo + "/tiny-draft";
  draft.device = cuda;
  LookaheadSettings steps;
  steps.gamma = 3;
  steps.async = true;
  steps.draft_device = cuda;
  LookaheadEngine lookahead(make_engine(draft), zoo_engine("sd", cuda), model_run_settings(kZoo + "/tiny-target"),
                            steps, make_step_verifier("exact"));
  const std::vector<GenRequest> requests = propose_requests(0.0f);
  const std::vector<Completion> ar = zoo_engine("ar", cuda)->generate(requests);
  const std::vector<Completion> out = lookahead.generate(requests);
  for (size_t i = 0; i < ar.size(); ++i) EXPECT_EQ(out[i].text, ar[i].text) << "request " << i;
  EXPECT_GT(lookahead.stats().steps.accepted_steps, 0) << "the zoo pair agrees on some steps";
}

}  // namespace
}  // namespace seed::spec
