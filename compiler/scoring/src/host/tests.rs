//! Tests of the Wasm target: emitted modules validate and are deterministic; the module run
//! by the host agrees with the native evaluator bit for bit (example score and random
//! expressions, random rows with NaN, infinities and signed zeros); hostile modules are
//! refused or stopped.

use placid_lang::checked::Checked;
use placid_lang::diag::Diagnostics;
use placid_lang::expr::{self, Arith, Compare, Expr, Function, JobParam, Logic, Node, NodeFeature, Type};
use placid_lang::model::{Direction, Filter, Model, Penalty, Score};
use placid_lang::name::Name;
use placid_lang::span::Span;
use proptest::prelude::*;
use wasm_encoder::{
    CodeSection, ConstExpr, CustomSection, EntityType, ExportKind, ExportSection, Function as WasmFunction, FunctionSection, GlobalSection,
    GlobalType, ImportSection, Instruction, MemorySection, MemoryType, Module, TypeSection, ValType,
};

use placid_targets::wasm::native::Evaluator;
use placid_targets::wasm::{Meta, Program, abi, module};

use super::{HostError, Limits, Plugin};
use placid_lang::diag::Code;

fn parsed(text: &str, ty: Type) -> Expr {
    match expr::parse(text, Span::DETACHED, ty) {
        Ok(expr) => expr,
        Err(diagnostics) => panic!("`{text}`: {diagnostics:?}"),
    }
}

fn name(text: &str) -> Name {
    Name::new(text).unwrap_or_else(|reason| panic!("{reason}"))
}

/// The example project's `cost-aware` score.
fn example_score() -> Score {
    Score {
        name: name("cost-aware"),
        span: Span::DETACHED,
        direction: Direction::Min,
        expr: parsed("node.cost_per_gpu_hour / (1 + 0.8 * job.comm_gbps / max(node.nvlink_gbps, 1))", Type::Number),
        filters: vec![
            Filter { name: name("enough-gpus"), expr: parsed("node.gpus_free >= job.gpus", Type::Bool) },
            Filter { name: name("nvlink-if-required"), expr: parsed("!job.nvlink_required || node.nvlink_gbps > 0", Type::Bool) },
        ],
        penalties: vec![Penalty {
            span: Span::DETACHED,
            amount: 0.5,
            when: parsed("job.comm == high && node.rack != job.rack", Type::Bool),
        }],
    }
}

/// A project of one score and nothing else, through the checks like every model a target sees.
fn model_with(score: Score) -> Checked {
    let (verdict, diagnostics) = placid_check::check(Model { scores: vec![score], ..Model::default() }, Diagnostics::new());
    verdict.into_checked().unwrap_or_else(|| panic!("a lone score does not check: {diagnostics:?}"))
}

fn plugin_for(model: &Checked) -> Plugin {
    let bytes = module(model, &model.scores[0]).unwrap_or_else(|diagnostics| panic!("{diagnostics:?}"));
    Plugin::load(&bytes, Limits::DEFAULT).unwrap_or_else(|error| panic!("{error}"))
}

fn same_bits(left: f64, right: f64) -> bool {
    left.to_bits() == right.to_bits() || (left.is_nan() && right.is_nan())
}

/// Runs `rows` through both the module and the evaluator and asserts they agree.
fn assert_agree(model: &Model, plugin: &Plugin, params: &[f64], rows: &[f64]) {
    let program = Program::new(&model.scores[0]).unwrap_or_else(|diagnostics| panic!("{diagnostics:?}"));
    let evaluator = Evaluator::new(&program);
    let mut worker = plugin.worker().unwrap_or_else(|error| panic!("{error}"));
    let wasm = worker.score(params, rows).unwrap_or_else(|error| panic!("{error}"));
    let mut native = Vec::new();
    evaluator.evaluate_batch(params, rows, &mut native);
    assert_eq!(wasm.scores.len(), native.len());
    for (index, outcome) in native.iter().enumerate() {
        assert!(same_bits(wasm.scores[index], outcome.score), "node {index}: wasm {} native {}", wasm.scores[index], outcome.score);
        assert_eq!(wasm.failed[index], outcome.failed, "node {index}");
    }
    assert_eq!(wasm.feasible, native.iter().filter(|outcome| outcome.failed == 0).count());
}

