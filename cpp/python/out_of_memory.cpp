// Out of memory in the C++ core ends as Python's MemoryError, not as an abort of the process.
// Under the CLI's memory ceiling (neuronxsim/cli/memory.py) an allocation does fail, and two
// things would otherwise end the process before the std::bad_alloc reaches Python:
// - glibc allocates a dlopened library's thread-local data on its first use in a thread and
//   aborts when it cannot ("cannot allocate memory for thread-local data"). The C++ runtime's is
//   first used by the first exception thrown, which may be that std::bad_alloc: it is allocated
//   at import instead, in the importing thread.
// - Unwinding allocates too (a JSON document's destructor keeps a stack of its nested values,
//   and a destructor that throws terminates the process). A reserve is kept, and the new-handler
//   frees it when an allocation fails before letting std::bad_alloc unwind; the exception
//   translator takes it again once the exception has reached Python.
#include <cxxabi.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "bindings.h"

namespace nxs::py_bind {
namespace {

constexpr size_t kReserveBytes = size_t{64} << 20;  // untouched: address space, not resident memory
std::atomic<void*> gReserve{nullptr};

void releaseReserve() {
  std::free(gReserve.exchange(nullptr));
  throw std::bad_alloc();
}

}  // namespace

void keepMemoryReserve() {
  if (!gReserve.load()) {
    void* expected = nullptr;
    if (void* block = std::malloc(kReserveBytes); block && !gReserve.compare_exchange_strong(expected, block))
      std::free(block);
  }
  std::set_new_handler(releaseReserve);
}

void prepareForOutOfMemory() {
  // __cxa_get_globals is declared const: a call whose result is unused would be dropped.
  [[maybe_unused]] static void* volatile cxxRuntimeThreadData;  // written, never read: the call is the point
  cxxRuntimeThreadData = abi::__cxa_get_globals();
  keepMemoryReserve();
}

}  // namespace nxs::py_bind
