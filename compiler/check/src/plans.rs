//! Plans: the stage graph is acyclic and written in order, every stage uses a tier its team
//! may use, and every stage can actually be placed in its pool (size, NVLink locality,
//! NVLink and MIG availability, image platforms).

use petgraph::algo::tarjan_scc;
use petgraph::graph::DiGraph;
use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{Arch, Locality, Mig, Model, NvlinkNeed, Plan, Stage};

use super::topology::units;

pub(super) fn check(model: &Model, diagnostics: &mut Diagnostics) {
    for plan in &model.plans {
        check_order(plan, diagnostics);
        for stage in &plan.stages {
            check_tier(model, plan, stage, diagnostics);
            check_fit(model, stage, diagnostics);
            check_hardware(model, stage, diagnostics);
        }
    }
}

/// Reports cycles (with their path) and `after` references to later stages.
fn check_order(plan: &Plan, diagnostics: &mut Diagnostics) {
    let mut graph = DiGraph::<usize, ()>::new();
    let vertices: Vec<_> = (0..plan.stages.len()).map(|index| graph.add_node(index)).collect();
    for (index, stage) in plan.stages.iter().enumerate() {
        for after in &stage.after {
            graph.add_edge(vertices[after.value], vertices[index], ());
        }
    }
    let mut in_cycle = vec![false; plan.stages.len()];
    for component in tarjan_scc(&graph) {
        let self_loop = component.len() == 1 && graph.contains_edge(component[0], component[0]);
        if component.len() < 2 && !self_loop {
            continue;
        }
        let mut members: Vec<usize> = component.iter().map(|vertex| graph[*vertex]).collect();
        members.sort_unstable();
        for member in &members {
            in_cycle[*member] = true;
        }
        let path = cycle_path(plan, &members);
        let first = &plan.stages[members[0]];
        let mut diagnostic =
            Diagnostic::error(Code::PlanCycle, first.span, format!("stages of plan `{}` wait for each other: {path}", plan.name))
                .label("part of the cycle");
        for member in &members[1..] {
            diagnostic = diagnostic.with_secondary(plan.stages[*member].span, "also in the cycle");
        }
        diagnostics.push(diagnostic.help("remove one `after` so the stages can start"));
    }
    for (index, stage) in plan.stages.iter().enumerate() {
        for after in &stage.after {
            if after.value >= index && !in_cycle[index] {
                diagnostics.push(
                    Diagnostic::error(
                        Code::StageForwardReference,
                        after.span,
                        format!("stage `{}` runs after `{}`, which is declared later", stage.name, plan.stages[after.value].name),
                    )
                    .label("later stage")
                    .with_secondary(plan.stages[after.value].span, "declared here")
                    .help("write the stages of a plan in the order they run"),
                );
            }
        }
    }
}

/// `a -> b -> a`, following `after` edges inside the cycle's members.
fn cycle_path(plan: &Plan, members: &[usize]) -> String {
    let start = members[0];
    let mut path = vec![start];
    let mut current = start;
    for _ in 0..members.len() {
        // The stage that runs after `current` inside the cycle.
        let next = members.iter().copied().find(|candidate| plan.stages[*candidate].after.iter().any(|after| after.value == current));
        match next {
            Some(next) if next == start => {
                path.push(start);
                break;
            }
            Some(next) if !path.contains(&next) => {
                path.push(next);
                current = next;
            }
            _ => break,
        }
    }
    path.iter().map(|index| plan.stages[*index].name.as_str()).collect::<Vec<_>>().join(" -> ")
}

fn check_tier(model: &Model, plan: &Plan, stage: &Stage, diagnostics: &mut Diagnostics) {
    // A recovered plan's team is a stand-in (see `Plan::recovered`).
    if plan.recovered {
        return;
    }
    let team = model.team(plan.team.value);
    if !team.tiers.iter().any(|tier| tier.value == stage.tier.value) {
        let allowed: Vec<&str> = team.tiers.iter().map(|tier| model.tier(tier.value).name.as_str()).collect();
        diagnostics.push(
            Diagnostic::error(
                Code::TierNotAllowed,
                stage.tier.span,
                format!("team `{}` may not use tier `{}`", team.name, model.tier(stage.tier.value).name),
            )
            .label("tier not allowed")
            .with_secondary(team.span, "team declared here")
            .help(format!("team `{}` may use: {}", team.name, allowed.join(", "))),
        );
    }
}

