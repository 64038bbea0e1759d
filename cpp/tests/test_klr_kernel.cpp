// Traced kernels as KLR files: bir::Module -> KLR -> bir::Module keeps every field (the BIR JSON of
// both sides is identical), KLR operators are used where KLR has them, and truncated, corrupted or
// hostile files are refused with KLRError naming the byte offset.
#include <gtest/gtest.h>

#include <filesystem>

#include "TestModules.h"
#include "bir/Error.h"
#include "bir/Json.h"
#include "test_klr_modules.h"
#include "walrus/klr/KernelFile.h"
#include "walrus/klr/OperatorCodec.h"

using namespace klr;
using namespace bir;
using namespace std::string_literals;

namespace {

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const KLRError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string replaced(std::string bytes, const std::string& from, const std::string& to) {
  const size_t at = bytes.find(from);
  EXPECT_NE(at, std::string::npos) << "pattern not found";
  if (at != std::string::npos) bytes.replace(at, from.size(), to);
  return bytes;
}

void expectRoundTrip(const Module& m, EncodingStats* stats = nullptr) {
  const std::string bytes = encodeKernel(m, {}, stats);
  std::unique_ptr<Module> back = decodeKernel(bytes);
  EXPECT_EQ(moduleToJson(*back), moduleToJson(m));
  EXPECT_EQ(encodeKernel(*back), bytes) << "encoding is not deterministic";
}

}  // namespace

TEST(KlrKernel, EveryExecutableNodeClassRoundTripsExactly) {
  auto m = klr_test::everyExecutableNodeModule();
  EncodingStats stats;
  expectRoundTrip(*m, &stats);
  // No KLR operator: ReadActivationAccumulator, three NoOps, TensorCopyDynamicSrc, Select, Drain.
  EXPECT_EQ(stats.generic_instructions, 7u);
  // A KLR operator plus what it lacks: DMA opcodes other than DMACopy and queues, activation
  // alpha / Identity / a non-float32 scale, Random memset, engines KLR implies otherwise, reduce
  // axis C, non-float32 immediates, an instruction's kernel and extra fields, matmul accumulation
  // flags and DoubleColumn, DMA transpose mode and max read-modify-write.
  EXPECT_EQ(stats.extended_operators, 16u);
  EXPECT_EQ(stats.klr_operators, 22u);  // everything else is a plain Core.Operator
  EXPECT_EQ(stats.klr_operators + stats.extended_operators + stats.generic_instructions,
            m->function(0)->instructionCount());
}

TEST(KlrKernel, EveryOpcodeOfTheBirTestModuleRoundTrips) {
  auto m = nxs_test::buildEveryNodeModule();
  BasicBlock& bb = *m->function(0)->blocks()[0];
  for (Opcode k : {InstructionType::NKIKLIRKernel, InstructionType::NKIKernel, InstructionType::BIRKernel})
    bb.replace(static_cast<size_t>(k), {});  // kernel nodes are not ISA code
  expectRoundTrip(*m);
}

TEST(KlrKernel, SeveralCoresAreAnLncKernel) {
  auto m = klr_test::everyExecutableNodeModule(3);
  const std::string bytes = encodeKernel(*m, {"three_cores"});
  const KlrInfo info = inspectKlr(bytes);
  EXPECT_EQ(info.kind, ContentsKind::Lnc);
  EXPECT_EQ(info.contents_ctor, 3);
  EXPECT_EQ(info.bodies, 3u);
  EXPECT_EQ(info.kernel_name, "three_cores");
  EXPECT_EQ(info.format, "neuronxsim-klr/1");
  ASSERT_EQ(info.inputs.size(), 2u);  // by name across the cores
  EXPECT_EQ(info.inputs[1].name, "idx");
  EXPECT_EQ(info.inputs[1].dtype, "int32");
  EXPECT_EQ(info.inputs[1].memory, "hbm");
  expectRoundTrip(*m);

  const KlrInfo one = inspectKlr(encodeKernel(*klr_test::addKernel()));
  EXPECT_EQ(one.kind, ContentsKind::Kernel);
  EXPECT_EQ(one.contents_ctor, 2);
  EXPECT_EQ(one.numbering, "HEAD");
  EXPECT_EQ(one.statements, 4u);
  ASSERT_EQ(one.outputs.size(), 1u);
  EXPECT_EQ(one.outputs[0].shape, (std::vector<int64_t>{128, 512}));
}