#[test]
fn example_module_validates_and_is_deterministic() {
    let model = model_with(example_score());
    let first = module(&model, &model.scores[0]).unwrap_or_default();
    let second = module(&model, &model.scores[0]).unwrap_or_default();
    assert!(!first.is_empty());
    assert_eq!(first, second);
    wasmparser::Validator::new().validate_all(&first).unwrap_or_else(|error| panic!("{error}"));
    let plugin = plugin_for(&model);
    let meta = plugin.meta();
    assert_eq!(meta.predicates, vec!["enough-gpus", "nvlink-if-required"]);
    let fields: Vec<&str> = meta.node_fields.iter().map(|field| field.name.qualified_name()).collect();
    assert_eq!(fields, vec!["node.gpus_free", "node.cost_per_gpu_hour", "node.nvlink_gbps", "node.rack"]);
    assert_eq!(meta.row_stride, 32);
}

#[test]
fn example_scores_a_known_node() {
    let model = model_with(example_score());
    let plugin = plugin_for(&model);
    // params: gpus, comm_gbps, comm, nvlink_required, rack; row: gpus_free, cost, nvlink, rack.
    let params = [4.0, 400.0, 2.0, 1.0, 7.0];
    let rows = [4.0, 3.1, 900.0, 7.0, 8.0, 2.0, 0.0, 3.0, 2.0, 1.0, 900.0, 7.0];
    let mut worker = plugin.worker().unwrap_or_else(|error| panic!("{error}"));
    let result = worker.score(&params, &rows).unwrap_or_else(|error| panic!("{error}"));
    let expected = 3.1 / (1.0 + 0.8 * 400.0 / 900.0) + 0.0;
    assert_eq!(result.scores[0], expected);
    assert_eq!(result.scores[1], f64::NEG_INFINITY);
    assert_eq!(result.failed, vec![0, 0b10, 0b01]);
    assert_eq!(result.feasible, 1);
    assert_agree(&model, &plugin, &params, &rows);
}

/// Values that exercise IEEE corner cases as well as ordinary ones.
fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => -1000.0..1000.0f64,
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => Just(0.0),
        1 => Just(-0.0),
        1 => Just(1.0),
        1 => (0u32..3).prop_map(f64::from),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn example_agrees_with_native(params in proptest::collection::vec(value(), 5), rows in proptest::collection::vec(value(), 0..160)) {
        let model = model_with(example_score());
        let plugin = plugin_for(&model);
        let whole = rows.len() / 4 * 4;
        assert_agree(&model, &plugin, &params, &rows[..whole]);
    }

    /// The telemetry features, in the 0-1 range the extender and the simulator fill in (and
    /// NaN, which they never write but a hand-made host could), score alike in Wasm and natively.
    #[test]
    fn telemetry_features_agree_with_native(
        rows in proptest::collection::vec(prop_oneof![4 => 0.0..=1.0f64, 1 => Just(f64::NAN), 1 => value()], 0..60),
        params in proptest::collection::vec(value(), 1),
    ) {
        let score = Score {
            name: name("busy-aware"),
            span: Span::DETACHED,
            direction: Direction::Min,
            expr: parsed("node.cost_per_gpu_hour * (1 + domain.nvlink_utilization) + 0.5 * node.nvlink_utilization", Type::Number),
            filters: vec![Filter { name: name("not-saturated"), expr: parsed("domain.nvlink_utilization < 0.95", Type::Bool) }],
            penalties: vec![Penalty { span: Span::DETACHED, amount: 1.0, when: parsed("job.comm == high && node.nvlink_utilization > 0.5", Type::Bool) }],
        };
        let model = model_with(score);
        let plugin = plugin_for(&model);
        let width = Program::new(&model.scores[0]).map(|program| program.node_fields.len()).unwrap_or(1);
        prop_assert_eq!(width, 3);
        let whole = rows.len() / width * width;
        assert_agree(&model, &plugin, &params, &rows[..whole]);
    }

    #[test]
    fn random_expressions_agree_with_native(
        (score_root, filter_root, penalty_root) in (number_node(), bool_node(), bool_node()),
        params in proptest::collection::vec(value(), JobParam::ALL.len()),
        rows in proptest::collection::vec(value(), NodeFeature::ALL.len() * 8),
        prefer_min in any::<bool>(),
    ) {
        let as_expr = |root: Node, ty: Type| Expr { text: String::new(), span: Span::DETACHED, root, ty };
        let score = Score {
            name: name("random"),
            span: Span::DETACHED,
            direction: if prefer_min { Direction::Min } else { Direction::Max },
            expr: as_expr(score_root, Type::Number),
            filters: vec![Filter { name: name("generated"), expr: as_expr(filter_root, Type::Bool) }],
            penalties: vec![Penalty { span: Span::DETACHED, amount: 1.5, when: as_expr(penalty_root, Type::Bool) }],
        };
        let model = model_with(score);
        let plugin = plugin_for(&model);
        let program = Program::new(&model.scores[0]).unwrap_or_else(|diagnostics| panic!("{diagnostics:?}"));
        let params: Vec<f64> = params[..program.params.len()].to_vec();
        let width = program.node_fields.len();
        let rows: Vec<f64> = rows[..rows.len().checked_div(width).unwrap_or(0) * width].to_vec();
        assert_agree(&model, &plugin, &params, &rows);
    }
}

