// The IT55/IT56 resolvers and the kernel splicer: traced kernels replace their nodes in place,
// their DRAM tensors bound to the node's operands (whole, contiguous and strided views), their
// on-chip tensors and instructions copied under unique names; Form A (KLR file) and Form B (BIR
// JSON, embedded or a file) give identical modules; multi-core kernels land one function per core.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "bir/Error.h"
#include "bir/Json.h"
#include "bir/Verifier.h"
#include "test_klr_modules.h"
#include "walrus/CompiledNkiKernels.h"
#include "walrus/KernelNodeResolver.h"
#include "walrus/KernelSplicer.h"
#include "walrus/klr/KernelFile.h"

using namespace bir;
using walrus::KernelError;

namespace {

struct Host {
  std::unique_ptr<Module> m = std::make_unique<Module>();
  Function* f = m->addFunction();
  BasicBlock* bb = nullptr;
  Instruction* node = nullptr;
};

// x, y -> node -> z, between two NoOps; x, y, z are DRAM tensors of `shape`.
Host makeHost(Opcode kind, DType dtype = DType::float32, std::vector<int64_t> shape = {128, 512}) {
  Host h;
  auto* x = h.f->createDramTensor("x", MemoryType::Input, dtype, shape, TensorKind::ExternalInput);
  auto* y = h.f->createDramTensor("y", MemoryType::Input, dtype, shape, TensorKind::ExternalInput);
  auto* z = h.f->createDramTensor("z", MemoryType::Output, dtype, shape, TensorKind::ExternalOutput);
  h.bb = h.f->addBlock("main");
  h.bb->addInstruction(InstructionType::NoOp, "before");
  h.node = h.bb->addInstruction(kind, "k0");
  h.node->addSeqAccess(x, false);
  h.node->addSeqAccess(y, false);
  h.node->addOpaqueAP(z, true);
  h.bb->addInstruction(InstructionType::NoOp, "after");
  if (auto* n = dyn_cast<InstNKIKernel>(h.node)) {
    n->func = "add_kernel";
    n->func_args = {"a", "b"};
    n->func_outs = {"out"};
  } else if (auto* n = dyn_cast<InstNKIKLIRKernel>(h.node)) {
    n->func_name = "add_kernel";
    n->func_args = {"a", "b"};
    n->func_outs = {"out"};
  }
  return h;
}

// A KLR file of the host node's kernel: named by its func_name, as the codegen writes it.
const klr::KernelFileOptions kAsTheNode{"add_kernel"};

// The handle of `kernel` compiled in this process as BIR JSON (named by content, as the front end's).
std::string compiled(const Module& kernel) {
  std::string json = moduleToJson(kernel, -1);
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016zx", std::hash<std::string>()(json));
  const std::string handle = "nki/add_kernel." + std::string(hash) + ".json";
  walrus::addCompiledNkiKernel(handle, std::move(json));
  return handle;
}

InstNKIKernel* it55(Host& h, const Module& kernel) {
  auto* n = cast<InstNKIKernel>(h.node);
  n->func = compiled(kernel);
  return n;
}

std::string tempDir() {
  const auto dir = std::filesystem::path(testing::TempDir()) / "walrus_splicer";
  std::filesystem::create_directories(dir);
  return dir.string();
}
std::string tempPath(const std::string& name) { return (std::filesystem::path(tempDir()) / name).string(); }

// Resolves in the test's temporary folder (the module's files folder) unless `o` names another.
size_t resolve(Module& m, walrus::ResolveOptions o = {}) {
  if (o.base_dir.empty()) o.base_dir = tempDir();
  return walrus::KernelNodeResolver(m, o).run();
}

template <class E>
std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

// Replaces the node's ins[i] by a view of a bigger host tensor.
void bindView(Host& h, size_t i, MemoryLocation* t, int64_t offset, std::vector<APPair> pattern,
              std::vector<int64_t> accessShape) {
  h.node->ins[i] = Instruction::createAP(t, offset, pattern, accessShape, 0);
}

}  // namespace