TEST(KlrKernel, WritesAtomicallyAndReadsBack) {
  const auto dir = std::filesystem::path(testing::TempDir()) / "klr_write";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "k.klr").string();
  auto m = klr_test::addKernel(64, 32, 2);
  writeKernelFile(*m, path);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
  EXPECT_EQ(moduleToJson(*readKernelFile(path)), moduleToJson(*m));
  EXPECT_EQ(errorOf([&] { readKernelFile((dir / "missing.klr").string()); }),
            (dir / "missing.klr").string() + ": cannot open the file (No such file or directory)");
}

TEST(KlrKernel, RefusesWhatIsNotIsaCode) {
  auto m = klr_test::addKernel();
  Function& f = *m->function(0);
  Instruction* node = f.blocks()[0]->addInstruction(InstructionType::NKIKernel, "user_kernel");
  node->addSeqAccess(f.findLocation("a"), false);
  EXPECT_NE(errorOf([&] { encodeKernel(*m); }).find("kernel node NKIKernel cannot be written"),
            std::string::npos);
  f.blocks()[0]->replace(4, {});
  Module other;
  auto* foreign = other.addFunction()->createDramTensor("a", MemoryType::Input, DType::float32, {128, 512});
  AccessPattern& operand = f.blocks()[0]->at(0)->ins[0];
  operand.loc = foreign;
  EXPECT_NE(errorOf([&] { encodeKernel(*m); })
                .find("functions[0].blocks[0].instructions[0].ins[0]: tensor 'a' does not belong to function 'sg0000'"),
            std::string::npos);
  EXPECT_THROW(encodeKernel(Module()), KLRError);
}

TEST(KlrKernel, OperandMarshallingTravelsAsAnAttribute) {
  auto m = klr_test::addKernel();
  AccessPattern& operand = m->function(0)->blocks()[0]->at(0)->ins[0];
  operand.flavour = AccessFlavour::Opaque;
  operand.setAccessShape({128, 512});
  operand.setPartitionDim(0);
  EncodingStats stats;
  expectRoundTrip(*m, &stats);
  EXPECT_EQ(stats.generic_instructions, 0u);
}

TEST(KlrKernel, EveryTruncationOfAKernelFileIsRefused) {
  const std::string bytes = encodeKernel(*klr_test::addKernel(4, 8));
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::string msg = errorOf([&] { decodeKernel(bytes.substr(0, n)); });
    ASSERT_EQ(msg.rfind("byte ", 0), 0u) << "cut at " << n << ": " << msg;
  }
  // Cut right after Contents: the module record neuronxsim's format requires is missing.
  cbor::Decoder d(bytes, klrDecodeOptions());
  for (int i = 0; i < 3; ++i) d.next();
  EXPECT_NE(errorOf([&] { decodeKernel(bytes.substr(0, d.position())); }).find("requires neuronxsim's module record"),
            std::string::npos);
}

TEST(KlrKernel, CorruptBytesAreRefusedOrReadSafely) {
  const std::string bytes = encodeKernel(*klr_test::addKernel(4, 8));
  size_t refused = 0;
  for (size_t i = 0; i < bytes.size(); ++i)
    for (uint8_t flip : {0x01, 0xff}) {
      std::string b = bytes;
      b[i] = static_cast<char>(b[i] ^ flip);
      try {
        decodeKernel(b);  // anything read must be a module that verifies (decodeKernel checks)
      } catch (const KLRError& e) {
        ++refused;
        ASSERT_EQ(std::string(e.what()).rfind("byte ", 0), 0u) << e.what();
      }
    }
  EXPECT_GT(refused, bytes.size());
}

