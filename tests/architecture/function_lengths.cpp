// function_lengths: the longest functions of tcjit's sources (outside tests), by lines from the
// line that opens the body to the line that closes it.
//
//   function_lengths ROOT [--over N]   lists every function over N lines (default 200), longest
//                                      first; exits 1 when one is over --limit (default 250)
//   function_lengths ROOT --limit N    the limit that fails
//
// A small scanner, not a C++ parser: it skips comments, string and character literals (raw strings
// too), treats namespace, extern "C", class, struct, union and enum bodies as transparent, and
// counts a brace block that follows a ')' (a function, a constructor, an operator) at that level.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Function {
  std::string file;
  int first_line = 0;
  int lines = 0;
  std::string name; // the text before '(' on the signature, trimmed
};

// The text with comments, literals and preprocessor lines blanked (newlines kept, so line numbers
// hold).
std::string blank_comments_and_literals(const std::string &s) {
  std::string out = s;
  size_t i = 0;
  auto blank = [&](size_t from, size_t to) {
    for (size_t k = from; k < to && k < out.size(); ++k)
      if (out[k] != '\n')
        out[k] = ' ';
  };
  auto at_line_start = [&](size_t k) {
    while (k > 0 && (s[k - 1] == ' ' || s[k - 1] == '\t'))
      --k;
    return k == 0 || s[k - 1] == '\n';
  };
  while (i < s.size()) {
    if (s[i] == '#' && at_line_start(i)) {
      size_t end = i;
      while (end < s.size() && s[end] != '\n')
        end += s[end] == '\\' && end + 1 < s.size() ? 2 : 1;
      blank(i, end);
      i = end;
    } else if (s.compare(i, 2, "//") == 0) {
      const size_t end = s.find('\n', i);
      blank(i, end == std::string::npos ? s.size() : end);
      i = end == std::string::npos ? s.size() : end;
    } else if (s.compare(i, 2, "/*") == 0) {
      const size_t end = s.find("*/", i + 2);
      const size_t stop = end == std::string::npos ? s.size() : end + 2;
      blank(i, stop);
      i = stop;
    } else if (s[i] == 'R' && i + 1 < s.size() && s[i + 1] == '"' &&
               (i == 0 ||
                !(std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_'))) {
      const size_t open = s.find('(', i + 2);
      if (open == std::string::npos) {
        ++i;
        continue;
      }
      const std::string close = ")" + s.substr(i + 2, open - i - 2) + "\"";
      const size_t end = s.find(close, open);
      const size_t stop = end == std::string::npos ? s.size() : end + close.size();
      blank(i, stop);
      i = stop;
    } else if (s[i] == '"' || s[i] == '\'') {
      const char q = s[i];
      size_t k = i + 1;
      while (k < s.size() && s[k] != q && s[k] != '\n') {
        if (s[k] == '\\')
          ++k;
        ++k;
      }
      blank(i, k + 1);
      i = k + 1;
    } else {
      ++i;
    }
  }
  return out;
}

std::vector<Function> functions_of(const fs::path &path, const std::string &rel) {
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = blank_comments_and_literals(buf.str());
  enum class Scope { transparent, function, block };
  struct Open {
    Scope scope;
    int line;
    std::string name;
  };
  std::vector<Open> stack;
  std::vector<Function> out;
  static const std::regex transparent_head(R"(\b(namespace|class|struct|union|enum)\b|extern\s*$)");
  size_t head_start = 0; // the text since the last ';', '{' or '}'
  int line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n')
      ++line;
    if (c == ';') {
      head_start = i + 1;
    } else if (c == '{') {
      const std::string head = text.substr(head_start, i - head_start);
      const bool inside_function = std::any_of(
          stack.begin(), stack.end(), [](const Open &o) { return o.scope == Scope::function; });
      Scope scope = Scope::block;
      std::string name;
      if (!inside_function) {
        const size_t paren = head.find('(');
        if (std::regex_search(head, transparent_head) && paren == std::string::npos)
          scope = Scope::transparent;
        else if (head.find(')') != std::string::npos && paren != std::string::npos) {
          scope = Scope::function;
          std::string before = head.substr(0, paren);
          before.erase(0, before.find_first_not_of(" \t\n"));
          const size_t last_space = before.find_last_of(" \t\n*&");
          name = last_space == std::string::npos ? before : before.substr(last_space + 1);
        } else if (head.find('=') == std::string::npos) {
          scope = Scope::transparent; // extern "C", a class with a base list, ...
        }
      }
      stack.push_back({scope, line, name});
      head_start = i + 1;
    } else if (c == '}') {
      if (!stack.empty()) {
        const Open o = stack.back();
        stack.pop_back();
        if (o.scope == Scope::function)
          out.push_back({rel, o.line, line - o.line + 1, o.name});
      }
      head_start = i + 1;
    }
  }
  return out;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: function_lengths ROOT [--over N] [--limit N]\n");
    return 2;
  }
  const fs::path root = argv[1];
  int over = 200, limit = 250;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if ((flag != "--over" && flag != "--limit") || value <= 0) {
      std::fprintf(stderr, "function_lengths: bad argument '%s %s'\n", argv[i], argv[i + 1]);
      return 2;
    }
    (flag == "--over" ? over : limit) = value;
  }
  std::vector<Function> all;
  for (const char *dir : {"support", "compiler", "runtime", "kernels_db", "engine", "tuner", "api",
                          "cli", "include", "bench", "examples"}) {
    std::error_code ec;
    if (!fs::is_directory(root / dir, ec))
      continue;
    for (const auto &e : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h" && ext != ".hpp" && ext != ".c"))
        continue;
      const auto found = functions_of(e.path(), fs::relative(e.path(), root).generic_string());
      all.insert(all.end(), found.begin(), found.end());
    }
  }
  std::sort(all.begin(), all.end(),
            [](const Function &a, const Function &b) { return a.lines > b.lines; });
  int failing = 0, listed = 0;
  for (const Function &f : all) {
    if (f.lines <= over)
      break;
    ++listed;
    failing += f.lines > limit;
    std::printf("%5d  %s:%d  %s%s\n", f.lines, f.file.c_str(), f.first_line, f.name.c_str(),
                f.lines > limit ? "   (over the limit)" : "");
  }
  std::printf("function_lengths: %zu functions, %d over %d lines, %d over the limit of %d\n",
              all.size(), listed, over, failing, limit);
  return failing ? 1 : 0;
}