TEST(WalrusSplicer, NKIKernelIsReplacedInPlace) {
  Host h = makeHost(InstructionType::NKIKernel);
  auto kernel = klr_test::addKernel();
  it55(h, *kernel);
  EXPECT_EQ(resolve(*h.m), 1u);
  ASSERT_EQ(h.bb->size(), 6u);
  EXPECT_EQ(h.bb->at(0)->name, "before");
  EXPECT_EQ(h.bb->at(5)->name, "after");
  const char* names[] = {"k0/load_a", "k0/load_b", "k0/add", "k0/store"};
  for (int i = 0; i < 4; ++i) {
    const Instruction& I = *h.bb->at(1 + i);
    EXPECT_EQ(I.name, names[i]);
    EXPECT_EQ(I.kernel, "k0");
    EXPECT_EQ(I.source, "add.py:" + std::to_string(3 + i));
  }
  // Bound tensors are the host's; the kernel's SBUF tiles are copied under the node's name.
  EXPECT_EQ(h.bb->at(1)->ins[0].loc, h.f->findLocation("x"));
  EXPECT_EQ(h.bb->at(2)->ins[0].loc, h.f->findLocation("y"));
  EXPECT_EQ(h.bb->at(4)->outs[0].loc, h.f->findLocation("z"));
  EXPECT_EQ(h.bb->at(1)->ins[0].pattern, kernel->function(0)->blocks()[0]->at(0)->ins[0].pattern);
  const MemoryLocation* tile = h.f->findLocation("k0/tb");
  ASSERT_NE(tile, nullptr);
  EXPECT_EQ(tile->type, MemoryType::SB);
  EXPECT_EQ(tile->addr, 2048);
  EXPECT_EQ(h.bb->at(2)->outs[0].loc, tile);
  EXPECT_EQ(tile->set->name, "k0/tb_set");
  EXPECT_NO_THROW(verifyModule(*h.m));
}

TEST(WalrusSplicer, ContiguousAndStridedViewsAreRebased) {
  // ins[0]: rows 128..255 of a [256, 512] tensor (contiguous); ins[1]: columns 512..1023 of a
  // [128, 1024] tensor (strided).
  Host h = makeHost(InstructionType::NKIKernel);
  auto* tall = h.f->createDramTensor("tall", MemoryType::Input, DType::float32, {256, 512});
  auto* wide = h.f->createDramTensor("wide", MemoryType::Input, DType::float32, {128, 1024});
  bindView(h, 0, tall, 128 * 512, {{512, 128}, {1, 512}}, {128, 512});
  bindView(h, 1, wide, 512, {{1024, 128}, {1, 512}}, {128, 512});
  it55(h, *klr_test::addKernel());
  resolve(*h.m);
  const AccessPattern& a = h.bb->at(1)->ins[0];
  EXPECT_EQ(a.loc, tall);
  EXPECT_EQ(a.offset, 128 * 512);
  EXPECT_EQ(a.pattern, (std::vector<APPair>{{512, 128}, {1, 512}}));
  const AccessPattern& b = h.bb->at(2)->ins[0];
  EXPECT_EQ(b.loc, wide);
  EXPECT_EQ(b.offset, 512);
  EXPECT_EQ(b.pattern, (std::vector<APPair>{{1024, 128}, {1, 512}}));
}

TEST(WalrusSplicer, RefusesPatternsAStridedViewCannotExpress) {
  Host h = makeHost(InstructionType::NKIKernel);
  auto* wide = h.f->createDramTensor("wide", MemoryType::Input, DType::float32, {128, 1024});
  bindView(h, 0, wide, 512, {{1024, 128}, {1, 512}}, {128, 512});
  auto kernel = klr_test::addKernel();
  kernel->function(0)->blocks()[0]->at(0)->ins[0].pattern = {{1, 128 * 512}};  // a flat read
  kernel->function(0)->blocks()[0]->at(0)->outs[0].pattern = {{512, 128}, {1, 512}};
  it55(h, *kernel);
  const std::string before = moduleToJson(*h.m);
  const std::string msg = errorOf<KernelError>([&] { resolve(*h.m); });
  EXPECT_EQ(msg, "functions[0].blocks[0].instructions[1] (NKIKernel 'k0'): kernel instruction "
                 "'load_a' ins[0] cannot be rebased onto ins[0] ('wide'): it crosses a boundary of the "
                 "operand's dim 1 (size 512, host stride 1); bind a contiguous tensor instead");
  EXPECT_EQ(moduleToJson(*h.m), before);  // nothing changed
}

