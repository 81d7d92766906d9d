# The layers of tcjit, lowest first; each links only the layers below it (docs/architecture.md):
#   support/     L0  std-only helpers
#   compiler/    L1  pure: DSL -> OpSpec -> kernel plan -> PTX (target/ holds the hardware facts)
#   runtime/     L2  devices: JIT to cubin, CUDA Driver API, the PTX emulator; sees PTX only
#   kernels_db/  L3  storage only
#   engine/      L3  spec + config -> PTX -> cubin -> DB -> load, launch, verify
#   tuner/       L4  search spaces, cost model, strategies, measurers, the tune driver
#   api/         L5  the facade, the C API, the tools (include/tcjit/)
#   cli/         L6  the tcjit command: a client of include/tcjit/ alone
#
# Every source includes headers by their path from the repository root ("compiler/spec/shape.h"),
# but no target sees the repository root. Each layer's library publishes one include directory,
# build/layers/<layer>/, holding links to its own folder (and to the public headers it may use);
# linking a lower layer's library brings that layer's directory along. An include of a higher
# layer is therefore not found: the compile fails naming the header. scripts/check-layers checks
# the same rules (and the folders inside a layer) on the sources without building.

# tcjit_layer_include_dir(<layer> <link>=<path> ...): build/layers/<layer>/<link> -> <path> (a
# path relative to the repository root). Returns the directory in TCJIT_LAYER_DIR_<layer>.
function(tcjit_layer_include_dir layer)
  set(root ${PROJECT_BINARY_DIR}/layers/${layer})
  foreach(entry IN LISTS ARGN)
    string(REPLACE "=" ";" pair "${entry}")
    list(GET pair 0 link)
    list(GET pair 1 target)
    get_filename_component(parent ${root}/${link} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${target} ${root}/${link} SYMBOLIC)
  endforeach()
  set(TCJIT_LAYER_DIR_${layer} ${root} PARENT_SCOPE)
endfunction()
