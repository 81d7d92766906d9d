// A stand-in for libcudnn.so.9 so the cuDNN anchor (bench/gpu_tool/cudnn_anchor.cpp) runs on
// machines without a GPU. It implements the backend (graph) API calls the anchor makes, with the
// signatures of the toolkit's cudnn_graph.h, and checks what NVIDIA's documentation of them asks:
// each attribute belongs to its descriptor and has the documented type and element count, a
// descriptor is finalized once with its required attributes and is used (as an attribute value,
// read, executed) only finalized, a convolution's tensors agree in shape. A refusal returns
// CUDNN_STATUS_BAD_PARAM (NOT_INITIALIZED for an unfinalized descriptor) and leaves its reason for
// cudnnGetLastErrorString. Execution computes the convolution on host memory (the fake libcuda's
// device memory is host malloc memory): fprop, dgrad and wgrad, f16 tensors read and written
// through the dimensions and strides they were described with, f32 accumulation.
// The heuristic offers fake_cudnn_configure's engines (default 4): engine i has global index
// 10 + i, knobs TILE_SIZE=i and STAGES=3, a workspace of i * step bytes, and may refuse to make an
// execution plan; mode B lists them in reverse order. Every call is logged (fake_cudnn_call_log).
#include <cudnn_graph.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace {

struct Attribute {
  cudnnBackendAttributeType_t type{};
  std::vector<unsigned char> bytes;
  int64_t count = 0;
};

struct Descriptor {
  cudnnBackendDescriptorType_t type{};
  bool finalized = false;
  std::map<int, Attribute> attributes;
  int engine = -1;       // ENGINECFG, ENGINE: the engine's index in the configured list
  int64_t knob_type = 0; // KNOB_CHOICE, filled from an engine config
  int64_t knob_value = 0;
  Descriptor *graph = nullptr; // ENGINECFG: the operation graph it runs
};

struct FakeHandle {
  void *stream = nullptr;
};

std::mutex mutex;
std::set<Descriptor *> descriptors;
std::set<FakeHandle *> handles;
std::string call_log, call_log_copy, last_error;
int engine_count = 4;
unsigned failing_engines = 0; // bit i: engine i's execution plan does not finalize
int64_t workspace_step = 256;
size_t version = 91900;

void record(const std::string &line) {
  call_log += line;
  call_log += '\n';
}

cudnnStatus_t refuse(cudnnStatus_t status, const std::string &why) {
  last_error = why;
  record("  refused: " + why);
  return status;
}

const char *type_name(cudnnBackendDescriptorType_t type) {
  switch (type) {
  case CUDNN_BACKEND_TENSOR_DESCRIPTOR: return "TENSOR";
  case CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR: return "CONVOLUTION";
  case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
    return "OPERATION_CONVOLUTION_FORWARD";
  case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
    return "OPERATION_CONVOLUTION_BACKWARD_DATA";
  case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
    return "OPERATION_CONVOLUTION_BACKWARD_FILTER";
  case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR: return "OPERATIONGRAPH";
  case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR: return "ENGINEHEUR";
  case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR: return "ENGINECFG";
  case CUDNN_BACKEND_ENGINE_DESCRIPTOR: return "ENGINE";
  case CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR: return "KNOB_CHOICE";
  case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: return "EXECUTION_PLAN";
  case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR: return "VARIANT_PACK";
  default: return nullptr; // a descriptor type the fake does not offer
  }
}

size_t element_size(cudnnBackendAttributeType_t type) {
  switch (type) {
  case CUDNN_TYPE_HANDLE: return sizeof(cudnnHandle_t);
  case CUDNN_TYPE_DATA_TYPE: return sizeof(cudnnDataType_t);
  case CUDNN_TYPE_INT64: return sizeof(int64_t);
  case CUDNN_TYPE_FLOAT: return sizeof(float);
  case CUDNN_TYPE_DOUBLE: return sizeof(double);
  case CUDNN_TYPE_VOID_PTR: return sizeof(void *);
  case CUDNN_TYPE_CONVOLUTION_MODE: return sizeof(cudnnConvolutionMode_t);
  case CUDNN_TYPE_HEUR_MODE: return sizeof(cudnnBackendHeurMode_t);
  case CUDNN_TYPE_KNOB_TYPE: return sizeof(cudnnBackendKnobType_t);
  case CUDNN_TYPE_BACKEND_DESCRIPTOR: return sizeof(cudnnBackendDescriptor_t);
  default: return 0;
  }
}

// What may be set on a descriptor: the attribute's type (FLOAT also allows DOUBLE: alpha and
// beta), its element count range, and for a descriptor value the type it must have.
struct Rule {
  cudnnBackendAttributeType_t type{};
  int64_t min_count = 1, max_count = 1;
  cudnnBackendDescriptorType_t value_type{};
  bool required = true;
};

