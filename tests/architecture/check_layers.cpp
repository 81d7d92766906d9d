// check_layers: the layering rules of tcjit (docs/architecture.md), checked on the sources.
//
//   check_layers ROOT            exit 0 when every include of ROOT's sources keeps the rules, 1
//   with
//                                 one line per broken rule (file:line, the include, the rule)
//   check_layers ROOT --summary  also the includes between layers and folders, counted
//
// The build enforces the layers by include directories (cmake/TcjitLayers.cmake): an upward include
// does not compile. This program says the same before anything is built, with the rule in words,
// and checks what the build cannot: the order of the folders inside a layer, and that no folder
// or header takes part in an include cycle. Only quoted includes of files inside ROOT count.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// The layers, lowest first, and what each may include besides itself. "public" is include/tcjit/
// (the installed API); "op_spec" is include/tcjit/op_spec.h, the one public header the compiler
// and the layers above it use as plain data.
struct Layer {
  const char *name;
  int level;
  std::vector<std::string> may_include;
};

const std::vector<Layer> &layers() {
  static const std::vector<Layer> table = {
      {"support", 0, {}},
      {"op_spec", 0, {}},
      {"compiler", 1, {"support", "op_spec"}},
      {"runtime", 2, {"support"}},
      {"kernels_db", 3, {"support"}},
      {"engine", 3, {"support", "op_spec", "compiler", "runtime", "kernels_db"}},
      {"tuner", 4, {"support", "op_spec", "compiler", "runtime", "kernels_db", "engine"}},
      {"public", 5, {"op_spec"}},
      {"api",
       5,
       {"support", "op_spec", "compiler", "runtime", "kernels_db", "engine", "tuner", "public"}},
      {"cli", 6, {"op_spec", "public"}},
      // the Python package's module: a client of include/tcjit/, with the CLI's JSON documents
      // of the database (cli/db_json.h, one schema)
      {"python", 7, {"op_spec", "public", "cli"}},
  };
  return table;
}

// The folders inside a layer, in order: a folder may include the folders of a lower rank only
// (equal ranks are siblings that never include each other). A layer's own files outside these
// folders (runtime/device_factory.cpp) stand above all of them.
const std::map<std::string, int> &folder_ranks() {
  static const std::map<std::string, int> ranks = {
      {"compiler/target", 0},
      {"compiler/spec", 1},
      {"compiler/dsl", 2},
      {"compiler/reference", 2},
      {"compiler/codegen/plan", 3},
      {"compiler/codegen/llvm", 4},
      {"compiler/codegen/cuda", 4},
      {"compiler/codegen", 5},
      {"compiler", 6},
      {"runtime/device", 0},
      {"runtime/jit", 1},
      {"runtime/emu", 2},
      {"runtime/cuda", 2},
      {"runtime", 3},
  };
  return ranks;
}

const Layer *find_layer(const std::string &name) {
  for (const Layer &l : layers())
    if (name == l.name)
      return &l;
  return nullptr;
}

// The layer of a path relative to ROOT, or "" when the path is in none (tests, bench, examples).
std::string layer_of(const std::string &rel) {
  if (rel == "include/tcjit/op_spec.h")
    return "op_spec";
  if (rel.rfind("include/tcjit/", 0) == 0)
    return "public";
  const std::string top = rel.substr(0, rel.find('/'));
  return find_layer(top) ? top : "";
}

std::string folder_of(const std::string &rel) {
  const size_t slash = rel.rfind('/');
  return slash == std::string::npos ? "" : rel.substr(0, slash);
}

bool is_header(const fs::path &p) {
  const std::string ext = p.extension().string();
  return ext == ".h" || ext == ".hpp";
}

bool is_source(const fs::path &p) {
  const std::string ext = p.extension().string();
  return is_header(p) || ext == ".cpp" || ext == ".c";
}

struct Include {
  std::string from; // relative to ROOT
  int line = 0;
  std::string text; // as written
  std::string to;   // relative to ROOT
};

// Every quoted include of a file inside ROOT, resolved as the build does: from ROOT (the path every
// source uses), "tcjit/..." from include/, else beside the including file.
std::vector<Include> read_includes(const fs::path &root, const std::string &rel) {
  static const std::regex include_line(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::vector<Include> out;
  std::ifstream in(root / rel);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::smatch m;
    if (!std::regex_search(line, m, include_line))
      continue;
    const std::string text = m[1];
    std::vector<fs::path> candidates = {root / text, root / "include" / text,
                                        root / fs::path(rel).parent_path() / text};
    for (const fs::path &c : candidates) {
      std::error_code ec;
      if (!fs::is_regular_file(c, ec))
        continue;
      const std::string to = fs::relative(fs::weakly_canonical(c), root).generic_string();
      if (!layer_of(to).empty())
        out.push_back({rel, number, text, to});
      break;
    }
  }
  return out;
}

std::string join(const std::vector<std::string> &items) {
  std::string s;
  for (const std::string &i : items)
    s += (s.empty() ? "" : ", ") + (i == "public"    ? std::string("include/tcjit")
                                    : i == "op_spec" ? std::string("include/tcjit/op_spec.h")
                                                     : i);
  return s.empty() ? "nothing outside itself" : s;
}