fn check_fit(model: &Model, stage: &Stage, diagnostics: &mut Diagnostics) {
    let pool = model.pool(stage.pool.value);
    if pool.nodes.is_empty() {
        return;
    }
    let available = match stage.capacity {
        Some(kind) => pool.nodes.iter().map(|id| model.node(*id)).filter(|node| node.capacity == kind).map(|node| node.gpu_count()).sum(),
        None => pool.gpus,
    };
    if stage.gpus.value > available {
        let what = stage.capacity.map_or_else(|| " ".to_owned(), |kind| format!(" {} ", kind.as_str()));
        diagnostics.push(
            Diagnostic::error(
                Code::StageExceedsPool,
                stage.gpus.span,
                format!(
                    "stage `{}` needs {} GPUs per trial, but pool `{}` has {available}{what}GPUs",
                    stage.name, stage.gpus.value, pool.name
                ),
            )
            .label(format!("{} GPUs short", stage.gpus.value - available))
            .with_secondary(pool.span, "pool declared here")
            .help("use fewer GPUs per trial or a larger pool"),
        );
        return;
    }
    let Some(class) = stage.class.as_ref().map(|class| model.class(class.value)) else {
        return;
    };
    // The class's locality as lowering resolved it (nvlink-domain by default when NVLink is
    // required): an explicit `any` lets the gang span domains, in the engine and on both
    // targets alike.
    let locality = class.locality;
    let Some(units) = units(model, stage.pool.value, locality) else {
        return;
    };
    // A class that requires NVLink in a pool without any is E033's (check_hardware): "use at
    // most 0 GPUs per trial" would restate it as nonsense.
    if units.is_empty() && class.nvlink == NvlinkNeed::Required {
        return;
    }
    let largest = units.first().map_or(0, |unit| unit.gpus);
    if stage.gpus.value > largest {
        let unit_word = match locality {
            Locality::Node => "node",
            Locality::Chassis => "chassis",
            Locality::NvlinkDomain => "NVLink domain",
            Locality::Rack => "rack",
            Locality::Any => "unit",
        };
        let largest_text = units.first().map_or_else(
            || format!("the pool has no {unit_word} at all"),
            |unit| format!("the largest is `{}` with {} GPUs", unit.name, unit.gpus),
        );
        diagnostics.push(
            Diagnostic::error(
                Code::DomainTooSmall,
                stage.gpus.span,
                format!(
                    "stage `{}` needs {} GPUs inside one {unit_word} of pool `{}`, but {largest_text}",
                    stage.name, stage.gpus.value, pool.name
                ),
            )
            .label(format!("{} GPUs short", stage.gpus.value - largest))
            .with_secondary(class.span, format!("class `{}` asks for {} locality", class.name, locality.as_str()))
            .help(format!("use at most {largest} GPUs per trial, or a pool with a larger {unit_word}")),
        );
    }
}

fn check_hardware(model: &Model, stage: &Stage, diagnostics: &mut Diagnostics) {
    let Some(class_ref) = &stage.class else {
        return;
    };
    let class = model.class(class_ref.value);
    let pool = model.pool(stage.pool.value);
    let nodes: Vec<_> = pool.nodes.iter().map(|id| model.node(*id)).collect();
    if nodes.is_empty() {
        return;
    }
    if class.nvlink == NvlinkNeed::Required {
        let minimum = class.min_bandwidth.map_or(1, |bandwidth| bandwidth.bits_per_second);
        let good = nodes.iter().filter(|node| node.has_nvlink() && node.nvlink_bandwidth().bits_per_second >= minimum).count();
        if good == 0 {
            let why = class
                .min_bandwidth
                .map_or_else(|| "none has NVLink".to_owned(), |bandwidth| format!("none has NVLink of at least {bandwidth} per GPU"));
            diagnostics.push(
                Diagnostic::error(
                    Code::NvlinkUnavailable,
                    class_ref.span,
                    format!("class `{}` requires NVLink, but in pool `{}` {why}", class.name, pool.name),
                )
                .label("needs NVLink")
                .with_secondary(stage.pool.span, "pool")
                .help("place the stage in a pool of NVLink nodes, or relax the class to `nvlink \"preferred\"`"),
            );
        }
    }
    if let Some(profile) = &class.mig {
        let offers = nodes.iter().any(|node| {
            node.gpus.iter().any(|gpu| match &gpu.mig {
                Mig::Enabled { instances } => instances.iter().any(|instance| instance.profile == profile.value),
                Mig::Disabled => false,
            })
        });
        if !offers {
            diagnostics.push(
                Diagnostic::error(
                    Code::MigUnavailable,
                    class_ref.span,
                    format!("class `{}` runs on MIG profile `{}`, which no GPU of pool `{}` offers", class.name, profile.value, pool.name),
                )
                .label("MIG profile unavailable")
                .with_secondary(profile.span, "profile named here")
                .help("enable MIG with that profile on GPUs of the pool, or choose another pool"),
            );
        }
    }
    if !class.platforms.is_empty() {
        let arches: std::collections::BTreeSet<Arch> = nodes.iter().map(|node| node.arch).collect();
        for arch in arches.into_iter().filter(|arch| !class.platforms.contains(arch)) {
            let code = if arch == Arch::Riscv64 { Code::MissingRiscvImage } else { Code::InvalidValue };
            diagnostics.push(
                Diagnostic::error(
                    code,
                    stage.pool.span,
                    format!(
                        "stage `{}` can land on {} nodes of pool `{}`, but class `{}` has no {} image",
                        stage.name,
                        arch.as_str(),
                        pool.name,
                        class.name,
                        arch.oci_platform()
                    ),
                )
                .label(format!("{} nodes in this pool", arch.as_str()))
                .with_secondary(class.span, "class declared here")
                .help(format!("add \"{}\" to the class's `platforms` once the image is built, or narrow the pool", arch.oci_platform())),
            );
        }
    }
}