bool settable_rule(cudnnBackendDescriptorType_t d, int a, Rule &rule) {
  const auto desc = [&](cudnnBackendDescriptorType_t t) {
    rule = {CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, 1, t, true};
    return true;
  };
  const auto of = [&](cudnnBackendAttributeType_t t, int64_t lo = 1, int64_t hi = 1) {
    rule = {t, lo, hi, {}, true};
    return true;
  };
  switch (d) {
  case CUDNN_BACKEND_TENSOR_DESCRIPTOR:
    switch (a) {
    case CUDNN_ATTR_TENSOR_DATA_TYPE: return of(CUDNN_TYPE_DATA_TYPE);
    case CUDNN_ATTR_TENSOR_DIMENSIONS:
    case CUDNN_ATTR_TENSOR_STRIDES: return of(CUDNN_TYPE_INT64, 1, CUDNN_DIM_MAX);
    case CUDNN_ATTR_TENSOR_UNIQUE_ID:
    case CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT: return of(CUDNN_TYPE_INT64);
    }
    return false;
  case CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR:
    switch (a) {
    case CUDNN_ATTR_CONVOLUTION_COMP_TYPE: return of(CUDNN_TYPE_DATA_TYPE);
    case CUDNN_ATTR_CONVOLUTION_CONV_MODE: return of(CUDNN_TYPE_CONVOLUTION_MODE);
    case CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS: return of(CUDNN_TYPE_INT64);
    case CUDNN_ATTR_CONVOLUTION_DILATIONS:
    case CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES:
    case CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS:
    case CUDNN_ATTR_CONVOLUTION_POST_PADDINGS: return of(CUDNN_TYPE_INT64, 1, CUDNN_DIM_MAX - 2);
    }
    return false;
  case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
    switch (a) {
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA: return of(CUDNN_TYPE_FLOAT);
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC:
      return desc(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y: return desc(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    }
    return false;
  case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
    switch (a) {
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA: return of(CUDNN_TYPE_FLOAT);
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC:
      return desc(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY: return desc(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    }
    return false;
  case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
    switch (a) {
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA: return of(CUDNN_TYPE_FLOAT);
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC:
      return desc(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY:
      return desc(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    }
    return false;
  case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
    if (a == CUDNN_ATTR_OPERATIONGRAPH_OPS) { // any operation (cudnnBackendSetAttribute checks)
      desc(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
      rule.max_count = 1 << 10;
      return true;
    }
    return a == CUDNN_ATTR_OPERATIONGRAPH_HANDLE && of(CUDNN_TYPE_HANDLE);
  case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
    if (a == CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH) {
      return desc(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    }
    return a == CUDNN_ATTR_ENGINEHEUR_MODE && of(CUDNN_TYPE_HEUR_MODE);
  case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
    if (a == CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG) {
      return desc(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    }
    if (a == CUDNN_ATTR_EXECUTION_PLAN_HANDLE) {
      of(CUDNN_TYPE_HANDLE);
      rule.required = false; // documented as optional since cuDNN 9's device properties
      return true;
    }
    return false;
  case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR:
    switch (a) {
    case CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS: return of(CUDNN_TYPE_INT64, 0, 1 << 20);
    case CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS: return of(CUDNN_TYPE_VOID_PTR, 0, 1 << 20);
    case CUDNN_ATTR_VARIANT_PACK_WORKSPACE:
      of(CUDNN_TYPE_VOID_PTR);
      rule.required = false;
      return true;
    }
    return false;
  default: return false;
  }
}

bool is_convolution_operation(cudnnBackendDescriptorType_t t) {
  return t == CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR ||
         t == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR ||
         t == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR;
}

Descriptor *live(cudnnBackendDescriptor_t d) {
  auto *descriptor = static_cast<Descriptor *>(d);
  return descriptors.count(descriptor) ? descriptor : nullptr;
}

template <typename T> std::vector<T> values(const Descriptor &d, int attribute) {
  const auto it = d.attributes.find(attribute);
  std::vector<T> out;
  if (it == d.attributes.end()) {
    return out;
  }
  out.resize(static_cast<size_t>(it->second.count));
  std::memcpy(out.data(), it->second.bytes.data(), it->second.bytes.size());
  return out;
}
template <typename T> T value(const Descriptor &d, int attribute) {
  const std::vector<T> v = values<T>(d, attribute);
  return v.empty() ? T{} : v[0];
}
Descriptor *descriptor_value(const Descriptor &d, int attribute) {
  return static_cast<Descriptor *>(value<cudnnBackendDescriptor_t>(d, attribute));
}
double scalar(const Descriptor &d, int attribute) {
  const auto it = d.attributes.find(attribute);
  if (it->second.type == CUDNN_TYPE_DOUBLE) {
    return value<double>(d, attribute);
  }
  return value<float>(d, attribute);
}

// The tensors and scalars of a convolution operation, whatever its pass.
struct ConvOperation {
  Descriptor *conv = nullptr, *x = nullptr, *w = nullptr, *y = nullptr;
  int alpha = 0, beta = 0; // attribute names
};
ConvOperation operation_parts(const Descriptor &op) {
  ConvOperation o;
  if (op.type == CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR) {
    o = {descriptor_value(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC),
         descriptor_value(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X),
         descriptor_value(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W),
         descriptor_value(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y),
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA};
  } else if (op.type == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR) {
    o = {descriptor_value(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC),
         descriptor_value(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX),
         descriptor_value(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W),
         descriptor_value(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY),
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA};
  } else {
    o = {descriptor_value(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC),
         descriptor_value(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X),
         descriptor_value(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW),
         descriptor_value(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY),
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};
  }
  return o;
}

// The attributes a descriptor type requires before it finalizes (those of settable_rule marked
// required, found by trying every attribute name the fake knows).
std::string missing_required(const Descriptor &d) {
  for (int a = 0; a < 3000; ++a) {
    Rule rule;
    if (settable_rule(d.type, a, rule) && rule.required && !d.attributes.count(a)) {
      return "attribute " + std::to_string(a) + " is required and was not set";
    }
  }
  return {};
}

// Shape agreement of a convolution operation: x (N, C, H, W), w (K, C/groups, R, S), y (N, K, P,
// Q) with P = (H + pre + post - dilation * (R - 1) - 1) / stride + 1, and the same for Q.
std::string convolution_shape_error(const Descriptor &op) {
  const ConvOperation o = operation_parts(op);
  const auto x = values<int64_t>(*o.x, CUDNN_ATTR_TENSOR_DIMENSIONS);
  const auto w = values<int64_t>(*o.w, CUDNN_ATTR_TENSOR_DIMENSIONS);
  const auto y = values<int64_t>(*o.y, CUDNN_ATTR_TENSOR_DIMENSIONS);
  if (x.size() != 4 || w.size() != 4 || y.size() != 4) {
    return "the fake computes 2-D convolutions only (4-D tensors)";
  }
  if (value<int64_t>(*o.conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS) != 2) {
    return "the convolution's spatial dims are not 2";
  }
  const auto pre = values<int64_t>(*o.conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS);
  const auto post = values<int64_t>(*o.conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS);
  const auto stride = values<int64_t>(*o.conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES);
  const auto dilation = values<int64_t>(*o.conv, CUDNN_ATTR_CONVOLUTION_DILATIONS);
  if (x[0] != y[0] || w[0] != y[1] || x[1] % w[1] != 0 || y[1] % (x[1] / w[1]) != 0) {
    return "x, w and y disagree on the batch or channel extents";
  }
  for (int i = 0; i < 2; ++i) {
    const int64_t expected =
        (x[2 + i] + pre[i] + post[i] - dilation[i] * (w[2 + i] - 1) - 1) / stride[i] + 1;
    if (y[2 + i] != expected) {
      return "y's spatial extent " + std::to_string(y[2 + i]) + " is not the convolution's " +
             std::to_string(expected);
    }
  }
  const int64_t ux = value<int64_t>(*o.x, CUDNN_ATTR_TENSOR_UNIQUE_ID),
                uw = value<int64_t>(*o.w, CUDNN_ATTR_TENSOR_UNIQUE_ID),
                uy = value<int64_t>(*o.y, CUDNN_ATTR_TENSOR_UNIQUE_ID);
  if (ux == uw || ux == uy || uw == uy) {
    return "two tensors share a unique id";
  }
  return {};
}

// Finalize's checks by descriptor type; "" when the descriptor may finalize.
std::string finalize_error(Descriptor &d) {
  if (const std::string missing = missing_required(d); !missing.empty()) {
    return missing;
  }
  switch (d.type) {
  case CUDNN_BACKEND_TENSOR_DESCRIPTOR: {
    const auto dims = values<int64_t>(d, CUDNN_ATTR_TENSOR_DIMENSIONS);
    const auto strides = values<int64_t>(d, CUDNN_ATTR_TENSOR_STRIDES);
    if (dims.size() != strides.size()) {
      return "dimensions and strides have different counts";
    }
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] <= 0 || strides[i] <= 0) {
        return "a dimension or stride is not positive";
      }
    }
    return {};
  }
  case CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR: {
    const auto dims = static_cast<size_t>(value<int64_t>(d, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS));
    for (int a : {CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES,
                  CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS}) {
      if (values<int64_t>(d, a).size() != dims) {
        return "attribute " + std::to_string(a) + " does not have SPATIAL_DIMS elements";
      }
    }
    if (value<cudnnConvolutionMode_t>(d, CUDNN_ATTR_CONVOLUTION_CONV_MODE) !=
        CUDNN_CROSS_CORRELATION) {
      return "the fake computes CUDNN_CROSS_CORRELATION only";
    }
    return {};
  }
  case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
    if (d.attributes.at(CUDNN_ATTR_OPERATIONGRAPH_OPS).count != 1) {
      return "the fake's graphs hold one operation";
    }
    if (!handles.count(reinterpret_cast<FakeHandle *>(
            value<cudnnHandle_t>(d, CUDNN_ATTR_OPERATIONGRAPH_HANDLE)))) {
      return "the handle is not a live cudnnHandle_t";
    }
    return {};
  case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR:
    if (d.attributes.at(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS).count !=
        d.attributes.at(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS).count) {
      return "UNIQUE_IDS and DATA_POINTERS have different counts";
    }
    return {};
  default:
    if (is_convolution_operation(d.type)) {
      return convolution_shape_error(d);
    }
    return {};
  }
}

// f16 <-> f32, round to nearest even (the fake's own conversion).
float half_to_float(uint16_t h) {
  const float sign = (h & 0x8000) ? -1.0f : 1.0f;
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  if (exponent == 0) {
    return sign * std::ldexp(static_cast<float>(mantissa), -24);
  }
  if (exponent == 31) {
    return mantissa ? NAN : sign * INFINITY;
  }
  return sign * std::ldexp(static_cast<float>(mantissa + 1024), exponent - 25);
}
uint16_t float_to_half(float f) {
  uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof(bits));
  const uint32_t sign = (bits >> 16) & 0x8000;
  const int32_t exponent = static_cast<int32_t>((bits >> 23) & 0xff);
  uint32_t mantissa = bits & 0x7fffff;
  if (exponent == 255) {
    return static_cast<uint16_t>(sign | 0x7c00 | (mantissa ? 0x200 : 0));
  }
  const int32_t e = exponent - 127 + 15;
  if (e >= 31) {
    return static_cast<uint16_t>(sign | 0x7c00);
  }
  if (e <= 0) {
    if (e < -10) {
      return static_cast<uint16_t>(sign);
    }
    mantissa |= 0x800000;
    const int shift = 14 - e;
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1))) {
      ++half;
    }
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(e) << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) {
    ++half; // a carry into the exponent is the correct rounding up
  }
  return static_cast<uint16_t>(half);
}

// An f16 tensor in memory as its descriptor describes it: element (a, b, c, d) at
// a * stride[0] + b * stride[1] + c * stride[2] + d * stride[3].
struct View {
  uint16_t *data = nullptr;
  std::vector<int64_t> dims, strides;
  uint16_t &at(int64_t a, int64_t b, int64_t c, int64_t d) const {
    return data[a * strides[0] + b * strides[1] + c * strides[2] + d * strides[3]];
  }
  float get(int64_t a, int64_t b, int64_t c, int64_t d) const {
    return half_to_float(at(a, b, c, d));
  }
};

View view_of(const Descriptor &tensor, const std::map<int64_t, void *> &pointers) {
  return {static_cast<uint16_t *>(pointers.at(value<int64_t>(tensor, CUDNN_ATTR_TENSOR_UNIQUE_ID))),
          values<int64_t>(tensor, CUDNN_ATTR_TENSOR_DIMENSIONS),
          values<int64_t>(tensor, CUDNN_ATTR_TENSOR_STRIDES)};
}

// The convolution of `op` on the variant pack's memory: out = alpha * conv + beta * out.
void compute(const Descriptor &op, const std::map<int64_t, void *> &pointers) {
  const ConvOperation o = operation_parts(op);
  const View x = view_of(*o.x, pointers), w = view_of(*o.w, pointers), y = view_of(*o.y, pointers);
  const float alpha = static_cast<float>(scalar(op, o.alpha));
  const float beta = static_cast<float>(scalar(op, o.beta));
  const auto pad = values<int64_t>(*o.conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS);
  const auto stride = values<int64_t>(*o.conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES);
  const auto dil = values<int64_t>(*o.conv, CUDNN_ATTR_CONVOLUTION_DILATIONS);
  const int64_t N = x.dims[0], C = x.dims[1], H = x.dims[2], W = x.dims[3];
  const int64_t K = w.dims[0], Cg = w.dims[1], R = w.dims[2], S = w.dims[3];
  const int64_t P = y.dims[2], Q = y.dims[3], Kg = K / (C / Cg);
  const auto blend = [&](uint16_t &out, float acc) {
    out = float_to_half(alpha * acc + (beta != 0.0f ? beta * half_to_float(out) : 0.0f));
  };
  if (op.type == CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR) {
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t p = 0; p < P; ++p)
          for (int64_t q = 0; q < Q; ++q) {
            float acc = 0;
            for (int64_t c = 0; c < Cg; ++c)
              for (int64_t r = 0; r < R; ++r)
                for (int64_t s = 0; s < S; ++s) {
                  const int64_t h = p * stride[0] - pad[0] + r * dil[0];
                  const int64_t ww = q * stride[1] - pad[1] + s * dil[1];
                  if (h >= 0 && h < H && ww >= 0 && ww < W) {
                    acc += x.get(n, k / Kg * Cg + c, h, ww) * w.get(k, c, r, s);
                  }
                }
            blend(y.at(n, k, p, q), acc);
          }
  } else if (op.type == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR) {
    for (int64_t n = 0; n < N; ++n)
      for (int64_t ci = 0; ci < C; ++ci)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t ww = 0; ww < W; ++ww) {
            float acc = 0;
            const int64_t group = ci / Cg, c = ci % Cg;
            for (int64_t k = group * Kg; k < (group + 1) * Kg; ++k)
              for (int64_t r = 0; r < R; ++r)
                for (int64_t s = 0; s < S; ++s) {
                  const int64_t ph = h + pad[0] - r * dil[0], qw = ww + pad[1] - s * dil[1];
                  if (ph < 0 || qw < 0 || ph % stride[0] || qw % stride[1]) {
                    continue;
                  }
                  const int64_t p = ph / stride[0], q = qw / stride[1];
                  if (p < P && q < Q) {
                    acc += y.get(n, k, p, q) * w.get(k, c, r, s);
                  }
                }
            blend(x.at(n, ci, h, ww), acc);
          }
  } else {
    for (int64_t k = 0; k < K; ++k)
      for (int64_t c = 0; c < Cg; ++c)
        for (int64_t r = 0; r < R; ++r)
          for (int64_t s = 0; s < S; ++s) {
            float acc = 0;
            for (int64_t n = 0; n < N; ++n)
              for (int64_t p = 0; p < P; ++p)
                for (int64_t q = 0; q < Q; ++q) {
                  const int64_t h = p * stride[0] - pad[0] + r * dil[0];
                  const int64_t ww = q * stride[1] - pad[1] + s * dil[1];
                  if (h >= 0 && h < H && ww >= 0 && ww < W) {
                    acc += x.get(n, k / Kg * Cg + c, h, ww) * y.get(n, k, p, q);
                  }
                }
            blend(w.at(k, c, r, s), acc);
          }
  }
}