fn numeric_leaf() -> impl Strategy<Value = Node> {
    prop_oneof![
        value().prop_map(Node::Const),
        proptest::sample::select(NodeFeature::ALL.iter().copied().filter(|feature| feature.ty() != Type::Bool).collect::<Vec<_>>())
            .prop_map(Node::Feature),
        proptest::sample::select(JobParam::ALL.iter().copied().filter(|param| param.ty() != Type::Bool).collect::<Vec<_>>())
            .prop_map(Node::Param),
    ]
}

fn bool_leaf() -> impl Strategy<Value = Node> {
    prop_oneof![
        any::<bool>().prop_map(Node::Bool),
        proptest::sample::select(vec![NodeFeature::HasNvlink, NodeFeature::Mig]).prop_map(Node::Feature),
        Just(Node::Param(JobParam::NvlinkRequired)),
    ]
}

/// Random well-typed numeric trees (features are used without regard to their category: the
/// back ends treat every non-boolean value as an f64, which is what is being compared here).
fn number_node() -> impl Strategy<Value = Node> {
    numeric_leaf().prop_recursive(4, 24, 3, |inner| {
        let boxed = || inner.clone().prop_map(Box::new);
        prop_oneof![
            (proptest::sample::select(vec![Arith::Add, Arith::Sub, Arith::Mul, Arith::Div]), boxed(), boxed())
                .prop_map(|(op, left, right)| Node::Arith(op, left, right)),
            boxed().prop_map(Node::Neg),
            (
                proptest::sample::select(vec![Function::Abs, Function::Sqrt, Function::Floor, Function::Ceil, Function::Round]),
                inner.clone()
            )
                .prop_map(|(function, arg)| Node::Call(function, vec![arg])),
            (proptest::sample::select(vec![Function::Min, Function::Max]), proptest::collection::vec(inner.clone(), 2..4))
                .prop_map(|(function, args)| Node::Call(function, args)),
            proptest::collection::vec(inner.clone(), 3).prop_map(|args| Node::Call(Function::Clamp, args)),
            proptest::collection::vec(inner.clone(), 2).prop_map(|args| Node::Call(Function::Default, args)),
            (bool_leaf(), inner.clone(), inner.clone())
                .prop_map(|(condition, then, otherwise)| Node::Call(Function::If, vec![condition, then, otherwise])),
        ]
    })
}

fn bool_node() -> impl Strategy<Value = Node> {
    let comparison = (
        proptest::sample::select(vec![Compare::Lt, Compare::Le, Compare::Gt, Compare::Ge, Compare::Eq, Compare::Ne]),
        number_node(),
        number_node(),
    )
        .prop_map(|(op, left, right)| Node::Compare(op, Box::new(left), Box::new(right)));
    prop_oneof![bool_leaf(), comparison, number_node().prop_map(|arg| Node::Call(Function::Missing, vec![arg]))].prop_recursive(
        3,
        12,
        2,
        |inner| {
            let boxed = || inner.clone().prop_map(Box::new);
            prop_oneof![
                (proptest::sample::select(vec![Logic::And, Logic::Or, Logic::Eq, Logic::Ne]), boxed(), boxed())
                    .prop_map(|(op, left, right)| Node::Logic(op, left, right)),
                boxed().prop_map(Node::Not),
                proptest::collection::vec(inner.clone(), 3).prop_map(|args| Node::Call(Function::If, args)),
            ]
        },
    )
}

