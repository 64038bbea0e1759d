// Seed 000: InlineBIRKernel expands each IT54 node through BIRKernelWrapper::createInstance
// "directly, with no JSON round-trip and no KLR walk". This test binary interposes the BIR JSON
// reader/writer and the KLR kernel decoder/encoder (its definitions come first in the dynamic
// symbol lookup, so the libraries' calls reach them; each forwards to the real one) and counts
// the calls made while the pass expands one node of every leaf.
#include <dlfcn.h>

#include <atomic>

#include "bir/Json.h"
#include "test_leaf_kit.h"
#include "walrus/TranslateNKIASTToBIR.h"
#include "walrus/klr/KernelFile.h"

namespace {
std::atomic<int> gJsonReads{0}, gJsonWrites{0}, gKlrDecodes{0}, gKlrEncodes{0};

template <class Fn>
Fn next(const char* symbol) {
  void* f = dlsym(RTLD_NEXT, symbol);
  if (!f) std::abort();  // the library does not export it: the mangled name below is stale
  return reinterpret_cast<Fn>(f);
}
}  // namespace

namespace bir {
std::unique_ptr<Module> moduleFromJson(std::string_view text, const JsonReadOptions& opts) {
  ++gJsonReads;
  using Fn = std::unique_ptr<Module> (*)(std::string_view, const JsonReadOptions&);
  static const Fn real = next<Fn>("_ZN3bir14moduleFromJsonESt17basic_string_viewIcSt11char_traitsIcEERKNS_15JsonReadOptionsE");
  return real(text, opts);
}
std::string moduleToJson(const Module& m, int indent) {
  ++gJsonWrites;
  using Fn = std::string (*)(const Module&, int);
  static const Fn real = next<Fn>("_ZN3bir12moduleToJsonB5cxx11ERKNS_6ModuleEi");
  return real(m, indent);
}
}  // namespace bir

namespace klr {
std::unique_ptr<bir::Module> decodeKernel(std::string_view bytes) {
  ++gKlrDecodes;
  using Fn = std::unique_ptr<bir::Module> (*)(std::string_view);
  static const Fn real = next<Fn>("_ZN3klr12decodeKernelESt17basic_string_viewIcSt11char_traitsIcEE");
  return real(bytes);
}
std::string encodeKernel(const bir::Module& m, const KernelFileOptions& options, EncodingStats* stats) {
  ++gKlrEncodes;
  using Fn = std::string (*)(const bir::Module&, const KernelFileOptions&, EncodingStats*);
  static const Fn real = next<Fn>("_ZN3klr12encodeKernelB5cxx11ERKN3bir6ModuleERKNS_17KernelFileOptionsEPNS_13EncodingStatsE");
  return real(m, options, stats);
}
}  // namespace klr

namespace nxs_leaf_test {
namespace {

TEST(InlineBIRKernel, ExpandsNativelyWithNoJsonRoundTripAndNoKlrWalk) {
  // The counters see the libraries' own calls (else this test could not fail): libwalrus reads a
  // Form B kernel's BIR JSON, and writes and reads a KLR file.
  {
    auto kernel = std::make_unique<bir::Module>();
    bir::Function* kf = kernel->addFunction("k");
    kf->createDramTensor("a", bir::MemoryType::Input, bir::DType::float32, {4, 4});
    kf->createDramTensor("o", bir::MemoryType::Output, bir::DType::float32, {4, 4});
    kf->addBlock();
    const std::string text = bir::moduleToJson(*kernel);
    bir::Module host;
    bir::Function* f = host.addFunction("host");
    auto* node = bir::cast<bir::InstNKIKLIRKernel>(f->addBlock()->addInstruction(bir::InstructionType::NKIKLIRKernel, "n"));
    node->kernel_format = "bir";
    node->func_args = {"a"};
    node->func_outs = {"o"};
    node->addSeqAccess(f->createDramTensor("x", bir::MemoryType::Input, bir::DType::float32, {4, 4}), false);
    node->addSeqAccess(f->createDramTensor("y", bir::MemoryType::Output, bir::DType::float32, {4, 4}), true);
    const int reads = gJsonReads;
    walrus::TranslateNKIASTToBIR().lowerFromBirJson(*node, text);
    EXPECT_EQ(gJsonReads - reads, 1);
    const std::string path = ::testing::TempDir() + "inline_native_probe.klr";
    const int encodes = gKlrEncodes, decodes = gKlrDecodes;
    klr::writeKernelFile(*kernel, path);
    klr::readKernelFile(path);
    EXPECT_EQ(gKlrEncodes - encodes, 1);
    EXPECT_EQ(gKlrDecodes - decodes, 1);
  }

  for (const char* kernel : {"RowTiledMM", "ColumnTiledMM", "CaymanPackedPETranspose"}) {
    SCOPED_TRACE(kernel);
    auto m = kernelModule(kernel, {{"a", {64, 96}}, {"b", {96, 80}}}, {{"o", {64, 80}}});
    if (std::string(kernel) == "CaymanPackedPETranspose")
      m = kernelModule(kernel, {{"a", {64, 96}}}, {{"o", {96, 64}}});
    const int r0 = gJsonReads, w0 = gJsonWrites, d0 = gKlrDecodes, e0 = gKlrEncodes;
    const auto stats = expand(*m);
    EXPECT_GT(stats.instructions, 0u);
    EXPECT_EQ(gJsonReads - r0, 0);
    EXPECT_EQ(gJsonWrites - w0, 0);
    EXPECT_EQ(gKlrDecodes - d0, 0);
    EXPECT_EQ(gKlrEncodes - e0, 0);
  }
}

}  // namespace
}  // namespace nxs_leaf_test
