// A stand-in for libcublasLt.so.13 so the cuBLASLt anchor (bench/gpu_tool/cublaslt_anchor.cpp) runs
// on machines without a GPU. It implements the entry points the anchor uses, typed by the
// toolkit's cublasLt.h, and checks their arguments as NVIDIA's documentation states them: null or
// destroyed handles and descriptors, unknown attributes, attribute sizes, the data-type table of
// cublasLtMatmul, the dimensions of op(A) op(B) against D, leading dimensions, the int8 (IMMA)
// rules in column order ("TN" only, m and k and leading dimensions multiples of 4, 4-byte aligned
// pointers, alpha and beta 0 or 1), epilogues refused on a row-order D, workspace sizes.
//
// cublasLtMatmul really computes D on host memory (the fake libcuda's device memory is host
// malloc memory): every layout is read as documented (CUBLASLT_ORDER_COL: element (r, c) at
// c * ld + r; CUBLASLT_ORDER_ROW: at r * ld + c; batch i at i * STRIDED_BATCH_OFFSET), op = T
// transposes, f16/bf16 in and out with f32 accumulation, f32 with TF32 inputs (rounded to nearest,
// ties away, to 10 mantissa bits) under CUBLAS_COMPUTE_32F_FAST_TF32, s8 in and s32 out with
// s32 accumulation; epilogues bias (one per row of D), ReLU and GELU (the tanh form).
//
// Test controls: fake_cublaslt_call_log (the calls since fake_cublaslt_reset_call_log, one per
// line: the name, the attribute number of a SetAttribute/GetAttribute call, " stream=%p" for
// cublasLtMatmul), fake_cublaslt_set_heuristic_results (how many algorithms the heuristic offers,
// default 8), fake_cublaslt_fail_call (an entry point that returns a given status from now on),
// fake_cublaslt_live_objects (handles and descriptors not yet destroyed).
#include <cublasLt.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

struct cublasLtContext {
  int unused = 0;
};

