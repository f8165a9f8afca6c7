// Pre-compile mode and cacheability (../shared/spec/executable-cache.md
// sections 5 and 6): which modules may be cached or pre-compiled, and the
// original's messages when they may not.
//
// A custom user operation is a custom-call whose target is not one of XLA's
// own (Sharding, SPMD shape changes, dynamic-shape helpers, ...): tileprof
// cannot know whether its result depends on anything but its operands, so
// it is only cacheable when marked `is_hashable` (true in its backend_config
// JSON or in frontend_attributes, as the original's metadata function sets
// it). Host transfers are the HLO form of `outside_compilation_scope`:
// send/recv (and their -done halves) with is_host_transfer=true, and the IPU
// backend's SendToHost/RecvFromHost custom calls.
#pragma once

#include <string>
#include <vector>

#include "common/expected.h"
#include "engine/hlo/module.h"

namespace tileprof::engine {

// LOG(INFO) when the cache is enabled but the module cannot be cached; the
// module is then compiled and not saved.
inline constexpr std::string_view kNotCacheableMessage =
    "Executable caching has been enabled, however the program being compiled contains custom user "
    "operations which "
    "cannot be safely serialized. If it is safe to pre-compile these custom user operations, "
    "please set the "
    "'is_hashable' attribute to 'true' in the operations metadata function. Please see the "
    "documentation for further "
    "details.";

inline constexpr std::string_view kPrecompileWithoutCachePathMessage =
    "IPU devices have been configured for pre-compilation, however 'executable_cache_path' in "
    "'TF_POPLAR_FLAGS' has "
    "not been set. Please set the path to a directory where the compiled binaries should be stored "
    "using the "
    "'TF_POPLAR_FLAGS' environment variable, for example "
    "'TF_POPLAR_FLAGS=--executable_cache_path=/path/to/storage'.";

inline constexpr std::string_view kPrecompileOutsideCompilationMessage =
    "IPU devices have been configured for pre-compilation, however the program contains "
    "`outside_compilation_scope` "
    "operations which cannot be safely pre-compiled.";

inline constexpr std::string_view kPrecompileNeedsIpuVersionMessage =
    "Expected the `ipu_version` to be set when the `device_connection_type` is set to "
    "`IpuDeviceConnectionType.PRE_COMPILE`";

// Names of the custom calls that are user operations not marked hashable, in
// module order.
std::vector<std::string> NonHashableUserOps(const hlo::Module& module);
// Names of the host-transfer instructions, in module order.
std::vector<std::string> HostTransferOps(const hlo::Module& module);

// The first reason the module cannot be pre-compiled, in the original's
// words (the user-op message names the instruction; the original's
// continuation of that sentence is not public, ours says what to do).
Status CheckPrecompilable(const hlo::Module& module);

// Pre-compile mode without a cache path: the original's FailedPrecondition.
Status CheckPrecompileCachePath(std::string_view cache_path);

// "A pre-compiled Poplar program has been saved to <file>".
std::string PrecompiledSavedMessage(std::string_view path);

}  // namespace tileprof::engine
