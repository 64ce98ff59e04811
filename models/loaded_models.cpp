#include "models/loaded_models.h"

#include <algorithm>

namespace seed::models {

LoadedModels::Loaded LoadedModels::load(const std::string& model_dir, const LoadOptions& options,
                                        const std::function<void()>& before_loading) {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (Entry& e : entries_) {
    if (e.model_dir == model_dir && e.options == options) {
      e.asked = true;
      return {e.model, true};
    }
  }
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(), [](const Entry& e) { return !e.asked; }),
                 entries_.end());
  if (before_loading) before_loading();
  std::shared_ptr<CausalLM> model = CausalLM::load(model_dir, options);
  entries_.push_back({model_dir, options, model, true});
  return {std::move(model), false};
}

void LoadedModels::next_run() {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (Entry& e : entries_) e.asked = false;
}

}  // namespace seed::models
