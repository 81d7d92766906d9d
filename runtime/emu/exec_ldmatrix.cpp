// ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16: lanes 8j..8j+7 give the row
// addresses of matrix j (16 contiguous bytes each); lane t receives row t/4, columns 2(t%4) and
// 2(t%4)+1 of each matrix (with .trans: the transposed matrix).
#include <cstring>

#include "runtime/emu/exec_context.h"
#include "runtime/emu/exec_families.h"
#include "runtime/emu/instruction_decode.h"
#include "runtime/emu/memory_access.h"

namespace tcjit::emu {

void exec_ldmatrix(ExecContext &ctx, Warp &w, const Instr &in, uint32_t mask) {
  if (mask != 0xffffffffu)
    fault(ctx, w, in, -1,
          "ldmatrix.sync.aligned executed by lanes " + hex_address(mask) +
              ": all 32 lanes of the warp must execute it together");
  const uint32_t matrices = in.vec;
  uint16_t m[4][8][8];
  uint64_t addresses[32] = {};
  LaneScratch k0;
  const LaneValues base = lane_values(ctx, w, in.src[0], k0);
  // Fast path: every row address aligned, in bounds and not a cp.async destination in flight
  // (one pass of checks, then the copies); otherwise each row through translate_access.
  const Cta &cta = *ctx.cta;
  const uint64_t limit = cta.shared.size();
  const uint32_t rows = 8 * matrices;
  bool ok = true;
  for (uint32_t lane = 0; lane < rows; ++lane) {
    const uint64_t addr = base[lane] + static_cast<uint64_t>(in.src[0].offset);
    addresses[lane] = addr;
    ok &= (addr & 15) == 0 && addr < limit && addr + 16 <= limit;
  }
  if (ok && cta.async_pending_words) {
    const uint8_t *pending = cta.async_pending.data();
    for (uint32_t lane = 0; lane < rows; ++lane) {
      uint32_t words;
      std::memcpy(&words, pending + addresses[lane] / 4, 4);
      ok &= words == 0;
    }
  }
  if (ok) {
    if (cta.racecheck)
      for (uint32_t lane = 0; lane < rows; ++lane)
        check_shared_race(ctx, w, in, lane, addresses[lane], 16, AccessKind::Read);
    for (uint32_t lane = 0; lane < rows; ++lane)
      std::memcpy(m[lane / 8][lane % 8], cta.shared.data() + addresses[lane], 16);
  } else {
    for (uint32_t lane = 0; lane < rows; ++lane) {
      LaneAccess a = translate_access_fast(ctx, w, in, lane, Space::Shared, addresses[lane], 16, 16,
                                           AccessKind::Read);
      addresses[lane] = a.address;
      std::memcpy(m[lane / 8][lane % 8], a.host, 16);
    }
  }
  for (uint32_t j = 0; j < matrices; ++j) {
    uint64_t *d = w.regs + size_t{vector_reg(ctx, in.dst, j)} * 32;
    if (in.trans) {
      for (uint32_t t = 0; t < 32; ++t) {
        const uint32_t row = t >> 2, col = 2 * (t & 3);
        d[t] = uint32_t{m[j][col][row]} | (uint32_t{m[j][col + 1][row]} << 16);
      }
    } else {
      for (uint32_t t = 0; t < 32; ++t) {
        uint32_t v; // lane t: row t/4, columns 2(t%4) and 2(t%4)+1, i.e. word t of the matrix
        std::memcpy(&v, &m[j][0][0] + 2 * t, 4);
        d[t] = v;
      }
    }
  }
  count_ldmatrix_request(ctx, addresses, matrices);
}

void decode_ldmatrix(DecodeState &s) {
  Instr &in = s.in;
  Modifiers &m = s.mods;
  const auto &ops = s.ai.operands;
  in.op = Op::Ldmatrix;
  in.cls = InstrClass::Memory;
  in.exec = exec_ldmatrix;
  if (!m.take("sync") || !m.take("aligned") || !m.take("m8n8"))
    decode_fail(s, "only ldmatrix.sync.aligned.m8n8 is supported");
  if (m.take("x1"))
    in.vec = 1;
  else if (m.take("x2"))
    in.vec = 2;
  else if (m.take("x4"))
    in.vec = 4;
  else
    decode_fail(s, "ldmatrix needs .x1, .x2 or .x4");
  in.trans = m.take("trans");
  in.space = take_space(m);
  if (in.space != Space::Shared)
    decode_fail(s, "ldmatrix reads .shared memory only");
  in.type = take_one_type(s);
  expect_no_modifiers_left(s);
  if (in.type != DType::B16)
    decode_unsupported(s);
  expect_operands(s, 2, 2);
  if (ops[0].kind != AstOperand::Kind::Vector || ops[0].elements.size() != in.vec)
    decode_fail(s, "ldmatrix destination must be a {..} vector of " + std::to_string(in.vec) +
                       " registers");
  in.dst = dest_operand(s, ops[0], DType::B32);
  in.src[0] = address_operand(s, ops[1], in.space);
}

} // namespace tcjit::emu
