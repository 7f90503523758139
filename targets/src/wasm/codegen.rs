//! The emitter: a [`Program`] to a placid ABI v1 module, with `wasm-encoder`.
//!
//! Invariant: the code performs the same IEEE operations as [`super::native`] in the same
//! order (both sides of `&&`/`||`/`if` are evaluated, penalties are added one by one after the
//! expression), and every emitted module is validated with wasmparser before it is returned.

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::expr::{Arith, Compare, Function, Logic, Node};
use wasm_encoder::{
    BlockType, CodeSection, ConstExpr, CustomSection, ExportKind, ExportSection, Function as WasmFunction, FunctionSection, GlobalSection,
    GlobalType, InstructionSink, MemArg, MemorySection, MemoryType, Module, TypeSection, ValType,
};

use super::abi;
use super::program::Program;

// Locals of `placid_score_batch`: the five i32 parameters come first.
const PARAMS_PTR: u32 = 0;
const ROWS_PTR: u32 = 1;
const COUNT: u32 = 2;
const OUT_SCORES: u32 = 3;
const OUT_REASONS: u32 = 4;
const INDEX: u32 = 5;
const ROW: u32 = 6;
const FEASIBLE: u32 = 7;
const MASK: u32 = 8;
const SCORE: u32 = 9;
/// Hoisted job parameters, then scratch locals of `default`, start here.
const FIRST_F64_LOCAL: u32 = 10;

/// Emits the module of `program` with `meta` (JSON) as its `placid.meta` section.
pub fn emit(program: &Program<'_>, meta: &[u8]) -> Result<Vec<u8>, Diagnostics> {
    let mut module = Module::new();
    let mut types = TypeSection::new();
    types.ty().function([ValType::I32; 5], [ValType::I32]);
    module.section(&types);
    let mut functions = FunctionSection::new();
    functions.function(0);
    module.section(&functions);
    let mut memories = MemorySection::new();
    memories.memory(MemoryType {
        minimum: abi::MEMORY_MIN_PAGES,
        maximum: Some(abi::MEMORY_MAX_PAGES),
        memory64: false,
        shared: false,
        page_size_log2: None,
    });
    module.section(&memories);
    let mut globals = GlobalSection::new();
    let constant = GlobalType { val_type: ValType::I32, mutable: false, shared: false };
    globals.global(constant, &ConstExpr::i32_const(abi::ABI_VERSION));
    globals.global(constant, &ConstExpr::i32_const(abi::HEAP_BASE));
    module.section(&globals);
    let mut exports = ExportSection::new();
    exports.export(abi::EXPORT_MEMORY, ExportKind::Memory, 0);
    exports.export(abi::EXPORT_ABI_VERSION, ExportKind::Global, 0);
    exports.export(abi::EXPORT_HEAP_BASE, ExportKind::Global, 1);
    exports.export(abi::EXPORT_SCORE_BATCH, ExportKind::Func, 0);
    module.section(&exports);
    let function = batch_function(program);
    // Hosts refuse larger code before compiling it (it could take them longer to compile than
    // a scheduler waits), so a module they would refuse is an error here, at the score.
    if function.byte_len() > abi::MAX_FUNCTION_BYTES {
        return Err(too_large(program, "function", function.byte_len(), abi::MAX_FUNCTION_BYTES));
    }
    let mut code = CodeSection::new();
    code.function(&function);
    module.section(&code);
    module.section(&CustomSection { name: abi::META_SECTION.into(), data: meta.into() });
    let bytes = module.finish();
    if bytes.len() > abi::MAX_MODULE_BYTES {
        return Err(too_large(program, "module", bytes.len(), abi::MAX_MODULE_BYTES));
    }
    validated(bytes, program.score.name.as_str(), program.score.span)
}

/// `bytes` when they are a valid module; E061 at the score (`name`, declared at `span`) otherwise. The encoder writes what
/// codegen asks for without checking it, so this is the guard against a codegen bug reaching a
/// host (which would refuse the module at load, far from the score that made it).
fn validated(bytes: Vec<u8>, name: &str, span: placid_lang::span::Span) -> Result<Vec<u8>, Diagnostics> {
    if let Err(error) = wasmparser::Validator::new().validate_all(&bytes) {
        let mut diagnostics = Diagnostics::new();
        diagnostics.push(
            Diagnostic::error(Code::InvalidEmittedModule, span, format!("the module of score `{name}` is invalid: {error}"))
                .label("while compiling this score")
                .help("this is a bug in placid; please report it with this score"),
        );
        return Err(diagnostics);
    }
    Ok(bytes)
}

fn too_large(program: &Program<'_>, what: &str, bytes: usize, limit: usize) -> Diagnostics {
    let mut diagnostics = Diagnostics::new();
    diagnostics.push(
        Diagnostic::error(
            Code::EmittedModuleTooLarge,
            program.score.span,
            format!(
                "the {what} of score `{}` would be {} KiB, above the {} KiB a host loads",
                program.score.name,
                bytes.div_ceil(1024),
                limit >> 10
            ),
        )
        .label("this score's expression, filters and penalties")
        .help("simplify the expressions or split the score into smaller ones"),
    );
    diagnostics
}

