// Where acceptance reads the target's verified logits, and a draft model
// the logits it drafts from.
#pragma once

namespace seed::spec {

// kAuto: in host memory when the model runs on the CPU (no copy at all);
// on a GPU, from a summary the GPU computes (logit_summary.h), so that a
// few numbers per row cross to the host instead of every row (a draft's
// top tokens, their probabilities and a sampled request's race winner).
// kDeviceSummary summarises on any device: the GPU's path, testable on the
// CPU.
enum class LogitReads { kAuto, kDeviceSummary };

}  // namespace seed::spec
