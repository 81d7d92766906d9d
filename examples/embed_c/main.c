/* An application embedding tcjit through its C API: prepare a GEMM, fill its inputs on the host,
 * launch it on the emulator (TCJIT_EXAMPLE_DEVICE=cuda for a GPU), check a few elements against
 * a host loop, and print where the kernel came from. */
#include "tcjit/tcjit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { M = 32, N = 32, K = 32 };

static int check(tcjit_status status, const char *what) {
  if (status == TCJIT_OK)
    return 1;
  fprintf(stderr, "%s: %s\n%s\n", what, tcjit_status_name(status), tcjit_last_error_message());
  return 0;
}

int main(void) {
  static float a[M * K], b[K * N], d[M * N];
  tcjit_runtime_options options = {0};
  tcjit_runtime *rt = NULL;
  tcjit_operation *op = NULL;
  tcjit_device_ptr da = 0, db = 0, dd = 0;
  int row, col, i, checked = 0, wrong = 0, ok = 0;
  const char *device = getenv("TCJIT_EXAMPLE_DEVICE");

  options.device = device ? device : "emu";
  options.on_miss = TCJIT_MISS_HEURISTIC;
  if (!check(tcjit_runtime_open(&options, &rt), "tcjit_runtime_open"))
    return 1;
  if (!check(tcjit_prepare(rt, "gemm m=32 n=32 k=32 a=f32:row b=f32:row c=f32:row acc=f32 math=f32",
                           &op),
             "tcjit_prepare"))
    goto done;
  printf("spec:   %s\nkey:    %016llx\nconfig: %s\norigin: %s\n", tcjit_operation_spec(op),
         (unsigned long long)tcjit_operation_key_hash(op), tcjit_operation_config(op),
         tcjit_origin_name(tcjit_operation_origin(op)));

  /* Small multiples of 1/4: every product and sum is exact in f32. */
  for (i = 0; i < M * K; ++i)
    a[i] = (float)(i % 7 - 3) * 0.25f;
  for (i = 0; i < K * N; ++i)
    b[i] = (float)(i % 5 - 2) * 0.5f;
  if (!check(tcjit_malloc(rt, sizeof a, &da), "tcjit_malloc") ||
      !check(tcjit_malloc(rt, sizeof b, &db), "tcjit_malloc") ||
      !check(tcjit_malloc(rt, sizeof d, &dd), "tcjit_malloc") ||
      !check(tcjit_memcpy_h2d(rt, da, a, sizeof a), "tcjit_memcpy_h2d") ||
      !check(tcjit_memcpy_h2d(rt, db, b, sizeof b), "tcjit_memcpy_h2d") ||
      !check(tcjit_launch_gemm(op, da, db, dd, dd, 0, NULL), "tcjit_launch_gemm") ||
      !check(tcjit_memcpy_d2h(rt, d, dd, sizeof d), "tcjit_memcpy_d2h"))
    goto done;

  for (row = 0; row < M; row += 7) {
    for (col = 0; col < N; col += 5) {
      double expected = 0;
      for (i = 0; i < K; ++i)
        expected += (double)a[row * K + i] * (double)b[i * N + col];
      ++checked;
      if (fabs(d[row * N + col] - expected) > 1e-4) {
        ++wrong;
        printf("D[%d][%d] = %g, expected %g\n", row, col, d[row * N + col], expected);
      }
    }
  }
  if (wrong)
    printf("result: FAILED, %d of %d elements wrong\n", wrong, checked);
  else
    printf("result: ok, %d elements match the host loop\n", checked);
  ok = wrong == 0;

done:
  if (da)
    tcjit_free(rt, da);
  if (db)
    tcjit_free(rt, db);
  if (dd)
    tcjit_free(rt, dd);
  tcjit_operation_release(op);
  tcjit_runtime_close(rt);
  return ok ? 0 : 1;
}
