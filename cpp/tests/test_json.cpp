// BIR JSON: byte-identical round trips of every node kind and field, unknown fields kept, and
// malformed input rejected with the JSON path of the problem.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "TestModules.h"
#include "bir/Error.h"
#include "bir/Json.h"

using namespace bir;

namespace {

// Expects reading `text` to fail with a BIRError whose message contains `needle`.
void expectRejected(const std::string& text, const std::string& needle) {
  try {
    moduleFromJson(text);
    ADD_FAILURE() << "accepted: " << text.substr(0, 200);
  } catch (const BIRError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << needle;
  }
}

std::string everyNodeJson(int indent = 1) { return moduleToJson(*nxs_test::buildEveryNodeModule(), indent); }

}  // namespace

TEST(Json, EveryNodeKindRoundTripsByteIdentically) {
  for (int indent : {1, -1, 4}) {
    const std::string first = everyNodeJson(indent);
    auto m = moduleFromJson(first);
    const std::string second = moduleToJson(*m, indent);
    ASSERT_EQ(first, second) << "indent " << indent;
    EXPECT_EQ(moduleToJson(*moduleFromJson(second), indent), second);
  }
}

TEST(Json, FieldsSurviveTheRoundTrip) {
  auto m = moduleFromJson(everyNodeJson());
  Function* f = m->function(0);
  ASSERT_EQ(f->blocks().size(), 1u);
  const BasicBlock& bb = *f->blocks()[0];
  ASSERT_EQ(bb.size(), 110u);
  for (size_t i = 0; i < bb.size(); ++i) EXPECT_EQ(bb.at(i)->opcode(), static_cast<Opcode>(i));
  auto* k = cast<InstBIRKernel>(bb.at(InstructionType::BIRKernel));
  EXPECT_EQ(k->kernel_name, "MLP");
  EXPECT_EQ(k->kernel_attrs[1].second, "SiLU");
  EXPECT_EQ(k->norm_type, 1);
  EXPECT_FALSE(k->store_add.has_value());
  EXPECT_EQ(k->lower_bound, 0.5);
  EXPECT_EQ(k->ins[0].flavour, AccessFlavour::Seq);
  EXPECT_EQ(k->outs[0].flavour, AccessFlavour::Opaque);
  auto* c = cast<InstNKIKLIRKernel>(bb.at(InstructionType::NKIKLIRKernel));
  EXPECT_EQ(c->klir_binary, "/tmp/kernel.klr");
  EXPECT_EQ(c->kernel_format, "klir");
  EXPECT_EQ(c->grid, 2);
  auto* u = cast<InstNKIKernel>(bb.at(InstructionType::NKIKernel));
  EXPECT_EQ(u->func, "nki/add_kernel.0123456789abcdef.json");
  auto* s = cast<InstAffineSelect>(bb.at(InstructionType::TensorScalarAffineSelect));
  EXPECT_TRUE(std::isinf(s->fill_value) && s->fill_value < 0);
  auto* mm = cast<InstMatmult>(bb.at(InstructionType::Matmult));
  EXPECT_FALSE(mm->start_tensor_calc);
  EXPECT_EQ(mm->outs[0].loc->type, MemoryType::PSUM);
  auto* noop = bb.at(InstructionType::NoOp);
  ASSERT_EQ(noop->ins.back().kind, ArgKind::ImmValue);
  EXPECT_EQ(noop->ins.back().imm, 0.25);
  EXPECT_EQ(noop->ins.back().dtype, DType::float16);
  EXPECT_EQ(bb.at(7)->source, "kernel.py:17");
}

TEST(Json, UnknownFieldsAreKeptVerbatim) {
  auto j = nlohmann::ordered_json::parse(everyNodeJson());
  j["functions"][0]["blocks"][0]["instructions"][0]["can_read_uninit"] = true;
  j["functions"][0]["allocations"][0]["tensorId2MemLocSize"] = {{"7", 256}};
  j["compiler_version"] = "2.24";
  const std::string text = j.dump(1);
  const std::string again = moduleToJson(*moduleFromJson(text), 1);
  auto k = nlohmann::ordered_json::parse(again);
  EXPECT_EQ(k["functions"][0]["blocks"][0]["instructions"][0]["can_read_uninit"], true);
  EXPECT_EQ(k["functions"][0]["allocations"][0]["tensorId2MemLocSize"]["7"], 256);
  EXPECT_EQ(k["compiler_version"], "2.24");
  EXPECT_EQ(moduleToJson(*moduleFromJson(again), 1), again);
}

