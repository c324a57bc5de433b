// SPDX-License-Identifier: Apache-2.0
// The user docs: every relative link (and image) resolves to a file of the
// checkout and, with a #fragment, to a heading of that file; the docs stay a
// size a user reads; and they carry no project-internal text.
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = COMMITLOG_SOURCE_DIR;

// README.md, docs/*.md and segment/FORMAT.md, relative to the checkout.
std::vector<fs::path> user_docs() {
  std::vector<fs::path> docs = {"README.md", "segment/FORMAT.md"};
  for (const auto& entry : fs::directory_iterator(kRoot / "docs")) {
    if (entry.path().extension() == ".md") docs.push_back(fs::relative(entry.path(), kRoot));
  }
  return docs;
}

std::vector<std::string> read_lines(const fs::path& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), path.string());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The lines outside ``` fences.
std::vector<std::string> outside_fences(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  bool fenced = false;
  for (const std::string& line : lines) {
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
    } else if (!fenced) {
      out.push_back(line);
    }
  }
  return out;
}

// The lines outside ``` fences, with `code spans` blanked out.
std::vector<std::string> prose_lines(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (const std::string& line : outside_fences(lines)) {
    std::string prose;
    bool in_code = false;
    for (char c : line) {
      if (c == '`') in_code = !in_code;
      prose += in_code || c == '`' ? ' ' : c;
    }
    out.push_back(prose);
  }
  return out;
}

// GitHub's anchor of a heading: lower case, punctuation and backticks
// dropped (letters beyond ASCII kept), spaces to hyphens.
std::string anchor_of(std::string heading) {
  std::string anchor;
  for (unsigned char c : heading) {
    if (c >= 0x80 || std::isalnum(c) || c == '-' || c == '_') {
      anchor += static_cast<char>(std::tolower(c));
    } else if (c == ' ') {
      anchor += '-';
    }
  }
  return anchor;
}

std::set<std::string> anchors_of(const fs::path& path) {
  std::set<std::string> anchors;
  for (const std::string& line : outside_fences(read_lines(path))) {
    const size_t hashes = line.find_first_not_of('#');
    if (hashes == 0 || hashes == std::string::npos || line[hashes] != ' ') continue;
    anchors.insert(anchor_of(line.substr(hashes + 1)));
  }
  return anchors;
}

TEST_CASE("docs: every relative link and image resolves, #fragments to a heading") {
  const std::regex link(R"(\]\(([^)\s]+)\))");
  int links = 0;
  for (const fs::path& doc : user_docs()) {
    for (const std::string& line : prose_lines(read_lines(kRoot / doc))) {
      for (auto it = std::sregex_iterator(line.begin(), line.end(), link); it != std::sregex_iterator(); ++it) {
        const std::string target = (*it)[1];
        if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) continue;
        ++links;
        const size_t hash = target.find('#');
        const std::string file = target.substr(0, hash);
        const fs::path resolved = file.empty() ? kRoot / doc : (kRoot / doc).parent_path() / file;
        INFO(doc.string(), ": ", target);
        const bool exists = fs::exists(resolved);
        CHECK_MESSAGE(exists, "no such file: ", resolved.lexically_normal().string());
        if (exists && hash != std::string::npos) {
          CHECK_MESSAGE(anchors_of(resolved).count(target.substr(hash + 1)) == 1,
                        "no heading with that anchor in ", resolved.lexically_normal().string());
        }
      }
    }
  }
  CHECK(links > 20);
}

TEST_CASE("docs: README and the user docs together stay under 2,000 lines") {
  size_t total = 0;
  std::ostringstream counts;
  for (const fs::path& doc : user_docs()) {
    const size_t n = read_lines(kRoot / doc).size();
    total += n;
    counts << doc.string() << " " << n << "\n";
  }
  INFO(counts.str());
  CHECK(total < 2000);
}

TEST_CASE("docs: no issue numbers, acceptance verdicts or dated runs") {
  const std::regex internal(
      R"((\b[Ii]ssue [0-9])|(\bNOT met\b)|(\b[Gg]oals?\b)|(\b[0-9]{1,2} (January|February|March|April|May|June|July|August|September|October|November|December)\b))");
  for (const fs::path& doc : user_docs()) {
    const std::vector<std::string> lines = read_lines(kRoot / doc);
    for (size_t i = 0; i < lines.size(); ++i) {
      INFO(doc.string(), ":", i + 1, ": ", lines[i]);
      CHECK_FALSE(std::regex_search(lines[i], internal));
    }
  }
}

}  // namespace