TEST(WalrusSplicer, BindingMismatchesNameBothSides) {
  auto kernel = klr_test::addKernel();
  {
    Host h = makeHost(InstructionType::NKIKernel, DType::bfloat16);
    it55(h, *kernel);
    EXPECT_NE(errorOf<KernelError>([&] { resolve(*h.m); })
                  .find("kernel tensor 'a' is float32[128, 512] but ins[0] ('x') is bfloat16[128, 512]"),
              std::string::npos);
  }
  {
    Host h = makeHost(InstructionType::NKIKernel, DType::float32, {512, 128});
    it55(h, *kernel);
    EXPECT_NE(errorOf<KernelError>([&] { resolve(*h.m); })
                  .find("kernel tensor 'a' is float32[128, 512] but ins[0] ('x') is float32[512, 128]"),
              std::string::npos);
  }
  {
    Host h = makeHost(InstructionType::NKIKernel, DType::float32, {1, 128, 512});  // size-1 dims are fine
    it55(h, *kernel);
    EXPECT_EQ(resolve(*h.m), 1u);
  }
  auto failing = [&](auto&& edit, const std::string& needle) {
    Host h = makeHost(InstructionType::NKIKernel);
    auto* n = it55(h, *kernel);
    edit(*n);
    const std::string msg = errorOf<KernelError>([&] { resolve(*h.m); });
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  };
  failing([](InstNKIKernel& n) { n.func_args = {"a"}; }, "the node has 2 input(s) and 1 output(s) but func_args names 1");
  failing([](InstNKIKernel& n) { n.func_args = {"a", "nope"}; }, "the kernel has no DRAM tensor 'nope' to bind ins[1] to");
  failing([](InstNKIKernel& n) { n.func_args = {"a", "a"}; }, "kernel tensor 'a' is bound twice (ins[0] and ins[1])");
  failing([](InstNKIKernel& n) { n.func_args = {"a", "ta"}; }, "the kernel has no DRAM tensor 'ta'");
  failing([](InstNKIKernel& n) { n.func.clear(); }, "func is empty: the node names no compiled kernel");
  failing([](InstNKIKernel& n) { n.func = "nki/never_compiled.0000000000000000.json"; },
          "compiled kernel 'nki/never_compiled.0000000000000000.json' was not compiled in this process, and its "
          "file cannot be read: ");
  failing([](InstNKIKernel& n) { n.func = "../outside.json"; }, "'../outside.json' is outside the files folder");
  {
    Host h = makeHost(InstructionType::NKIKernel);
    auto k = klr_test::addKernel();
    k->function(0)->createDramTensor("c", MemoryType::Input, DType::float32, {4});
    it55(h, *k);
    EXPECT_NE(errorOf<KernelError>([&] { resolve(*h.m); }).find("kernel input 'c' is not bound by the node's func_args"),
              std::string::npos);
  }
  {
    Host h = makeHost(InstructionType::NKIKernel);
    walrus::addCompiledNkiKernel("nki/bad.1.json", R"({"functions": 3})");
    cast<InstNKIKernel>(h.node)->func = "nki/bad.1.json";
    EXPECT_NE(errorOf<BIRError>([&] { resolve(*h.m); })
                  .find("(NKIKernel 'k0'): compiled kernel 'nki/bad.1.json': functions: expected an array"),
              std::string::npos);
    walrus::addCompiledNkiKernel("nki/bad.2.txt", "{}");
    cast<InstNKIKernel>(h.node)->func = "nki/bad.2.txt";
    EXPECT_NE(errorOf<KernelError>([&] { resolve(*h.m); })
                  .find("'nki/bad.2.txt' names neither a BIR JSON (.json) nor a KLR (.klr) kernel"),
              std::string::npos);
  }
}

TEST(WalrusSplicer, CopiedTensorsAndInstructionsGetUniqueNames) {
  Host h = makeHost(InstructionType::NKIKernel);
  h.f->createOnChipTensor("k0/ta", MemoryType::SB, DType::float32, 1, 4, 0, 100000);
  h.bb->addInstruction(InstructionType::NoOp, "k0/add");
  it55(h, *klr_test::addKernel());
  resolve(*h.m);
  EXPECT_EQ(h.bb->at(1)->outs[0].loc->name, "k0/ta.1");
  EXPECT_NE(h.bb->at(3)->name, "k0/add");
  EXPECT_EQ(h.bb->at(3)->name.rfind("k0/add.", 0), 0u);
  EXPECT_NO_THROW(verifyModule(*h.m));
}