TEST(Json, MalformedInputNamesThePath) {
  expectRejected("", "invalid JSON");
  expectRejected("{", "invalid JSON");
  expectRejected(R"({"functions": [], "x": -3.4e5868})", "invalid JSON");  // a number no double holds (fuzzer)
  expectRejected("[]", "expected an object");
  expectRejected(R"({"functions": 3})", "functions: expected an array, got number");
  expectRejected(R"({"version": 3, "functions": []})", "version: BIR JSON version 3 is not supported");
  expectRejected(R"({"neuronxsim_format": 9, "functions": []})", "format revision 9");
  expectRejected(R"({"functions": [{"blocks": [{"instructions": [{"opcode": "Bogus", "name": "i"}]}]}]})",
                 "functions[0].blocks[0].instructions[0].opcode: unknown opcode 'Bogus'");
  expectRejected(R"({"functions": [{"blocks": [{"instructions": [{"opcode": "Activation", "name": "i", "func": "Expp"}]}]}]})",
                 "functions[0].blocks[0].instructions[0].func: unknown ActivationFunc 'Expp'");
  expectRejected(R"({"functions": [{"blocks": [{"instructions": [{"name": "i"}]}]}]})",
                 "instructions[0]: missing required field 'opcode'");
  expectRejected(R"({"functions": [{"blocks": [{"instructions": [{"opcode": "Loop", "name": "l"}]}]}]})",
                 "Loop blocks are not supported");
  expectRejected(R"({"functions": [{"blocks": [{"instructions": [
      {"opcode": "NoOp", "name": "a"}, {"opcode": "NoOp", "name": "a"}]}]}]})",
                 "instructions[1].name: instruction name 'a' is used twice");
  expectRejected(R"({"functions": [{"blocks": [{"instructions": [
      {"opcode": "TensorCopy", "name": "a", "ins": [{"kind": "physical_ap", "ap": [[1, 1]], "memref": "nope"}]}]}]}]})",
                 "instructions[0].ins[0].memref: no memory location named 'nope'");
  expectRejected(R"({"functions": [{"blocks": [{"instructions": [
      {"opcode": "TensorCopy", "name": "a", "ins": [{"kind": "symbolic_ap"}]}]}]}]})",
                 "ins[0].kind: argument kind 'symbolic_ap' is not supported");
  expectRejected(R"({"functions": [{"allocations": [{"name": "t_set", "dtype": "float33", "memorylocations": []}]}]})",
                 "functions[0].allocations[0].dtype: unknown DType 'float33'");
  expectRejected(R"({"functions": [{"allocations": [{"name": "t_set", "dtype": "float32",
      "memorylocations": [{"name": "t", "type": "SB", "dims": [128]}]}]}]})",
                 "allocations[0].memorylocations[0].dims: expected [partitions, bytes_per_partition]");
  expectRejected(R"({"attributes": {"neuron_core_id": 18446744073709551615}, "functions": []})",
                 "attributes.neuron_core_id: integer 18446744073709551615 is out of range");
}

TEST(Json, BadAccessPatternValuesNameTheirElement) {
  auto j = nlohmann::ordered_json::parse(everyNodeJson());
  auto& ap = j["functions"][0]["blocks"][0]["instructions"][14]["ins"][0]["ap"];  // TensorCopy
  ap[1][1] = "16";
  expectRejected(j.dump(), "functions[0].blocks[0].instructions[14].ins[0].ap[1][1]: expected an integer, got string");
  ap[1][1] = 16;
  ap[1][0] = 1.5;
  expectRejected(j.dump(), "ins[0].ap[1][0]: expected an integer, got number");
  ap[1] = nlohmann::ordered_json::array({1});
  expectRejected(j.dump(), "ins[0].ap[1]: expected a [step, num] pair");
}

TEST(Json, HostileNestingIsRefusedBeforeParsing) {
  expectRejected(std::string(100000, '['), "nesting is deeper than");
  std::string deepExtra = R"({"functions": [], "x": )" + std::string(300, '[') + std::string(300, ']') + "}";
  expectRejected(deepExtra, "nesting is deeper than");
}

