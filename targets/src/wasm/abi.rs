//! The constants of placid ABI v1, shared by the emitter and the host (docs/wasm-abi.md is
//! the prose version of this file).

/// The ABI version this placid emits and hosts.
pub const ABI_VERSION: i32 = 1;
/// Exported linear memory.
pub const EXPORT_MEMORY: &str = "memory";
/// Exported immutable `i32` global holding [`ABI_VERSION`].
pub const EXPORT_ABI_VERSION: &str = "placid_abi_version";
/// Exported immutable `i32` global: the first byte of memory the host may use.
pub const EXPORT_HEAP_BASE: &str = "placid_heap_base";
/// Exported `(params, rows, n, out_scores, out_reasons: i32) -> i32`.
pub const EXPORT_SCORE_BATCH: &str = "placid_score_batch";
/// Custom section holding the JSON metadata.
pub const META_SECTION: &str = "placid.meta";
/// The first byte of memory the host may use: the modules placid emits have no data.
pub const HEAP_BASE: i32 = 0;
/// Pages (64 KiB) the emitted memory starts with.
pub const MEMORY_MIN_PAGES: u64 = 1;
/// Pages the emitted memory may grow to (64 MiB): about a million nodes of a 7-field row.
pub const MEMORY_MAX_PAGES: u64 = 1024;
/// Returned by `placid_score_batch` for a negative count.
pub const ERROR_NEGATIVE_COUNT: i32 = -1;
/// Bytes per page of linear memory.
pub const PAGE_SIZE: u64 = 65536;
/// Largest module the emitter writes and the host loads. Emitted modules are one function,
/// one memory and a few hundred bytes of `placid.meta`; a real score is a few KiB.
pub const MAX_MODULE_BYTES: usize = 1 << 20;
/// Largest function body the emitter writes and the host compiles. Cranelift's time grows
/// faster than linearly with the size of one function, so this, not the module size, bounds
/// how long compiling takes (docs/wasm-abi.md gives the measurements).
pub const MAX_FUNCTION_BYTES: usize = 256 << 10;
