//! The wasmtime host of placid ABI v1 plugins: loads untrusted `.wasm`, refuses anything that
//! is not a well-formed plugin before compiling it, and runs batches under limits.
//!
//! Invariants: only `.wasm` bytes are accepted (never precompiled code, which wasmtime can only
//! trust from itself); a module is checked for its size and the size of each function body,
//! validated, checked for imports, start functions, memory maximum, ABI version and
//! `placid.meta` before it is compiled, and compiled under a deadline; there is no WASI and the
//! linker defines nothing; every call runs under an epoch deadline, a memory limit and a
//! bounded stack, and a trap, a timeout or an impossible result is an `Err` for that call,
//! never a crash and never a trusted answer.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use placid_lang::diag::Code;
use wasmparser::{ExternalKind, Imports, Operator, Parser, Payload};
use wasmtime::{Config, Engine, Linker, Memory, Module, Store, StoreLimits, StoreLimitsBuilder, TypedFunc};

use placid_targets::wasm::Meta;
use placid_targets::wasm::abi;

/// A refused module or a failed call, with its stable code.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HostError {
    /// [`Code::PluginRefused`], [`Code::PluginFailed`] or [`Code::PluginResultInvalid`].
    pub code: Code,
    /// What happened, in one sentence.
    pub message: String,
}

fn refused(message: impl Into<String>) -> HostError {
    HostError { code: Code::PluginRefused, message: message.into() }
}

fn failed(message: impl Into<String>) -> HostError {
    HostError { code: Code::PluginFailed, message: message.into() }
}

/// The limits every call runs under.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Largest linear memory a module may declare and grow to, in bytes.
    pub memory_bytes: usize,
    /// Wall-clock time one `placid_score_batch` call may take.
    pub deadline: Duration,
    /// Native stack the guest may use, in bytes.
    pub max_stack: usize,
    /// Largest module accepted, in bytes.
    pub module_bytes: usize,
    /// Largest function body accepted, in bytes.
    pub function_bytes: usize,
    /// Wall-clock time compiling the module may take.
    pub compile_deadline: Duration,
}

impl Limits {
    /// Limits for the scheduler extender and `placid score`: 64 MiB of memory, 100 ms per call,
    /// 512 KiB of stack, and the module and function sizes placid emits at most, compiled
    /// within 2 s (a module at those sizes compiles in well under a second).
    pub const DEFAULT: Limits = Limits {
        memory_bytes: 64 << 20,
        deadline: Duration::from_millis(100),
        max_stack: 512 << 10,
        module_bytes: abi::MAX_MODULE_BYTES,
        function_bytes: abi::MAX_FUNCTION_BYTES,
        compile_deadline: Duration::from_secs(2),
    };
}

/// How often the epoch advances; deadlines are whole ticks.
const TICK: Duration = Duration::from_millis(1);

/// A loaded, checked and compiled plugin. Cheap to share between threads; each thread makes
/// its own [`Worker`].
pub struct Plugin {
    engine: Engine,
    module: Module,
    meta: Meta,
    limits: Limits,
    ticker: Arc<Ticker>,
}

/// Advances the engine's epoch every [`TICK`] until dropped.
struct Ticker {
    stop: Arc<AtomicBool>,
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Ticker {
    fn start(engine: &Engine) -> Ticker {
        let stop = Arc::new(AtomicBool::new(false));
        let (engine, thread_stop) = (engine.clone(), stop.clone());
        std::thread::spawn(move || {
            while !thread_stop.load(Ordering::Relaxed) {
                std::thread::sleep(TICK);
                engine.increment_epoch();
            }
        });
        Ticker { stop }
    }
}

impl Plugin {
    /// Checks `bytes` as an ABI v1 plugin and compiles it.
    pub fn load(bytes: &[u8], limits: Limits) -> Result<Plugin, HostError> {
        let meta = inspect(bytes, limits)?;
        let mut config = Config::new();
        config.epoch_interruption(true);
        config.max_wasm_stack(limits.max_stack);
        let engine = Engine::new(&config).map_err(|error| refused(format!("cannot configure wasmtime: {error}")))?;
        let module = compile(&engine, bytes, limits.compile_deadline)?;
        let ticker = Arc::new(Ticker::start(&engine));
        Ok(Plugin { engine, module, meta, limits, ticker })
    }

