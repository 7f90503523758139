//! Hover: what a keyword or property is (from the schema table, `lower/schema.rs`, the one
//! list of what each node accepts), and what a declared name stands for in the model (a
//! tier's priority and preemption window, a pool's GPUs and price, ...).

use std::fmt::Write as _;

use placid_lang::lower::schema::{self, NodeSchema};
use placid_lang::model::{Model, Preemption};

use crate::names::{NameKind, Occurrence};
use crate::outline::{Statement, Token};

/// The text shown (Markdown) and the byte range it is about.
pub struct Hover {
    /// Markdown.
    pub text: String,
    /// The range hovered.
    pub start: usize,
    /// One past its end.
    pub end: usize,
}

/// The hover at byte `offset` of a file with `statements` and `names`.
pub fn hover(model: &Model, statements: &[Statement], names: &[Occurrence], offset: usize) -> Option<Hover> {
    if let Some(name) = names.iter().find(|name| name.start <= offset && offset <= name.end) {
        return Some(Hover { text: describe(model, name.kind, &name.name, &name.key), start: name.start, end: name.end });
    }
    for statement in statements {
        if statement.name.touches(offset) {
            let path = statement.path();
            return Some(Hover { text: keyword(&path, &statement.name.text), start: statement.name.start, end: statement.name.end });
        }
        if let Some((key, _)) = statement.properties().find(|(key, _)| key.touches(offset)) {
            return Some(property(&statement.path(), key));
        }
    }
    None
}

/// The schema entry of a node path, if it takes properties or children.
pub fn schema_of(path: &str) -> Option<&'static NodeSchema> {
    schema::NODES.iter().copied().find(|node| node.path == path)
}

fn list(words: &[&str]) -> String {
    words.iter().map(|word| format!("`{word}`")).collect::<Vec<_>>().join(", ")
}

/// A node keyword: where it is, what it takes.
fn keyword(path: &str, name: &str) -> String {
    let mut text = format!("**{name}** (`{path}`)\n");
    match schema_of(path) {
        Some(node) => {
            if !node.properties.is_empty() {
                let _ = write!(text, "\nproperties: {}", list(node.properties));
            }
            if !node.children.is_empty() {
                let _ = write!(text, "\n\nchildren: {}", list(node.children));
            }
        }
        None if path.contains('/') => text.push_str("\na setting of its parent: it takes arguments only"),
        None if schema::POLICY_DECLARATIONS.contains(&path) => text.push_str("\na policy declaration"),
        None if schema::PROJECT_DECLARATIONS.contains(&path) => text.push_str("\na declaration of the project file"),
        None => text.push_str("\nnot a node placid knows here"),
    }
    text.push_str("\n\nsee docs/language.md");
    text
}

/// A property of a node.
fn property(path: &str, key: &Token) -> Hover {
    let known = schema_of(path).is_some_and(|node| node.properties.contains(&key.text.as_str()));
    let mut text = format!("**{}** (property of `{path}`)", key.text);
    if !known {
        text.push_str("\n\nnot a property of this node");
    }
    if let Some(kind) = crate::names::referenced(path, Some(&key.text)) {
        let _ = write!(text, "\n\nnames a {}", kind.keyword());
    }
    Hover { text, start: key.start, end: key.end }
}

/// What the model holds for the name `name` of `kind` (`key` scopes a stage by its plan).
pub fn describe(model: &Model, kind: NameKind, name: &str, key: &str) -> String {
    let mut text = format!("**{} `{name}`**\n", kind.keyword());
    let lines = facts(model, kind, name, key);
    if lines.is_empty() {
        text.push_str("\nnot declared (or it did not lower: see the diagnostics)");
    }
    for line in lines {
        let _ = write!(text, "\n- {line}");
    }
    text
}

