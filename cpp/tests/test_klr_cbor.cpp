// The strict CBOR reader and writer under KLR: RFC 8949 vectors, canonical heads, and every
// malformed-input class refused with KLRError naming the byte offset.
#include <gtest/gtest.h>

#include <cmath>

#include "bir/Error.h"
#include "walrus/klr/Cbor.h"
#include "walrus/klr/KlrValue.h"

using namespace klr;
using klr::cbor::Item;

namespace {

std::string hex(const std::string& bytes) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (unsigned char c : bytes) s += std::string{d[c >> 4], d[c & 15]};
  return s;
}

std::string unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
  return out;
}

Item decodeOne(const std::string& bytes, cbor::DecodeOptions o = {}) {
  cbor::Decoder d(bytes, o);
  Item it = d.next();
  EXPECT_TRUE(d.atEnd());
  return it;
}

// Expects decoding to fail with a KLRError that names `offset` and contains `needle`.
void expectRejected(const std::string& bytes, uint64_t offset, const std::string& needle,
                    cbor::DecodeOptions o = {}) {
  try {
    cbor::Decoder d(bytes, o);
    do d.next();
    while (!d.atEnd());
    ADD_FAILURE() << "accepted " << hex(bytes);
  } catch (const KLRError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("byte " + std::to_string(offset) + ":", 0), 0u) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  }
}

}  // namespace

TEST(KlrCbor, EncodesWithTheShortestHeads) {
  EXPECT_EQ(hex(cbor::encode(cbor::unsignedInt(0))), "00");
  EXPECT_EQ(hex(cbor::encode(cbor::unsignedInt(23))), "17");
  EXPECT_EQ(hex(cbor::encode(cbor::unsignedInt(24))), "1818");
  EXPECT_EQ(hex(cbor::encode(cbor::unsignedInt(1000))), "1903e8");
  EXPECT_EQ(hex(cbor::encode(cbor::unsignedInt(1000000))), "1a000f4240");
  EXPECT_EQ(hex(cbor::encode(cbor::unsignedInt(1000000000000))), "1b000000e8d4a51000");
  EXPECT_EQ(hex(cbor::encode(cbor::integer(-1))), "20");
  EXPECT_EQ(hex(cbor::encode(cbor::integer(-100))), "3863");
  EXPECT_EQ(hex(cbor::encode(cbor::integer(INT64_MIN))), "3b7fffffffffffffff");
  EXPECT_EQ(hex(cbor::encode(cbor::text("IETF"))), "6449455446");
  EXPECT_EQ(hex(cbor::encode(cbor::float32(100000.0f))), "fa47c35000");
  EXPECT_EQ(hex(cbor::encode(cbor::float64(1.1))), "fb3ff199999999999a");
  EXPECT_EQ(hex(cbor::encode(cbor::boolean(true))), "f5");
  EXPECT_EQ(hex(cbor::encode(cbor::tag(55799, cbor::array({})))), "d9d9f780");
  // KLR's record encoding (KLR/Serde/Test.lean): X.mk true false with type tag 1.
  EXPECT_EQ(hex(cbor::encode(record(1, 0, {cbor::boolean(true), cbor::boolean(false)}))), "d9010082f5f4");
  EXPECT_EQ(hex(cbor::encode(none())), "d9ff0080");
}

TEST(KlrCbor, DecodesWhatItEncodes) {
  Item tree = cbor::array({cbor::integer(-7), cbor::text("ü"), cbor::float32(-2.5f), cbor::float64(1e300),
                           cbor::tag(0x7200, cbor::array({cbor::unsignedInt(UINT64_MAX)})), cbor::boolean(false)});
  const std::string bytes = cbor::encode(tree);
  Item back = decodeOne(bytes);
  EXPECT_EQ(cbor::encode(back), bytes);
  ASSERT_EQ(back.items.size(), 6u);
  EXPECT_EQ(back.items[0].type, cbor::Type::Negative);
  EXPECT_EQ(readInt(back.items[0], "x"), -7);
  EXPECT_EQ(back.items[2].float_bytes, 4);
  EXPECT_EQ(back.items[2].number, -2.5);
  EXPECT_EQ(back.items[4].value, 0x7200u);
  EXPECT_EQ(back.items[4].offset, 19u);  // offsets point at each item's head
  EXPECT_EQ(back.items[4].tagged().items[0].value, UINT64_MAX);
}