// Form A (KLR file), Form B embedded and Form B from a file: the same kernel, the same module.
TEST(WalrusSplicer, FormAAndFormBGiveIdenticalModules) {
  auto kernel = klr_test::addKernel();
  const std::string klrPath = tempPath("add.klr"), jsonPath = tempPath("add.json");
  klr::writeKernelFile(*kernel, klrPath, kAsTheNode);
  std::ofstream(jsonPath) << moduleToJson(*kernel);

  auto lowered = [&](const std::string& format, const std::string& binary) {
    Host h = makeHost(InstructionType::NKIKLIRKernel);
    auto* n = cast<InstNKIKLIRKernel>(h.node);
    n->kernel_format = format;
    n->klir_binary = binary;
    n->nki_binary_version_identifier = "0.0.12";
    EXPECT_EQ(resolve(*h.m), 1u);
    return moduleToJson(*h.m);
  };
  const std::string formA = lowered("klir", klrPath);
  EXPECT_EQ(lowered("bir", moduleToJson(*kernel, -1)), formA);
  EXPECT_EQ(lowered("bir", jsonPath), formA);
  // A relative path resolves against base_dir.
  Host h = makeHost(InstructionType::NKIKLIRKernel);
  cast<InstNKIKLIRKernel>(h.node)->klir_binary = "add.klr";
  walrus::ResolveOptions o;
  o.base_dir = std::filesystem::path(klrPath).parent_path().string();
  resolve(*h.m, o);
  EXPECT_EQ(moduleToJson(*h.m), formA);
}

TEST(WalrusSplicer, BadCarriersNameTheNode) {
  Host h = makeHost(InstructionType::NKIKLIRKernel);
  auto* n = cast<InstNKIKLIRKernel>(h.node);
  EXPECT_NE(errorOf<KernelError>([&] { resolve(*h.m); }).find("(NKIKLIRKernel 'k0'): klir_binary is empty"),
            std::string::npos);
  n->klir_binary = "missing.klr";
  EXPECT_EQ(errorOf<klr::KLRError>([&] { resolve(*h.m); }),
            "functions[0].blocks[0].instructions[1] (NKIKLIRKernel 'k0'): Form A (kernel_format \"\"): " +
                tempPath("missing.klr") + ": cannot open the file (No such file or directory)");
  n->klir_binary = "add_kernel.nki.klr";
  walrus::ResolveOptions corpus;
  corpus.base_dir = klr_test::klrCorpusDir();
  EXPECT_NE(errorOf<klr::KLRError>([&] { resolve(*h.m, corpus); }).find("byte 15: the file contains an NKI-source kernel"),
            std::string::npos);
  n->kernel_format = "bir";
  n->klir_binary = "{\"functions\": [{\"blocks\": [{\"instructions\": [{\"opcode\": 7}]}]}]}";
  EXPECT_NE(errorOf<BIRError>([&] { resolve(*h.m); })
                .find("Form B (kernel_format \"bir\") klir_binary: functions[0].blocks[0].instructions[0].opcode"),
            std::string::npos);
  n->klir_binary = "k.json";
  EXPECT_NE(errorOf<KernelError>([&] { resolve(*h.m); }).find("/k.json: cannot open the file"), std::string::npos);
}