fn f64_arg(offset: usize) -> MemArg {
    MemArg { offset: offset as u64, align: 3, memory_index: 0 }
}

fn batch_function(program: &Program<'_>) -> WasmFunction {
    let scratch = count_scratch(program);
    let f64_locals = 1 + program.params.len() as u32 + scratch;
    let mut function = WasmFunction::new([(4, ValType::I32), (f64_locals, ValType::F64)]);
    let mut body = Body { program, sink: function.instructions(), next_scratch: FIRST_F64_LOCAL + program.params.len() as u32 };
    body.prologue();
    body.loop_over_rows();
    body.sink.end();
    function
}

/// How many scratch locals the score needs: one per `default` and `missing` call (each reads
/// its operand twice and must not evaluate it twice).
fn count_scratch(program: &Program<'_>) -> u32 {
    let score = program.score;
    let mut count = 0;
    let expressions = std::iter::once(&score.expr)
        .chain(score.filters.iter().map(|filter| &filter.expr))
        .chain(score.penalties.iter().map(|penalty| &penalty.when));
    for expr in expressions {
        expr.root.walk(&mut |node| {
            if matches!(node, Node::Call(Function::Default | Function::Missing, _)) {
                count += 1;
            }
        });
    }
    count
}

struct Body<'p, 'f> {
    program: &'p Program<'p>,
    sink: InstructionSink<'f>,
    next_scratch: u32,
}

impl Body<'_, '_> {
    /// Refuses a negative count and hoists the job parameters into locals: they are the same
    /// for every row, and a local is cheaper than a load in the loop.
    fn prologue(&mut self) {
        self.sink.local_get(COUNT).i32_const(0).i32_lt_s().if_(BlockType::Empty).i32_const(abi::ERROR_NEGATIVE_COUNT).return_().end();
        for slot in 0..self.program.params.len() {
            self.sink.local_get(PARAMS_PTR).f64_load(f64_arg(8 * slot)).local_set(FIRST_F64_LOCAL + slot as u32);
        }
    }

    fn loop_over_rows(&mut self) {
        let score = self.program.score;
        self.sink.local_get(ROWS_PTR).local_set(ROW);
        self.sink.block(BlockType::Empty).local_get(COUNT).i32_eqz().br_if(0).loop_(BlockType::Empty);
        // The failure mask: bit i is set when filter i does not hold.
        self.sink.i32_const(0);
        for (bit, filter) in score.filters.iter().enumerate() {
            self.condition(&filter.expr.root);
            self.sink.i32_eqz().i32_const(bit as i32).i32_shl().i32_or();
        }
        self.sink.local_set(MASK);
        self.number(&score.expr.root);
        for penalty in &score.penalties {
            self.sink.f64_const(penalty.amount.into()).f64_const(0.0.into());
            self.condition(&penalty.when.root);
            self.sink.select();
            if self.program.prefers_min() {
                self.sink.f64_add();
            } else {
                self.sink.f64_sub();
            }
        }
        self.sink.local_set(SCORE);
        // out_scores[i] = mask == 0 ? score : -inf
        self.sink.local_get(OUT_SCORES).local_get(INDEX).i32_const(3).i32_shl().i32_add();
        self.sink.local_get(SCORE).f64_const(f64::NEG_INFINITY.into()).local_get(MASK).i32_eqz().select();
        self.sink.f64_store(f64_arg(0));
        // out_reasons[i] = mask
        self.sink.local_get(OUT_REASONS).local_get(INDEX).i32_const(2).i32_shl().i32_add();
        self.sink.local_get(MASK).i32_store(MemArg { offset: 0, align: 2, memory_index: 0 });
        self.sink.local_get(FEASIBLE).local_get(MASK).i32_eqz().i32_add().local_set(FEASIBLE);
        self.sink.local_get(ROW).i32_const(self.program.row_stride() as i32).i32_add().local_set(ROW);
        self.sink.local_get(INDEX).i32_const(1).i32_add().local_tee(INDEX).local_get(COUNT).i32_lt_u().br_if(0);
        self.sink.end().end();
        self.sink.local_get(FEASIBLE);
    }

    /// Leaves an f64 on the stack.
    fn number(&mut self, node: &Node) {
        match node {
            Node::Const(value) => {
                self.sink.f64_const((*value).into());
            }
            Node::Feature(feature) => {
                let offset = 8 * self.program.field_slot(*feature);
                self.sink.local_get(ROW).f64_load(f64_arg(offset));
            }
            Node::Param(param) => {
                self.sink.local_get(FIRST_F64_LOCAL + self.program.param_slot(*param) as u32);
            }
            Node::Neg(inner) => {
                self.number(inner);
                self.sink.f64_neg();
            }
            Node::Arith(op, left, right) => {
                self.number(left);
                self.number(right);
                match op {
                    Arith::Add => self.sink.f64_add(),
                    Arith::Sub => self.sink.f64_sub(),
                    Arith::Mul => self.sink.f64_mul(),
                    Arith::Div => self.sink.f64_div(),
                };
            }
            Node::Call(function, args) => self.call(*function, args),
            Node::Bool(_) | Node::Not(_) | Node::Compare(..) | Node::Logic(..) => {
                self.sink.f64_const(f64::NAN.into());
            }
        }
    }