    /// The plugin's metadata.
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// A fresh instance with its own store, to be reused for many calls by one thread.
    pub fn worker(&self) -> Result<Worker, HostError> {
        let limits =
            StoreLimitsBuilder::new().memory_size(self.limits.memory_bytes).instances(1).memories(1).tables(1).table_elements(1024).build();
        let mut store = Store::new(&self.engine, limits);
        store.limiter(|limits| limits);
        store.set_epoch_deadline(deadline_ticks(self.limits.deadline));
        let linker: Linker<StoreLimits> = Linker::new(&self.engine);
        let instance =
            linker.instantiate(&mut store, &self.module).map_err(|error| refused(format!("the module does not instantiate: {error}")))?;
        let memory = instance.get_memory(&mut store, abi::EXPORT_MEMORY).ok_or_else(|| refused("the module exports no memory `memory`"))?;
        let batch = instance
            .get_typed_func::<(i32, i32, i32, i32, i32), i32>(&mut store, abi::EXPORT_SCORE_BATCH)
            .map_err(|error| refused(format!("`{}` does not have the ABI v1 signature: {error}", abi::EXPORT_SCORE_BATCH)))?;
        Ok(Worker {
            store,
            memory,
            batch,
            deadline: self.limits.deadline,
            row_stride: self.meta.row_stride as usize,
            params_size: self.meta.params_size as usize,
            _ticker: self.ticker.clone(),
        })
    }
}

/// Ticks that last at least `deadline`: the first tick may come right after the deadline is
/// set, so one more than the deadline's length in ticks.
fn deadline_ticks(deadline: Duration) -> u64 {
    deadline.as_nanos().div_ceil(TICK.as_nanos()) as u64 + 1
}

/// Compiles `bytes` on a thread of its own and gives up after `deadline`. wasmtime cannot stop
/// Cranelift once it has started (there is no fuel for compiling), so a module that runs past
/// the deadline is refused and its thread is left to finish on its own: the size limits
/// checked before bound how long that takes, and nothing waits for it.
fn compile(engine: &Engine, bytes: &[u8], deadline: Duration) -> Result<Module, HostError> {
    let (sender, receiver) = mpsc::sync_channel(1);
    let (engine, owned) = (engine.clone(), bytes.to_vec());
    std::thread::Builder::new()
        .name("placid-compile".into())
        .spawn(move || {
            let _ = sender.send(Module::new(&engine, &owned));
        })
        .map_err(|error| refused(format!("cannot start compiling the module: {error}")))?;
    match receiver.recv_timeout(deadline) {
        Ok(compiled) => compiled.map_err(|error| refused(format!("the module does not compile: {error}"))),
        Err(RecvTimeoutError::Timeout) => {
            Err(refused(format!("the module did not compile within {} ms, this host's compile deadline", deadline.as_millis())))
        }
        Err(RecvTimeoutError::Disconnected) => Err(refused("compiling the module failed")),
    }
}

/// Static checks of an untrusted module, before anything is compiled; returns its meta.
fn inspect(bytes: &[u8], limits: Limits) -> Result<Meta, HostError> {
    if bytes.len() > limits.module_bytes {
        return Err(refused(format!(
            "the module is {} KiB, above this host's limit of {} KiB",
            bytes.len().div_ceil(1024),
            limits.module_bytes >> 10
        )));
    }
    wasmparser::Validator::new().validate_all(bytes).map_err(|error| refused(format!("the module is not valid Wasm: {error}")))?;
    let mut meta_bytes = None;
    let mut memory_max = None;
    let mut global_values = Vec::new();
    let mut exports = Vec::new();
    for payload in Parser::new(0).parse_all(bytes) {
        let payload = payload.map_err(|error| refused(format!("the module is not valid Wasm: {error}")))?;
        match payload {
            Payload::ImportSection(reader) => {
                if let Some(first) = reader.into_iter().next() {
                    let name = match first {
                        Ok(Imports::Single(_, import)) => format!("`{}.{}`", import.module, import.name),
                        Ok(Imports::Compact1 { module, .. } | Imports::Compact2 { module, .. }) => format!("from `{module}`"),
                        Err(_) => "something".to_owned(),
                    };
                    return Err(refused(format!(
                        "the module imports {name}; placid plugins may import nothing (no WASI, no host functions)"
                    )));
                }
            }
            Payload::StartSection { .. } => return Err(refused("the module has a start function; placid plugins run only when called")),
            Payload::CodeSectionEntry(body) if body.range().len() > limits.function_bytes => {
                return Err(refused(format!(
                    "a function body of the module is {} KiB, above this host's limit of {} KiB",
                    body.range().len().div_ceil(1024),
                    limits.function_bytes >> 10
                )));
            }
            Payload::MemorySection(reader) => {
                for memory in reader {
                    let memory = memory.map_err(|error| refused(error.to_string()))?;
                    let Some(maximum) = memory.maximum else {
                        return Err(refused("the module's memory has no maximum; placid plugins must declare one"));
                    };
                    if memory.memory64 || memory.shared {
                        return Err(refused("the module's memory is 64-bit or shared; ABI v1 uses one 32-bit unshared memory"));
                    }
                    memory_max = Some(maximum);
                }
            }
            Payload::GlobalSection(reader) => {
                for global in reader {
                    let global = global.map_err(|error| refused(error.to_string()))?;
                    let mut operators = global.init_expr.get_operators_reader();
                    let value = match operators.read() {
                        Ok(Operator::I32Const { value }) if !global.ty.mutable => Some(value),
                        _ => None,
                    };
                    global_values.push(value);
                }
            }
            Payload::ExportSection(reader) => {
                for export in reader {
                    let export = export.map_err(|error| refused(error.to_string()))?;
                    exports.push((export.name.to_owned(), export.kind, export.index));
                }
            }
            Payload::CustomSection(reader) if reader.name() == abi::META_SECTION => {
                if meta_bytes.is_some() {
                    return Err(refused("the module has two `placid.meta` sections"));
                }
                meta_bytes = Some(reader.data().to_vec());
            }
            _ => {}
        }
    }
    let memory_max = memory_max.ok_or_else(|| refused("the module declares no memory"))?;
    let max_bytes = memory_max.saturating_mul(abi::PAGE_SIZE);
    if max_bytes > limits.memory_bytes as u64 {
        return Err(refused(format!(
            "the module's memory may grow to {} MiB, above this host's limit of {} MiB",
            max_bytes >> 20,
            limits.memory_bytes >> 20
        )));
    }
    let export = |name: &str, kind: ExternalKind| {
        exports.iter().find(|(export, export_kind, _)| export == name && *export_kind == kind).map(|(_, _, index)| *index)
    };
    export(abi::EXPORT_MEMORY, ExternalKind::Memory).ok_or_else(|| refused("the module does not export its memory as `memory`"))?;
    export(abi::EXPORT_SCORE_BATCH, ExternalKind::Func)
        .ok_or_else(|| refused(format!("the module does not export `{}`", abi::EXPORT_SCORE_BATCH)))?;
    let version_index = export(abi::EXPORT_ABI_VERSION, ExternalKind::Global)
        .ok_or_else(|| refused(format!("the module does not export `{}`; it is not a placid plugin", abi::EXPORT_ABI_VERSION)))?;
    // Imported globals would shift indices, but imports are refused above.
    let version = global_values
        .get(version_index as usize)
        .copied()
        .flatten()
        .ok_or_else(|| refused(format!("`{}` is not an immutable i32 constant", abi::EXPORT_ABI_VERSION)))?;
    if version != abi::ABI_VERSION {
        return Err(refused(format!("the module speaks placid ABI {version}; this host speaks ABI {}", abi::ABI_VERSION)));
    }
    let meta_bytes = meta_bytes.ok_or_else(|| refused("the module has no `placid.meta` section"))?;
    let meta = Meta::parse(&meta_bytes).map_err(refused)?;
    if meta.abi != version {
        return Err(refused(format!("`placid.meta` says ABI {} but `{}` is {version}", meta.abi, abi::EXPORT_ABI_VERSION)));
    }
    Ok(meta)
}

/// One instance of a plugin with its store, reused across calls by one thread.
pub struct Worker {
    store: Store<StoreLimits>,
    memory: Memory,
    batch: TypedFunc<(i32, i32, i32, i32, i32), i32>,
    deadline: Duration,
    row_stride: usize,
    params_size: usize,
    _ticker: Arc<Ticker>,
}

/// Where one batch lies in guest memory.
#[derive(Clone, Copy, Debug)]
pub struct Staged {
    count: usize,
    params: usize,
    rows: usize,
    scores: usize,
    reasons: usize,
}

/// The results of one batch.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scores {
    /// Score per node; `-inf` when filtered.
    pub scores: Vec<f64>,
    /// Failure mask per node.
    pub failed: Vec<u32>,
    /// How many nodes passed every filter (the module's return value, checked to be `0..=n`).
    pub feasible: usize,
}

