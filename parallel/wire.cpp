#include "parallel/wire.h"

#include <cstdint>
#include <set>

#include "models/base/error.h"
#include "parallel/wire_buffer.h"
#include "parallel/wire_spec_values.h"

namespace seed::parallel::wire {

namespace {

constexpr uint8_t kMagic[2] = {'S', 'D'};

// A proposal item's status: a draft follows, or the drafter's error.
constexpr uint8_t kDrafted = 0, kFailed = 1;

enum class Type : uint8_t { kStart = 1, kDraft, kProposal, kVerdict, kFinish, kShutdown, kError, kVerify, kVerdicts,
                            kUsageRequest, kUsage, kLesson, kEndGroup };

// A count of events, never negative.
int64_t get_count(Reader& r, const char* field) {
  const int64_t count = r.get<int64_t>(field);
  if (count < 0) detail::Raiser() & r.fail() << field << " is " << count << ", a negative count";
  return count;
}

struct Encoder {
  Writer& w;
  void operator()(const StartMessage& m) {
    w.put(m.slot);
    w.put_array(m.tokens, "tokens");
    put_settings(w, m.settings);
    w.put(static_cast<uint8_t>(m.drafter.value()));
  }
  void operator()(const DraftMessage& m) {
    w.put_count(m.asks.size(), "asks");
    for (const spec::DraftAsk& ask : m.asks) {
      w.put(ask.slot);
      w.put(static_cast<int32_t>(ask.max_depth));
    }
  }
  void operator()(const SlotDraft& m) {
    w.put(m.slot);
    put_draft(w, m.draft);
  }
  void operator()(const ProposalMessage& m) {
    w.put_count(m.items.size(), "items");
    for (const ProposalMessage::Item& item : m.items) {
      w.put(item.slot);
      w.put(static_cast<uint8_t>(item.error ? kFailed : kDrafted));
      if (item.error) {
        w.put_array(std::vector<uint8_t>(item.error->begin(), item.error->end()), "error");
      } else {
        put_draft(w, item.draft);
      }
    }
    w.put(m.graph_warm_ups);
  }
  void operator()(const VerdictMessage& m) {
    w.put(m.slot);
    put_verdict(w, m.verdict);
  }
  void operator()(const FinishMessage& m) { w.put(m.slot); }
  void operator()(const ShutdownMessage&) {}
  void operator()(const ErrorMessage& m) { w.put_array(std::vector<uint8_t>(m.text.begin(), m.text.end()), "text"); }
  void operator()(const VerifyMessage& m) {
    w.put_count(m.items.size(), "items");
    for (const SlotDraft& item : m.items) (*this)(item);
    w.put(m.target_top_k);
  }
  void operator()(const VerdictsMessage& m) {
    w.put_count(m.items.size(), "items");
    for (const VerdictMessage& item : m.items) (*this)(item);
    w.put(m.prefill.prompt_tokens);
    w.put(m.prefill.computed_tokens);
    w.put(m.prefill.kv_peak_bytes);
    w.put(m.prefill.kv_live_bytes);
    w.put(m.prefill.evicted_blocks);
    w.put(m.prefill.verify_rounds);
    w.put(m.prefill.forward_s);
    w.put(m.prefill.host_verify_s);
    w.put(m.prefill.graph_warm_ups);
  }
  void operator()(const UsageRequestMessage&) {}
  void operator()(const LessonMessage& m) { put_lesson(w, m.drafter, m.lesson); }
  void operator()(const EndGroupMessage& m) { w.put(m.group); }
  void operator()(const UsageMessage& m) {
    w.put_count(m.ranks.size(), "ranks");
    for (const RankUsage& u : m.ranks) {
      w.put(static_cast<int32_t>(u.rank));
      w.put(u.busy_s);
      w.put(u.wall_s);
      w.put(u.cpu_s);
    }
  }
};

// Variant index -> wire type, in the order of the Message variant.
constexpr Type kTypes[] = {Type::kStart,    Type::kDraft,    Type::kProposal,     Type::kVerdict,
                           Type::kFinish,   Type::kShutdown, Type::kError,        Type::kVerify,
                           Type::kVerdicts, Type::kUsageRequest, Type::kUsage, Type::kLesson,
                           Type::kEndGroup};
constexpr const char* kNames[] = {"start",  "draft",    "proposal", "verdict",       "finish", "shutdown", "error",
                                  "verify", "verdicts", "usage request", "usage", "lesson", "end group"};
static_assert(std::size(kTypes) == std::variant_size_v<Message>);
// decode names a message kNames[type - 1]: types number the variant from 1.
constexpr bool types_follow_variant_order() {
  for (size_t i = 0; i < std::size(kTypes); ++i) {
    if (static_cast<size_t>(kTypes[i]) != i + 1) return false;
  }
  return true;
}
static_assert(types_follow_variant_order());

Message decode_body(Type type, Reader& r) {
  switch (type) {
    case Type::kStart: {
      StartMessage m;
      m.slot = r.get<uint64_t>("slot");
      m.tokens = r.get_array<int32_t>("tokens");
      m.settings = get_settings(r);
      m.drafter = get_drafter_kind(r);
      return m;
    }
    case Type::kDraft: {
      DraftMessage m;
      const uint32_t count = r.get<uint32_t>("asks");
      r.need(uint64_t{count} * (sizeof(uint64_t) + sizeof(int32_t)), "asks");
      std::set<uint64_t> asked;
      for (uint32_t i = 0; i < count; ++i) {
        spec::DraftAsk ask;
        ask.slot = r.get<uint64_t>("slot");
        ask.max_depth = r.get<int32_t>("max_depth");
        if (!asked.insert(ask.slot).second) detail::Raiser() & r.fail() << "slot " << ask.slot << " asked twice";
        m.asks.push_back(ask);
      }
      return m;
    }
    case Type::kProposal: {
      ProposalMessage m;
      const uint32_t count = r.get<uint32_t>("items");
      r.need(uint64_t{count} * (sizeof(uint64_t) + sizeof(uint8_t)), "items");  // each at least a slot and status
      for (uint32_t i = 0; i < count; ++i) {
        ProposalMessage::Item item;
        item.slot = r.get<uint64_t>("slot");
        const uint8_t status = r.get<uint8_t>("status");
        if (status == kFailed) {
          const std::vector<uint8_t> text = r.get_array<uint8_t>("error");
          item.error = std::string(text.begin(), text.end());
        } else if (status == kDrafted) {
          item.draft = get_draft(r);
        } else {
          detail::Raiser() & r.fail() << "slot " << item.slot << " has unknown status " << int{status};
        }
        m.items.push_back(std::move(item));
      }
      m.graph_warm_ups = get_count(r, "graph_warm_ups");
      return m;
    }
    case Type::kVerdict: {
      VerdictMessage m;
      m.slot = r.get<uint64_t>("slot");
      m.verdict = get_verdict(r);
      return m;
    }
    case Type::kFinish: return FinishMessage{r.get<uint64_t>("slot")};
    case Type::kShutdown: return ShutdownMessage{};
    case Type::kError: {
      const std::vector<uint8_t> text = r.get_array<uint8_t>("text");
      return ErrorMessage{std::string(text.begin(), text.end())};
    }
    case Type::kVerify: {
      VerifyMessage m;
      const uint32_t count = r.get<uint32_t>("items");
      r.need(uint64_t{count} * sizeof(uint64_t), "items");  // each at least a slot
      for (uint32_t i = 0; i < count; ++i) {
        SlotDraft item;
        item.slot = r.get<uint64_t>("slot");
        item.draft = get_draft(r);
        m.items.push_back(std::move(item));
      }
      m.target_top_k = r.get<int32_t>("target_top_k");
      return m;
    }
    case Type::kVerdicts: {
      VerdictsMessage m;
      const uint32_t count = r.get<uint32_t>("items");
      r.need(uint64_t{count} * sizeof(uint64_t), "items");  // each at least a slot
      for (uint32_t i = 0; i < count; ++i) {
        VerdictMessage item;
        item.slot = r.get<uint64_t>("slot");
        item.verdict = get_verdict(r);
        m.items.push_back(std::move(item));
      }
      m.prefill.prompt_tokens = r.get<int64_t>("prompt_tokens");
      m.prefill.computed_tokens = r.get<int64_t>("computed_tokens");
      m.prefill.kv_peak_bytes = r.get<int64_t>("kv_peak_bytes");
      m.prefill.kv_live_bytes = r.get<int64_t>("kv_live_bytes");
      m.prefill.evicted_blocks = r.get<int64_t>("evicted_blocks");
      m.prefill.verify_rounds = r.get<int64_t>("verify_rounds");
      m.prefill.forward_s = r.get<double>("forward_s");
      m.prefill.host_verify_s = r.get<double>("host_verify_s");
      m.prefill.graph_warm_ups = get_count(r, "graph_warm_ups");
      return m;
    }
    case Type::kUsageRequest: return UsageRequestMessage{};
    case Type::kLesson: return get_lesson(r);
    case Type::kEndGroup: return EndGroupMessage{r.get<uint64_t>("group")};
    case Type::kUsage: {
      UsageMessage m;
      const uint32_t count = r.get<uint32_t>("ranks");
      r.need(uint64_t{count} * (sizeof(int32_t) + 3 * sizeof(double)), "ranks");
      for (uint32_t i = 0; i < count; ++i) {
        RankUsage u;
        u.rank = r.get<int32_t>("rank");
        u.busy_s = r.get<double>("busy_s");
        u.wall_s = r.get<double>("wall_s");
        u.cpu_s = r.get<double>("cpu_s");
        m.ranks.push_back(u);
      }
      return m;
    }
  }
  detail::Raiser() & r.fail() << "unknown message type " << int{static_cast<uint8_t>(type)};
}

}  // namespace

const char* message_name(const Message& message) { return kNames[message.index()]; }

std::vector<uint8_t> encode(const Message& message) {
  Writer w;
  w.put(kMagic[0]);
  w.put(kMagic[1]);
  w.put(kVersion);
  w.put(static_cast<uint8_t>(kTypes[message.index()]));
  std::visit(Encoder{w}, message);
  return w.take();
}

Message decode(const std::vector<uint8_t>& bytes, int sender) {
  Reader r(bytes, sender);
  const uint8_t magic0 = r.get<uint8_t>("magic"), magic1 = r.get<uint8_t>("magic");
  if (magic0 != kMagic[0] || magic1 != kMagic[1]) detail::Raiser() & r.fail() << "not a seed message (bad magic)";
  const uint16_t version = r.get<uint16_t>("version");
  if (version != kVersion) {
    detail::Raiser() & r.fail() << "wire version " << version << ", this seed speaks version " << kVersion
                                << "; run the same seed build on every rank";
  }
  const uint8_t type = r.get<uint8_t>("type");
  if (type < static_cast<uint8_t>(Type::kStart) || type > static_cast<uint8_t>(Type::kEndGroup)) {
    detail::Raiser() & r.fail() << "unknown message type " << int{type};
  }
  r.set_message(kNames[type - 1]);
  Message message = decode_body(static_cast<Type>(type), r);
  r.finish();
  return message;
}

}  // namespace seed::parallel::wire