// The engines in the heuristic's order for `mode`: mode B lists them in reverse.
std::vector<int> heuristic_order(cudnnBackendHeurMode_t mode) {
  std::vector<int> order;
  for (int i = 0; i < engine_count; ++i) {
    order.push_back(mode == CUDNN_HEUR_MODE_B ? engine_count - 1 - i : i);
  }
  return order;
}

const char *mode_name(cudnnBackendHeurMode_t mode) {
  switch (mode) {
  case CUDNN_HEUR_MODE_A: return "A";
  case CUDNN_HEUR_MODE_B: return "B";
  case CUDNN_HEUR_MODE_INSTANT: return "INSTANT";
  default: return "FALLBACK";
  }
}

} // namespace

extern "C" {

// Test control: the engines the heuristic offers (count, a bit per engine whose execution plan
// does not finalize, workspace bytes per engine index), the version reported, the call log, and
// what is still alive.
void fake_cudnn_configure(int count, unsigned failing_mask, int64_t workspace_bytes_step) {
  std::lock_guard lock(mutex);
  engine_count = count;
  failing_engines = failing_mask;
  workspace_step = workspace_bytes_step;
}
void fake_cudnn_set_version(size_t v) {
  std::lock_guard lock(mutex);
  version = v;
}
void fake_cudnn_reset_call_log() {
  std::lock_guard lock(mutex);
  call_log.clear();
}
const char *fake_cudnn_call_log() {
  std::lock_guard lock(mutex);
  call_log_copy = call_log;
  return call_log_copy.c_str();
}
int fake_cudnn_live_descriptors() {
  std::lock_guard lock(mutex);
  return static_cast<int>(descriptors.size());
}
int fake_cudnn_live_handles() {
  std::lock_guard lock(mutex);
  return static_cast<int>(handles.size());
}

size_t cudnnGetVersion() {
  std::lock_guard lock(mutex);
  record("cudnnGetVersion");
  return version;
}

const char *cudnnGetErrorString(cudnnStatus_t status) {
  switch (status) {
  case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
  case CUDNN_STATUS_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
  case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
  case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
  default: return "CUDNN_STATUS_INTERNAL_ERROR";
  }
}

void cudnnGetLastErrorString(char *message, size_t max_size) {
  std::lock_guard lock(mutex);
  if (message && max_size > 0) {
    std::snprintf(message, max_size, "%s", last_error.c_str());
  }
  last_error.clear();
}

cudnnStatus_t cudnnCreate(cudnnHandle_t *handle) {
  std::lock_guard lock(mutex);
  record("cudnnCreate");
  if (!handle) {
    return refuse(CUDNN_STATUS_BAD_PARAM, "cudnnCreate: null handle pointer");
  }
  auto *fake = new FakeHandle;
  handles.insert(fake);
  *handle = reinterpret_cast<cudnnHandle_t>(fake);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
  std::lock_guard lock(mutex);
  record("cudnnDestroy");
  auto *fake = reinterpret_cast<FakeHandle *>(handle);
  if (!handles.erase(fake)) {
    return refuse(CUDNN_STATUS_BAD_PARAM, "cudnnDestroy: not a live handle");
  }
  delete fake;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream) {
  std::lock_guard lock(mutex);
  char line[64];
  std::snprintf(line, sizeof(line), "cudnnSetStream stream=%p", static_cast<void *>(stream));
  record(line);
  auto *fake = reinterpret_cast<FakeHandle *>(handle);
  if (!handles.count(fake)) {
    return refuse(CUDNN_STATUS_BAD_PARAM, "cudnnSetStream: not a live handle");
  }
  fake->stream = stream;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
                                           cudnnBackendDescriptor_t *descriptor) {
  std::lock_guard lock(mutex);
  const char *name = type_name(type);
  record(std::string("cudnnBackendCreateDescriptor ") + (name ? name : "?"));
  if (!name || !descriptor) {
    return refuse(CUDNN_STATUS_NOT_SUPPORTED, "descriptor type not offered by the fake");
  }
  auto *d = new Descriptor;
  d->type = type;
  descriptors.insert(d);
  *descriptor = d;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor) {
  std::lock_guard lock(mutex);
  Descriptor *d = live(descriptor);
  if (!d) {
    return refuse(CUDNN_STATUS_BAD_PARAM, "cudnnBackendDestroyDescriptor: not a live descriptor");
  }
  descriptors.erase(d);
  delete d;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                       cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t count,
                                       const void *elements) {
  std::lock_guard lock(mutex);
  Descriptor *d = live(descriptor);
  const std::string where = "cudnnBackendSetAttribute(" +
                            std::string(d ? type_name(d->type) : "?") + ", attribute " +
                            std::to_string(static_cast<int>(name)) + ")";
  record(where);
  if (!d) {
    return refuse(CUDNN_STATUS_BAD_PARAM, where + ": not a live descriptor");
  }
  if (d->finalized) {
    return refuse(CUDNN_STATUS_BAD_PARAM, where + ": the descriptor is already finalized");
  }
  Rule rule;
  if (!settable_rule(d->type, name, rule)) {
    return refuse(CUDNN_STATUS_BAD_PARAM, where + ": not an attribute this descriptor sets");
  }
  const bool float_or_double = rule.type == CUDNN_TYPE_FLOAT && type == CUDNN_TYPE_DOUBLE;
  if (type != rule.type && !float_or_double) {
    return refuse(CUDNN_STATUS_BAD_PARAM,
                  where + ": wrong attribute type " + std::to_string(static_cast<int>(type)));
  }
  if (count < rule.min_count || count > rule.max_count || (count > 0 && !elements)) {
    return refuse(CUDNN_STATUS_BAD_PARAM,
                  where + ": element count " + std::to_string(count) + " is not allowed");
  }
  if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
    const auto *list = static_cast<const cudnnBackendDescriptor_t *>(elements);
    for (int64_t i = 0; i < count; ++i) {
      const Descriptor *v = live(list[i]);
      const bool type_ok =
          v && (name == CUDNN_ATTR_OPERATIONGRAPH_OPS ? is_convolution_operation(v->type)
                                                      : v->type == rule.value_type);
      if (!type_ok || !v->finalized) {
        return refuse(CUDNN_STATUS_BAD_PARAM,
                      where + ": the value is not a finalized descriptor of the expected type");
      }
    }
  }
  Attribute &attribute = d->attributes[name];
  attribute.type = type;
  attribute.count = count;
  const auto *bytes = static_cast<const unsigned char *>(elements);
  attribute.bytes.assign(bytes, bytes + count * static_cast<int64_t>(element_size(type)));
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor) {
  std::lock_guard lock(mutex);
  Descriptor *d = live(descriptor);
  if (!d) {
    record("cudnnBackendFinalize ?");
    return refuse(CUDNN_STATUS_BAD_PARAM, "cudnnBackendFinalize: not a live descriptor");
  }
  std::string line = std::string("cudnnBackendFinalize ") + type_name(d->type);
  if (d->type == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR &&
      d->attributes.count(CUDNN_ATTR_ENGINEHEUR_MODE)) {
    line += std::string(" mode=") +
            mode_name(value<cudnnBackendHeurMode_t>(*d, CUDNN_ATTR_ENGINEHEUR_MODE));
  }
  const Descriptor *config = d->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR
                                 ? descriptor_value(*d, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG)
                                 : nullptr;
  if (config) {
    line += " engine=" + std::to_string(10 + config->engine);
  }
  record(line);
  if (d->finalized) {
    return refuse(CUDNN_STATUS_BAD_PARAM, line + ": already finalized");
  }
  if (const std::string error = finalize_error(*d); !error.empty()) {
    return refuse(CUDNN_STATUS_BAD_PARAM, line + ": " + error);
  }
  if (config && (failing_engines >> config->engine & 1u)) {
    return refuse(CUDNN_STATUS_NOT_SUPPORTED, "engine " + std::to_string(10 + config->engine) +
                                                  " does not support this operation graph (fake)");
  }
  d->finalized = true;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor,
                                       cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t requested,
                                       int64_t *count, void *elements) {
  std::lock_guard lock(mutex);
  Descriptor *d = live(descriptor);
  const std::string where = "cudnnBackendGetAttribute(" +
                            std::string(d ? type_name(d->type) : "?") + ", attribute " +
                            std::to_string(static_cast<int>(name)) + ")";
  record(where);
  if (!d) {
    return refuse(CUDNN_STATUS_BAD_PARAM, where + ": not a live descriptor");
  }
  if (!d->finalized) {
    return refuse(CUDNN_STATUS_NOT_INITIALIZED, where + ": the descriptor is not finalized");
  }
  if (requested < 0 || (requested > 0 && !elements)) {
    return refuse(CUDNN_STATUS_BAD_PARAM, where + ": bad requested count or null array");
  }
  const auto expect = [&](cudnnBackendAttributeType_t t) { return type == t; };
  auto *out_descriptors = static_cast<cudnnBackendDescriptor_t *>(elements);
  // Fills `n` caller-created descriptors of type `t` through `fill`.
  const auto fill_descriptors = [&](int64_t n, cudnnBackendDescriptorType_t t, auto fill) {
    for (int64_t i = 0; i < std::min(n, requested); ++i) {
      Descriptor *target = live(out_descriptors[i]);
      if (!target || target->type != t || target->finalized) {
        return refuse(CUDNN_STATUS_BAD_PARAM, where + ": array element " + std::to_string(i) +
                                                  " is not a new descriptor of the expected type");
      }
      fill(*target, i);
      target->finalized = true;
    }
    if (count) {
      *count = requested == 0 ? n : std::min(n, requested);
    }
    return CUDNN_STATUS_SUCCESS;
  };
  const auto one_int64 = [&](int64_t v) {
    if (!expect(CUDNN_TYPE_INT64) || requested < 1) {
      return refuse(CUDNN_STATUS_BAD_PARAM, where + ": read as CUDNN_TYPE_INT64, one element");
    }
    *static_cast<int64_t *>(elements) = v;
    if (count) {
      *count = 1;
    }
    return CUDNN_STATUS_SUCCESS;
  };
  if (d->type == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR && name == CUDNN_ATTR_ENGINEHEUR_RESULTS &&
      expect(CUDNN_TYPE_BACKEND_DESCRIPTOR)) {
    if (!count) {
      return refuse(CUDNN_STATUS_BAD_PARAM, where + ": null element count");
    }
    const std::vector<int> order =
        heuristic_order(value<cudnnBackendHeurMode_t>(*d, CUDNN_ATTR_ENGINEHEUR_MODE));
    Descriptor *graph = descriptor_value(*d, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH);
    return fill_descriptors(static_cast<int64_t>(order.size()), CUDNN_BACKEND_ENGINECFG_DESCRIPTOR,
                            [&](Descriptor &cfg, int64_t i) {
                              cfg.engine = order[static_cast<size_t>(i)];
                              cfg.graph = graph;
                            });
  }
  if (d->type == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR && name == CUDNN_ATTR_ENGINECFG_ENGINE &&
      expect(CUDNN_TYPE_BACKEND_DESCRIPTOR)) {
    return fill_descriptors(1, CUDNN_BACKEND_ENGINE_DESCRIPTOR,
                            [&](Descriptor &engine, int64_t) { engine.engine = d->engine; });
  }
  if (d->type == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR && name == CUDNN_ATTR_ENGINECFG_KNOB_CHOICES &&
      expect(CUDNN_TYPE_BACKEND_DESCRIPTOR)) {
    return fill_descriptors(
        2, CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, [&](Descriptor &knob, int64_t i) {
          knob.knob_type = i == 0 ? CUDNN_KNOB_TYPE_TILE_SIZE : CUDNN_KNOB_TYPE_STAGES;
          knob.knob_value = i == 0 ? d->engine : 3;
        });
  }
  if (d->type == CUDNN_BACKEND_ENGINE_DESCRIPTOR && name == CUDNN_ATTR_ENGINE_GLOBAL_INDEX) {
    return one_int64(10 + d->engine);
  }
  if (d->type == CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR && name == CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE) {
    if (!expect(CUDNN_TYPE_KNOB_TYPE) || requested < 1) {
      return refuse(CUDNN_STATUS_BAD_PARAM, where + ": read as CUDNN_TYPE_KNOB_TYPE");
    }
    *static_cast<cudnnBackendKnobType_t *>(elements) =
        static_cast<cudnnBackendKnobType_t>(d->knob_type);
    if (count) {
      *count = 1;
    }
    return CUDNN_STATUS_SUCCESS;
  }
  if (d->type == CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR &&
      name == CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE) {
    return one_int64(d->knob_value);
  }
  if (d->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR &&
      name == CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE) {
    const Descriptor *config = descriptor_value(*d, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG);
    return one_int64(config->engine * workspace_step);
  }
  return refuse(CUDNN_STATUS_BAD_PARAM, where + ": not an attribute (and type) the fake reads");
}

cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                                  cudnnBackendDescriptor_t pack) {
  std::lock_guard lock(mutex);
  auto *fake = reinterpret_cast<FakeHandle *>(handle);
  Descriptor *p = live(plan), *v = live(pack);
  const Descriptor *config =
      p && p->finalized ? descriptor_value(*p, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG) : nullptr;
  char line[128];
  std::snprintf(line, sizeof(line), "cudnnBackendExecute stream=%p engine=%d",
                handles.count(fake) ? fake->stream : nullptr, config ? 10 + config->engine : -1);
  record(line);
  if (!handles.count(fake)) {
    return refuse(CUDNN_STATUS_BAD_PARAM, "cudnnBackendExecute: not a live handle");
  }
  if (!p || p->type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR || !p->finalized || !v ||
      v->type != CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR || !v->finalized) {
    return refuse(CUDNN_STATUS_BAD_PARAM,
                  "cudnnBackendExecute: needs a finalized execution plan and variant pack");
  }
  const Descriptor &graph = *config->graph;
  if (value<cudnnHandle_t>(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE) != handle) {
    return refuse(CUDNN_STATUS_BAD_PARAM,
                  "cudnnBackendExecute: the plan was made for another handle");
  }
  const auto uids = values<int64_t>(*v, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS);
  const auto pointers = values<void *>(*v, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS);
  std::map<int64_t, void *> by_uid;
  for (size_t i = 0; i < uids.size(); ++i) {
    by_uid[uids[i]] = pointers[i];
  }
  const Descriptor &op = *descriptor_value(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS);
  const ConvOperation parts = operation_parts(op);
  for (const Descriptor *tensor : {parts.x, parts.w, parts.y}) {
    const int64_t uid = value<int64_t>(*tensor, CUDNN_ATTR_TENSOR_UNIQUE_ID);
    if (!by_uid.count(uid) || !by_uid[uid]) {
      return refuse(CUDNN_STATUS_BAD_PARAM,
                    "cudnnBackendExecute: no data pointer for tensor uid " + std::to_string(uid));
    }
    if (value<cudnnDataType_t>(*tensor, CUDNN_ATTR_TENSOR_DATA_TYPE) != CUDNN_DATA_HALF) {
      return refuse(CUDNN_STATUS_NOT_SUPPORTED, "cudnnBackendExecute: the fake computes f16 only");
    }
  }
  const int64_t workspace_bytes = config->engine * workspace_step;
  void *workspace = value<void *>(*v, CUDNN_ATTR_VARIANT_PACK_WORKSPACE);
  if (workspace_bytes > 0 && !workspace) {
    return refuse(CUDNN_STATUS_BAD_PARAM, "cudnnBackendExecute: the plan needs a workspace");
  }
  if (workspace_bytes > 0) {
    std::memset(workspace, 0xab, static_cast<size_t>(workspace_bytes)); // as a kernel would use it
  }
  compute(op, by_uid);
  return CUDNN_STATUS_SUCCESS;
}

} // extern "C"
