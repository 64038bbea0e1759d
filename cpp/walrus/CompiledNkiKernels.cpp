#include "walrus/CompiledNkiKernels.h"

#include <mutex>
#include <unordered_map>

#include "bir/Error.h"
#include "bir/Json.h"
#include "walrus/klr/KernelFile.h"

namespace walrus {

namespace {

struct Store {
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<const std::string>> artifacts;
};

Store& store() {
  static Store* s = new Store();  // never destroyed: no order-of-destruction issue at exit
  return *s;
}

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

void addCompiledNkiKernel(const std::string& handle, std::string bytes) {
  auto value = std::make_shared<const std::string>(std::move(bytes));
  std::lock_guard<std::mutex> lock(store().mutex);
  store().artifacts.try_emplace(handle, std::move(value));
}

std::shared_ptr<const std::string> findCompiledNkiKernel(const std::string& handle) {
  std::lock_guard<std::mutex> lock(store().mutex);
  const auto it = store().artifacts.find(handle);
  return it == store().artifacts.end() ? nullptr : it->second;
}

std::unique_ptr<bir::Module> decodeCompiledNkiKernel(const std::string& handle, const std::string& bytes,
                                                     const std::string& what) {
  if (endsWith(handle, ".json")) {
    try {
      return bir::moduleFromJson(bytes);
    } catch (const bir::BIRError& e) {
      throw bir::BIRError(what + ": " + e.what());
    }
  }
  if (endsWith(handle, ".klr")) {
    try {
      return klr::decodeKernel(bytes);
    } catch (const klr::KLRError& e) {
      throw klr::KLRError(what + ": " + e.what());
    }
  }
  throw KernelError(what + ": '" + handle + "' names neither a BIR JSON (.json) nor a KLR (.klr) kernel");
}

}  // namespace walrus