    fn call(&mut self, function: Function, args: &[Node]) {
        match function {
            Function::Min | Function::Max => {
                let mut args_iter = args.iter();
                if let Some(first) = args_iter.next() {
                    self.number(first);
                }
                for arg in args_iter {
                    self.number(arg);
                    if function == Function::Min {
                        self.sink.f64_min();
                    } else {
                        self.sink.f64_max();
                    }
                }
            }
            Function::Clamp => {
                if let [value, low, high] = args {
                    self.number(value);
                    self.number(low);
                    self.sink.f64_max();
                    self.number(high);
                    self.sink.f64_min();
                }
            }
            Function::If => {
                if let [condition, then, otherwise] = args {
                    self.number(then);
                    self.number(otherwise);
                    self.condition(condition);
                    self.sink.select();
                }
            }
            Function::Default => {
                if let [value, fallback] = args {
                    let scratch = self.next_scratch;
                    self.next_scratch += 1;
                    self.number(fallback);
                    self.number(value);
                    self.sink.local_tee(scratch).local_get(scratch).local_get(scratch).f64_ne().select();
                }
            }
            Function::Abs | Function::Sqrt | Function::Floor | Function::Ceil | Function::Round => {
                if let Some(arg) = args.first() {
                    self.number(arg);
                }
                match function {
                    Function::Abs => self.sink.f64_abs(),
                    Function::Sqrt => self.sink.f64_sqrt(),
                    Function::Floor => self.sink.f64_floor(),
                    Function::Ceil => self.sink.f64_ceil(),
                    _ => self.sink.f64_nearest(),
                };
            }
            Function::Missing => {
                self.sink.f64_const(f64::NAN.into());
            }
        }
    }

    /// Leaves an i32 (0 or 1) on the stack.
    fn condition(&mut self, node: &Node) {
        match node {
            Node::Bool(value) => {
                self.sink.i32_const(i32::from(*value));
            }
            Node::Feature(_) | Node::Param(_) => {
                self.number(node);
                self.sink.f64_abs().f64_const(0.0.into()).f64_gt();
            }
            Node::Not(inner) => {
                self.condition(inner);
                self.sink.i32_eqz();
            }
            Node::Compare(op, left, right) => {
                self.number(left);
                self.number(right);
                match op {
                    Compare::Lt => self.sink.f64_lt(),
                    Compare::Le => self.sink.f64_le(),
                    Compare::Gt => self.sink.f64_gt(),
                    Compare::Ge => self.sink.f64_ge(),
                    Compare::Eq => self.sink.f64_eq(),
                    Compare::Ne => self.sink.f64_ne(),
                };
            }
            Node::Logic(op, left, right) => {
                self.condition(left);
                self.condition(right);
                match op {
                    Logic::And => self.sink.i32_and(),
                    Logic::Or => self.sink.i32_or(),
                    Logic::Eq => self.sink.i32_eq(),
                    Logic::Ne => self.sink.i32_ne(),
                };
            }
            Node::Call(Function::Missing, args) => {
                if let Some(arg) = args.first() {
                    let scratch = self.next_scratch;
                    self.next_scratch += 1;
                    self.number(arg);
                    self.sink.local_tee(scratch).local_get(scratch).f64_ne();
                }
            }
            Node::Call(Function::If, args) => {
                if let [condition, then, otherwise] = args.as_slice() {
                    self.condition(then);
                    self.condition(otherwise);
                    self.condition(condition);
                    self.sink.select();
                }
            }
            Node::Const(_) | Node::Neg(_) | Node::Arith(..) | Node::Call(..) => {
                self.sink.i32_const(0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use placid_lang::diag::Code;
    use placid_lang::span::Span;

    #[test]
    fn an_invalid_module_is_a_bug_reported_at_its_score() {
        // The magic number and version alone are a valid, empty module; a truncated section is not.
        let empty = b"\0asm\x01\0\0\0".to_vec();
        assert!(super::validated(empty.clone(), "s", Span::DETACHED).is_ok());
        let mut truncated = empty;
        truncated.extend_from_slice(&[1, 5, 1]);
        let errors = super::validated(truncated, "cost-aware", Span::DETACHED).err().unwrap_or_default();
        let codes: Vec<Code> = errors.iter().map(|diagnostic| diagnostic.code).collect();
        assert_eq!(codes, [Code::InvalidEmittedModule]);
        assert!(errors.iter().all(|diagnostic| diagnostic.message.contains("score `cost-aware`")));
    }
}
