// Reading the docs for the docs test (tests/sdk/doc_blocks.h).
#include "tests/sdk/doc_blocks.h"

#include <map>
#include <regex>
#include <sstream>
#include <utility>

namespace capsa_docs {

namespace {

// All lines of `s`, without their newlines (a last line without one too).
std::vector<std::string> SplitLines(const std::string &s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  std::string l;
  while (std::getline(in, l)) v.push_back(l);
  return v;
}

// A fence: up to three spaces, then three or more ` or ~. *marker gets the
// run, *info the first word after it.
bool IsFence(const std::string &line, std::string *marker, std::string *info) {
  size_t i = line.find_first_not_of(' ');
  if (i == std::string::npos || i > 3) return false;
  char c = line[i];
  if (c != '`' && c != '~') return false;
  size_t j = line.find_first_not_of(c, i);
  if (j == std::string::npos) j = line.size();
  if (j - i < 3) return false;
  *marker = line.substr(i, j - i);
  std::istringstream rest(line.substr(j));
  info->clear();
  rest >> *info;
  return true;
}

bool Closes(const std::string &line, const std::string &open) {
  std::string marker, info;
  return IsFence(line, &marker, &info) && marker[0] == open[0] &&
         marker.size() >= open.size() && info.empty();
}

}  // namespace

std::vector<DocBlock> FencedBlocks(const std::string &markdown,
                                   const std::string &file,
                                   std::vector<std::string> *errors) {
  static const std::regex kMarker(
      R"(^<!-- doc-test: (program|output) ([A-Za-z0-9_.-]+) -->\s*$)");
  std::vector<std::string> lines = SplitLines(markdown);
  std::vector<DocBlock> blocks;
  for (size_t i = 0; i < lines.size(); i++) {
    std::string marker, info;
    const std::string at = file + ":" + std::to_string(i + 1);
    if (lines[i].find("doc-test:") != std::string::npos &&
        lines[i].find("<!--") != std::string::npos) {
      std::smatch m;
      if (!std::regex_match(lines[i], m, kMarker))
        errors->push_back(at +
                          ": malformed marker (`<!-- doc-test: program"
                          "|output NAME -->`): " +
                          lines[i]);
      else if (i + 1 >= lines.size() || !IsFence(lines[i + 1], &marker, &info))
        errors->push_back(at +
                          ": a doc-test marker must be the line right "
                          "before a fence");
      continue;
    }
    if (!IsFence(lines[i], &marker, &info)) continue;
    DocBlock b;
    b.where = at;
    b.first_line = static_cast<int>(i) + 2;
    b.info = info;
    b.role = DocBlock::kPlain;
    std::smatch m;
    if (i > 0 && std::regex_match(lines[i - 1], m, kMarker)) {
      b.role = m[1] == "program" ? DocBlock::kProgram : DocBlock::kOutput;
      b.name = m[2];
    }
    size_t j = i + 1;
    while (j < lines.size() && !Closes(lines[j], marker))
      b.text += lines[j++] + "\n";
    if (j == lines.size()) {
      errors->push_back(at + ": fence never closed");
      break;
    }
    blocks.push_back(b);
    i = j;
  }
  return blocks;
}

bool DefinesMain(const std::string &text) {
  static const std::regex kMain(R"((^|\n)\s*int\s+main\s*\()");
  return std::regex_search(text, kMain);
}

std::string HeaderExample(const std::string &header, int *first_line) {
  std::vector<std::string> lines = SplitLines(header);
  std::vector<std::string> example;
  *first_line = 0;
  for (size_t i = 0; i < lines.size(); i++) {
    const std::string &l = lines[i];
    if (l.compare(0, 2, "//") != 0) break;  // the opening comment is over
    bool blank = l.find_first_not_of(' ', 2) == std::string::npos;
    bool indented = l.compare(0, 5, "//   ") == 0 && !blank;
    if (example.empty()) {
      if (indented) {
        *first_line = static_cast<int>(i) + 1;
        example.push_back(l.substr(5));
      }
      continue;
    }
    if (blank)
      example.push_back("");
    else if (indented)
      example.push_back(l.substr(5));
    else
      break;  // prose again
  }
  while (!example.empty() && example.back().empty()) example.pop_back();
  std::string out;
  for (const std::string &l : example) out += l + "\n";
  return out;
}

namespace {

// `pattern` with `...` standing for any text, against one whole line.
bool LineMatches(const std::string &pattern, const std::string &line) {
  std::vector<std::string> parts;
  size_t from = 0, at;
  while ((at = pattern.find("...", from)) != std::string::npos) {
    parts.push_back(pattern.substr(from, at - from));
    from = at + 3;
  }
  parts.push_back(pattern.substr(from));
  if (parts.size() == 1) return pattern == line;
  const std::string &first = parts.front(), &last = parts.back();
  if (line.size() < first.size() + last.size() ||
      line.compare(0, first.size(), first) != 0 ||
      line.compare(line.size() - last.size(), last.size(), last) != 0)
    return false;
  // Leftmost matches of the middle parts leave the most room for the rest.
  size_t pos = first.size(), end = line.size() - last.size();
  for (size_t k = 1; k + 1 < parts.size(); k++) {
    size_t f = line.find(parts[k], pos);
    if (f == std::string::npos || f + parts[k].size() > end) return false;
    pos = f + parts[k].size();
  }
  return true;
}

struct Matcher {
  const std::vector<std::string> &pat, &out;
  std::map<std::pair<size_t, size_t>, bool> memo;
  bool Match(size_t i, size_t j) {
    if (i == pat.size()) return j == out.size();
    auto key = std::make_pair(i, j);
    auto it = memo.find(key);
    if (it != memo.end()) return it->second;
    bool r;
    if (pat[i] == "...")
      r = Match(i + 1, j) || (j < out.size() && Match(i, j + 1));
    else
      r = j < out.size() && LineMatches(pat[i], out[j]) && Match(i + 1, j + 1);
    memo[key] = r;
    return r;
  }
};

}  // namespace

bool OutputMatches(const std::string &shown, const std::string &printed,
                   std::string *why) {
  std::vector<std::string> pat;
  for (const std::string &l : SplitLines(shown))
    if (l.compare(0, 2, "$ ") != 0) pat.push_back(l);
  std::vector<std::string> out = SplitLines(printed);
  Matcher m{pat, out, {}};
  if (m.Match(0, 0)) return true;
  std::string want;
  for (const std::string &l : pat) want += "  | " + l + "\n";
  std::string got;
  for (const std::string &l : out) got += "  | " + l + "\n";
  *why = "the doc shows:\n" + want + "the program printed:\n" + got;
  return false;
}

}  // namespace capsa_docs