// A module's file references stay in its files folder: "..", an absolute path elsewhere and a
// symbolic link out of the folder are refused, naming the node; inside, absolute paths are fine.
TEST(WalrusSplicer, FileReferencesStayInTheFilesFolder) {
  auto kernel = klr_test::addKernel();
  const std::filesystem::path folder = std::filesystem::path(tempDir()) / "confined";
  std::filesystem::create_directories(folder / "klr");
  klr::writeKernelFile(*kernel, (folder / "klr" / "add.klr").string(), kAsTheNode);
  klr::writeKernelFile(*kernel, tempPath("outside.klr"), kAsTheNode);
  std::filesystem::remove(folder / "klr" / "escape.klr");
  std::filesystem::create_symlink(tempPath("outside.klr"), folder / "klr" / "escape.klr");
  walrus::ResolveOptions o;
  o.base_dir = folder.string();
  auto run = [&](const std::string& format, const std::string& reference) {
    Host h = makeHost(InstructionType::NKIKLIRKernel);
    auto* n = cast<InstNKIKLIRKernel>(h.node);
    n->kernel_format = format;
    n->klir_binary = reference;
    return errorOf<KernelError>([&] { resolve(*h.m, o); });
  };
  EXPECT_EQ(run("klir", "klr/add.klr"), "(no error)");
  EXPECT_EQ(run("klir", (folder / "klr" / "add.klr").string()), "(no error)");
  EXPECT_EQ(run("klir", "klr/../klr/add.klr"), "(no error)");
  for (const std::string& ref : {std::string("../outside.klr"), tempPath("outside.klr"), std::string("klr/escape.klr"),
                                std::string("/etc/passwd")}) {
    for (const char* format : {"klir", "bir"}) {
      const std::string msg = run(format, ref);
      EXPECT_EQ(msg.rfind("functions[0].blocks[0].instructions[1] (NKIKLIRKernel 'k0'): ", 0), 0u) << msg;
      EXPECT_NE(msg.find("klir_binary '" + ref + "' is outside the files folder '" +
                         std::filesystem::canonical(folder).string() + "'"),
                std::string::npos)
          << msg;
    }
  }
  // IT55's compiled kernel file, looked up in the folder when this process did not compile it.
  std::filesystem::create_directories(folder / "nki");
  std::ofstream(folder / "nki" / "add_kernel.from_file.json") << moduleToJson(*kernel);
  Host h = makeHost(InstructionType::NKIKernel);
  cast<InstNKIKernel>(h.node)->func = "nki/add_kernel.from_file.json";
  EXPECT_EQ(resolve(*h.m, o), 1u);
  Host escaped = makeHost(InstructionType::NKIKernel);
  cast<InstNKIKernel>(escaped.node)->func = "../outside.json";
  EXPECT_NE(errorOf<KernelError>([&] { resolve(*escaped.m, o); }).find("func '../outside.json' is outside the files folder"),
            std::string::npos);
}

// A node's file reference resolves only inside the module's folder or a folder allowed
// explicitly (FileReference): "../", absolute paths and links that lead out are refused; pipes
// and directories are refused without blocking; no error quotes a file's contents.
TEST(WalrusSplicer, FileReferencesStayInsideTheirFolders) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(testing::TempDir()) / "walrus_confined";
  fs::remove_all(root);
  fs::create_directories(root / "module" / "klr");
  fs::create_directories(root / "elsewhere");
  klr::writeKernelFile(*klr_test::addKernel(), (root / "module" / "klr" / "add.klr").string(), kAsTheNode);
  klr::writeKernelFile(*klr_test::addKernel(), (root / "elsewhere" / "add.klr").string(), kAsTheNode);
  std::ofstream(root / "elsewhere" / "secret.json") << "SECRET-FIRST-LINE: do not echo\n";
  std::ofstream(root / "module" / "notes.json") << "{\"functions\": [{\"name\": \"SECRET-VALUE\", \"blocks\": 7}]}";
  fs::create_symlink(root / "elsewhere" / "add.klr", root / "module" / "klr" / "link.klr");
  ASSERT_EQ(::mkfifo((root / "module" / "pipe.klr").c_str(), 0600), 0);
  fs::create_directories(root / "module" / "dir.klr");

  walrus::ResolveOptions inModule;
  inModule.base_dir = (root / "module").string();
  auto attempt = [&](const std::string& format, const std::string& ref, walrus::ResolveOptions o) {
    Host h = makeHost(InstructionType::NKIKLIRKernel);
    auto* n = cast<InstNKIKLIRKernel>(h.node);
    n->kernel_format = format;
    n->klir_binary = ref;
    try {
      resolve(*h.m, o);
    } catch (const nxs::Error& e) {
      return std::string(e.what());
    }
    return std::string("(resolved)");
  };
  EXPECT_EQ(attempt("klir", "klr/add.klr", inModule), "(resolved)");
  EXPECT_EQ(attempt("klir", (root / "module" / "klr" / "add.klr").string(), inModule), "(resolved)");
  EXPECT_EQ(attempt("klir", "klr/../klr/./add.klr", inModule), "(resolved)");
  for (const std::string& escape : {std::string("../elsewhere/add.klr"), (root / "elsewhere" / "add.klr").string(),
                                    std::string("klr/link.klr"), std::string("/etc/passwd"), std::string("..")}) {
    const std::string error = attempt("klir", escape, inModule);
    EXPECT_NE(error.find("klir_binary '" + escape + "' is outside the files folder"), std::string::npos)
        << error;
  }
  const std::string formB = attempt("bir", "../elsewhere/secret.json", inModule);
  EXPECT_NE(formB.find("is outside the files folder"), std::string::npos) << formB;
  EXPECT_EQ(formB.find("SECRET"), std::string::npos) << formB;
  // Allowed explicitly, the other folder's files resolve, and their contents stay unquoted.
  walrus::ResolveOptions both = inModule;
  both.allowed_dirs = {(root / "elsewhere").string()};
  EXPECT_EQ(attempt("klir", "../elsewhere/add.klr", both), "(resolved)");
  EXPECT_EQ(attempt("klir", "klr/link.klr", both), "(resolved)");
  for (const std::string& ref : {std::string("../elsewhere/secret.json"), std::string("notes.json")}) {
    const std::string error = attempt("bir", ref, both);
    EXPECT_NE(error.find("not a BIR JSON module"), std::string::npos) << error;
    EXPECT_EQ(error.find("SECRET"), std::string::npos) << error;
  }
  EXPECT_NE(attempt("klir", "pipe.klr", inModule).find("is a named pipe (FIFO), not a regular file"), std::string::npos);
  EXPECT_NE(attempt("klir", "dir.klr", inModule).find("is a directory, not a file"), std::string::npos);
  EXPECT_NE(attempt("bir", "pipe.klr", inModule).find("is a named pipe (FIFO)"), std::string::npos);
}

