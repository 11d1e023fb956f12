// The XML property-list reader: value kinds, line numbers, and refusals.
#include <gtest/gtest.h>

#include "ane/plist.h"

namespace ane {
namespace {

Expected<plist::Value> parse(const std::string& s) {
  return plist::parse(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
}

TEST(Plist, ValueKindsAndLines) {
  auto v = parse(R"(<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <!-- a comment -->
  <key>s</key><string>a &amp; b</string>
  <key>i</key>
  <integer> -42 </integer>
  <key>r</key><real>2.5</real>
  <key>t</key><true/>
  <key>f</key><false/>
  <key>d</key><data>AAEC
  /w==</data>
  <key>a</key><array><integer>1</integer><string/></array>
  <key>e</key><dict/>
</dict>
</plist>)");
  ASSERT_TRUE(v) << v.error().str();
  ASSERT_EQ(v->kind, plist::Value::Kind::Dict);
  EXPECT_EQ(v->line, 4u);
  EXPECT_EQ(v->find("s")->text, "a & b");
  EXPECT_EQ(v->find("i")->integer, -42);
  EXPECT_EQ(v->line_of("i"), 7u);
  EXPECT_EQ(v->find("i")->line, 8u);
  EXPECT_EQ(v->find("r")->real, 2.5);
  EXPECT_TRUE(v->find("t")->boolean);
  EXPECT_FALSE(v->find("f")->boolean);
  EXPECT_EQ(v->find("d")->data, (Bytes{0, 1, 2, 0xff}));
  ASSERT_EQ(v->find("a")->array.size(), 2u);
  EXPECT_EQ(v->find("a")->array[1].text, "");
  EXPECT_EQ(v->find("e")->dict.size(), 0u);
  EXPECT_EQ(v->find("missing"), nullptr);
  EXPECT_EQ(v->line_of("missing"), 4u);
}

TEST(Plist, Refusals) {
  struct Case {
    const char* xml;
    const char* error;
  } cases[] = {
      {"<plist><dict><string>x</string></dict></plist>", "line 1: expected <key> in <dict>, found <string>"},
      {"<plist><dict><key>a</key></dict></plist>", "line 1: key 'a' has no value"},
      {"<plist><integer>99999999999999999999</integer></plist>", "line 1: <integer> '99999999999999999999' is not a decimal 64-bit integer"},
      {"<plist><integer>0x10</integer></plist>", "line 1: <integer> '0x10' is not a decimal 64-bit integer"},
      {"<plist><real>1e</real></plist>", "line 1: <real> '1e' is not a number"},
      {"<plist><data>AB*</data></plist>", "line 1: <data>: invalid base64 character '*'"},
      {"<plist><blob/></plist>", "line 1: unknown plist element <blob>"},
      {"<plist/>", "line 1: <plist> is empty"},
      {"<plist><true/><false/></plist>", "line 1: <plist> holds more than one value"},
      {"<dict/>", "line 1: root element is <dict>, expected <plist>"},
      {"<plist><array>text</array></plist>", "line 1: text 'text' inside <array>"},
      {"<plist><string>a<b/></string></plist>", "line 1: <string> holds markup"},
      {"", "line 1: not well-formed XML: No document element found"},
  };
  for (const auto& c : cases) {
    auto v = parse(c.xml);
    ASSERT_FALSE(v) << c.xml;
    EXPECT_EQ(v.error().str(), c.error) << c.xml;
  }
  auto b = parse("bplist00....");
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("binary property list"), std::string::npos);
}

TEST(Plist, NestingIsBounded) {
  std::string ok = "<plist>", deep = "<plist>";
  for (int i = 0; i < plist::kMaxDepth; ++i) ok += "<array>";
  for (int i = 0; i < plist::kMaxDepth; ++i) ok += "</array>";
  for (int i = 0; i < 100000; ++i) deep += "<array>";
  for (int i = 0; i < 100000; ++i) deep += "</array>";
  EXPECT_TRUE(parse(ok + "</plist>"));
  auto v = parse(deep + "</plist>");
  ASSERT_FALSE(v);
  EXPECT_NE(v.error().message.find("nested deeper than 64 levels"), std::string::npos);
}

}  // namespace
}  // namespace ane
