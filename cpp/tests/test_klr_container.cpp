// The KLR container on the three real files klr-lang 0.0.12 wrote (../shared/reference/klr-samples,
// copied into the fuzz corpus): header, metadata, Contents kind and numbering, the refusal to lower
// source-level kinds, and every truncation and corruption refused with the byte offset.
#include <gtest/gtest.h>

#include "bir/Error.h"
#include "test_klr_modules.h"
#include "walrus/klr/KernelFile.h"

using namespace klr;

namespace {

std::string sample(const std::string& name) {
  const std::string bytes = klr_test::readBytes(klr_test::klrCorpusDir() + "/" + name);
  EXPECT_FALSE(bytes.empty()) << name;
  return bytes;
}

const char* kSamples[] = {"add_kernel.py.klr", "add_kernel.nki.klr", "add_kernel.callsite.klr"};

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const KLRError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(KlrContainer, ReadsTheThreeSamples) {
  const KlrInfo py = inspectKlr(sample("add_kernel.py.klr"));
  EXPECT_EQ(py.header.major, 0u);
  EXPECT_EQ(py.header.minor, 0u);
  EXPECT_EQ(py.header.patch, 12u);
  EXPECT_EQ(py.format, "KLR");
  EXPECT_EQ(py.kind, ContentsKind::Python);
  EXPECT_EQ(py.contents_ctor, 0);
  EXPECT_EQ(py.entry, "kernels.add_kernel");
  EXPECT_EQ(py.neuronxsim_revision, 0);
  EXPECT_NE(py.lowering_refusal.find("Python-source kernel (Contents.python)"), std::string::npos);

  const KlrInfo nki = inspectKlr(sample("add_kernel.nki.klr"));
  EXPECT_EQ(nki.kind, ContentsKind::Nki);
  EXPECT_EQ(nki.contents_ctor, 1);
  EXPECT_EQ(nki.entry, "kernels.add_kernel");
  EXPECT_NE(nki.lowering_refusal.find("NKI-source kernel (Contents.nki)"), std::string::npos);

  // Constructor 2 with a text payload: the 0.0.12 call-site (HEAD would call ctor 2 `kernel`).
  const KlrInfo cs = inspectKlr(sample("add_kernel.callsite.klr"));
  EXPECT_EQ(cs.kind, ContentsKind::Hlo);
  EXPECT_EQ(cs.contents_ctor, 2);
  EXPECT_EQ(cs.numbering, "0.0.12");
  EXPECT_EQ(cs.callsite, "add_kernel.nki.klr");
  EXPECT_NE(cs.lowering_refusal.find("HLO call-site record"), std::string::npos);
}

TEST(KlrContainer, RefusesToLowerSourceLevelKinds) {
  const std::string path = klr_test::klrCorpusDir() + "/add_kernel.py.klr";
  const std::string msg = errorOf([&] { readKernelFile(path); });
  EXPECT_EQ(msg.rfind(path + ": byte 15: the file contains a Python-source kernel (Contents.python); "
                             "lowering needs a traced kernel", 0), 0u) << msg;
  EXPECT_NE(errorOf([&] { decodeKernel(sample("add_kernel.nki.klr")); }).find("NKI-source kernel"), std::string::npos);
  EXPECT_NE(errorOf([&] { decodeKernel(sample("add_kernel.callsite.klr")); }).find("naming 'add_kernel.nki.klr'"),
            std::string::npos);
}

TEST(KlrContainer, EveryTruncationOfTheSamplesIsRefusedWithAnOffset) {
  for (const char* name : kSamples) {
    const std::string bytes = sample(name);
    ASSERT_NO_THROW(inspectKlr(bytes)) << name;
    for (size_t n = 0; n < bytes.size(); ++n) {
      const std::string msg = errorOf([&] { inspectKlr(bytes.substr(0, n)); });
      EXPECT_EQ(msg.rfind("byte ", 0), 0u) << name << " cut at " << n << ": " << msg;
    }
  }
}

TEST(KlrContainer, RefusesWrongMagicVersionAndTags) {
  std::string bytes = sample("add_kernel.nki.klr");
  auto patched = [&](size_t at, uint8_t v) {
    std::string b = bytes;
    b[at] = static_cast<char>(v);
    return b;
  };
  EXPECT_NE(errorOf([&] { inspectKlr(patched(1, 0xda)); }).find("byte 0: not a KLR file"), std::string::npos);
  EXPECT_NE(errorOf([&] { inspectKlr(std::string("{\"functions\": []}")); }).find("byte 0: not a KLR file"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { inspectKlr(patched(6, 13)); }).find("byte 0: KLR version 0.0.13 is not supported"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { inspectKlr(patched(8, 0xea)); }).find("byte 7: KLRMetaData: expected a KLRMetaData record"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { inspectKlr(patched(17, 9)); }).find("byte 15: Contents: unknown constructor 9"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { inspectKlr(bytes + std::string(1, '\0')); }).find("byte 949: 1 unexpected byte"),
            std::string::npos);
  // Constructor 2 holding neither a call-site name nor a Core.Kernel.
  std::string cs = sample("add_kernel.callsite.klr");
  cs[19] = static_cast<char>(0x52);  // the payload becomes a byte string
  EXPECT_NE(errorOf([&] { inspectKlr(cs); }).find("byte 19: Contents: constructor 2 holds neither"),
            std::string::npos);
}

TEST(KlrContainer, ReadsHeadNumbering) {
  auto file = [](uint8_t ctor, Item payload) {
    std::vector<Item> f;
    f.push_back(std::move(payload));
    return cbor::encode(KLRFile_ser()) + cbor::encode(KLRMetaData_ser("NKI")) +
           cbor::encode(record(tags::Contents, ctor, std::move(f)));
  };
  const KlrInfo hlo = inspectKlr(file(4, cbor::text("k.nki.klr")));
  EXPECT_EQ(hlo.kind, ContentsKind::Hlo);
  EXPECT_EQ(hlo.numbering, "HEAD");
  EXPECT_EQ(hlo.callsite, "k.nki.klr");
  EXPECT_EQ(hlo.format, "NKI");
  EXPECT_NE(errorOf([&] { inspectKlr(file(3, cbor::text("x"))); }).find("byte 19: Contents: constructor 3 (HEAD's lnc)"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { inspectKlr(file(4, nat(1))); }).find("constructor 4 (HEAD's hlo) must hold"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { inspectKlr(file(2, record(tags::Kernel, 0, {}))); }).find("Kernel: constructor 0 has 0 field(s); expected 4"),
            std::string::npos);
}