// ---- hostile modules ----

/// A module shaped like a plugin, with the parts a test wants to break.
struct Hostile {
    import: bool,
    memory_max: Option<u64>,
    abi_version: i32,
    meta: Option<Vec<u8>>,
    body: Vec<Instruction<'static>>,
    /// Bytes of an extra custom section, to make the module large.
    padding: usize,
}

impl Hostile {
    fn valid_meta() -> Vec<u8> {
        let model = model_with(Score { filters: Vec::new(), penalties: Vec::new(), ..example_score() });
        let program = Program::new(&model.scores[0]).unwrap_or_else(|diagnostics| panic!("{diagnostics:?}"));
        Meta::new(&model, &program).to_bytes()
    }

    fn new(body: Vec<Instruction<'static>>) -> Hostile {
        Hostile { import: false, memory_max: Some(16), abi_version: 1, meta: Some(Hostile::valid_meta()), body, padding: 0 }
    }

    fn bytes(&self) -> Vec<u8> {
        let mut module = Module::new();
        let mut types = TypeSection::new();
        types.ty().function([ValType::I32; 5], [ValType::I32]);
        types.ty().function([], []);
        module.section(&types);
        if self.import {
            let mut imports = ImportSection::new();
            imports.import("wasi_snapshot_preview1", "fd_write", EntityType::Function(1));
            module.section(&imports);
        }
        let function_index = u32::from(self.import);
        let mut functions = FunctionSection::new();
        functions.function(0);
        module.section(&functions);
        let mut memories = MemorySection::new();
        memories.memory(MemoryType { minimum: 1, maximum: self.memory_max, memory64: false, shared: false, page_size_log2: None });
        module.section(&memories);
        let mut globals = GlobalSection::new();
        globals.global(GlobalType { val_type: ValType::I32, mutable: false, shared: false }, &ConstExpr::i32_const(self.abi_version));
        module.section(&globals);
        let mut exports = ExportSection::new();
        exports.export("memory", ExportKind::Memory, 0);
        exports.export("placid_abi_version", ExportKind::Global, 0);
        exports.export("placid_score_batch", ExportKind::Func, function_index);
        module.section(&exports);
        let mut code = CodeSection::new();
        let mut function = WasmFunction::new([]);
        for instruction in &self.body {
            function.instruction(instruction);
        }
        function.instruction(&Instruction::End);
        code.function(&function);
        module.section(&code);
        if let Some(meta) = &self.meta {
            module.section(&CustomSection { name: "placid.meta".into(), data: meta.as_slice().into() });
        }
        if self.padding > 0 {
            module.section(&CustomSection { name: "padding".into(), data: vec![0; self.padding].into() });
        }
        module.finish()
    }
}

fn refusal(hostile: &Hostile) -> HostError {
    match Plugin::load(&hostile.bytes(), Limits::DEFAULT) {
        Ok(_) => panic!("a hostile module was accepted"),
        Err(error) => error,
    }
}

fn returns_zero() -> Vec<Instruction<'static>> {
    vec![Instruction::I32Const(0)]
}

#[test]
fn a_well_formed_hand_written_module_loads() {
    let plugin = Plugin::load(&Hostile::new(returns_zero()).bytes(), Limits::DEFAULT);
    assert!(plugin.is_ok(), "{:?}", plugin.err());
}

#[test]
fn imports_are_refused() {
    let error = refusal(&Hostile { import: true, ..Hostile::new(returns_zero()) });
    assert_eq!(error.code, Code::PluginRefused);
    assert!(error.message.contains("imports `wasi_snapshot_preview1.fd_write`"), "{error}");
}

#[test]
fn memory_without_maximum_is_refused() {
    let error = refusal(&Hostile { memory_max: None, ..Hostile::new(returns_zero()) });
    assert!(error.message.contains("no maximum"), "{error}");
}

