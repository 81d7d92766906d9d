// cp.async.{ca,cg}.shared.global with zero-fill (src-size) and ignore-src, commit_group,
// wait_group N and wait_all. The copy is done at issue (source read, destination written), and
// its destination words count as pending until the issuing thread waits for the copy's group (or
// exits): until then any access to them is an error, so no thread can observe that the bytes
// arrived early.
#include <algorithm>
#include <cstring>

#include "runtime/emu/cp_async_state.h"
#include "runtime/emu/exec_families.h"
#include "runtime/emu/instruction_decode.h"
#include "runtime/emu/memory_access.h"

namespace tcjit::emu {

namespace {

// The pending counts of a copy's size / 4 (1, 2 or 4) words, read and written as one integer:
// adding delta * 0x0101... changes each count by delta. A count below 255 never carries into its
// neighbour, and an add undone by the same subtract restores every count whatever the carries.
template <typename Counts> inline uint32_t bump_counts(uint8_t *p, int delta) {
  Counts counts;
  std::memcpy(&counts, p, sizeof counts);
  const uint32_t before = static_cast<uint32_t>(counts);
  counts =
      static_cast<Counts>(counts + static_cast<Counts>(delta) * static_cast<Counts>(0x01010101u));
  std::memcpy(p, &counts, sizeof counts);
  return before;
}

// Adds delta to the pending counts of the words [shared_addr, shared_addr + size); returns the
// counts before, non-zero when any was pending.
inline uint32_t bump_pending(uint8_t *pending, uint32_t shared_addr, uint32_t size, int delta) {
  uint8_t *p = pending + shared_addr / 4;
  switch (size) {
  case 4: return bump_counts<uint8_t>(p, delta);
  case 8: return bump_counts<uint16_t>(p, delta);
  default: return bump_counts<uint32_t>(p, delta); // 16 (decode_async_copy: 4, 8 or 16)
  }
}

inline void add_pending(Cta &cta, uint32_t shared_addr, uint32_t size, int delta) {
  bump_pending(cta.async_pending.data(), shared_addr, size, delta);
  cta.async_pending_words += static_cast<uint32_t>(delta * static_cast<int>(size / 4));
}

// Records the copy of lane l (already done) as pending until its group is waited for.
inline void record_copy(Warp &w, Cta &cta, uint32_t l, uint32_t shared_addr, uint32_t size) {
  w.async_lanes |= 1u << l;
  AsyncCopy &c = w.async_copies[l].copies.emplace_back();
  c.group = w.async_committed[l];
  c.shared_addr = shared_addr;
  c.size = size;
  add_pending(cta, shared_addr, size, 1);
}

// The whole warp copying `size` bytes per lane, every destination in bounds, aligned and not
// pending, every source (when src-size > 0) aligned and in the last global allocation used: one
// pass of checks, then the copies. false (nothing done): the per-lane path decides.
bool copy_warp_fast(ExecContext &ctx, Warp &w, const Instr &in, const LaneValues &dsts,
                    const LaneValues &srcs, const LaneValues &sizes) {
  const uint32_t size = in.access_bytes;
  Cta &cta = *ctx.cta;
  // the allocation of the first reading lane's source (none reads: the zero-fill copies a
  // pipeline issues past the end of K)
  uint32_t first = 0;
  while (first < 32 && sizes[first] == 0)
    ++first;
  const Allocation *a = ctx.last_allocation;
  if (first < 32 &&
      (!a || !a->contains(srcs[first] + static_cast<uint64_t>(in.src[1].offset), size))) {
    // kernels copy tiles of A and B in turn: look the allocation up when it changes
    a = ctx.launch->memory->find(srcs[first] + static_cast<uint64_t>(in.src[1].offset));
    if (!a || a->freed)
      return false;
    ctx.last_allocation = a;
  }
  const uint64_t limit = cta.shared.size();
  const uint64_t dst_off = static_cast<uint64_t>(in.src[0].offset),
                 src_off = static_cast<uint64_t>(in.src[1].offset);
  uint64_t dst_addresses[32], src_addresses[32];
  uint32_t read_mask = 0;
  bool ok = true;
  for (uint32_t l = 0; l < 32; ++l) {
    const uint64_t dst = dsts[l] + dst_off, src = srcs[l] + src_off;
    const uint64_t src_size = sizes[l];
    dst_addresses[l] = dst;
    src_addresses[l] = src;
    ok &= ((dst & (size - 1)) == 0) & (dst < limit) & (dst + size <= limit) & (src_size <= size);
    const bool reads = src_size != 0;
    read_mask |= uint32_t{reads} << l;
    ok &= !reads ||
          ((src & (size - 1)) == 0 && src - a->base < a->size && size <= a->size - (src - a->base));
  }
  // one warp-wide record needs one commit count for all lanes
  const uint32_t group = w.async_committed[0];
  for (uint32_t l = 1; l < 32; ++l)
    ok &= w.async_committed[l] == group;
  if (!ok)
    return false;
  // Mark the destinations pending, lane by lane: a word already pending (an earlier copy not
  // waited for, or another lane's destination in this instruction) undoes the marks and leaves the
  // fault to the per-lane path, which names the lane.
  uint8_t *pending = cta.async_pending.data();
  for (uint32_t l = 0; l < 32; ++l)
    ok &= bump_pending(pending, static_cast<uint32_t>(dst_addresses[l]), size, 1) == 0;
  if (!ok) {
    for (uint32_t l = 0; l < 32; ++l)
      bump_pending(pending, static_cast<uint32_t>(dst_addresses[l]), size, -1);
    return false;
  }
  cta.async_pending_words += 32 * (size / 4);
  if (cta.racecheck)
    for (uint32_t l = 0; l < 32; ++l)
      check_shared_race(ctx, w, in, l, dst_addresses[l], size, AccessKind::Write);
  uint8_t *shared = cta.shared.data();
  const uint8_t *global = read_mask ? a->data.get() : nullptr;
  Warp::WarpAsyncCopy &record = w.warp_async_copies.copies.emplace_back();
  record.group = group;
  record.size = size;
  record.lanes = ~0u;
  for (uint32_t l = 0; l < 32; ++l) {
    const uint32_t src_size = static_cast<uint32_t>(sizes[l]);
    uint8_t *d = shared + dst_addresses[l];
    if (src_size == 16) {
      std::memcpy(d, global + (src_addresses[l] - a->base), 16);
    } else {
      if (src_size)
        std::memcpy(d, global + (src_addresses[l] - a->base), src_size);
      std::memset(d + src_size, 0, size - src_size);
    }
    record.shared_addr[l] = static_cast<uint32_t>(dst_addresses[l]);
  }
  ++ctx.counters.cp_async_requests;
  if (read_mask)
    count_global_request(ctx, src_addresses, read_mask, size, false);
  count_shared_request(ctx, dst_addresses, ~0u, size, true);
  return true;
}

} // namespace

void complete_async_copies(ExecContext &ctx, Warp &w, uint32_t lanes, uint32_t keep_groups,
                           bool all) {
  Cta &cta = *ctx.cta;
  for_each_lane(lanes & w.async_lanes, [&](uint32_t l) {
    Warp::AsyncQueue &q = w.async_copies[l];
    const uint32_t committed = w.async_committed[l];
    size_t i = q.head;
    for (; i < q.copies.size(); ++i) {
      const AsyncCopy &c = q.copies[i];
      if (!all && c.group + keep_groups >= committed)
        break; // this and every later copy belong to groups that stay in flight
      add_pending(cta, c.shared_addr, c.size, -1);
    }
    q.head = i;
    if (q.head == q.copies.size()) {
      q.copies.clear();
      q.head = 0;
      w.async_lanes &= ~(1u << l);
    }
  });
  Warp::WarpAsyncQueue &q = w.warp_async_copies;
  if (q.head == q.copies.size() || lanes == 0)
    return;
  // A lane's copies complete in issue order: walk the records until no lane of `lanes` completes
  // one (every later record's group is at least as new). Commit counts usually agree across the
  // warp: a record older than the least of them completes for every lane.
  uint32_t least = ~0u, most = 0;
  for_each_lane(lanes, [&](uint32_t l) {
    least = std::min(least, w.async_committed[l]);
    most = std::max(most, w.async_committed[l]);
  });
  for (size_t i = q.head; i < q.copies.size(); ++i) {
    Warp::WarpAsyncCopy &c = q.copies[i];
    uint32_t done = 0;
    if (all || c.group + keep_groups < least) {
      done = lanes;
    } else {
      if (c.group + keep_groups >= most)
        break;
      for_each_lane(lanes, [&](uint32_t l) {
        done |= uint32_t{c.group + keep_groups < w.async_committed[l]} << l;
      });
    }
    done &= c.lanes;
    c.lanes &= ~done;
    for_each_lane(done, [&](uint32_t l) { add_pending(cta, c.shared_addr[l], c.size, -1); });
  }
  while (q.head < q.copies.size() && q.copies[q.head].lanes == 0)
    ++q.head;
  if (q.head == q.copies.size()) {
    q.copies.clear();
    q.head = 0;
  }
}

uint32_t pending_async_copies(const Warp &w, uint32_t lane) {
  const Warp::AsyncQueue &q = w.async_copies[lane];
  uint32_t n = static_cast<uint32_t>(q.copies.size() - q.head);
  const Warp::WarpAsyncQueue &wq = w.warp_async_copies;
  for (size_t i = wq.head; i < wq.copies.size(); ++i)
    n += (wq.copies[i].lanes >> lane) & 1u;
  return n;
}

void exec_cp_async(ExecContext &ctx, Warp &w, const Instr &in, uint32_t mask) {
  if (in.op == Op::CpAsyncCommit) {
    for_each_lane(mask, [&](uint32_t l) { ++w.async_committed[l]; });
    return;
  }
  if (in.op == Op::CpAsyncWait) {
    const uint32_t keep = static_cast<uint32_t>(in.src[0].imm);
    complete_async_copies(ctx, w, mask, keep, false);
    return;
  }
  if (in.op == Op::CpAsyncWaitAll) {
    for_each_lane(mask, [&](uint32_t l) { ++w.async_committed[l]; });
    complete_async_copies(ctx, w, mask, 0, true);
    return;
  }
  if (in.op != Op::CpAsync)
    fault(ctx, w, in, -1, "internal error: not a cp.async instruction");
  const uint32_t size = in.access_bytes;
  uint64_t dst_addresses[32], src_addresses[32];
  uint32_t read_mask = 0;
  Cta &cta = *ctx.cta;
  LaneScratch k0, k1, k2;
  const LaneValues dsts = lane_values(ctx, w, in.src[0], k0),
                   srcs = lane_values(ctx, w, in.src[1], k1),
                   sizes = lane_values(ctx, w, in.src[2], k2);
  const bool has_ignore = in.src[3].kind != OperandKind::None;
  if (mask == ~0u && !has_ignore && copy_warp_fast(ctx, w, in, dsts, srcs, sizes))
    return;
  for_each_lane(mask, [&](uint32_t l) {
    uint64_t dst = dsts[l] + static_cast<uint64_t>(in.src[0].offset);
    uint64_t src = srcs[l] + static_cast<uint64_t>(in.src[1].offset);
    uint32_t src_size = static_cast<uint32_t>(sizes[l]);
    if (has_ignore && read_pred(ctx, w, in.src[3], l))
      src_size = 0;
    if (src_size > size)
      fault(ctx, w, in, static_cast<int>(l),
            "cp.async src-size " + std::to_string(src_size) + " exceeds cp-size " +
                std::to_string(size));
    LaneAccess d =
        translate_access_fast(ctx, w, in, l, Space::Shared, dst, size, size, AccessKind::Write);
    LaneAccess s;
    if (src_size > 0) // checked before the copy is recorded, as before
      s = translate_access_fast(ctx, w, in, l, Space::Global, src, src_size, size,
                                AccessKind::Read);
    if (src_size > 0) {
      std::memmove(d.host, s.host, src_size);
      src_addresses[l] = s.address;
      read_mask |= 1u << l;
    }
    std::memset(d.host + src_size, 0, size - src_size);
    dst_addresses[l] = d.address;
    record_copy(w, cta, l, static_cast<uint32_t>(d.address), size);
  });
  ++ctx.counters.cp_async_requests;
  if (read_mask)
    count_global_request(ctx, src_addresses, read_mask, size, false);
  count_shared_request(ctx, dst_addresses, mask, size, true);
}

namespace {

// cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size}{, ignore-src};
void decode_async_copy(DecodeState &s) {
  Instr &in = s.in;
  Modifiers &m = s.mods;
  const auto &ops = s.ai.operands;
  in.op = Op::CpAsync;
  const bool cg = m.take("cg");
  if (!cg && !m.take("ca"))
    decode_fail(s, "cp.async needs .ca or .cg");
  // the destination space comes first: .shared{::cta}.global
  auto shared_at = std::find_if(m.list.begin(), m.list.end(), [](const std::string &x) {
    return x == "shared" || x == "shared::cta";
  });
  auto global_at = std::find(m.list.begin(), m.list.end(), "global");
  const bool ordered =
      shared_at != m.list.end() && global_at != m.list.end() && shared_at < global_at;
  const Space dst_space = take_space(m);
  const Space src_space = take_space(m);
  if (!ordered || (dst_space != Space::Global && dst_space != Space::Shared) ||
      (src_space != Space::Global && src_space != Space::Shared))
    decode_fail(s, "only cp.async.{ca,cg}.shared.global is supported");
  drop_memory_hints(m);
  expect_no_modifiers_left(s);
  expect_operands(s, 3, 5);
  Space shared = Space::Shared, global = Space::Global;
  in.src[0] = address_operand(s, ops[0], shared);
  in.src[1] = address_operand(s, ops[1], global);
  if (ops[2].kind != AstOperand::Kind::Integer)
    decode_fail(s, "cp.async cp-size must be an integer constant");
  in.access_bytes = static_cast<uint8_t>(ops[2].int_value);
  if (!(in.access_bytes == 4 || in.access_bytes == 8 || in.access_bytes == 16))
    decode_fail(s, "cp.async cp-size must be 4, 8 or 16");
  if (cg && in.access_bytes != 16)
    decode_fail(s, "cp.async.cg needs cp-size 16");
  in.src[2] = immediate_operand(in.access_bytes); // src-size
  if (ops.size() >= 4 && ops[3].kind == AstOperand::Kind::Integer &&
      ops[3].int_value > in.access_bytes)
    decode_fail(s, "cp.async src-size " + std::to_string(static_cast<int64_t>(ops[3].int_value)) +
                       " is out of range [0.." + std::to_string(in.access_bytes) + "]");
  if (ops.size() >= 4) {
    Operand o = source_operand(s, 3, DType::U32);
    if (register_type(s, o) == DType::Pred) {
      in.src[3] = o; // ignore-src predicate
    } else {
      in.src[2] = o;
      if (ops.size() == 5)
        decode_fail(s, "cache-policy operands of cp.async are not supported");
    }
  }
}

} // namespace

// cp.async, cp.async.commit_group, cp.async.wait_group, cp.async.wait_all
void decode_cp_async(DecodeState &s) {
  Instr &in = s.in;
  Modifiers &m = s.mods;
  in.cls = InstrClass::Memory;
  in.exec = exec_cp_async;
  if (!m.take("async"))
    decode_unsupported(s);
  if (m.take("commit_group")) {
    in.op = Op::CpAsyncCommit;
    expect_operands(s, 0, 0);
  } else if (m.take("wait_group")) {
    in.op = Op::CpAsyncWait;
    expect_operands(s, 1, 1);
    in.src[0] = source_operand(s, 0, DType::U32);
    if (in.src[0].kind != OperandKind::Imm)
      decode_fail(s, "cp.async.wait_group needs an integer constant");
  } else if (m.take("wait_all")) {
    in.op = Op::CpAsyncWaitAll;
    expect_operands(s, 0, 0);
  } else {
    decode_async_copy(s);
    return;
  }
  expect_no_modifiers_left(s);
}

} // namespace tcjit::emu