// A grid-2 kernel in a one-function host: core 0's code replaces the node, core 1's lands in a new
// function 1 that declares the node's DRAM tensors by name.
TEST(WalrusSplicer, MultiCoreKernelGetsOneFunctionPerCore) {
  auto kernel = klr_test::addKernel(128, 512, 2);
  const std::string path = tempPath("add2.klr");
  klr::writeKernelFile(*kernel, path, kAsTheNode);
  Host h = makeHost(InstructionType::NKIKLIRKernel);
  auto* n = cast<InstNKIKLIRKernel>(h.node);
  n->klir_binary = path;
  n->grid = 2;
  EXPECT_EQ(resolve(*h.m), 1u);
  ASSERT_EQ(h.m->functions().size(), 2u);
  const Function& core1 = *h.m->function(1);
  ASSERT_EQ(core1.blocks().size(), 1u);
  const BasicBlock& bb1 = *core1.blocks()[0];
  ASSERT_EQ(bb1.size(), 4u);
  EXPECT_EQ(bb1.at(0)->ins[0].loc, core1.findLocation("x"));
  EXPECT_EQ(bb1.at(0)->ins[0].offset, 64 * 512);  // core 1 reads rows 64..127
  EXPECT_EQ(core1.findLocation("z")->type, MemoryType::Output);
  EXPECT_EQ(h.bb->at(1)->ins[0].offset, 0);       // core 0 in place
  EXPECT_EQ(h.bb->at(1)->kernel, "k0");
  EXPECT_NO_THROW(verifyModule(*h.m));

  // grid and kernel disagree: more cores than functions, or grid 1 (which spliced function 0
  // alone, leaving core 1's half of the output unwritten)
  for (int64_t grid : {3, 1}) {
    Host bad = makeHost(InstructionType::NKIKLIRKernel);
    cast<InstNKIKLIRKernel>(bad.node)->klir_binary = path;
    cast<InstNKIKLIRKernel>(bad.node)->grid = grid;
    EXPECT_NE(errorOf<KernelError>([&] { resolve(*bad.m); })
                  .find("grid " + std::to_string(grid) + " but the kernel has 2 function(s), one per logical core"),
              std::string::npos);
    EXPECT_EQ(bad.m->functions().size(), 1u);
  }
}

