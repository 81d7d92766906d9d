#include "compiler/codegen/plan/sparse_metadata.h"

#include <stdexcept>

namespace tcjit::codegen {

namespace {

// 16-bit elements (f16/bf16: two 16-bit halves per register), 8-bit (s8/u8: one 32-bit word) or
// 32-bit (tf32: two bytes expanded). Packed s4/u4 (k_pack 2) are s8's in bytes: p.mma is already
// their byte view (kernel_plan.h packed_byte_view), K and the K-tile count bytes, and a metadata
// row holds K_bytes / 8 bytes (one index per kept pair of values: pairs are bytes).
int element_bits(const KernelPlan &p) {
  if (!p.mma.sparse)
    throw std::logic_error("sparse_metadata: a dense plan has no metadata");
  if (p.k_pack != 1 && p.mma.elem_bits != 8)
    throw std::logic_error("sparse_metadata: a packed plan's form must be its byte view");
  return p.mma.elem_bits;
}

} // namespace

SparseMetadataPlan plan_sparse_metadata(const KernelPlan &p) {
  element_bits(p);
  SparseMetadataPlan m;
  m.unit_bytes = p.mma.k / 8;
  m.chunk_bytes = 2 * p.k_steps * m.unit_bytes;
  m.stage_bytes = p.config.bm * k_tile_extent(p) / 8;
  m.smem_offset = p.b.smem_offset + p.config.stages * p.b.stage_bytes;
  m.copies = p.config.bm * p.k_steps;
  m.copies_per_thread = (m.copies + p.threads - 1) / p.threads;
  return m;
}

SparseMetadataCopy sparse_metadata_copy(const KernelPlan &p, Expr idx, Expr m0, Expr ktile, Expr m,
                                        Expr k) {
  element_bits(p);
  const SparseMetadataPlan &meta = p.meta;
  Expr row = idx / p.k_steps;
  Expr ks = idx % p.k_steps;
  Expr grow = m0 + row;
  Expr gk = ktile * k_tile_extent(p) + ks * p.mma.k; // packed: bytes
  Expr in = ult(grow, m) & ult(gk, k);
  Expr global = zext64(grow) * zext64(k >> 3) + zext64(gk >> 3);
  Expr smem = ((row >> 4) * 8 + (row & 7)) * meta.chunk_bytes + ks * (2 * meta.unit_bytes) +
              ((row >> 3) & 1) * meta.unit_bytes;
  return {in, global, smem};
}

Expr sparse_metadata_read_offset(const KernelPlan &p, Expr warp_m0, Expr g, Expr q, Expr mi,
                                 Expr ks) {
  const int bits = element_bits(p);
  const SparseMetadataPlan &meta = p.meta;
  Expr chunk = ((warp_m0 >> 4) + mi) * 8 + g;
  Expr offset = chunk * meta.chunk_bytes + ks * 2 * meta.unit_bytes;
  if (bits == 8) // row g + 8 (q & 1), the 4 bytes of columns 32 (q >> 1) ..
    return offset + (q & 1) * meta.unit_bytes + (q >> 1) * 4;
  return offset;
}

int sparse_metadata_words(const KernelPlan &p) {
  return element_bits(p) == 16 ? 2 : 1;
}

Expr sparse_metadata_register(const KernelPlan &p, const std::vector<Expr> &words, Expr q) {
  const int bits = element_bits(p);
  if (words.size() != static_cast<size_t>(sparse_metadata_words(p)))
    throw std::logic_error("sparse_metadata_register: wrong number of loaded words");
  if (bits == 8)
    return words[0];
  if (bits == 16) // halves q & 1 of row g's word and row g + 8's: 0x5410 or 0x7632
    return byte_perm(words[0], words[1], (q & 1) * 0x2222 + 0x5410);
  // tf32: byte q & 1 of each row's 2 bytes; the kept index of pair p is bit 2p (1: the second of
  // the pair), spread to bit 4p, and nibble p becomes 0b0100 + 0b1010 * bit
  Expr x = (words[0] >> ((q & 1) * 8)) & 0x00550055;
  x = (x | (x << 4)) & 0x05050505;
  x = (x | (x << 2)) & 0x11111111;
  return x * 0xA | 0x44444444;
}

} // namespace tcjit::codegen