fn facts(model: &Model, kind: NameKind, name: &str, key: &str) -> Vec<String> {
    let mut lines = Vec::new();
    match kind {
        NameKind::Tier => {
            let Some(tier) = model.tiers.iter().find(|tier| tier.name.as_str() == name) else { return lines };
            lines.push(format!("priority {}", tier.priority.value));
            lines.push(match tier.preemption.value {
                Preemption::Never => "never preempted".to_owned(),
                Preemption::Window { window, mode } => format!("preempted after a {window} window ({})", mode.as_str()),
            });
            if let Some(checkpoint) = &tier.checkpoint {
                lines.push(format!("checkpoints every {}", checkpoint.every));
            }
            lines.push(format!("backfill {}", if tier.backfill { "on" } else { "off" }));
            lines.push(format!("max time {}", tier.max_run_time()));
            for reservation in &tier.reservations {
                lines.push(format!("reserves {} GPUs of pool `{}`", reservation.gpus, model.pool(reservation.pool).name));
            }
            if let Some(budget) = &tier.daily_budget {
                lines.push(format!("daily budget {}", budget.value));
            }
        }
        NameKind::Pool => {
            let Some(pool) = model.pools.iter().find(|pool| pool.name.as_str() == name) else { return lines };
            lines.push(format!("{} GPUs on {} nodes", pool.gpus, pool.nodes.len()));
            let mut prices: Vec<_> = pool.nodes.iter().filter_map(|node| model.node(*node).cost_per_gpu_hour).collect();
            prices.sort();
            match (prices.first(), prices.last()) {
                (Some(low), Some(high)) if low == high => lines.push(format!("{low} per GPU-hour")),
                (Some(low), Some(high)) => lines.push(format!("{low} to {high} per GPU-hour")),
                _ => lines.push("no price in the inventory".to_owned()),
            }
        }
        NameKind::Team => {
            let Some(team) = model.teams.iter().find(|team| team.name.as_str() == name) else { return lines };
            lines.push(format!("fair share {}", team.share.value));
            lines.push(format!("cost center `{}`", model.cost_center(team.cost_center.value).name));
            let tiers: Vec<String> = team.tiers.iter().map(|tier| format!("`{}`", model.tier(tier.value).name)).collect();
            lines.push(format!("tiers {}", tiers.join(", ")));
            if let Some(budget) = &team.daily_budget {
                lines.push(format!("daily budget {}", budget.value));
            }
            lines.push(format!("namespace `{}`, account `{}`", team.namespace, team.account));
        }
        NameKind::Class => {
            let Some(class) = model.classes.iter().find(|class| class.name.as_str() == name) else { return lines };
            lines.push(format!("locality {}, comm {}", class.locality.as_str(), class.comm.as_str()));
            lines.push(format!("NVLink {}", class.nvlink.as_str()));
            if let Some(bandwidth) = &class.min_bandwidth {
                lines.push(format!("at least {bandwidth} of NVLink"));
            }
            if let Some(image) = &class.launch.image {
                lines.push(format!("image `{}`", image.value));
            }
            if let Some(command) = &class.launch.command {
                lines.push(format!("runs `{}`", command.value.join(" ")));
            }
        }
        NameKind::Score => {
            let Some(score) = model.scores.iter().find(|score| score.name.as_str() == name) else { return lines };
            lines.push(format!(
                "prefers {}, {} filters, {} penalties",
                score.direction.as_str(),
                score.filters.len(),
                score.penalties.len()
            ));
        }
        NameKind::Plan => {
            let Some(plan) = model.plans.iter().find(|plan| plan.name.as_str() == name) else { return lines };
            lines.push(format!("team `{}`", model.team(plan.team.value).name));
            let stages: Vec<String> = plan.stages.iter().map(|stage| format!("`{}`", stage.name)).collect();
            lines.push(format!("stages {}", stages.join(" -> ")));
        }
        NameKind::Stage => {
            let plan_name = key.strip_suffix(name).and_then(|plan| plan.strip_suffix('/')).unwrap_or_default();
            let Some(plan) = model.plans.iter().find(|plan| plan.name.as_str() == plan_name) else { return lines };
            let Some(stage) = plan.stages.iter().find(|stage| stage.name.as_str() == name) else { return lines };
            lines.push(format!("of plan `{}`", plan.name));
            lines.push(format!(
                "{} GPUs x {} trials on pool `{}` at tier `{}`",
                stage.gpus.value,
                stage.trials,
                model.pool(stage.pool.value).name,
                model.tier(stage.tier.value).name
            ));
            if let Some(class) = &stage.class {
                lines.push(format!("class `{}`", model.class(class.value).name));
            }
        }
        NameKind::CostCenter => {
            let Some(center) = model.cost_centers.iter().find(|center| center.name.as_str() == name) else { return lines };
            match &center.daily_budget {
                Some(budget) => lines.push(format!("daily budget {}", budget.value)),
                None => lines.push("no budget".to_owned()),
            }
        }
        NameKind::Metric => {
            let Some(metric) = model.metrics.iter().find(|metric| metric.name.as_str() == name) else { return lines };
            lines.push(format!("`{}`", metric.query.value));
        }
        NameKind::Node => {
            let Some(id) = model.node_by_name(name) else { return lines };
            let node = model.node(id);
            let gpu_model = node.gpu_model().map_or_else(|| "GPUs".to_owned(), |gpu| gpu.to_string());
            lines.push(format!("{} x {gpu_model}, {}, {}", node.gpu_count(), node.arch.as_str(), node.capacity.as_str()));
            if let Some(rack) = node.rack {
                lines.push(format!("rack `{}`", model.rack(rack).name));
            }
            if let Some(domain) = node.domain {
                lines.push(format!("NVLink domain `{}`", model.domain(domain).name));
            }
            if let Some(price) = node.cost_per_gpu_hour {
                lines.push(format!("{price} per GPU-hour"));
            }
        }
        NameKind::Rack => {
            let Some(rack) = model.racks.iter().find(|rack| rack.name.as_str() == name) else { return lines };
            let gpus = rack.nodes.iter().fold(0u32, |total, node| total.saturating_add(model.node(*node).gpu_count()));
            lines.push(format!("{} nodes, {gpus} GPUs", rack.nodes.len()));
        }
        NameKind::Domain => {
            let Some(domain) = model.domains.iter().find(|domain| domain.name.as_str() == name) else { return lines };
            lines.push(format!("{} nodes, {} GPUs", domain.nodes.len(), domain.gpus));
        }
        NameKind::Chassis => {
            let count = model.nodes.iter().filter(|node| node.chassis.as_ref().is_some_and(|chassis| chassis.as_str() == name)).count();
            if count > 0 {
                lines.push(format!("{count} nodes"));
            }
        }
    }
    lines
}