impl Staged {
    /// The same batch narrowed to node `index` alone (for measuring one call per node).
    pub fn single(&self, index: usize, row_stride: usize) -> Staged {
        let index = index.min(self.count.saturating_sub(1));
        Staged {
            count: usize::from(self.count > 0),
            params: self.params,
            rows: self.rows + index * row_stride,
            scores: self.scores + index * 8,
            reasons: self.reasons + index * 4,
        }
    }

    /// Number of nodes.
    pub fn count(&self) -> usize {
        self.count
    }
}

fn align8(offset: usize) -> usize {
    offset.div_ceil(8) * 8
}

impl Worker {
    /// Copies, runs and reads one batch: `rows` holds `rows.len() / fields` node rows.
    pub fn score(&mut self, params: &[f64], rows: &[f64]) -> Result<Scores, HostError> {
        self.score_within(params, rows, self.deadline)
    }

    /// [`Worker::score`], stopping the call after `time_left` when that is shorter than the
    /// plugin's deadline (a request that has little time left gives the plugin no more).
    pub fn score_within(&mut self, params: &[f64], rows: &[f64], time_left: Duration) -> Result<Scores, HostError> {
        let staged = self.stage(params, rows)?;
        let feasible = self.run_within(&staged, time_left.min(self.deadline))?;
        let mut scores = Scores::default();
        self.read(&staged, &mut scores);
        scores.feasible = feasible;
        Ok(scores)
    }