TEST(KlrCbor, FloatsKeepTheirBitsAndWidth) {
  for (double v : {0.0, -0.0, 1.0 / 3.0, std::nan(""), -HUGE_VAL, 5e-324}) {
    Item back = decodeOne(cbor::encode(cbor::float64(v)));
    EXPECT_EQ(cbor::encode(back), cbor::encode(cbor::float64(v)));
  }
  EXPECT_EQ(decodeOne(unhex("fa7f800000")).number, INFINITY);
}

TEST(KlrCbor, RefusesMalformedInput) {
  expectRejected("", 0, "end of the input");
  expectRejected(unhex("19ff"), 0, "truncated unsigned integer");
  expectRejected(unhex("8301"), 0, "cannot fit");                       // array(3), one byte left
  expectRejected(unhex("82190100"), 4, "truncated data item");          // array(2) with one item
  expectRejected(unhex("6461"), 0, "truncated text string");
  expectRejected(unhex("9f01ff"), 0, "indefinite-length array");
  expectRejected(unhex("5f41ff"), 0, "indefinite-length byte string");
  expectRejected(unhex("1c"), 0, "reserved additional information 28");
  expectRejected(unhex("f93c00"), 0, "float16");
  expectRejected(unhex("f0"), 0, "unsupported simple value");
  expectRejected(unhex("ff"), 0, "break code");
  expectRejected(unhex("62c328"), 1, "not valid UTF-8");                // bad continuation byte
  expectRejected(unhex("63eda080"), 1, "not valid UTF-8");              // a surrogate
  expectRejected(unhex("62c0af"), 1, "not valid UTF-8");                // overlong
  expectRejected(unhex("fb0000"), 0, "truncated float");
  // Lengths larger than the input are refused before anything is allocated.
  expectRejected(unhex("9b7fffffffffffffff00"), 0, "cannot fit");
  expectRejected(unhex("bb7fffffffffffffff00"), 0, "cannot fit");
  expectRejected(unhex("7b7fffffffffffffff00"), 0, "truncated text string");
}

TEST(KlrCbor, RefusesDeepNesting) {
  cbor::DecodeOptions o;
  o.max_depth = 10;
  expectRejected(std::string(11, '\x81') + '\x00', 10, "deeper than 10", o);
  EXPECT_NO_THROW(decodeOne(std::string(10, '\x81') + '\x00', o));
  expectRejected(std::string(100000, '\x81'), 256, "deeper than 256");         // default limit
  expectRejected(std::string(200000, '\xc6'), 256, "deeper than 256");         // nested tags
}

TEST(KlrCbor, ReadsKlrsPropCountingRecords) {
  // KLR writes TensorName as tag 0x7200, an array header of 8 and 6 items (two zero-size proofs).
  Item six = cbor::array({});
  for (int i = 0; i < 6; ++i) six.items.push_back(cbor::unsignedInt(i));
  std::string bytes = cbor::encode(cbor::tag(0x7200, six));
  bytes[3] = static_cast<char>(0x88);
  bytes += cbor::encode(cbor::unsignedInt(42));  // the next item must still be read as such
  cbor::Decoder d(bytes, klrDecodeOptions());
  Item tn = d.next();
  EXPECT_EQ(tn.tagged().items.size(), 6u);
  EXPECT_EQ(d.next().value, 42u);
  EXPECT_TRUE(d.atEnd());
  // Without the KLR options the header is taken at its word and the data runs out.
  cbor::Decoder plain(bytes);
  EXPECT_THROW(plain.next(), KLRError);
}

TEST(KlrValue, RecordsAreCheckedWithTheirName) {
  const Item tn = decodeOne(cbor::encode(record(tags::TensorName, 0, {cbor::text("t")})));
  try {
    Record(tn, tags::Kernel, "Kernel.body").expectFields(4);
    ADD_FAILURE();
  } catch (const KLRError& e) {
    EXPECT_STREQ(e.what(), "byte 0: Kernel.body: expected a Kernel.body record (KLR tag 105), found tag 0x7200");
  }
  try {
    Record(tn, tags::TensorName, "TensorName").expectFields(6);
    ADD_FAILURE();
  } catch (const KLRError& e) {
    EXPECT_NE(std::string(e.what()).find("has 1 field(s); expected 6"), std::string::npos) << e.what();
  }
  EXPECT_EQ(readEnum(enumItem(kEngine, 3), kEngine, "e"), 3);
  EXPECT_THROW(readEnum(enumItem(kEngine, 9), kEngine, "e"), KLRError);
  EXPECT_THROW(readOption(record(tags::Option, 2, {}), "o"), KLRError);
  EXPECT_THROW(readInt(cbor::unsignedInt(UINT64_MAX), "i"), KLRError);
}