TEST(Json, EveryTruncationIsAnErrorNotACrash) {
  const std::string text = everyNodeJson(-1);
  const size_t stepBy = text.size() / 300 + 1;
  for (size_t cut = 0; cut < text.size(); cut += stepBy)
    EXPECT_THROW(moduleFromJson(std::string_view(text).substr(0, cut)), BIRError) << "cut " << cut;
}

TEST(Json, VerifierRunsOnRead) {
  auto j = nlohmann::ordered_json::parse(everyNodeJson());
  auto& in = j["functions"][0]["blocks"][0]["instructions"][14]["ins"][0];
  in["offset"] = 70 * 1024;  // partition 70 of the 1024-element rows
  in["ap"][0][1] = 16;
  expectRejected(j.dump(),
                 "functions[0].blocks[0].instructions[14].ins[0]: partition start 70 breaks the "
                 "start-partition rule for 16 partitions");
}

namespace {
// What reading `text` gives: the module's compact JSON, or "error: " and the message.
std::string readAs(std::string_view text, bool plainFirst) {
  JsonReadOptions opts;
  opts.plain_first = plainFirst;
  try {
    return moduleToJson(*moduleFromJson(text, opts), -1);
  } catch (const BIRError& e) {
    return std::string("error: ") + e.what();
  }
}

void expectReadAlike(const std::string& text) {
  EXPECT_EQ(readAs(text, true), readAs(text, false)) << "text: " << text.substr(0, 300);
}
}  // namespace

// The fast plain-text reader (JsonDocument.h) and nlohmann's read every text alike: the same
// module or the same message, at the edges of the plain subset and on the fuzz corpus.
TEST(Json, PlainTextReaderAgreesWithNlohmann) {
  const std::string every = everyNodeJson(-1);
  for (int indent : {1, -1, 4}) expectReadAlike(everyNodeJson(indent));
  for (const auto& entry : std::filesystem::directory_iterator(NXS_FUZZ_CORPUS_DIR "/bir_json")) {
    std::ifstream f(entry.path(), std::ios::binary);
    expectReadAlike(std::string(std::istreambuf_iterator<char>(f), {}));
  }
  // Values at the subset's edges, where a module holds an integer, a double and a string (texts
  // the plain reader accepts, and ones only nlohmann's reads or refuses).
  const std::string constant = R"("constant":0.0)";
  ASSERT_NE(every.find(constant), std::string::npos);
  for (const std::string x : {"0", "-0", "1", "-1", "007", "1.", ".5", "1e5", "1E+5", "-1.5e-3", "2.5E-3",
                              "1e5000", "-1e5000", "1e-400", "0.1", "123456789012345678",
                              "1234567890123456789", "18446744073709551615", "18446744073709551616",
                              "-9223372036854775808", "-9223372036854775809", "true", "false", "null",
                              "tru", "nul", "[]", "{}", "[1,]", "\"inf\"", "\"nan\"", "\"\\u0041\"",
                              "\"\xc3\xa9\"", "\"\xff\"", "\"\t\"", "-", "+1", "0x10", "1 1"}) {
    expectReadAlike(R"({"attributes": {"neuron_core_id": )" + x + R"(}, "functions": []})");
    expectReadAlike(std::string(every).replace(every.find(constant), constant.size(), "\"constant\":" + x));
    expectReadAlike(R"({"functions": [{"name": )" + x + R"(}], "arch": "trn1"})");
  }
  // Whole texts: empty, blank, a byte-order mark, trailing text, unknown keys, a repeated key.
  for (const std::string& t : std::vector<std::string>{std::string(), std::string(" \n"), "\xef\xbb\xbf" + every, every + " x",
                               every + "\n", " \t\r\n" + every,
                               R"({"functions": [], "functions": []})",
                               R"({"functions": [], "version": 1, "version": 2})",
                               R"({"functions": [], "attributes": {"neuron_core_id": 0, "z": [1, {"b": null}]}})"})
    expectReadAlike(t);
  const size_t stepBy = every.size() / 300 + 1;
  for (size_t cut = 0; cut < every.size(); cut += stepBy) expectReadAlike(every.substr(0, cut));
}