TEST(KlrKernel, RefusesUnknownTagsAndFields) {
  const std::string bytes = encodeKernel(*klr_test::addKernel(4, 8));
  // The TensorTensor statement holds Core.Operator constructor 34 (tensorTensor).
  EXPECT_NE(errorOf([&] { decodeKernel(replaced(bytes, "\xd9\xda\x22"s, "\xd9\xda\x4c"s)); })
                .find("Operator has no constructor 76"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { decodeKernel(replaced(bytes, "\xd9\xda\x22"s, "\xd9\xda\x33"s)); })
                .find("KLR operator 'allReduce' has no BIR equivalent"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { decodeKernel(replaced(bytes, "\xd9\xda\x22"s, "\xd9\xdb\x22"s)); })
                .find("expected a Core.Operator (tag 218) or a neuronxsim operator (tag 0xf0)"),
            std::string::npos);
  // The DMAs are extended operators: ncDmaCopy plus {opcode: "DMA"}.
  EXPECT_NE(errorOf([&] { decodeKernel(replaced(bytes, "\xd9\xf0\x00"s, "\xd9\xf0\x07"s)); })
                .find("the neuronxsim operator has no constructor 7"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { decodeKernel(replaced(bytes, "fopcode", "fopcodf")); })
                .find("DMACopy (InstDMA) has no field 'opcodf'"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { decodeKernel(replaced(bytes, "neuronxsim-klr/1", "neuronxsim-klr/2")); })
                .find("byte 7: the file uses neuronxsim KLR extensions revision 2"),
            std::string::npos);
}

TEST(KlrKernel, TensorNamesMustAgreeWithTheDeclaredTensors) {
  auto m = klr_test::addKernel(4, 8);
  Module other;
  Function& g = *other.addFunction();
  g.createDramTensor("a", MemoryType::Input, DType::bfloat16, {4, 8});
  g.createOnChipTensor("ta", MemoryType::PSUM, DType::float32, 4, 32, 0, 0);
  TensorTable table = TensorTable::declared(*m->function(0));
  EXPECT_NE(errorOf([&] { table.resolve(tensorNameItem(*g.findLocation("a")), "x"); })
                .find("tensor 'a' is float32 but its TensorName says bfloat16"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { table.resolve(tensorNameItem(*g.findLocation("ta")), "x"); })
                .find("tensor 'ta' is in SB but its TensorName says psum"),
            std::string::npos);
  g.createDramTensor("zz", MemoryType::DRAM, DType::float32, {1});
  EXPECT_NE(errorOf([&] { table.resolve(tensorNameItem(*g.findLocation("zz")), "x"); })
                .find("tensor 'zz' is not declared in function 'sg0000'"),
            std::string::npos);
}

