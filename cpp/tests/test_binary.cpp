// BIR binary: it holds what BIR JSON holds (a module read back from it writes the same JSON, byte
// for byte, unknown fields included), and truncated or corrupt bytes are an error naming the byte,
// never a crash or a half-built module.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "TestModules.h"
#include "bir/Binary.h"
#include "bir/Error.h"
#include "bir/Json.h"

using namespace bir;

namespace {

// The every-node module with unknown fields at each level that keeps them (as a compiler's JSON
// has), read back from JSON so that they are in place.
std::unique_ptr<Module> everyNodeWithUnknownFields() {
  auto j = nlohmann::ordered_json::parse(moduleToJson(*nxs_test::buildEveryNodeModule()));
  j["functions"][0]["blocks"][0]["instructions"][3]["can_read_uninit"] = true;
  j["functions"][0]["allocations"][0]["tensorId2MemLocSize"] = {{"7", 256}};
  j["functions"][0]["allocations"][0]["memorylocations"][0]["color"] = "blue";
  j["functions"][0]["loop_info"] = nlohmann::ordered_json::array({1, 2});
  j["attributes"]["target"] = "trn2";
  j["compiler_version"] = "2.24";
  return moduleFromJson(j.dump(1));
}

void expectRejected(std::string_view bytes, const std::string& needle) {
  try {
    moduleFromBinary(bytes);
    ADD_FAILURE() << "accepted";
  } catch (const BIRError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what();
  }
}

}  // namespace

TEST(Binary, HoldsWhatJsonHolds) {
  for (auto* build : {+[] { return nxs_test::buildEveryNodeModule(); }, +[] { return everyNodeWithUnknownFields(); }}) {
    auto m = build();
    m->neuron_core_id = 3;
    m->arch = "gen3";
    const std::string json = moduleToJson(*m, 1);
    const std::string bytes = moduleToBinary(*m);
    auto back = moduleFromBinary(bytes, /*verify=*/false);
    EXPECT_EQ(moduleToJson(*back, 1), json);
    EXPECT_EQ(moduleToBinary(*back), bytes);
    EXPECT_LT(bytes.size() * 2, json.size());  // (compact: no keys, varints)
  }
}

// Every module of the BIR JSON fuzz corpus (odd names, unicode, extreme numbers, non-finite
// doubles, unknown fields) that reads, reads back from its binary as the same JSON.
TEST(Binary, HoldsWhatJsonHoldsOnTheJsonCorpus) {
  size_t modules = 0;
  for (const auto& entry : std::filesystem::directory_iterator(NXS_FUZZ_CORPUS_DIR "/bir_json")) {
    std::ifstream f(entry.path(), std::ios::binary);
    std::unique_ptr<Module> m;
    try {
      m = moduleFromJson(std::string(std::istreambuf_iterator<char>(f), {}), {.verify = false});
    } catch (const BIRError&) {
      continue;
    }
    ++modules;
    EXPECT_EQ(moduleToJson(*moduleFromBinary(moduleToBinary(*m), false), -1), moduleToJson(*m, -1))
        << entry.path();
  }
  EXPECT_GT(modules, 3u);
}

TEST(Binary, EveryTruncationIsAnErrorNotACrash) {
  const std::string bytes = moduleToBinary(*everyNodeWithUnknownFields());
  for (size_t cut = 0; cut < bytes.size(); ++cut)
    EXPECT_THROW(moduleFromBinary(std::string_view(bytes).substr(0, cut), false), BIRError) << "cut " << cut;
  expectRejected(bytes + "x", "unexpected bytes after the module");
}

TEST(Binary, CorruptBytesAreAnErrorOrAModuleNeverACrash) {
  const std::string bytes = moduleToBinary(*nxs_test::buildEveryNodeModule());
  size_t refused = 0;
  for (size_t at = 0; at < bytes.size(); ++at)
    for (unsigned char flip : {0x01, 0x80, 0xff}) {
      std::string bad = bytes;
      bad[at] = static_cast<char>(static_cast<unsigned char>(bad[at]) ^ flip);
      try {
        auto m = moduleFromBinary(bad, false);
        moduleToJson(*m);  // (a module read is whole: it writes)
      } catch (const BIRError&) {
        ++refused;
      }
    }
  EXPECT_GT(refused, bytes.size());  // most flips break a count, an ordinal or a reference
}

TEST(Binary, HeaderProblemsSayWhat) {
  const std::string bytes = moduleToBinary(*nxs_test::buildEveryNodeModule());
  expectRejected("{\"functions\": []}", "does not start with its magic bytes");
  std::string other = bytes;
  other[8] = 4;  // binary format 2 (zigzag)
  expectRejected(other, "binary format 2 is not supported (this build reads 1)");
}

TEST(Binary, ReferencesAndNamesAreChecked) {
  auto m = std::make_unique<Module>();
  Function* f = m->addFunction("f");
  MemoryLocation* t = f->createOnChipTensor("t", MemoryType::SB, DType::float32, 128, 256, 0, 0);
  BasicBlock* bb = f->addBlock("b");
  for (const char* name : {"first_copy", "other_copy"}) {
    Instruction* I = bb->addInstruction(InstructionType::TensorCopy, name);
    I->addSeqAccess(t, false);
    I->addSeqAccess(t, true);
  }
  std::string bytes = moduleToBinary(*m);
  ASSERT_NO_THROW(moduleFromBinary(bytes));
  std::string twice = bytes;
  twice.replace(twice.find("other_copy"), 10, "first_copy");
  expectRejected(twice, "instruction name 'first_copy' is used twice in function 'f'");
  // The operand's memory location is the varint after its offset (made distinctive here).
  bb->at(0)->ins[0].offset = 0x123456;
  bytes = moduleToBinary(*m);
  std::string offset;
  for (uint64_t v = 0x123456u << 1; ; v >>= 7) {  // (zigzag, then LEB128)
    offset += static_cast<char>(v >= 0x80 ? (v & 0x7f) | 0x80 : v);
    if (v < 0x80) break;
  }
  const size_t at = bytes.find(offset);
  ASSERT_NE(at, std::string::npos);
  std::string far = bytes;
  far[at + offset.size()] = 5;
  expectRejected(far, "memory location 5 of a function with 1");
  // Writing refuses an operand whose location the function does not allocate.
  Function* g = m->addFunction("g");
  MemoryLocation* u = g->createOnChipTensor("u", MemoryType::SB, DType::float32, 128, 256, 0, 0);
  bb->at(1)->outs[0].loc = u;
  try {
    moduleToBinary(*m);
    ADD_FAILURE() << "written";
  } catch (const BIRError& e) {
    EXPECT_NE(std::string(e.what()).find("memory location 'u', which the function does not allocate"), std::string::npos)
        << e.what();
  }
}
