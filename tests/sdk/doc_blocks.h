// What the docs test reads out of the docs (docs/sdk.md, "Docs are tests"):
// the fenced blocks of a Markdown file with their doc-test markers, the
// opening example of a header, and a program's output against the output
// a doc shows.
//
//   for (const DocBlock &b : FencedBlocks(ReadFile("README.md"), "README.md"))
//     if (b.info == "c" && b.role == DocBlock::kProgram) Build(b.text);
//   std::string why;
//   if (!OutputMatches(shown, printed, &why)) ADD_FAILURE() << why;
//
// Pure functions of their arguments: no file or process is touched here.
#ifndef CAPSA_TESTS_SDK_DOC_BLOCKS_H_
#define CAPSA_TESTS_SDK_DOC_BLOCKS_H_

#include <string>
#include <vector>

namespace capsa_docs {

// The marker is an HTML comment alone on the line right before the fence
// (Markdown renders neither): `<!-- doc-test: program NAME -->` or
// `<!-- doc-test: output NAME -->`.
struct DocBlock {
  enum Role { kPlain, kProgram, kOutput };
  std::string where;  // "FILE:LINE" of the opening fence
  int first_line;     // line number of the block's first line of text
  std::string info;   // the fence's info string ("c", "sh", "")
  Role role;
  std::string name;  // of a program or output marker
  std::string text;  // the lines between the fences, each ending in \n
};

// Every fenced block (``` or ~~~, three or more) of `markdown`, in order.
// A doc-test marker that is malformed, or that is not followed by a fence,
// is reported in *errors ("FILE:LINE: why"), as is a fence never closed.
std::vector<DocBlock> FencedBlocks(const std::string &markdown,
                                   const std::string &file,
                                   std::vector<std::string> *errors);

// True when C source `text` defines main(): a whole program.
bool DefinesMain(const std::string &text);

// The example a header's opening comment shows: the comment lines before
// the first line that is not a comment, from the first one indented by at
// least three spaces after `//` up to the next line of prose (`// ` and
// text), with `//   ` taken off each line and blank comment lines kept
// inside. Empty when the header opens with no comment or no example.
// *first_line: the header's line number of the example's first line.
std::string HeaderExample(const std::string &header, int *first_line);

// Whether a program's output `printed` is what the doc's output block
// `shown` says. In `shown`, a line starting with "$ " is a command the
// reader types (not compared); every other line is compared in order with
// the lines of `printed`, where `...` inside a line matches any text of
// that line and a line that is only `...` matches any number of lines
// (none too). False with what differs in *why.
bool OutputMatches(const std::string &shown, const std::string &printed,
                   std::string *why);

}  // namespace capsa_docs

#endif  // CAPSA_TESTS_SDK_DOC_BLOCKS_H_
