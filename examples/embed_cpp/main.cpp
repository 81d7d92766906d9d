// An application embedding tcjit (C++): prepare a GEMM, fill its inputs on the host, launch it on
// the emulator (or a GPU with TCJIT_EXAMPLE_DEVICE=cuda), check a few elements against a host
// loop, and print where the kernel came from. Run it twice: the second run's kernel comes from the
// database ($TCJIT_DB).
#include "tcjit/tcjit.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

int main() {
  try {
    const char *device = std::getenv("TCJIT_EXAMPLE_DEVICE");
    tcjit::RuntimeOptions options; // the database: $TCJIT_DB, else ~/.cache/tcjit/kernels.db
    options.device = device ? device : "emu";
    tcjit::Runtime runtime(options);
    constexpr int m = 32, n = 32, k = 32;
    const tcjit::Operation gemm =
        runtime.prepare("gemm m=32 n=32 k=32 a=f32:row b=f32:row c=f32:row acc=f32 math=f32");
    std::printf("spec:   %s\nkey:    %s\nconfig: %s\norigin: %s\n", gemm.spec_text().c_str(),
                gemm.key_hash_hex().c_str(), gemm.config().c_str(),
                tcjit::to_string(gemm.origin()));

    // Small multiples of 1/4: every product and sum is exact in f32.
    std::vector<float> a(m * k), b(k * n), d(m * n, 0.0f);
    for (int i = 0; i < m * k; ++i)
      a[i] = static_cast<float>(i % 7 - 3) * 0.25f;
    for (int i = 0; i < k * n; ++i)
      b[i] = static_cast<float>(i % 5 - 2) * 0.5f;

    const tcjit::DeviceAddress da = runtime.allocate(a.size() * sizeof(float));
    const tcjit::DeviceAddress db = runtime.allocate(b.size() * sizeof(float));
    const tcjit::DeviceAddress dd = runtime.allocate(d.size() * sizeof(float));
    runtime.copy_to_device(da, a.data(), a.size() * sizeof(float));
    runtime.copy_to_device(db, b.data(), b.size() * sizeof(float));
    tcjit::GemmArgs args;
    args.a = da;
    args.b = db;
    args.c = dd; // beta=0: C is not read
    args.d = dd;
    gemm.launch(args);
    runtime.copy_to_host(d.data(), dd, d.size() * sizeof(float));
    runtime.free(da);
    runtime.free(db);
    runtime.free(dd);

    int checked = 0, wrong = 0;
    for (int row = 0; row < m; row += 7) {
      for (int col = 0; col < n; col += 5) {
        double expected = 0;
        for (int i = 0; i < k; ++i)
          expected += double(a[row * k + i]) * double(b[i * n + col]);
        ++checked;
        if (std::fabs(d[row * n + col] - expected) > 1e-4) {
          ++wrong;
          std::printf("D[%d][%d] = %g, expected %g\n", row, col, d[row * n + col], expected);
        }
      }
    }
    if (wrong) {
      std::printf("result: FAILED, %d of %d elements wrong\n", wrong, checked);
      return 1;
    }
    std::printf("result: ok, %d elements match the host loop on %s\n", checked,
                runtime.device_name().c_str());
    return 0;
  } catch (const tcjit::Error &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