#[test]
fn memory_above_the_host_limit_is_refused() {
    let error = refusal(&Hostile { memory_max: Some(65536), ..Hostile::new(returns_zero()) });
    assert!(error.message.contains("above this host's limit"), "{error}");
}

#[test]
fn wrong_abi_version_is_refused() {
    let error = refusal(&Hostile { abi_version: 2, ..Hostile::new(returns_zero()) });
    assert!(error.message.contains("speaks placid ABI 2"), "{error}");
}

#[test]
fn missing_or_bad_meta_is_refused() {
    let error = refusal(&Hostile { meta: None, ..Hostile::new(returns_zero()) });
    assert!(error.message.contains("no `placid.meta`"), "{error}");
    let error = refusal(&Hostile { meta: Some(b"{\"abi\": 1}".to_vec()), ..Hostile::new(returns_zero()) });
    assert!(error.message.contains("not valid metadata"), "{error}");
    let garbage = refusal(&Hostile { meta: Some(vec![0xff, 0x00]), ..Hostile::new(returns_zero()) });
    assert_eq!(garbage.code, Code::PluginRefused);
}

#[test]
fn a_meta_naming_an_unknown_source_form_is_refused() {
    let meta = String::from_utf8(Hostile::valid_meta()).unwrap_or_default();
    assert!(meta.contains("\"pod.label:"), "{meta}");
    let error =
        refusal(&Hostile { meta: Some(meta.replace("\"pod.label:", "\"pod.annotation:").into_bytes()), ..Hostile::new(returns_zero()) });
    assert_eq!(error.code, Code::PluginRefused);
    assert!(error.message.contains("unknown Kubernetes source `pod.annotation:"), "{error}");
}

#[test]
fn garbage_bytes_are_refused() {
    let error = Plugin::load(b"\0asm\x01\0\0\0garbage", Limits::DEFAULT).err().unwrap_or_else(|| panic!("accepted"));
    assert!(error.message.contains("not valid Wasm"), "{error}");
}

fn run_hostile(body: Vec<Instruction<'static>>) -> HostError {
    let limits = Limits { deadline: std::time::Duration::from_millis(20), ..Limits::DEFAULT };
    let plugin = Plugin::load(&Hostile::new(body).bytes(), limits).unwrap_or_else(|error| panic!("{error}"));
    let mut worker = plugin.worker().unwrap_or_else(|error| panic!("{error}"));
    let rows = [0.0; 4];
    match worker.score(&[400.0], &rows) {
        Ok(scores) => panic!("a hostile call returned {scores:?}"),
        Err(error) => error,
    }
}

