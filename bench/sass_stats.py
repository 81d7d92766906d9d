"""Static kernel quality from a cubin: resource usage (cuobjdump --dump-resource-usage) and the
steady-state main loop of its SASS (nvdisasm -c), both from the PyPI packages bench/setup installs.

The main loop is found the way a reader finds it: among the backward branches of the kernel (a
BRA whose target lies at or before it), the range [target, branch] holding the most tensor-core
math instructions (HMMA, IMMA, DMMA; FFMA for a SIMT kernel), the smallest such range when
several hold the same count. The math opcodes are matched by their first word, so nvdisasm's
sm_80 forms of every tensor-core type count: HMMA.16816.F32 (f16/bf16), HMMA.1688.F32.TF32,
IMMA.16832.S8.S8, IMMA.16864.S4.S4[.SAT] (int4), DMMA.884, and the 2:4-sparse
HMMA.SP.16832.F32 (counted again under `mma_sparse`). Counted in it: every instruction but NOP, and by class HMMA/IMMA/DMMA,
LDSM, LDGSTS, BAR, LDS/STS, LDG/STG, integer address arithmetic (IMAD*, IADD3, LEA, SHF, LOP3, SEL,
ISETP), moves (MOV, IMAD.MOV). `instructions_per_mma` is total / math.

Usage: python sass_stats.py FILE.cubin [KERNEL]   prints one JSON object.
"""
import json
import os
import re
import subprocess
import sys

_BIN = os.path.join(os.path.dirname(sys.executable), "..", "lib")
INSTR = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)(.*?);?\s*$")
LABEL = re.compile(r"^(\.L_x_\d+|[A-Za-z_$][\w$.]*):\s*$")
TARGET = re.compile(r"`\((\.L_x_\d+)\)")
SECTION = re.compile(r"^\s*\.section\s+\.text\.([^,\s]+)")
MATH = ("HMMA", "IMMA", "DMMA")
CLASSES = {
    "mma": MATH,
    "mma_sparse": ("HMMA.SP", "IMMA.SP"),
    "ldsm": ("LDSM",),
    "ldgsts": ("LDGSTS",),
    "bar": ("BAR",),
    "lds": ("LDS",),
    "sts": ("STS",),
    "ldg": ("LDG",),
    "stg": ("STG",),
    "int_arith": ("IMAD", "IADD3", "LEA", "SHF", "LOP3", "SEL", "ISETP", "IABS", "LEA.HI"),
    "move": ("MOV",),
    "depbar": ("DEPBAR",),
    "branch": ("BRA", "CALL", "BSSY", "BSYNC"),
}


def tool(name):
    """The nvdisasm / cuobjdump of the nvidia-cuda-* PyPI packages in this venv."""
    import nvidia
    for base in nvidia.__path__:
        for sub in ("cu13/bin", "cu12/bin", "cuda_nvdisasm/bin", "cuda_cuobjdump/bin"):
            path = os.path.join(base, sub, name)
            if os.path.exists(path):
                return path
    raise FileNotFoundError(name + " not found: run bench/setup (installs nvidia-cuda-" +
                            name + ")")


def resource_usage(cubin):
    """{kernel: {REG, STACK, SHARED, LOCAL, CONSTANT[0]}} per cuobjdump."""
    out = subprocess.run([tool("cuobjdump"), "--dump-resource-usage", cubin], check=True,
                         capture_output=True, text=True).stdout
    usage, current = {}, None
    for line in out.splitlines():
        m = re.match(r"\s*Function (\S+):", line)
        if m:
            current = m.group(1)
            usage[current] = {}
            continue
        if current:
            for key, value in re.findall(r"(\w+(?:\[\d+\])?):(\d+)", line):
                usage[current][key] = int(value)
    return usage


def disassemble(cubin):
    """{function: [(address, opcode, text, labels_before)]} from nvdisasm -c."""
    out = subprocess.run([tool("nvdisasm"), "-c", cubin], check=True, capture_output=True,
                         text=True).stdout
    functions, current, pending = {}, None, []
    for line in out.splitlines():
        s = SECTION.match(line)
        if s:
            current = s.group(1)
            functions[current] = []
            pending = []
            continue
        if current is None:
            continue
        lab = LABEL.match(line.strip())
        if lab:
            pending.append(lab.group(1))
            continue
        m = INSTR.match(line)
        if m:
            functions[current].append((int(m.group(1), 16), m.group(3), line.strip(), pending))
            pending = []
    return functions


def base_opcode(op):
    return op.split(".")[0]


def classify(ops):
    counts = {name: 0 for name in CLASSES}
    for op in ops:
        b = base_opcode(op)
        for name, members in CLASSES.items():
            if b in members or op in members or (name == "mma_sparse" and
                                                 op.startswith(members)):
                counts[name] += 1
        if b == "IMAD" and op.startswith("IMAD.MOV"):
            counts["int_arith"] -= 1
            counts["move"] += 1
    return counts


def main_loop(instrs):
    label_index = {}
    for i, (_, _, _, labels) in enumerate(instrs):
        for lab in labels:
            label_index[lab] = i
    math_ops = MATH
    if not any(base_opcode(op) in MATH for _, op, _, _ in instrs):
        math_ops = ("FFMA",)  # a SIMT kernel
    best = None
    for j, (_, op, text, _) in enumerate(instrs):
        if base_opcode(op) != "BRA":
            continue
        t = TARGET.search(text)
        if not t or t.group(1) not in label_index:
            continue
        i = label_index[t.group(1)]
        if i > j:
            continue
        ops = [o for _, o, _, _ in instrs[i:j + 1] if base_opcode(o) != "NOP"]
        math = sum(1 for o in ops if base_opcode(o) in math_ops)
        if math == 0:
            continue
        key = (math, -len(ops))
        if best is None or key > best[0]:
            best = (key, i, j, ops, math)
    if best is None:
        return None
    _, i, j, ops, math = best
    counts = classify(ops)
    return {"start": hex(instrs[i][0]), "end": hex(instrs[j][0]), "instructions": len(ops),
            "math": math, "math_opcode": sorted({o for o in ops if base_opcode(o) in math_ops}),
            "instructions_per_mma": len(ops) / math, "counts": counts}


def analyse(cubin, kernel=None):
    functions = disassemble(cubin)
    usage = resource_usage(cubin)
    if kernel is None:
        # the function with the most math instructions (a module may hold helpers, a reduce...)
        def weight(name):
            return sum(1 for _, op, _, _ in functions[name] if base_opcode(op) in MATH + ("FFMA",))
        kernel = max(functions, key=weight)
    instrs = functions[kernel]
    ops = [op for _, op, _, _ in instrs if base_opcode(op) != "NOP"]
    # A CALL to a local label (CALL.REL.NOINC `(.L_x_7)) is ptxas's loop-exit idiom; a call is
    # one to another function (libdevice, __cuda_sm70_warpsync, ...).
    calls = [text for _, op, text, _ in instrs
             if base_opcode(op) == "CALL" and "(.L_x_" not in text]
    return {"kernel": kernel, "resources": usage.get(kernel, {}),
            "instructions": len(ops), "calls": len(calls),
            "kernel_counts": classify(ops), "main_loop": main_loop(instrs)}


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    print(json.dumps(analyse(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else None)))
