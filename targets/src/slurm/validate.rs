//! What Slurm would silently mangle, reported before anything is emitted, at the span of the
//! model element at fault. The checker has already guaranteed the policy is consistent; these
//! are only limits of Slurm's syntax (case folding, positional GRES parsing, constraint
//! operators, the CPU layout arithmetic).

use std::collections::BTreeMap;

use placid_lang::codes::Code;
use placid_lang::diag::{Diagnostic, Diagnostics};
use placid_lang::model::Model;
use placid_lang::name::Name;
use placid_lang::span::Span;

use super::names;

/// Every Slurm-specific problem of `model`.
pub fn validate(model: &Model) -> Diagnostics {
    let mut diagnostics = Diagnostics::new();
    check_collisions(model, &mut diagnostics);
    check_gres_types(model, &mut diagnostics);
    check_feature_names(model, &mut diagnostics);
    check_cpu_layouts(model, &mut diagnostics);
    check_fairshares(model, &mut diagnostics);
    if model.project.slurm.as_ref().is_some_and(|settings| settings.accounting) {
        check_price_partitions(model, &mut diagnostics);
    }
    diagnostics
}

/// Pools split by GPU price ([`super::billing::partitions`]) get partitions named
/// `<pool>_<price>`, which must not take another pool's name; and a migration's phases grow
/// its source pool's one partition, so that pool must have one price.
fn check_price_partitions(model: &Model, diagnostics: &mut Diagnostics) {
    let mut taken: BTreeMap<String, Span> = BTreeMap::new();
    for pool in &model.pools {
        for partition in super::billing::partitions(model, pool) {
            claim(&mut taken, partition.name, pool.span, "partition", diagnostics);
        }
    }
    for migration in &model.migrations {
        let source = model.pool(migration.from.value);
        let prices = super::billing::partitions(model, source).len();
        if prices > 1 {
            diagnostics.push(
                Diagnostic::error(
                    Code::SlurmSplitMigrationPool,
                    migration.from.span,
                    format!("migration `{}` leaves pool `{}`, whose nodes have {prices} GPU prices", migration.name, source.name),
                )
                .label("Slurm splits this pool into one partition per price")
                .help("migrate from a pool of one price (select its nodes by capacity or GPU model), or give its nodes one price"),
            );
        }
    }
}

fn check_collisions(model: &Model, diagnostics: &mut Diagnostics) {
    let mut qos_names: BTreeMap<String, Span> = BTreeMap::new();
    for tier in &model.tiers {
        claim(&mut qos_names, names::qos(tier), tier.span, "QOS", diagnostics);
    }
    let mut accounts: BTreeMap<String, Span> = BTreeMap::from([("root".to_owned(), Span::DETACHED)]);
    for cost_center in &model.cost_centers {
        claim(&mut accounts, names::cost_center_account(cost_center), cost_center.span, "account", diagnostics);
    }
    for team in &model.teams {
        claim(&mut accounts, names::team_account(team), team.span, "account", diagnostics);
    }
    // An admin account that is also a team's or cost center's would let that team skip its
    // own rules.
    for admin in &model.admin_accounts {
        claim(&mut accounts, names::admin_account(&admin.value), admin.span, "account", diagnostics);
    }
}

fn claim(taken: &mut BTreeMap<String, Span>, name: String, span: Span, kind: &str, diagnostics: &mut Diagnostics) {
    match taken.get(&name) {
        Some(first) => {
            let mut diagnostic = Diagnostic::error(Code::SlurmNameCollision, span, format!("Slurm {kind} `{name}` is already taken"))
                .label(format!("becomes {kind} `{name}`"))
                .help("sacctmgr lowercases names; rename this element (a team can choose its Slurm name with `account`)");
            if *first != Span::DETACHED {
                diagnostic = diagnostic.with_secondary(*first, "first use");
            }
            diagnostics.push(diagnostic);
        }
        None => {
            taken.insert(name, span);
        }
    }
}

fn check_gres_types(model: &Model, diagnostics: &mut Diagnostics) {
    for node in &model.nodes {
        let Some(gpu) = node.gpus.iter().find(|gpu| !is_gres_type(&gpu.model)) else { continue };
        diagnostics.push(
            Diagnostic::error(Code::SlurmGresType, gpu.span, format!("GPU model `{}` cannot be a Slurm GRES type", gpu.model))
                .label("Slurm would re-parse this in `Gres=gpu:<type>:<count>`")
                .help("start the model with a letter and use only letters, digits, `-` and `_` (`H200`, `L40S`)"),
        );
    }
}

fn is_gres_type(model: &Name) -> bool {
    let text = model.as_str();
    text.starts_with(|c: char| c.is_ascii_alphabetic()) && is_feature_safe(text)
}

fn is_feature_safe(text: &str) -> bool {
    text.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn check_feature_names(model: &Model, diagnostics: &mut Diagnostics) {
    let mut report = |name: &Name, span: Span, kind: &str| {
        if !is_feature_safe(name.as_str()) {
            diagnostics.push(
                Diagnostic::error(Code::SlurmFeatureName, span, format!("{kind} `{name}` cannot be a Slurm node feature"))
                    .label("`.` is an operator in `--constraint`")
                    .help("use only letters, digits, `-` and `_`"),
            );
        }
    };
    for domain in &model.domains {
        report(&domain.name, domain.span, "NVLink domain");
    }
    for rack in &model.racks {
        report(&rack.name, rack.span, "rack");
    }
    for node in &model.nodes {
        if let Some(chassis) = &node.chassis {
            report(chassis, node.span, "chassis");
        }
    }
    for pool in &model.pools {
        report(&pool.name, pool.span, "pool");
    }
    for class in &model.classes {
        report(&class.name, class.span, "class");
    }
}

fn check_cpu_layouts(model: &Model, diagnostics: &mut Diagnostics) {
    for node in &model.nodes {
        let cores = node.cpu.cores.unwrap_or(node.cpu.harts);
        let sockets = node.cpu.sockets.unwrap_or(1);
        // `is_multiple_of(0)` is false unless the number is 0 too: a node without a `cpu`
        // line (0 harts) passes and gets the one-core layout conf.rs writes for it.
        if !node.cpu.harts.is_multiple_of(cores) || !cores.is_multiple_of(sockets) {
            diagnostics.push(
                Diagnostic::error(
                    Code::SlurmCpuLayout,
                    node.span,
                    format!("node `{}`: {} harts, {cores} cores and {sockets} sockets do not divide evenly", node.name, node.cpu.harts),
                )
                .label("slurm.conf needs Sockets x CoresPerSocket x ThreadsPerCore = CPUs")
                .help("re-probe the node or correct `cpu harts=`, `cores=` and `sockets=`"),
            );
        }
    }
}

/// A cost center's `Fairshare=` is the sum of its teams' shares (accounts.rs), which must fit
/// sacctmgr's 32-bit field.
fn check_fairshares(model: &Model, diagnostics: &mut Diagnostics) {
    for (index, center) in model.cost_centers.iter().enumerate() {
        let sum: u64 =
            model.teams.iter().filter(|team| team.cost_center.value.index() == index).map(|team| u64::from(team.share.value)).sum();
        if sum > u64::from(u32::MAX) {
            diagnostics.push(
                Diagnostic::error(
                    Code::SlurmFairshareOverflow,
                    center.span,
                    format!("cost center `{}`: its teams' shares sum to {sum}, past Slurm's 4294967295", center.name),
                )
                .label("this account's Fairshare")
                .help("shares are relative weights: scale them all down"),
            );
        }
    }
}