namespace {
// Both writers' text for `m` at `indent`, or "error: " and the message.
std::string writtenAs(const Module& m, int indent, bool direct) {
  try {
    return direct ? moduleToJson(m, indent) : moduleToJsonThroughDocument(m, indent);
  } catch (const std::exception& e) {
    return std::string("error: ") + e.what();
  }
}

void expectWrittenAlike(const Module& m) {
  for (int indent : {-1, 0, 1, 2, 4})
    EXPECT_EQ(writtenAs(m, indent, true), writtenAs(m, indent, false)) << "indent " << indent;
}
}  // namespace

// moduleToJson writes the text directly (JsonWriter.h); it is byte for byte what nlohmann's
// document dumps: on every node kind, unknown fields (nested, and names the object already has),
// strings that need escaping or are not UTF-8, the doubles nlohmann formats specially, and the
// fuzz corpus.
TEST(Json, DirectWriterWritesWhatNlohmannDumps) {
  auto m = nxs_test::buildEveryNodeModule();
  expectWrittenAlike(*m);
  Function* f = m->function(0);
  Instruction* node = f->blocks()[0]->at(0);
  node->extra_json = R"({"name":"shadowed","z":[1,{"b":null,"c":[]},{}],"e":{},"s":"\u00e9\n"})";
  f->extra_json = R"({"x":[[]]})";
  m->attributes_extra_json = R"({"neuron_core_id":5,"w":-0.0})";
  m->extra_json = R"({"compiler_version":"2.24","n":1e300})";
  expectWrittenAlike(*m);
  for (const std::string name : {"plain", "quote\"back\\slash", "tab\tnew\nline\x01", "caf\xc3\xa9", "bad\xff"}) {
    node->name = name;
    expectWrittenAlike(*m);
  }
  node->name = "n";
  auto* memset = cast<InstMemset>(f->blocks()[0]->at(InstructionType::Memset));
  for (double x : {0.0, -0.0, 1.0, -1.5, 0.1, 1e-5, 1e-4, 123456789012345.0, 1e15, 1e16, 1e17, 1.5e300,
                   4.9e-324, 2.2250738585072014e-308, 1.0 / 3, std::nan(""), 1.0 / 0.0, -1.0 / 0.0}) {
    memset->constant = x;
    expectWrittenAlike(*m);
  }
  node->extra_json = "[1]";  // refused alike: not an object
  expectWrittenAlike(*m);
  for (const auto& entry : std::filesystem::directory_iterator(NXS_FUZZ_CORPUS_DIR "/bir_json")) {
    std::ifstream in(entry.path(), std::ios::binary);
    try {
      expectWrittenAlike(*moduleFromJson(std::string(std::istreambuf_iterator<char>(in), {}), {.verify = false}));
    } catch (const BIRError&) {
    }
  }
}

// nlohmann keeps the last of a repeated key: {"op": "add", "op": "mult"} read as mult. Refused,
// by the key's JSON path, whichever reader reads first.
TEST(Json, RefusesARepeatedKey) {
  auto j = nlohmann::ordered_json::parse(everyNodeJson());
  const std::string name = j["functions"][0]["blocks"][0]["instructions"][2]["name"];
  std::string text = j.dump();
  const std::string field = "\"name\":\"" + name + "\"";
  text.replace(text.find(field), field.size(), field + ",\"name\":\"other\"");
  for (bool plainFirst : {true, false}) {
    EXPECT_EQ(readAs(text, plainFirst),
              "error: functions[0].blocks[0].instructions[2].name: the key 'name' appears twice in one object "
              "(each field is named once)");
  }
  expectRejected(R"({"functions": [], "arch": "gen2", "arch": "gen3"})", "arch: the key 'arch' appears twice");
}

// The module's arch names the generation it is simulated on: an unknown one is refused where it
// is read, with the known names.
TEST(Json, RefusesAnUnknownArch) {
  auto j = nlohmann::ordered_json::parse(everyNodeJson());
  j["arch"] = "gen9";
  expectRejected(j.dump(), "arch: unknown arch 'gen9' (known: trn1 = gen2 = NeuronCore-v2, trn2 = gen3 = NeuronCore-v3)");
  j["arch"] = "gen3";
  EXPECT_EQ(moduleFromJson(j.dump())->arch, "gen3");
}
