// Writes the seed inputs of the db_import and db_check fuzz targets with the kernels_db API:
//   make_db_seeds OUT_DIR
// OUT_DIR/db_check/tiny.db: a small valid database (two problems, a binary with a 64-byte cubin,
// results, a dispatch table; 512-byte pages, rollback journal so the file stands alone) with
// two damaged copies (its first page, its first half), and
// OUT_DIR/db_import/*.jsonl: its export, and each record type after the header on its own.
// The committed corpora (tests/fuzz/corpus/) were made by this program; run it again when the
// schema or the JSON Lines format changes.
#include "kernels_db/connection.h"
#include "kernels_db/kernels_db.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace kdb = tcjit::kernels_db;

kdb::ProblemRecord problem(int i, int64_t m) {
  kdb::ProblemRecord p;
  p.key_text = "gemm:f16:sm_80:m" + std::to_string(m) + ":n" + std::to_string(64 * i) + ":k64";
  p.key_hash = 0xF000000000000000ull + static_cast<uint64_t>(i);
  p.op = "gemm";
  p.dtype = "f16";
  p.arch = "sm_80";
  p.spec_text = "gemm m=" + std::to_string(m) + " n=" + std::to_string(64 * i) + " k=64";
  p.shape_json = "{\"k\":64,\"m\":" + std::to_string(m) + ",\"n\":" + std::to_string(64 * i) + "}";
  p.created_ms = 1700000000000;
  return p;
}

std::string config(int tile) {
  return "{\"stages\":3,\"tile_m\":" + std::to_string(tile) + ",\"tile_n\":64}";
}

kdb::BinaryRecord binary(const kdb::ProblemRecord &p, int tile) {
  kdb::BinaryRecord b;
  b.key = {p.key_text, config(tile), "sm_80", "12.4", "0.1.0"};
  b.ptx = ".version 8.4\n.target sm_80\n.address_size 64\n";
  b.cubin = {0x7f, 'E', 'L', 'F'}; // import takes only ELF cubins
  for (int i = 4; i < 64; ++i)
    b.cubin.push_back(static_cast<uint8_t>((i * 7 + tile) & 0xff));
  b.resources_json = "{\"registers\":96,\"shared_bytes\":32768,\"spill_bytes\":0}";
  b.compile_options = "-O3 --gpu-name sm_80";
  b.compile_ms = 12.5;
  b.created_ms = 1700000000000;
  return b;
}

kdb::ResultRecord result(const kdb::ProblemRecord &p, int tile, double us) {
  kdb::ResultRecord r;
  r.problem_key = p.key_text;
  r.config_json = config(tile);
  r.arch = "sm_80";
  r.status = kdb::ResultStatus::ok;
  r.timing = kdb::Timing{us, us * 0.9, us * 1.2, us * 0.05};
  r.tflops = 100.0 / us;
  r.provenance.kind = kdb::ProvenanceKind::measured;
  r.provenance.device = "NVIDIA A100-SXM4-80GB";
  r.provenance.driver = "550.54.15";
  r.provenance.clock_mhz = 1410;
  r.tuner_version = "0.1.0";
  r.measured_ms = 1700000000000;
  return r;
}

void write(const fs::path &file, const std::string &text) {
  std::ofstream(file, std::ios::binary) << text;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::cerr << "usage: make_db_seeds OUT_DIR\n";
    return 2;
  }
  const fs::path out = argv[1];
  fs::create_directories(out / "db_check");
  fs::create_directories(out / "db_import");
  const fs::path db_path = out / "db_check" / "tiny.db";
  fs::remove(db_path);

  std::string exported;
  {
    kdb::KernelsDb db = kdb::KernelsDb::open(db_path);
    const kdb::ProblemRecord fixed = problem(1, 128);
    kdb::ProblemRecord ranged = problem(2, 0);
    ranged.key_text = "gemm:f16:sm_80:m1..256:n128:k64";
    ranged.spec_text = "gemm m=1..256 n=128 k=64";
    ranged.shape_json = "{\"k\":64,\"m\":[1,256],\"n\":128}";
    db.put_problem(fixed);
    db.put_problem(ranged);
    db.put_binary(binary(fixed, 64));
    db.put_result(result(fixed, 64, 3.5));
    kdb::ResultRecord predicted = result(fixed, 128, 4.25);
    predicted.provenance.kind = kdb::ProvenanceKind::predicted;
    predicted.provenance.model = "A100-SXM4-80GB";
    db.put_result(predicted);
    kdb::DispatchTable table;
    table.problem_key = ranged.key_text;
    table.arch = "sm_80";
    table.tuner_version = "0.1.0";
    table.created_ms = 1700000000000;
    table.entries = {{"{\"m\":[1,16]}", config(64), 2.0, kdb::ProvenanceKind::measured},
                     {"{\"m\":[17,256]}", config(128), 5.0, kdb::ProvenanceKind::predicted}};
    db.put_dispatch_table(table);
    std::ostringstream text;
    db.export_jsonl(text);
    exported = text.str();
    db.vacuum();
  }
  {
    // One file without -wal/-shm: back to a rollback journal, compacted into 512-byte pages
    // (small inputs fuzz faster).
    kdb::Connection connection = kdb::Connection::open(db_path);
    connection.exec("PRAGMA journal_mode = DELETE");
    connection.exec("PRAGMA page_size = 512");
    connection.exec("VACUUM");
  }

  // Damaged copies: the first page only, and the first half.
  std::ifstream in(db_path, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  write(out / "db_check" / "first_page.db", bytes.substr(0, 512));
  write(out / "db_check" / "first_half.db", bytes.substr(0, bytes.size() / 2));

  write(out / "db_import" / "export.jsonl", exported);
  std::istringstream lines(exported);
  std::string header;
  std::getline(lines, header);
  write(out / "db_import" / "header_only.jsonl", header + "\n");
  std::string line;
  int n = 0;
  while (std::getline(lines, line))
    write(out / "db_import" / ("record_" + std::to_string(++n) + ".jsonl"),
          header + "\n" + line + "\n");
  std::cout << "make_db_seeds: " << db_path.string() << " (" << fs::file_size(db_path)
            << " bytes), " << n << " records in " << (out / "db_import").string() << "\n";
  return 0;
}
