#include "tests/emu/emu_test_util.h"

#include <array>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <gtest/gtest.h>

namespace tcjit::emu::test {

std::string ptx_module(const std::string &body, const std::string &target) {
  return ".version 8.0\n.target " + target + "\n.address_size 64\n" + body;
}

uint64_t f32_bits(float f) {
  return std::bit_cast<uint32_t>(f);
}
float bits_f32(uint64_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b));
}
uint64_t f64_bits(double d) {
  return std::bit_cast<uint64_t>(d);
}
double bits_f64(uint64_t b) {
  return std::bit_cast<double>(b);
}

std::vector<uint64_t> run_lanes(const std::string &snippet, const std::string &result,
                                const std::vector<std::array<uint64_t, 3>> &in,
                                const std::string &target) {
  std::string store;
  if (result == "b64")
    store = "";
  else if (result == "b32")
    store = "cvt.u64.u32 %d, %rd;";
  else if (result == "f32")
    store = "mov.b32 %rd, %fd; cvt.u64.u32 %d, %rd;";
  else if (result == "f64")
    store = "mov.b64 %d, %dd;";
  else if (result == "b16")
    store = "cvt.u64.u16 %d, %hd;";
  else if (result == "pred")
    store = "selp.u64 %d, 1, 0, %pd;";
  else
    ADD_FAILURE() << "unknown result kind " << result;
  std::string body = R"(
.visible .entry lanes(.param .u64 out, .param .u64 in, .param .u32 n)
{
  .reg .b64 %a, %b, %c, %d, %addr, %t;
  .reg .b32 %ra, %rb, %rc, %rd, %tid, %n;
  .reg .f32 %fa, %fb, %fc, %fd;
  .reg .f64 %da, %db, %dc, %dd;
  .reg .b16 %ha, %hb, %hc, %hd;
  .reg .pred %p, %q, %pd, %oob;
  mov.u32 %tid, %ctaid.x;
  mov.u32 %rd, %ntid.x;
  mov.u32 %n, %tid.x;
  mad.lo.u32 %tid, %tid, %rd, %n;
  ld.param.u32 %n, [n];
  setp.ge.u32 %oob, %tid, %n;
  @%oob bra DONE;
  ld.param.u64 %addr, [in];
  mul.wide.u32 %t, %tid, 24;
  add.u64 %addr, %addr, %t;
  ld.global.u64 %a, [%addr];
  ld.global.u64 %b, [%addr+8];
  ld.global.u64 %c, [%addr+16];
  cvt.u32.u64 %ra, %a;
  cvt.u32.u64 %rb, %b;
  cvt.u32.u64 %rc, %c;
  mov.b32 %fa, %ra;
  mov.b32 %fb, %rb;
  mov.b32 %fc, %rc;
  mov.b64 %da, %a;
  mov.b64 %db, %b;
  mov.b64 %dc, %c;
  cvt.u16.u64 %ha, %a;
  cvt.u16.u64 %hb, %b;
  cvt.u16.u64 %hc, %c;
  and.b32 %rd, %ra, 1;
  setp.ne.u32 %p, %rd, 0;
  and.b32 %rd, %rb, 1;
  setp.ne.u32 %q, %rd, 0;
  mov.u64 %d, 0;
  mov.u32 %rd, 0;
)" + snippet + "\n" + store +
                     R"(
  ld.param.u64 %addr, [out];
  mul.wide.u32 %t, %tid, 8;
  add.u64 %addr, %addr, %t;
  st.global.u64 [%addr], %d;
DONE:
  ret;
}
)";
  EmuDevice dev;
  std::vector<uint64_t> flat;
  for (const auto &row : in)
    flat.insert(flat.end(), row.begin(), row.end());
  device::DevicePtr din = upload(dev, flat);
  device::DevicePtr dout = dev.allocate(in.size() * 8);
  uint32_t n = static_cast<uint32_t>(in.size());
  launch(dev, ptx_module(body, target), "lanes", {(n + 31) / 32, 1, 1}, {32, 1, 1},
         {Arg::of(dout), Arg::of(din), Arg::of(n)});
  return download<uint64_t>(dev, dout, in.size());
}

std::string load_error(const std::string &ptx) {
  EmuDevice dev;
  try {
    dev.load_module(ptx, "kernel.ptx");
  } catch (const device::DeviceError &e) {
    EXPECT_EQ(e.kind(), device::ErrorKind::ModuleLoad);
    return e.what();
  }
  return "";
}

void launch(EmuDevice &dev, const std::string &ptx, const std::string &kernel, device::Dim3 grid,
            device::Dim3 block, const std::vector<Arg> &args, uint32_t dynamic_shared,
            const std::string &source_name) {
  device::ModuleHandle m = dev.load_module(ptx, source_name);
  device::FunctionHandle f = dev.get_function(m, kernel);
  const device::KernelInfo &info = dev.kernel_info(f);
  device::ParamBuffer params(info);
  if (args.size() != info.params.size())
    throw std::runtime_error("test passes " + std::to_string(args.size()) + " args, kernel has " +
                             std::to_string(info.params.size()));
  for (size_t i = 0; i < args.size(); ++i)
    params.set_bytes(i, args[i].bytes.data(), args[i].bytes.size());
  dev.launch(f, {grid, block, dynamic_shared}, params.bytes());
}

namespace {

std::string read_file(const std::filesystem::path &p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::filesystem::path temp_dir() {
  static int counter = 0;
  auto dir = std::filesystem::temp_directory_path() /
             ("tcjit_emu_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::create_directories(dir);
  return dir;
}

} // namespace

std::string nvcc_ptx(const std::string &cuda_source, const std::string &arch,
                     const std::string &extra_flags) {
  auto dir = temp_dir();
  {
    std::ofstream out(dir / "k.cu");
    out << cuda_source;
  }
  std::string cmd = std::string(TCJIT_NVCC) + " -ptx -arch=" + arch + " " + extra_flags + " " +
                    (dir / "k.cu").string() + " -o " + (dir / "k.ptx").string() + " 2> " +
                    (dir / "err.txt").string();
  int rc = std::system(cmd.c_str());
  std::string ptx = read_file(dir / "k.ptx");
  std::string err = read_file(dir / "err.txt");
  std::filesystem::remove_all(dir);
  if (rc != 0) {
    ADD_FAILURE() << "nvcc failed (" << cmd << "):\n" << err;
    return "";
  }
  return ptx;
}

} // namespace tcjit::emu::test