// Strongly connected components of more than one node (Tarjan), each sorted.
std::vector<std::vector<std::string>>
cycles(const std::map<std::string, std::set<std::string>> &g) {
  std::map<std::string, int> index, low;
  std::set<std::string> on_stack;
  std::vector<std::string> stack;
  std::vector<std::vector<std::string>> out;
  int next = 0;
  std::function<void(const std::string &)> visit = [&](const std::string &v) {
    index[v] = low[v] = next++;
    stack.push_back(v);
    on_stack.insert(v);
    if (auto it = g.find(v); it != g.end())
      for (const std::string &w : it->second) {
        if (!index.count(w)) {
          visit(w);
          low[v] = std::min(low[v], low[w]);
        } else if (on_stack.count(w)) {
          low[v] = std::min(low[v], index[w]);
        }
      }
    if (low[v] != index[v])
      return;
    std::vector<std::string> scc;
    std::string w;
    do {
      w = stack.back();
      stack.pop_back();
      on_stack.erase(w);
      scc.push_back(w);
    } while (w != v);
    if (scc.size() > 1) {
      std::sort(scc.begin(), scc.end());
      out.push_back(scc);
    }
  };
  for (const auto &[v, edges] : g)
    if (!index.count(v))
      visit(v);
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && std::string(argv[2]) != "--summary")) {
    std::fprintf(stderr, "usage: check_layers ROOT [--summary]\n");
    return 2;
  }
  const fs::path root = fs::weakly_canonical(argv[1]);
  const bool summary = argc == 3;
  std::error_code ec;
  if (!fs::is_directory(root / "compiler", ec)) {
    std::fprintf(stderr, "check_layers: %s is not a tcjit source tree (no compiler/ folder)\n",
                 root.c_str());
    return 2;
  }
  std::vector<std::string> files;
  for (const Layer &l : layers()) {
    const fs::path dir = std::string(l.name) == "public" || std::string(l.name) == "op_spec"
                             ? root / "include/tcjit"
                             : root / l.name;
    if (std::string(l.name) == "op_spec" || !fs::is_directory(dir, ec))
      continue;
    for (const auto &e : fs::recursive_directory_iterator(dir))
      if (e.is_regular_file() && is_source(e.path()))
        files.push_back(fs::relative(e.path(), root).generic_string());
  }
  std::sort(files.begin(), files.end());

  std::vector<std::string> problems;
  std::map<std::string, std::set<std::string>> folder_graph, header_graph;
  std::map<std::string, std::map<std::string, int>> crossing; // layer -> layer -> count
  int total = 0;
  for (const std::string &from : files) {
    for (const Include &inc : read_includes(root, from)) {
      ++total;
      const std::string a = layer_of(from), b = layer_of(inc.to);
      const std::string where =
          inc.from + ":" + std::to_string(inc.line) + ": #include \"" + inc.text + "\"";
      if (a != b) {
        ++crossing[a][b];
        const Layer *la = find_layer(a);
        const Layer *lb = find_layer(b);
        const auto &allowed = la->may_include;
        if (std::find(allowed.begin(), allowed.end(), b) == allowed.end())
          problems.push_back(where + ": " + (a == "public" ? "include/tcjit" : a) + " (layer " +
                             std::to_string(la->level) + ") may not include " +
                             (b == "public" ? "include/tcjit" : b) + " (layer " +
                             std::to_string(lb->level) + "); it may include " + join(allowed) +
                             ". Move the code to the layer that owns it, or pass the value in "
                             "from above.");
      }
      const std::string fa = folder_of(inc.from), fb = folder_of(inc.to);
      if (fa != fb) {
        folder_graph[fa].insert(fb);
        const auto ra = folder_ranks().find(fa), rb = folder_ranks().find(fb);
        if (a == b && ra != folder_ranks().end() && rb != folder_ranks().end() &&
            ra->second <= rb->second)
          problems.push_back(where + ": " + fa + "/ may not include " + fb + "/ (" +
                             (ra->second == rb->second
                                  ? "sibling folders of " + a + " never include each other"
                                  : fb + "/ stands above " + fa + "/ in " + a) +
                             "; docs/architecture.md lists the order)");
      }
      if (is_header(inc.from)) // only headers are included, so only they can form a cycle
        header_graph[inc.from].insert(inc.to);
    }
  }
  for (const auto &scc : cycles(folder_graph)) {
    std::string s;
    for (const std::string &f : scc)
      s += (s.empty() ? "" : ", ") + f + "/";
    problems.push_back("folder cycle: " + s + " include each other");
  }
  for (const auto &scc : cycles(header_graph)) {
    std::string s;
    for (const std::string &f : scc)
      s += (s.empty() ? "" : ", ") + f;
    problems.push_back("header cycle: " + s + " include each other");
  }

  if (summary) {
    std::printf("%zu files, %d includes of tcjit's own headers\n", files.size(), total);
    for (const auto &[a, row] : crossing)
      for (const auto &[b, n] : row)
        std::printf("  %-10s -> %-10s %4d\n", a.c_str(), b.c_str(), n);
  }
  for (const std::string &p : problems)
    std::printf("%s\n", p.c_str());
  if (!problems.empty()) {
    std::printf("check_layers: %zu broken rule(s) in %s\n", problems.size(), root.c_str());
    return 1;
  }
  std::printf("check_layers: ok, %zu files keep the layering rules\n", files.size());
  return 0;
}
