// The docs test's reading of the docs (tests/sdk/doc_blocks.h) on inputs
// given here: markers, fences, header examples, output wildcards.
#include "tests/sdk/doc_blocks.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

using capsa_docs::DocBlock;
using capsa_docs::FencedBlocks;
using capsa_docs::HeaderExample;
using capsa_docs::OutputMatches;

TEST(DocBlocks, FencesMarkersAndLines) {
  std::vector<std::string> errors;
  std::vector<DocBlock> b = FencedBlocks(
      "# t\n"
      "<!-- doc-test: program hello -->\n"
      "```c\n"
      "int main(void) { return 0; }\n"
      "```\n"
      "text\n"
      "<!-- doc-test: output hello -->\n"
      "~~~~console\n"
      "$ ./hello\n"
      "```\n"  // not a closing fence of ~~~~
      "~~~~\n"
      "```c\n"
      "x();\n"
      "````\n",
      "t.md", &errors);
  EXPECT_TRUE(errors.empty()) << errors[0];
  ASSERT_EQ(3u, b.size());
  EXPECT_EQ(DocBlock::kProgram, b[0].role);
  EXPECT_EQ("hello", b[0].name);
  EXPECT_EQ("c", b[0].info);
  EXPECT_EQ("t.md:3", b[0].where);
  EXPECT_EQ(4, b[0].first_line);
  EXPECT_EQ("int main(void) { return 0; }\n", b[0].text);
  EXPECT_EQ(DocBlock::kOutput, b[1].role);
  EXPECT_EQ("console", b[1].info);
  EXPECT_EQ("$ ./hello\n```\n", b[1].text);
  EXPECT_EQ(DocBlock::kPlain, b[2].role);
  EXPECT_EQ("x();\n", b[2].text);
  EXPECT_TRUE(capsa_docs::DefinesMain(b[0].text));
  EXPECT_FALSE(capsa_docs::DefinesMain("// int main(void)\nint domain(x);\n"));
}

TEST(DocBlocks, BadMarkersAndOpenFencesAreErrors) {
  std::vector<std::string> errors;
  FencedBlocks("<!-- doc-test: programme x -->\n```c\n```\n", "a.md", &errors);
  ASSERT_EQ(1u, errors.size());
  EXPECT_NE(std::string::npos, errors[0].find("a.md:1: malformed marker"));
  errors.clear();
  FencedBlocks("<!-- doc-test: program x -->\n\n```c\n```\n", "b.md", &errors);
  ASSERT_EQ(1u, errors.size());
  EXPECT_NE(std::string::npos, errors[0].find("b.md:1: a doc-test marker"));
  errors.clear();
  FencedBlocks("```c\nint x;\n", "c.md", &errors);
  ASSERT_EQ(1u, errors.size());
  EXPECT_EQ("c.md:1: fence never closed", errors[0]);
}

TEST(DocBlocks, HeaderExampleIsTheOpeningCommentsIndentedRun) {
  int first = 0;
  EXPECT_EQ(
      "int a;\n"
      "\n"
      "  int b;  // two more\n",
      HeaderExample("// What it is.\n"
                    "//\n"
                    "//   int a;\n"
                    "//\n"
                    "//     int b;  // two more\n"
                    "//\n"
                    "// Prose again.\n"
                    "//   not the opening example\n"
                    "#ifndef X_H_\n",
                    &first));
  EXPECT_EQ(3, first);
  EXPECT_EQ("", HeaderExample("#ifndef X_H_\n//   int a;\n", &first));
  EXPECT_EQ(0, first);
  EXPECT_EQ("", HeaderExample("// Prose only.\n#pragma once\n", &first));
}

TEST(DocBlocks, OutputWildcardsAndCommands) {
  std::string why;
  EXPECT_TRUE(OutputMatches("$ ./prog\nrenderer ... says: hi\n",
                            "renderer 4242 says: hi\n", &why));
  EXPECT_TRUE(OutputMatches("a...b...c\n", "abc\n", &why));
  EXPECT_TRUE(OutputMatches("first\n...\nlast\n", "first\nlast\n", &why));
  EXPECT_TRUE(OutputMatches("first\n...\nlast\n", "first\n1\n2\nlast\n", &why));
  EXPECT_TRUE(OutputMatches("...\n", "", &why));
  EXPECT_TRUE(OutputMatches("", "", &why));
  EXPECT_FALSE(OutputMatches("renderer ... says: hi\n",
                             "renderer 4242 says: bye\n", &why));
  EXPECT_NE(std::string::npos, why.find("  | renderer 4242 says: bye"));
  EXPECT_FALSE(OutputMatches("a...a\n", "a\n", &why));  // parts may not overlap
  EXPECT_FALSE(OutputMatches("one\n", "one\ntwo\n", &why));  // a line too many
  EXPECT_FALSE(OutputMatches("one\ntwo\n", "one\n", &why));
  EXPECT_FALSE(OutputMatches("x ... y\n", "x  y z\n", &why));
}

}  // namespace