    /// Copies `params` and `rows` into guest memory, growing it within its maximum.
    pub fn stage(&mut self, params: &[f64], rows: &[f64]) -> Result<Staged, HostError> {
        if params.len() * 8 != self.params_size {
            return Err(failed(format!("the plugin takes {} parameters, got {}", self.params_size / 8, params.len())));
        }
        let count = (rows.len() * 8).checked_div(self.row_stride).unwrap_or(0);
        if count * self.row_stride != rows.len() * 8 {
            return Err(failed("the rows are not a whole number of node rows"));
        }
        let params_at = abi::HEAP_BASE as usize;
        let rows_at = align8(params_at + self.params_size);
        let scores_at = align8(rows_at + rows.len() * 8);
        let reasons_at = scores_at + count * 8;
        let needed = reasons_at + count * 4;
        let have = self.memory.data_size(&self.store);
        if needed > have {
            let pages = (needed - have).div_ceil(abi::PAGE_SIZE as usize) as u64;
            self.memory.grow(&mut self.store, pages).map_err(|_| {
                failed(format!("a batch of {count} nodes needs {} KiB, more than the plugin's memory allows", needed >> 10))
            })?;
        }
        let data = self.memory.data_mut(&mut self.store);
        write_f64s(&mut data[params_at..rows_at], params);
        write_f64s(&mut data[rows_at..scores_at], rows);
        Ok(Staged { count, params: params_at, rows: rows_at, scores: scores_at, reasons: reasons_at })
    }

    /// Runs the plugin on a staged batch; returns how many nodes are feasible.
    pub fn run(&mut self, staged: &Staged) -> Result<usize, HostError> {
        self.run_within(staged, self.deadline)
    }

    fn run_within(&mut self, staged: &Staged, time_left: Duration) -> Result<usize, HostError> {
        self.store.set_epoch_deadline(deadline_ticks(time_left));
        let pointer = |offset: usize| i32::try_from(offset).map_err(|_| failed("the batch does not fit a 32-bit memory"));
        let args =
            (pointer(staged.params)?, pointer(staged.rows)?, pointer(staged.count)?, pointer(staged.scores)?, pointer(staged.reasons)?);
        let result = self.batch.call(&mut self.store, args).map_err(|error| match error.downcast_ref::<wasmtime::Trap>() {
            Some(wasmtime::Trap::Interrupt) => failed("the plugin ran past its time limit and was stopped"),
            Some(trap) => failed(format!("the plugin trapped: {trap}")),
            None => failed(format!("the plugin failed: {error}")),
        })?;
        // The count is the plugin's claim, not a fact: a module that says more nodes passed
        // than it was given (or returns an error code for a count the host knows is valid) is
        // broken or hostile, and none of its results are used.
        match usize::try_from(result) {
            Ok(feasible) if feasible <= staged.count => Ok(feasible),
            _ => Err(HostError {
                code: Code::PluginResultInvalid,
                message: format!("the plugin returned {result} as the number of feasible nodes of a batch of {}", staged.count),
            }),
        }
    }

    /// Reads the results of a batch that has run.
    pub fn read(&self, staged: &Staged, into: &mut Scores) {
        let data = self.memory.data(&self.store);
        into.scores.clear();
        into.failed.clear();
        let scores = &data[staged.scores..staged.scores + staged.count * 8];
        into.scores.extend(scores.chunks_exact(8).map(|bytes| f64::from_le_bytes(bytes.try_into().unwrap_or([0; 8]))));
        let reasons = &data[staged.reasons..staged.reasons + staged.count * 4];
        into.failed.extend(reasons.chunks_exact(4).map(|bytes| u32::from_le_bytes(bytes.try_into().unwrap_or([0; 4]))));
    }
}

fn write_f64s(into: &mut [u8], values: &[f64]) {
    for (slot, value) in into.chunks_exact_mut(8).zip(values) {
        slot.copy_from_slice(&value.to_le_bytes());
    }
}

#[cfg(test)]
mod tests;