// An error names a node at its index in the module as given: before the fix, k1 (index 3) was
// named at index 6, after k0's expansion into four instructions had shifted it.
TEST(WalrusSplicer, ErrorsNameTheNodesIndexInTheModuleAsGiven) {
  auto kernel = klr_test::addKernel();
  Host h = makeHost(InstructionType::NKIKLIRKernel);
  auto* k0 = cast<InstNKIKLIRKernel>(h.node);
  k0->kernel_format = "bir";
  k0->klir_binary = moduleToJson(*kernel, -1);
  auto* k1 = cast<InstNKIKLIRKernel>(h.bb->addInstruction(InstructionType::NKIKLIRKernel, "k1"));
  k1->ins = k0->ins;
  k1->outs = k0->outs;
  k1->func_args = k0->func_args;
  k1->func_outs = k0->func_outs;
  k1->kernel_format = "bir";
  k1->klir_binary = k0->klir_binary;
  k1->grid = 0;
  EXPECT_NE(errorOf<KernelError>([&] { resolve(*h.m); })
                .find("functions[0].blocks[0].instructions[3] (NKIKLIRKernel 'k1'): grid 0 is not positive"),
            std::string::npos);
  EXPECT_EQ(h.bb->indexOf(k1), 6);  // (where it is now)
  EXPECT_EQ(h.bb->inputIndexOf(k1), 3);
  EXPECT_EQ(h.bb->inputIndexOf(h.bb->at(1)), -1);  // made by k0's expansion
  EXPECT_EQ(h.bb->inputIndexOf(h.bb->at(5)), 2);   // "after"
}

// When every core's function holds the node, each picks kernel.functions[its NeuronCoreId].
TEST(WalrusSplicer, EachCoresNodePicksItsOwnKernelFunction) {
  auto kernel = klr_test::addKernel(128, 512, 2);
  const std::string json = moduleToJson(*kernel, -1);
  auto m = std::make_unique<Module>();
  for (int c = 0; c < 2; ++c) {
    Function* f = m->addFunction();
    auto* x = f->createDramTensor("x", MemoryType::Input, DType::float32, {128, 512});
    auto* y = f->createDramTensor("y", MemoryType::Input, DType::float32, {128, 512});
    auto* z = f->createDramTensor("z", MemoryType::Output, DType::float32, {128, 512});
    auto* n = cast<InstNKIKLIRKernel>(f->addBlock()->addInstruction(InstructionType::NKIKLIRKernel, "k0"));
    n->addSeqAccess(x, false);
    n->addSeqAccess(y, false);
    n->addOpaqueAP(z, true);
    n->func_args = {"a", "b"};
    n->func_outs = {"out"};
    n->kernel_format = "bir";
    n->klir_binary = json;
    n->grid = 2;
  }
  EXPECT_EQ(resolve(*m), 2u);
  EXPECT_EQ(m->function(0)->blocks()[0]->at(0)->ins[0].offset, 0);
  EXPECT_EQ(m->function(1)->blocks()[0]->at(0)->ins[0].offset, 64 * 512);
  EXPECT_EQ(m->function(1)->blocks()[0]->size(), 4u);
}

TEST(WalrusSplicer, ResolverKindsAreSelectable) {
  auto kernel = klr_test::addKernel();
  auto build = [&] {
    Host h = makeHost(InstructionType::NKIKernel);
    it55(h, *kernel);
    Instruction* n = h.bb->addInstruction(InstructionType::NKIKLIRKernel, "k1");
    n->ins = h.node->ins;
    n->outs = h.node->outs;
    auto* k = cast<InstNKIKLIRKernel>(n);
    k->func_args = {"a", "b"};
    k->func_outs = {"out"};
    k->kernel_format = "bir";
    k->klir_binary = moduleToJson(*kernel, -1);
    return h;
  };
  walrus::ResolveOptions only55, only56;
  only55.klir_kernels = false;
  only56.nki_kernels = false;
  Host a = build(), b = build(), c = build();
  EXPECT_EQ(resolve(*a.m, only55), 1u);
  EXPECT_EQ(a.bb->size(), 7u);  // before, 4 kernel instructions, after, k1
  EXPECT_EQ(resolve(*b.m, only56), 1u);
  EXPECT_EQ(b.bb->size(), 7u);
  EXPECT_EQ(resolve(*c.m), 2u);
  EXPECT_EQ(c.bb->size(), 10u);
  EXPECT_NO_THROW(verifyModule(*c.m));
}

// Another kernel's KLR file whose tensors bind all the same would run its code in the node's place.
TEST(WalrusSplicer, AFormAFileOfAnotherKernelIsRefused) {
  const std::string path = tempPath("sub.klr");
  klr::writeKernelFile(*klr_test::addKernel(), path, klr::KernelFileOptions{"sub_kernel"});
  Host h = makeHost(InstructionType::NKIKLIRKernel);
  cast<InstNKIKLIRKernel>(h.node)->klir_binary = path;
  EXPECT_NE(errorOf<KernelError>([&] { resolve(*h.m); })
                .find("holds kernel 'sub_kernel', not the node's func_name 'add_kernel'"),
            std::string::npos);
}