namespace {

struct FakeMatmulDesc {
  int32_t compute = 0, scale = 0, pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  int32_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N, transc = CUBLAS_OP_N;
  int32_t fill_mode = CUBLAS_FILL_MODE_FULL;
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void *bias = nullptr;
  int64_t bias_batch_stride = 0;
  int32_t bias_type = -1;
};
struct FakeLayout {
  uint32_t type = 0;
  int32_t order = CUBLASLT_ORDER_COL;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t batch = 1;
  int64_t stride = 0, plane_offset = 0;
  uint32_t batch_mode = CUBLASLT_BATCH_MODE_STRIDED;
};
struct FakePreference {
  uint32_t search_mode = CUBLASLT_SEARCH_BEST_FIT;
  uint64_t max_workspace = 0;
  uint32_t reduction_mask = CUBLASLT_REDUCTION_SCHEME_MASK;
  uint32_t alignment[4] = {256, 256, 256, 256};
  float max_waves = 0;
  uint64_t impl_mask = ~uint64_t{0};
};

std::mutex mutex;
std::map<const void *, std::unique_ptr<cublasLtContext>> handles;
std::map<const void *, std::unique_ptr<FakeMatmulDesc>> matmul_descs;
std::map<const void *, std::unique_ptr<FakeLayout>> layouts;
std::map<const void *, std::unique_ptr<FakePreference>> preferences;
std::string call_log, call_log_copy;
int heuristic_results = 8;
std::string failing_call; // fake_cublaslt_fail_call: this entry point returns failing_status
cublasStatus_t failing_status = CUBLAS_STATUS_SUCCESS;

// An algo the fake's heuristic wrote: data[0] this mark, then id, tile, stages, split-k,
// reduction scheme, workspace bytes.
constexpr uint64_t algo_mark = 0x66616b65'6c74616cULL;

void record(const std::string &call) {
  call_log += call;
  call_log += '\n';
}
void record_attribute(const char *name, int attribute) {
  record(std::string(name) + " " + std::to_string(attribute));
}

// The status a test made `name` return (SUCCESS: none).
cublasStatus_t forced(const char *name) {
  return failing_call == name ? failing_status : CUBLAS_STATUS_SUCCESS;
}

template <class T> T *find(std::map<const void *, std::unique_ptr<T>> &objects, const void *key) {
  auto it = objects.find(key);
  return it == objects.end() ? nullptr : it->second.get();
}

// Copies an attribute value: INVALID_VALUE when buf is null or its size is not the attribute's.
cublasStatus_t set_field(void *field, size_t field_size, const void *buf, size_t size) {
  if (!buf || size != field_size) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  std::memcpy(field, buf, size);
  return CUBLAS_STATUS_SUCCESS;
}
template <class T> cublasStatus_t set(T &field, const void *buf, size_t size) {
  return set_field(&field, sizeof(T), buf, size);
}

// ---- element formats (round to nearest even, as the tensor cores store) ----

float f16_to_f32(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  const uint32_t bits = exponent == 31 ? sign | 0x7f800000u | (mantissa << 13)
                                       : sign | ((exponent + 112) << 23) | (mantissa << 13);
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}
uint16_t f32_to_f16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  const uint32_t sign = (bits >> 16) & 0x8000u, exponent = (bits >> 23) & 0xffu;
  uint32_t mantissa = bits & 0x7fffffu;
  if (exponent == 0xff) {
    return static_cast<uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
  }
  const int biased = static_cast<int>(exponent) - 127 + 15;
  if (biased >= 31) {
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  uint32_t kept, rest, halfway;
  if (biased <= 0) { // a subnormal half: units of 2^-24
    if (biased < -10) {
      return static_cast<uint16_t>(sign);
    }
    mantissa |= 0x800000u;
    const int shift = 14 - biased;
    kept = mantissa >> shift;
    rest = mantissa & ((1u << shift) - 1);
    halfway = 1u << (shift - 1);
  } else {
    kept = (static_cast<uint32_t>(biased) << 10) | (mantissa >> 13);
    rest = mantissa & 0x1fffu;
    halfway = 0x1000u;
  }
  if (rest > halfway || (rest == halfway && (kept & 1u))) {
    ++kept; // a carry into the exponent is the right result (up to infinity)
  }
  return static_cast<uint16_t>(sign | kept);
}
float bf16_to_f32(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}
uint16_t f32_to_bf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if (std::isnan(value)) {
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  }
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}
float to_tf32(float value) { // 10 explicit mantissa bits, to nearest with ties away from zero
  if (!std::isfinite(value)) {
    return value;
  }
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  bits = (bits + 0x1000u) & ~0x1fffu;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

int64_t element_bytes(uint32_t type) {
  switch (type) {
  case CUDA_R_16F:
  case CUDA_R_16BF: return 2;
  case CUDA_R_32F:
  case CUDA_R_32I: return 4;
  case CUDA_R_8I: return 1;
  default: return 0;
  }
}

// ---- the problem a descriptor set describes ----

struct Problem {
  const FakeMatmulDesc *desc = nullptr;
  const FakeLayout *a = nullptr, *b = nullptr, *c = nullptr, *d = nullptr;
  uint64_t m = 0, n = 0, k = 0;
  bool integer = false, tf32 = false;
  uint32_t bias_type = 0;
};

bool type_combination_supported(const FakeMatmulDesc &desc, uint32_t ab, uint32_t cd) {
  const bool f32_scale = desc.scale == CUDA_R_32F;
  switch (desc.compute) {
  case CUBLAS_COMPUTE_32F:
    return f32_scale &&
           ((ab == CUDA_R_16F && cd == CUDA_R_16F) || (ab == CUDA_R_16BF && cd == CUDA_R_16BF) ||
            (ab == CUDA_R_32F && cd == CUDA_R_32F));
  case CUBLAS_COMPUTE_32F_FAST_TF32: return f32_scale && ab == CUDA_R_32F && cd == CUDA_R_32F;
  case CUBLAS_COMPUTE_32I: return desc.scale == CUDA_R_32I && ab == CUDA_R_8I && cd == CUDA_R_32I;
  default: return false;
  }
}

bool epilogue_has_bias(uint32_t epilogue) {
  return epilogue == CUBLASLT_EPILOGUE_BIAS || epilogue == CUBLASLT_EPILOGUE_RELU_BIAS ||
         epilogue == CUBLASLT_EPILOGUE_GELU_BIAS;
}

// The dimensions and the documented constraints of one matmul (shared by the heuristic and
// cublasLtMatmul).
cublasStatus_t check_problem(Problem &p) {
  const FakeMatmulDesc &desc = *p.desc;
  const FakeLayout &a = *p.a, &b = *p.b, &c = *p.c, &d = *p.d;
  if (a.type != b.type || c.type != d.type || !type_combination_supported(desc, a.type, d.type)) {
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (desc.transc != CUBLAS_OP_N || desc.pointer_mode != CUBLASLT_POINTER_MODE_HOST ||
      desc.fill_mode != CUBLAS_FILL_MODE_FULL) {
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  for (const FakeLayout *layout : {p.a, p.b, p.c, p.d}) {
    if (layout->order != CUBLASLT_ORDER_COL && layout->order != CUBLASLT_ORDER_ROW) {
      return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    if (layout->plane_offset != 0 || layout->batch_mode != CUBLASLT_BATCH_MODE_STRIDED) {
      return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    const uint64_t least = layout->order == CUBLASLT_ORDER_COL ? layout->rows : layout->cols;
    if (layout->rows == 0 || layout->cols == 0 || layout->ld < 0 ||
        static_cast<uint64_t>(layout->ld) < least || layout->batch < 1 || layout->stride < 0) {
      return CUBLAS_STATUS_INVALID_VALUE;
    }
  }
  const bool ta = desc.transa != CUBLAS_OP_N, tb = desc.transb != CUBLAS_OP_N;
  const uint64_t a_rows = ta ? a.cols : a.rows, a_cols = ta ? a.rows : a.cols;
  const uint64_t b_rows = tb ? b.cols : b.rows, b_cols = tb ? b.rows : b.cols;
  p.m = d.rows;
  p.n = d.cols;
  p.k = a_cols;
  if (a_rows != p.m || b_rows != p.k || b_cols != p.n) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (c.rows != d.rows || c.cols != d.cols || c.order != d.order || c.batch != d.batch ||
      a.batch != d.batch || b.batch != d.batch) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  const uint32_t e = desc.epilogue;
  if (e != CUBLASLT_EPILOGUE_DEFAULT && e != CUBLASLT_EPILOGUE_RELU &&
      e != CUBLASLT_EPILOGUE_GELU && !epilogue_has_bias(e)) {
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (e != CUBLASLT_EPILOGUE_DEFAULT && d.order == CUBLASLT_ORDER_ROW) {
    return CUBLAS_STATUS_NOT_SUPPORTED; // no epilogue on a row-order D
  }
  p.integer = desc.compute == CUBLAS_COMPUTE_32I;
  p.tf32 = desc.compute == CUBLAS_COMPUTE_32F_FAST_TF32;
  p.bias_type = desc.bias_type == -1 ? d.type : static_cast<uint32_t>(desc.bias_type);
  if (epilogue_has_bias(e) && !p.integer && p.bias_type != d.type) {
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (p.integer) { // IMMA in regular order: "TN", m and k and lds multiples of 4, no epilogue
    if (e != CUBLASLT_EPILOGUE_DEFAULT) {
      return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    for (const FakeLayout *layout : {p.a, p.b, p.c, p.d}) {
      if (layout->order != CUBLASLT_ORDER_COL) {
        return CUBLAS_STATUS_NOT_SUPPORTED;
      }
    }
    if (!ta || tb || p.m % 4 != 0 || p.k % 4 != 0 || a.ld % 4 != 0 || b.ld % 4 != 0 ||
        c.ld % 4 != 0) {
      return CUBLAS_STATUS_NOT_SUPPORTED;
    }
  }
  return CUBLAS_STATUS_SUCCESS;
}

// Element (row, col) of matrix `batch` of a layout, as a byte offset.
int64_t offset_of(const FakeLayout &layout, int64_t batch, uint64_t row, uint64_t col) {
  const int64_t r = static_cast<int64_t>(row), c = static_cast<int64_t>(col);
  const int64_t index =
      batch * layout.stride +
      (layout.order == CUBLASLT_ORDER_COL ? c * layout.ld + r : r * layout.ld + c);
  return index * element_bytes(layout.type);
}
double read_value(uint32_t type, const char *at, bool tf32) {
  switch (type) {
  case CUDA_R_16F: {
    uint16_t h;
    std::memcpy(&h, at, 2);
    return f16_to_f32(h);
  }
  case CUDA_R_16BF: {
    uint16_t h;
    std::memcpy(&h, at, 2);
    return bf16_to_f32(h);
  }
  case CUDA_R_32F: {
    float f;
    std::memcpy(&f, at, 4);
    return tf32 ? to_tf32(f) : f;
  }
  case CUDA_R_32I: {
    int32_t i;
    std::memcpy(&i, at, 4);
    return i;
  }
  case CUDA_R_8I: return static_cast<int8_t>(*at);
  default: return 0;
  }
}
void write_value(uint32_t type, char *at, float value, int32_t integer) {
  switch (type) {
  case CUDA_R_16F: {
    const uint16_t h = f32_to_f16(value);
    std::memcpy(at, &h, 2);
    break;
  }
  case CUDA_R_16BF: {
    const uint16_t h = f32_to_bf16(value);
    std::memcpy(at, &h, 2);
    break;
  }
  case CUDA_R_32F: std::memcpy(at, &value, 4); break;
  case CUDA_R_32I: std::memcpy(at, &integer, 4); break;
  default: break;
  }
}

float gelu_tanh(float x) {
  return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
}

// D = epilogue(alpha op(A) op(B) + beta C), every matrix of the batch.
void compute(const Problem &p, const void *alpha, const char *a, const char *b, const void *beta,
             const char *c, char *d) {
  const FakeMatmulDesc &desc = *p.desc;
  const bool ta = desc.transa != CUBLAS_OP_N, tb = desc.transb != CUBLAS_OP_N;
  float alpha_f = 0, beta_f = 0;
  int32_t alpha_i = 0, beta_i = 0;
  if (p.integer) {
    std::memcpy(&alpha_i, alpha, 4);
    std::memcpy(&beta_i, beta, 4);
  } else {
    std::memcpy(&alpha_f, alpha, 4);
    std::memcpy(&beta_f, beta, 4);
  }
  const char *bias = static_cast<const char *>(desc.bias);
  for (int64_t batch = 0; batch < p.d->batch; ++batch) {
    for (uint64_t j = 0; j < p.n; ++j) {
      for (uint64_t i = 0; i < p.m; ++i) {
        float sum = 0;
        int64_t isum = 0; // s32 accumulation, wrapping as the hardware does (below)
        for (uint64_t kk = 0; kk < p.k; ++kk) {
          const double x = read_value(
              p.a->type, a + (ta ? offset_of(*p.a, batch, kk, i) : offset_of(*p.a, batch, i, kk)),
              p.tf32);
          const double y = read_value(
              p.b->type, b + (tb ? offset_of(*p.b, batch, j, kk) : offset_of(*p.b, batch, kk, j)),
              p.tf32);
          if (p.integer) {
            isum += static_cast<int64_t>(x) * static_cast<int64_t>(y);
          } else {
            sum += static_cast<float>(x) * static_cast<float>(y);
          }
        }
        char *out = d + offset_of(*p.d, batch, i, j);
        if (p.integer) {
          int64_t value = alpha_i * isum;
          if (beta_i != 0) {
            value += beta_i * static_cast<int64_t>(
                                  read_value(p.c->type, c + offset_of(*p.c, batch, i, j), false));
          }
          write_value(p.d->type, out, 0, static_cast<int32_t>(static_cast<uint32_t>(value)));
          continue;
        }
        float value = alpha_f * sum;
        if (beta_f != 0) {
          value += beta_f * static_cast<float>(
                                read_value(p.c->type, c + offset_of(*p.c, batch, i, j), false));
        }
        if (epilogue_has_bias(desc.epilogue)) {
          const int64_t at = batch * desc.bias_batch_stride + static_cast<int64_t>(i);
          value += static_cast<float>(
              read_value(p.bias_type, bias + at * element_bytes(p.bias_type), false));
        }
        if ((desc.epilogue & CUBLASLT_EPILOGUE_RELU) != 0) {
          value = value > 0 ? value : 0;
        }
        if ((desc.epilogue & CUBLASLT_EPILOGUE_GELU) != 0) {
          value = gelu_tanh(value);
        }
        write_value(p.d->type, out, value, 0);
      }
    }
  }
}

uint64_t address(const void *pointer) {
  return reinterpret_cast<uint64_t>(pointer);
}

} // namespace

extern "C" {

// ---- test controls ----
void fake_cublaslt_reset_call_log() {
  std::lock_guard lock(mutex);
  call_log.clear();
}
const char *fake_cublaslt_call_log() {
  std::lock_guard lock(mutex);
  call_log_copy = call_log;
  return call_log_copy.c_str();
}
void fake_cublaslt_set_heuristic_results(int count) {
  std::lock_guard lock(mutex);
  heuristic_results = count;
}
// From now on the entry point `name` (every call to it) returns `status`; a null name stops it.
void fake_cublaslt_fail_call(const char *name, int status) {
  std::lock_guard lock(mutex);
  failing_call = name ? name : "";
  failing_status = static_cast<cublasStatus_t>(status);
}
int fake_cublaslt_live_objects() {
  std::lock_guard lock(mutex);
  return static_cast<int>(handles.size() + matmul_descs.size() + layouts.size() +
                          preferences.size());
}

// ---- the library ----
size_t cublasLtGetVersion() {
  std::lock_guard lock(mutex);
  record("cublasLtGetVersion");
  return 130100;
}

const char *cublasLtGetStatusString(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS: return "success";
  case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
  case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
  case CUBLAS_STATUS_INVALID_VALUE: return "an invalid value was used as an argument";
  case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
  case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
  default: return "fake cuBLASLt status";
  }
}

cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle) {
  std::lock_guard lock(mutex);
  record("cublasLtCreate");
  if (const cublasStatus_t status = forced("cublasLtCreate"); status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  if (!handle) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  auto created = std::make_unique<cublasLtContext>();
  *handle = created.get();
  handles[created.get()] = std::move(created);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  std::lock_guard lock(mutex);
  record("cublasLtDestroy");
  if (!handle || !handles.erase(handle)) {
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc, cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  std::lock_guard lock(mutex);
  record("cublasLtMatmulDescCreate");
  if (const cublasStatus_t status = forced("cublasLtMatmulDescCreate");
      status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  if (!desc) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  auto created = std::make_unique<FakeMatmulDesc>();
  created->compute = compute;
  created->scale = scale;
  *desc = reinterpret_cast<cublasLtMatmulDesc_t>(created.get());
  matmul_descs[created.get()] = std::move(created);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  std::lock_guard lock(mutex);
  record("cublasLtMatmulDescDestroy");
  return matmul_descs.erase(desc) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t handle,
                                              cublasLtMatmulDescAttributes_t attribute,
                                              const void *buf, size_t size) {
  std::lock_guard lock(mutex);
  record_attribute("cublasLtMatmulDescSetAttribute", attribute);
  if (const cublasStatus_t status = forced("cublasLtMatmulDescSetAttribute");
      status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  FakeMatmulDesc *desc = find(matmul_descs, handle);
  if (!desc) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  switch (attribute) {
  case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return set(desc->compute, buf, size);
  case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return set(desc->scale, buf, size);
  case CUBLASLT_MATMUL_DESC_POINTER_MODE: return set(desc->pointer_mode, buf, size);
  case CUBLASLT_MATMUL_DESC_TRANSA: return set(desc->transa, buf, size);
  case CUBLASLT_MATMUL_DESC_TRANSB: return set(desc->transb, buf, size);
  case CUBLASLT_MATMUL_DESC_TRANSC: return set(desc->transc, buf, size);
  case CUBLASLT_MATMUL_DESC_FILL_MODE: return set(desc->fill_mode, buf, size);
  case CUBLASLT_MATMUL_DESC_EPILOGUE: return set(desc->epilogue, buf, size);
  case CUBLASLT_MATMUL_DESC_BIAS_POINTER: return set(desc->bias, buf, size);
  case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE: return set(desc->bias_batch_stride, buf, size);
  case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: return set(desc->bias_type, buf, size);
  default: return CUBLAS_STATUS_INVALID_VALUE; // not an attribute this fake models
  }
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld) {
  std::lock_guard lock(mutex);
  record("cublasLtMatrixLayoutCreate");
  if (const cublasStatus_t status = forced("cublasLtMatrixLayoutCreate");
      status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  if (!layout) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  auto created = std::make_unique<FakeLayout>();
  created->type = static_cast<uint32_t>(type);
  created->rows = rows;
  created->cols = cols;
  created->ld = ld;
  *layout = reinterpret_cast<cublasLtMatrixLayout_t>(created.get());
  layouts[created.get()] = std::move(created);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  std::lock_guard lock(mutex);
  record("cublasLtMatrixLayoutDestroy");
  return layouts.erase(layout) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}
cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t handle,
                                                cublasLtMatrixLayoutAttribute_t attribute,
                                                const void *buf, size_t size) {
  std::lock_guard lock(mutex);
  record_attribute("cublasLtMatrixLayoutSetAttribute", attribute);
  if (const cublasStatus_t status = forced("cublasLtMatrixLayoutSetAttribute");
      status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  FakeLayout *layout = find(layouts, handle);
  if (!layout) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  switch (attribute) {
  case CUBLASLT_MATRIX_LAYOUT_TYPE: return set(layout->type, buf, size);
  case CUBLASLT_MATRIX_LAYOUT_ORDER: return set(layout->order, buf, size);
  case CUBLASLT_MATRIX_LAYOUT_ROWS: return set(layout->rows, buf, size);
  case CUBLASLT_MATRIX_LAYOUT_COLS: return set(layout->cols, buf, size);
  case CUBLASLT_MATRIX_LAYOUT_LD: return set(layout->ld, buf, size);
  case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return set(layout->batch, buf, size);
  case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: return set(layout->stride, buf, size);
  case CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET: return set(layout->plane_offset, buf, size);
  case CUBLASLT_MATRIX_LAYOUT_BATCH_MODE: return set(layout->batch_mode, buf, size);
  default: return CUBLAS_STATUS_INVALID_VALUE;
  }
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *preference) {
  std::lock_guard lock(mutex);
  record("cublasLtMatmulPreferenceCreate");
  if (const cublasStatus_t status = forced("cublasLtMatmulPreferenceCreate");
      status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  if (!preference) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  auto created = std::make_unique<FakePreference>();
  *preference = reinterpret_cast<cublasLtMatmulPreference_t>(created.get());
  preferences[created.get()] = std::move(created);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t preference) {
  std::lock_guard lock(mutex);
  record("cublasLtMatmulPreferenceDestroy");
  return preferences.erase(preference) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t handle,
                                                    cublasLtMatmulPreferenceAttributes_t attribute,
                                                    const void *buf, size_t size) {
  std::lock_guard lock(mutex);
  record_attribute("cublasLtMatmulPreferenceSetAttribute", attribute);
  if (const cublasStatus_t status = forced("cublasLtMatmulPreferenceSetAttribute");
      status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  FakePreference *preference = find(preferences, handle);
  if (!preference) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  switch (attribute) {
  case CUBLASLT_MATMUL_PREF_SEARCH_MODE: return set(preference->search_mode, buf, size);
  case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES: return set(preference->max_workspace, buf, size);
  case CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK:
    return set(preference->reduction_mask, buf, size);
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES: {
    uint32_t value = 0;
    if (const cublasStatus_t status = set(value, buf, size); status != CUBLAS_STATUS_SUCCESS) {
      return status;
    }
    if (value == 0 || (value & (value - 1)) != 0) {
      return CUBLAS_STATUS_INVALID_VALUE; // an alignment is a power of two
    }
    preference->alignment[attribute - CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES] = value;
    return CUBLAS_STATUS_SUCCESS;
  }
  case CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT: return set(preference->max_waves, buf, size);
  case CUBLASLT_MATMUL_PREF_IMPL_MASK: return set(preference->impl_mask, buf, size);
  default: return CUBLAS_STATUS_INVALID_VALUE;
  }
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle,
                                              cublasLtMatmulDesc_t operation,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              cublasLtMatmulPreference_t preference, int requested,
                                              cublasLtMatmulHeuristicResult_t results[],
                                              int *returned) {
  std::lock_guard lock(mutex);
  record("cublasLtMatmulAlgoGetHeuristic");
  if (const cublasStatus_t status = forced("cublasLtMatmulAlgoGetHeuristic");
      status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  if (!find(handles, handle)) {
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  Problem p;
  p.desc = find(matmul_descs, operation);
  p.a = find(layouts, a);
  p.b = find(layouts, b);
  p.c = find(layouts, c);
  p.d = find(layouts, d);
  const FakePreference *pref = find(preferences, preference);
  if (!p.desc || !p.a || !p.b || !p.c || !p.d || !pref || requested <= 0 || !results || !returned) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (const cublasStatus_t status = check_problem(p); status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  const int count = requested < heuristic_results ? requested : heuristic_results;
  for (int i = 0; i < count; ++i) {
    cublasLtMatmulHeuristicResult_t &result = results[i];
    std::memset(&result, 0, sizeof(result));
    const uint64_t workspace = uint64_t{1} << (20 + i % 3); // 1, 2 or 4 MiB
    result.workspaceSize = workspace <= pref->max_workspace ? workspace : 0;
    const uint64_t fields[] = {algo_mark,
                               static_cast<uint64_t>(21 + i % 3),
                               static_cast<uint64_t>(CUBLASLT_MATMUL_TILE_128x128 + i),
                               static_cast<uint64_t>(CUBLASLT_MATMUL_STAGES_64x3 + i % 2),
                               static_cast<uint64_t>(1 + i / 4),
                               i / 4 ? uint64_t{CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE} : 0,
                               result.workspaceSize};
    std::memcpy(result.algo.data, fields, sizeof(fields));
    result.state = CUBLAS_STATUS_SUCCESS;
    result.wavesCount = 0.5f + 0.125f * static_cast<float>(i);
  }
  *returned = count;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t *algo,
                                                    cublasLtMatmulAlgoConfigAttributes_t attribute,
                                                    void *buf, size_t size, size_t *written) {
  std::lock_guard lock(mutex);
  record_attribute("cublasLtMatmulAlgoConfigGetAttribute", attribute);
  if (const cublasStatus_t status = forced("cublasLtMatmulAlgoConfigGetAttribute");
      status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  if (!algo || algo->data[0] != algo_mark) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  uint64_t value = 0;
  size_t value_size = 4;
  switch (attribute) {
  case CUBLASLT_ALGO_CONFIG_ID: value = algo->data[1]; break;
  case CUBLASLT_ALGO_CONFIG_TILE_ID: value = algo->data[2]; break;
  case CUBLASLT_ALGO_CONFIG_STAGES_ID: value = algo->data[3]; break;
  case CUBLASLT_ALGO_CONFIG_SPLITK_NUM: value = algo->data[4]; break;
  case CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME: value = algo->data[5]; break;
  case CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING:
  case CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION: value = 0; break;
  case CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID:
  case CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID: value_size = 2; break;
  default: return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (size == 0) {
    if (!written) {
      return CUBLAS_STATUS_INVALID_VALUE;
    }
    *written = value_size;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (!buf || size != value_size) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (value_size == 4) {
    const uint32_t narrow = static_cast<uint32_t>(value);
    std::memcpy(buf, &narrow, 4);
  } else {
    const uint16_t narrow = static_cast<uint16_t>(value);
    std::memcpy(buf, &narrow, 2);
  }
  if (written) {
    *written = value_size;
  }
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t operation,
                              const void *alpha, const void *a, cublasLtMatrixLayout_t a_layout,
                              const void *b, cublasLtMatrixLayout_t b_layout, const void *beta,
                              const void *c, cublasLtMatrixLayout_t c_layout, void *d,
                              cublasLtMatrixLayout_t d_layout, const cublasLtMatmulAlgo_t *algo,
                              void *workspace, size_t workspace_bytes, cudaStream_t stream) {
  std::lock_guard lock(mutex);
  char line[96];
  std::snprintf(line, sizeof(line), "cublasLtMatmul stream=%p", static_cast<void *>(stream));
  record(line);
  if (!find(handles, handle)) {
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  if (const cublasStatus_t status = forced("cublasLtMatmul"); status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  Problem p;
  p.desc = find(matmul_descs, operation);
  p.a = find(layouts, a_layout);
  p.b = find(layouts, b_layout);
  p.d = find(layouts, d_layout);
  p.c = c_layout ? find(layouts, c_layout) : p.d; // Cdesc omitted: as Ddesc
  if (!p.desc || !p.a || !p.b || !p.c || !p.d || !alpha || !beta || !a || !b || !d ||
      (!c && c_layout)) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (const cublasStatus_t status = check_problem(p); status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  if (algo && algo->data[0] != algo_mark) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  const uint64_t needed = algo ? algo->data[6] : 0;
  if (workspace_bytes < needed || (!workspace && workspace_bytes > 0)) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (epilogue_has_bias(p.desc->epilogue) && !p.desc->bias) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (p.integer) {
    int32_t alpha_i, beta_i;
    std::memcpy(&alpha_i, alpha, 4);
    std::memcpy(&beta_i, beta, 4);
    if ((alpha_i != 0 && alpha_i != 1) || (beta_i != 0 && beta_i != 1) || address(a) % 4 != 0 ||
        address(b) % 4 != 0 || address(d) % 4 != 0 || (c && address(c) % 4 != 0)) {
      return CUBLAS_STATUS_INVALID_VALUE;
    }
  }
  compute(p, alpha, static_cast<const char *>(a), static_cast<const char *>(b), beta,
          static_cast<const char *>(c ? c : d), static_cast<char *>(d));
  return CUBLAS_STATUS_SUCCESS;
}

} // extern "C"