// A Core kernel as KLR itself writes one: metadata "KLR", no module record, TensorName headers
// that count their two proofs (8 for 6 items), whole-tensor accesses (Access.simple).
TEST(KlrKernel, ReadsAKernelWrittenByKlr) {
  auto m = klr_test::addKernel(4, 8);
  const Function& f = *m->function(0);
  std::vector<Item> stmts;
  for (const auto& I : f.blocks()[0]->instructions()) {
    Item op = *encodeOperator(*I);
    if (I->opcode() == InstructionType::TensorTensor) {
      auto simple = [&](const char* t) {
        return record(tags::TensorRef, 0, {record(tags::Access, 0, {tensorNameItem(*f.findLocation(t))})});
      };
      op = record(tags::Operator, 34, {record(tags::TensorTensor, 0,
                                              {simple("tc"), simple("ta"), simple("tb"),
                                               enumItem(kAluOp, kAluOp.find("add")), none(),
                                               enumItem(kEngine, kEngine.find("DVE"))})});
    }
    stmts.push_back(record(tags::Stmt, 0,
                           {std::move(op), none(), record(tags::Pos, 0, {nat(7), nat(2), none(), none()})}));
  }
  Item kernel = record(tags::Kernel, 0,
                       {cbor::text("add"),
                        list({tensorNameItem(*f.findLocation("a")), tensorNameItem(*f.findLocation("b"))}),
                        list({tensorNameItem(*f.findLocation("out"))}),
                        list({record(tags::Block, 0, {cbor::text("entry"), cbor::boolean(false), list(std::move(stmts))})})});
  std::string bytes = cbor::encode(KLRFile_ser()) + cbor::encode(KLRMetaData_ser("KLR")) +
                      cbor::encode(Contents_ser(ContentsKind::Kernel, std::move(kernel)));
  for (size_t at = bytes.find("\xd9\x72\x00\x86"s); at != std::string::npos; at = bytes.find("\xd9\x72\x00\x86"s, at))
    bytes[at + 3] = static_cast<char>(0x88);

  std::unique_ptr<Module> k = decodeKernel(bytes);
  const Function& g = *k->function(0);
  EXPECT_EQ(g.findLocation("a")->type, MemoryType::Input);
  EXPECT_EQ(g.findLocation("a")->set->kind, TensorKind::ExternalInput);
  EXPECT_EQ(g.findLocation("out")->type, MemoryType::Output);
  EXPECT_EQ(g.findLocation("out")->set->tensor_shape, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(g.findLocation("tb")->addr, 32);
  const BasicBlock& bb = *g.blocks()[0];
  ASSERT_EQ(bb.size(), 4u);
  EXPECT_EQ(bb.name, "entry");
  EXPECT_EQ(bb.at(0)->opcode(), InstructionType::DMACopy);
  EXPECT_EQ(bb.at(0)->engine, Engine::SP);
  EXPECT_EQ(bb.at(0)->source, "line 7");
  EXPECT_EQ(bb.at(2)->ins[1].pattern, (std::vector<APPair>{{8, 4}, {1, 8}}));  // Access.simple
  EXPECT_EQ(bb.at(3)->outs[0].pattern, f.blocks()[0]->at(3)->outs[0].pattern);
  EXPECT_EQ(inspectKlr(bytes).inputs.size(), 2u);
}

// The kernel files in the fuzz corpus are what this build writes for the test modules, so they
// also pin the format: a change that alters the bytes shows up here. To refresh them after a
// deliberate format change, run this test with NXS_REGENERATE_KLR_CORPUS=1.
TEST(KlrCorpus, WrittenKernelFilesMatchThisBuild) {
  const std::pair<const char*, std::unique_ptr<Module>> files[] = {
      {"add_kernel.traced.klr", klr_test::addKernel(8, 16)},
      {"add_kernel.lnc2.klr", klr_test::addKernel(16, 16, 2)},
      {"every_executable_node.klr", klr_test::everyExecutableNodeModule()}};
  for (const auto& [name, m] : files) {
    const std::string path = klr_test::klrCorpusDir() + "/" + name;
    KernelFileOptions o;
    o.kernel_name = std::string(name).substr(0, std::string(name).find('.'));
    if (std::getenv("NXS_REGENERATE_KLR_CORPUS")) writeKernelFile(*m, path, o);
    EXPECT_EQ(klr_test::readBytes(path), encodeKernel(*m, o)) << name;
    EXPECT_EQ(moduleToJson(*readKernelFile(path)), moduleToJson(*m)) << name;
  }
}

// The module record (BIR JSON without instructions) must describe the bodies Contents holds.
TEST(KlrKernel, ModuleRecordMustMatchContents) {
  const std::string bytes = encodeKernel(*klr_test::addKernel(4, 8));
  cbor::Decoder d(bytes, klrDecodeOptions());
  for (int i = 0; i < 3; ++i) d.next();
  const size_t recordAt = d.position();
  const Item rec = d.next();
  const std::string json = rec.tagged().items[1].bytes;
  auto withRecord = [&](Item revision, std::string bir) {
    return bytes.substr(0, recordAt) +
           cbor::encode(record(tags::NxsModule, 0, {std::move(revision), cbor::text(std::move(bir))}));
  };
  EXPECT_EQ(moduleToJson(*decodeKernel(withRecord(nat(1), json))), moduleToJson(*klr_test::addKernel(4, 8)));
  const std::string at = "byte " + std::to_string(recordAt + 5) + ": module record: ";
  EXPECT_NE(errorOf([&] { decodeKernel(withRecord(nat(2), json)); }).find("its revision differs"), std::string::npos);
  EXPECT_NE(errorOf([&] { decodeKernel(withRecord(nat(1), "{\"functions\": [{}, {}]}")); })
                .find(at + "it declares 2 function(s) for 1 kernel bodies"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { decodeKernel(withRecord(nat(1), "{\"functions\": [{\"blocks\": [{}]}]}")); })
                .find("has blocks; instructions belong in Contents"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { decodeKernel(withRecord(nat(1), "{\"functions\": [")); }).find(at + "invalid JSON"),
            std::string::npos);
  // Tensors the operators use must be declared.
  EXPECT_NE(errorOf([&] { decodeKernel(withRecord(nat(1), "{\"functions\": [{}]}")); })
                .find("tensor 'a' is not declared by the module record"),
            std::string::npos);
}
