# FileCheck goldens with an explicit tile config (so that they do not depend on the default or
# the tuner): the implicit-GEMM convolutions (fprop, dgrad, wgrad; narrow channels and channel
# padding), split-K's workspace pass and reduce kernel, the direct depthwise kernel (fprop,
# dgrad), and the CUDA C++ backend (its source and the PTX NVRTC makes of it). Included by tests/codegen/CMakeLists.txt where FileCheck was found
# (TCJIT_FILECHECK); each test runs run_filecheck.sh, which also checks a check file's FILE-NOT
# lines over the whole output (a CHECK-NOT covers only the range between two matches).
set(TCJIT_FILECHECK_RUN "${CMAKE_CURRENT_SOURCE_DIR}/filecheck/run_filecheck.sh")
set(TCJIT_FILECHECK_OUT "${CMAKE_CURRENT_BINARY_DIR}/filecheck")
file(MAKE_DIRECTORY "${TCJIT_FILECHECK_OUT}")

# The LLVM backend's PTX through codegen_ptx_tool SPEC ARCH CONFIG (as tcjit_ptx_filecheck, plus
# a config), followed by ptxas's summary (TCJIT_PTXAS_LOG=1: "ptxas ok=1 regs=N spill=S/L") so
# that a check file can require a spill-free kernel.
function(tcjit_ptx_filecheck_config name spec arch config checkfile)
  add_test(NAME codegen_filecheck_${name}
    COMMAND "${TCJIT_FILECHECK_RUN}" "${TCJIT_FILECHECK}"
            "${CMAKE_CURRENT_SOURCE_DIR}/filecheck/${checkfile}" "${TCJIT_FILECHECK_OUT}/${name}.out"
            -- "$<TARGET_FILE:codegen_ptx_tool>" "${spec}" "${arch}" "${config}")
  set_tests_properties(codegen_filecheck_${name} PROPERTIES LABELS codegen
                       ENVIRONMENT TCJIT_PTXAS_LOG=1)
endfunction()

# `tcjit compile SPEC --config CONFIG ARGS...` through the real binary: its standard output (the
# CUDA C++ with --emit cuda; otherwise the report), after the file that -o names when the
# arguments end with `-o @PTX@` (replaced by a file of the build tree).
function(tcjit_compile_filecheck name spec config checkfile)
  set(args ${ARGN})
  set(append)
  list(FIND args "@PTX@" at)
  if(NOT at EQUAL -1)
    set(ptx "${TCJIT_FILECHECK_OUT}/${name}.ptx")
    list(REMOVE_AT args ${at})
    list(INSERT args ${at} "${ptx}")
    set(append --append "${ptx}")
  endif()
  add_test(NAME codegen_filecheck_${name}
    COMMAND "${TCJIT_FILECHECK_RUN}" "${TCJIT_FILECHECK}"
            "${CMAKE_CURRENT_SOURCE_DIR}/filecheck/${checkfile}" "${TCJIT_FILECHECK_OUT}/${name}.out"
            ${append} -- "$<TARGET_FILE:tcjit>" compile "${spec}" --config "${config}" ${args})
  set_tests_properties(codegen_filecheck_${name} PROPERTIES LABELS codegen)
endfunction()

# One layer for the three passes: 3x3, pad 1, stride 2, 10x12 -> 5x6, 64 -> 64 channels (16-byte
# vectors), so that each extent and divisor is a distinct constant in the PTX.
set(conv_layer "conv2d n=2 h=10 w=12 c=64 k=64 r=3 s=3 pad=1 stride=2 x=f16 acc=f32")
tcjit_ptx_filecheck_config(conv_fprop "${conv_layer} pass=fprop" sm_80 "64x64x32 w32x32 s3"
                           conv_fprop.check)
tcjit_ptx_filecheck_config(conv_dgrad "${conv_layer} pass=dgrad" sm_80 "64x64x32 w32x32 s3"
                           conv_dgrad.check)
tcjit_ptx_filecheck_config(conv_wgrad "${conv_layer} pass=wgrad" sm_80 "64x64x32 w32x32 s3"
                           conv_wgrad.check)
tcjit_ptx_filecheck_config(splitk "gemm m=256 n=256 k=1024 a=f16 b=f16:col c=f16 acc=f32" sm_80
                           "128x64x32 w64x32 s3 k4" splitk.check)
tcjit_ptx_filecheck_config(depthwise
                           "conv2d n=2 h=10 w=12 c=64 k=64 groups=64 r=3 s=3 pad=1 stride=2 x=f16 acc=f32"
                           sm_80 "32x64x8 w16x32 s2" depthwise.check)
tcjit_ptx_filecheck_config(depthwise_dgrad
                           "conv2d n=2 h=10 w=12 c=64 k=64 groups=64 r=3 s=3 pad=1 stride=2 pass=dgrad x=f16 acc=f32"
                           sm_80 "32x64x8 w16x32 s2" depthwise_dgrad.check)
# The CUDA C++ backend: the source of a GEMM and of a convolution (dgrad: both gathers that are
# not im2col), and the PTX that NVRTC makes of the GEMM, with the cubin's ptxas report.
set(cuda_gemm "gemm m=256 n=256 k=256 a=f16 b=f16:col c=f16 acc=f32")
tcjit_compile_filecheck(cuda_gemm_source "${cuda_gemm}" "128x128x32 w64x64 s3"
                        cuda_gemm_source.check --emit cuda --no-ptxas)
tcjit_compile_filecheck(cuda_conv_dgrad_source "${conv_layer} pass=dgrad" "64x64x32 w32x32 s3"
                        cuda_conv_dgrad_source.check --emit cuda --no-ptxas)
tcjit_compile_filecheck(cuda_gemm_nvrtc_ptx "${cuda_gemm}" "128x128x32 w64x64 s3"
                        cuda_gemm_nvrtc_ptx.check --backend nvrtc -o @PTX@)
# Narrow channels: c = 4 (8-byte vectors), c = 3 (element-wise), and c = 3 padded to 8 (pc8).
tcjit_ptx_filecheck_config(conv_fprop_c4 "conv2d n=2 h=9 w=9 c=4 k=16 r=3 s=3 pad=1 x=f16 acc=f32"
                           sm_80 "32x32x32 w16x16 s3" conv_fprop_c4.check)
tcjit_ptx_filecheck_config(conv_fprop_c3
                           "conv2d n=2 h=9 w=9 c=3 k=16 r=7 s=7 pad=3 stride=2 x=f16 acc=f32"
                           sm_80 "32x32x32 w16x16 s3" conv_fprop_c3.check)
tcjit_ptx_filecheck_config(conv_fprop_pc8 "conv2d n=2 h=9 w=9 c=3 k=16 r=3 s=3 pad=1 x=f16 acc=f32"
                           sm_80 "32x32x32 w16x16 s3 pc8" conv_fprop_pc8.check)
