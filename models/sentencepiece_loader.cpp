// Opens libseed_sentencepiece.so once and forwards to it (see
// sentencepiece_tokenizer.h for why SentencePiece lives in a plugin).
#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <filesystem>

#include "models/base/error.h"
#include "models/sentencepiece_tokenizer.h"

namespace seed::models {
namespace {

constexpr const char* kPluginName = "libseed_sentencepiece.so";

struct Plugin {
  decltype(&seed_sentencepiece_load) load = nullptr;
  decltype(&seed_sentencepiece_train) train = nullptr;
};

// dlopen as libc implements it. The sanitizer runtimes intercept dlopen and
// abort on RTLD_DEEPBIND, which would let the plugin's malloc and pthread
// calls bypass their interceptors; in sanitized builds the plugin links the
// runtime itself (scripts/sanitizers), so the runtime comes first in the
// plugin's own lookup scope and the flag is harmless.
void* open_deepbound(const std::string& path) {
  using Dlopen = void* (*)(const char*, int);
  static const Dlopen libc_dlopen = [] {
    void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    return libc != nullptr ? reinterpret_cast<Dlopen>(dlsym(libc, "dlopen")) : nullptr;
  }();
  const int flags = RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
  return libc_dlopen != nullptr ? libc_dlopen(path.c_str(), flags) : dlopen(path.c_str(), flags);
}

// Where the plugin may be: beside the running executable (installed
// layouts), then where this build put it.
std::vector<std::string> plugin_candidates() {
  std::vector<std::string> paths;
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) paths.push_back((std::filesystem::path(std::string(exe, n)).parent_path() / kPluginName).string());
  paths.push_back(SEED_SENTENCEPIECE_PLUGIN);
  return paths;
}

const Plugin& plugin() {
  static const Plugin loaded = [] {
    std::string errors;
    for (const std::string& path : plugin_candidates()) {
      if (!std::filesystem::exists(path)) continue;
      void* handle = open_deepbound(path);
      if (handle == nullptr) {
        errors += std::string("; ") + dlerror();
        continue;
      }
      Plugin p;
      p.load = reinterpret_cast<decltype(p.load)>(dlsym(handle, "seed_sentencepiece_load"));
      p.train = reinterpret_cast<decltype(p.train)>(dlsym(handle, "seed_sentencepiece_train"));
      SEED_CHECK(p.load != nullptr && p.train != nullptr, kCorruption)
          << path << " lacks the seed_sentencepiece_* entry points; rebuild seed";
      return p;  // never closed: tokenizers made by it live until exit
    }
    SEED_FAIL(kNotFound) << "cannot load the SentencePiece plugin " << kPluginName
                         << " (looked beside the executable and in " << SEED_SENTENCEPIECE_PLUGIN << ")" << errors;
  }();
  return loaded;
}

}  // namespace

std::unique_ptr<Tokenizer> make_sentencepiece_tokenizer(const std::string& model_path) {
  return std::unique_ptr<Tokenizer>(plugin().load(model_path.c_str()));
}

void train_sentencepiece(const std::vector<std::string>& sentences, int vocab_size, const std::string& model_path) {
  plugin().train(sentences, vocab_size, model_path.c_str());
}

}  // namespace seed::models