#[test]
fn an_infinite_loop_is_stopped_by_the_deadline() {
    let started = std::time::Instant::now();
    let error = run_hostile(vec![
        Instruction::Loop(wasm_encoder::BlockType::Empty),
        Instruction::Br(0),
        Instruction::End,
        Instruction::I32Const(0),
    ]);
    assert_eq!(error.code, Code::PluginFailed);
    assert!(error.message.contains("time limit"), "{error}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn a_memory_growth_bomb_is_contained() {
    // Grows by 16 pages until growth fails (at the declared maximum), then touches the last
    // byte it thinks it has: the call ends in an error, not in a host out of memory.
    let body = vec![
        Instruction::Loop(wasm_encoder::BlockType::Empty),
        Instruction::I32Const(16),
        Instruction::MemoryGrow(0),
        Instruction::I32Const(-1),
        Instruction::I32Ne,
        Instruction::BrIf(0),
        Instruction::End,
        Instruction::I32Const(-8),
        Instruction::I64Load(wasm_encoder::MemArg { offset: 0, align: 3, memory_index: 0 }),
        Instruction::Drop,
        Instruction::I32Const(0),
    ];
    let error = run_hostile(body);
    assert_eq!(error.code, Code::PluginFailed);
    assert!(error.message.contains("trapped"), "{error}");
}

#[test]
fn a_trap_is_an_error_and_the_worker_survives() {
    let limits = Limits::DEFAULT;
    let plugin = Plugin::load(&Hostile::new(vec![Instruction::Unreachable]).bytes(), limits).unwrap_or_else(|error| panic!("{error}"));
    let mut worker = plugin.worker().unwrap_or_else(|error| panic!("{error}"));
    for _ in 0..2 {
        let error = worker.score(&[400.0], &[0.0; 4]).err().unwrap_or_else(|| panic!("no trap"));
        assert!(error.message.contains("trapped"), "{error}");
    }
}

#[test]
fn too_many_filters_is_a_diagnostic() {
    let filters = (0..33).map(|index| Filter { name: name(&format!("f{index}")), expr: parsed("node.gpus > 0", Type::Bool) }).collect();
    let model = model_with(Score { filters, ..example_score() });
    let diagnostics = module(&model, &model.scores[0]).err().map(|diagnostics| diagnostics.into_vec()).unwrap_or_default();
    assert_eq!(diagnostics[0].code, Code::TooManyPredicates);
}

fn penalty(when: &str) -> Penalty {
    Penalty { span: Span::DETACHED, amount: 0.5, when: parsed(when, Type::Bool) }
}

fn build_errors(score: Score) -> Vec<Code> {
    let model = model_with(score);
    let result = module(&model, &model.scores[0]);
    result.err().map(|diagnostics| diagnostics.into_vec().into_iter().map(|diagnostic| diagnostic.code).collect()).unwrap_or_default()
}

#[test]
fn too_many_penalties_is_a_diagnostic() {
    let at_limit = vec![penalty("node.gpus_free > 1"); 256];
    assert_eq!(build_errors(Score { penalties: at_limit.clone(), ..example_score() }), Vec::<Code>::new());
    let over = [at_limit, vec![penalty("node.gpus_free > 2")]].concat();
    assert_eq!(build_errors(Score { penalties: over, ..example_score() }), vec![Code::TooManyPenalties]);
}

#[test]
fn a_function_larger_than_hosts_load_is_a_diagnostic() {
    // 256 penalties of 80 comparisons each: about 16 bytes of code per comparison.
    let when = (0..80).map(|index| format!("node.gpus_free > {index}")).collect::<Vec<_>>().join(" && ");
    let score = Score { penalties: vec![penalty(&when); 256], ..example_score() };
    assert_eq!(build_errors(score), vec![Code::EmittedModuleTooLarge]);
}

/// A body of `count` `nop`s that returns 0: as large as a test needs, cheap to compile.
fn nops(count: usize) -> Vec<Instruction<'static>> {
    let mut body = vec![Instruction::Nop; count];
    body.push(Instruction::I32Const(0));
    body
}

#[test]
fn an_oversized_module_or_function_is_refused_before_compiling() {
    let error = refusal(&Hostile { padding: abi::MAX_MODULE_BYTES, ..Hostile::new(returns_zero()) });
    assert_eq!(error.code, Code::PluginRefused);
    assert!(error.message.contains("above this host's limit of 1024 KiB"), "{error}");
    let error = refusal(&Hostile::new(nops(abi::MAX_FUNCTION_BYTES + 1)));
    assert!(error.message.contains("a function body of the module is 257 KiB"), "{error}");
    let at_limit = Plugin::load(&Hostile::new(nops(abi::MAX_FUNCTION_BYTES - 16)).bytes(), Limits::DEFAULT);
    assert!(at_limit.is_ok(), "{:?}", at_limit.err());
}

#[test]
fn compiling_past_the_deadline_is_refused_without_waiting() {
    let bytes = Hostile::new(nops(abi::MAX_FUNCTION_BYTES - 16)).bytes();
    let limits = Limits { compile_deadline: std::time::Duration::from_millis(1), ..Limits::DEFAULT };
    let started = std::time::Instant::now();
    let error = Plugin::load(&bytes, limits).err().unwrap_or_else(|| panic!("compiled within 1 ms"));
    assert_eq!(error.code, Code::PluginRefused);
    assert!(error.message.contains("did not compile within 1 ms"), "{error}");
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
}

#[test]
fn a_feasible_count_outside_the_batch_is_not_trusted() {
    // The batch of `run_hostile` has two nodes: 3, i32::MAX and any negative value are lies.
    for claimed in [3, i32::MAX, -1, -5] {
        let error = run_hostile(vec![Instruction::I32Const(claimed)]);
        assert_eq!(error.code, Code::PluginResultInvalid, "{claimed}: {error}");
        assert!(error.message.contains(&format!("returned {claimed} as the number of feasible nodes of a batch of 2")), "{error}");
    }
}
