// TileConfig: *how* a GEMM is computed (what the tuner searches), its validation and a default.
#pragma once

#include "compiler/codegen/plan/conv_lowering.h"
#include "compiler/target/mma_table.h"
#include "tcjit/op_spec.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit::codegen {

struct TileConfig {
  int bm = 128, bn = 128, bk = 32; // CTA tile
  int wm = 64, wn = 64;            // warp tile; warps per CTA = (bm / wm) * (bn / wn)
  int stages = 3;                  // cp.async pipeline depth, 2..6
  int split_k = 1;                 // K slices (1 = none)
  int raster_group = 1;            // CTA rasterization: group this many CTA rows along M (L2)
  int vec_a = 0, vec_b = 0;        // global vector width in elements; 0 = widest the spec allows
  // Convolution fprop whose channels do not fill 16-byte vectors (c = 3): 0 gathers them as they
  // are (narrower vectors); else x and the filter are first copied with their channels
  // zero-padded to pad_c (channel_padding_target), and the kernel reads the copies in wide vectors.
  int pad_c = 0;
  bool operator==(const TileConfig &) const = default;
};

// "128x128x32 w64x64 s3 k1 g1 va8 vb8" (+ " pc8" when pad_c != 0): the form the CLI prints and
// parses (parse_tile_config).
std::string to_string(const TileConfig &);

// Why a config (or a spec) cannot be compiled. `field` names the TileConfig field ("bm", "stages",
// ...), "spec" for a limit of the code generator on the spec itself, or "arch".
struct ConfigError {
  std::string field;
  std::string message; // states the rule and the numbers
};

// The resolved vector widths and facts derived from spec + config.
int warps_per_cta(const TileConfig &);
int threads_per_cta(const TileConfig &);
// Dynamic shared memory one CTA's pipeline needs: stages * (bm*bk + bn*bk) * element size; for a
// 2:4-sparse A, stages * ((bm*bk/2 + bn*bk) * element size + bm*bk/8): the compressed A tile and
// the metadata's stage slot.
int shared_bytes(const OpSpec &, const TileConfig &);

// Every rule `config` breaks for `spec` on `arch` (empty when it compiles). `tf32_off`: the
// NVIDIA_TF32_OVERRIDE=0 environment flag (for math=auto). In order: check_codegen_support,
// channel_padding_errors, then tile_rule_errors.
std::vector<ConfigError> validate_tile_config(const OpSpec &spec, const TileConfig &config,
                                              std::string_view arch, bool tf32_off);

// What the tile rules and the tuner's estimates read off a spec, derived once per spec and channel
// padding: a tuner checks some 10^5 configs of one spec, and deriving these for each (copies of the
// spec, its lowering and alignment) was most of the time of enumerating them.
struct SpecFacts {
  OpSpec spec; // the spec the kernel computes: with a valid pad_c, the padded convolution
  OpSpec view; // gemm_view(spec)
  std::optional<ConvLowering> lowering; // lower_conv(spec), for a convolution
  MmaForm mma;                          // math_form(spec)
  ViewVectorLimits vectors;             // view_vector_limits(spec)
  int element_bits = 0;                 // of the multiplied inputs (s4 4, b1 1)
  bool depthwise = false;               // is_depthwise_path(spec)
  bool dgrad_phases = false;            // takes_dgrad_phases(spec)
};
// `spec` must pass check_codegen_support. A pad_c other than channel_padding_target(spec) is not
// applied (channel_padding_errors says why it is wrong).
SpecFacts spec_facts(const OpSpec &spec, bool tf32_off, int pad_c = 0);

// Why `pad_c` does not fit `spec` (empty for 0 or channel_padding_target).
std::vector<ConfigError> channel_padding_errors(const OpSpec &spec, int pad_c);

// The rules on the config's own fields (sizes, warps, accumulators, stages, split-K, vectors,
// shared memory on `arch`) for a spec whose support and padding were checked.
std::vector<ConfigError> tile_rule_errors(const SpecFacts &facts, const TileConfig &config,
                                          std::string_view arch);

// The math instruction form of a supported spec: its mma form, or simt_f32_form() for math=f32.
MmaForm math_form(const OpSpec &spec, bool tf32_off);

// Limits of the code generator on the spec alone (supported dtypes, channels-last convolutions...),
// with the arch.
std::vector<ConfigError> check_codegen_support(const OpSpec &spec, std::string_view arch,
                                               bool tf32_off);

// A good first config for the spec's dtype and shape (what runs when no tuned one exists). Always
// valid when check_codegen_support() is empty. vec_a/vec_b are resolved (never 0).
TileConfig default_tile_config(const OpSpec &spec, std::string_view arch, bool tf32_off);

// The default config first, then fallbacks that need fewer registers (a narrower warp tile, a
// smaller CTA tile, fewer stages), each valid for the spec and distinct: what the runtime tries
// in order when the cubin of one spills (register use is known only after ptxas).
std::vector<TileConfig> default_tile_configs(const OpSpec &spec, std::string_view arch,
                                             bool tf32_off);

// The spec a config's kernel computes: `spec` itself, or with pad_c != 0 the convolution with its
// channels padded to pad_c (the copies the kernel reads).
OpSpec effective_spec(const OpSpec &spec, const TileConfig &config);

// Resolves vec_a/vec_b = 0 to the widest width the spec's alignment allows.
TileConfig resolve_vectors(const OpSpec &spec, const TileConfig &config);
TileConfig resolve_vectors(const SpecFacts &facts, const TileConfig &config);

// Parses the to_string() form; any subset of words, in any order, over `base`
// ("64x64x32 s4"). Returns false and sets `error` on a malformed word.
bool parse_tile_config(std::string_view text, TileConfig &inout, std::string &error);

} // namespace tcjit::codegen
