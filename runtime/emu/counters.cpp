#include "runtime/emu/counters.h"

#include <cstdio>

namespace tcjit::emu {

namespace {
double ratio(uint64_t a, uint64_t b) {
  return b == 0 ? 0.0 : static_cast<double>(a) / b;
}
} // namespace

double LaunchCounters::global_load_sectors_per_request() const {
  return ratio(global_load_sectors, global_load_requests + cp_async_requests);
}
double LaunchCounters::global_store_sectors_per_request() const {
  return ratio(global_store_sectors, global_store_requests);
}
double LaunchCounters::global_load_efficiency() const {
  return ratio(global_bytes_read, global_load_sectors * 32);
}
double LaunchCounters::global_store_efficiency() const {
  return ratio(global_bytes_written, global_store_sectors * 32);
}

void LaunchCounters::add(const LaunchCounters &o) {
  ctas += o.ctas;
  threads += o.threads;
  warp_instructions += o.warp_instructions;
  for (size_t i = 0; i < kInstrClassCount; ++i)
    warp_instructions_by_class[i] += o.warp_instructions_by_class[i];
  thread_instructions += o.thread_instructions;
  mma_instructions += o.mma_instructions;
  undefined_mma_sp_rows += o.undefined_mma_sp_rows;
  mma_flops += o.mma_flops;
  shared_load_requests += o.shared_load_requests;
  shared_store_requests += o.shared_store_requests;
  ldmatrix_requests += o.ldmatrix_requests;
  shared_wavefronts += o.shared_wavefronts;
  shared_ideal_wavefronts += o.shared_ideal_wavefronts;
  shared_bank_conflicts += o.shared_bank_conflicts;
  global_load_requests += o.global_load_requests;
  global_store_requests += o.global_store_requests;
  global_atomic_requests += o.global_atomic_requests;
  cp_async_requests += o.cp_async_requests;
  global_load_sectors += o.global_load_sectors;
  global_store_sectors += o.global_store_sectors;
  global_bytes_read += o.global_bytes_read;
  global_bytes_written += o.global_bytes_written;
  local_requests += o.local_requests;
  barriers += o.barriers;
}

std::string format_counters(const LaunchCounters &c) {
  std::string out;
  char buf[256];
  auto line = [&](const char *name, uint64_t v) {
    std::snprintf(buf, sizeof buf, "  %-34s %llu\n", name, static_cast<unsigned long long>(v));
    out += buf;
  };
  auto fline = [&](const char *name, double v) {
    std::snprintf(buf, sizeof buf, "  %-34s %.3f\n", name, v);
    out += buf;
  };
  out += "launch counters:\n";
  line("ctas", c.ctas);
  line("threads", c.threads);
  line("warp instructions", c.warp_instructions);
  for (size_t i = 0; i < kInstrClassCount; ++i) {
    std::string n = std::string("  ") + instr_class_name(static_cast<InstrClass>(i));
    line(n.c_str(), c.warp_instructions_by_class[i]);
  }
  line("thread instructions", c.thread_instructions);
  line("mma instructions", c.mma_instructions);
  line("mma flops", c.mma_flops);
  line("undefined mma.sp rows (poisoned)", c.undefined_mma_sp_rows);
  line("shared load requests", c.shared_load_requests);
  line("shared store requests", c.shared_store_requests);
  line("ldmatrix requests", c.ldmatrix_requests);
  line("shared wavefronts", c.shared_wavefronts);
  line("shared bank conflicts", c.shared_bank_conflicts);
  line("global load requests", c.global_load_requests);
  line("global store requests", c.global_store_requests);
  line("global atomic requests", c.global_atomic_requests);
  line("cp.async requests", c.cp_async_requests);
  line("global load sectors", c.global_load_sectors);
  line("global store sectors", c.global_store_sectors);
  fline("global load sectors/request", c.global_load_sectors_per_request());
  fline("global store sectors/request", c.global_store_sectors_per_request());
  fline("global load efficiency", c.global_load_efficiency());
  fline("global store efficiency", c.global_store_efficiency());
  line("global bytes read", c.global_bytes_read);
  line("global bytes written", c.global_bytes_written);
  line("local requests", c.local_requests);
  line("barriers", c.barriers);
  return out;
}

} // namespace tcjit::emu
