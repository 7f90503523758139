//! Pools (`pool` with its `select` lines): each selector is checked, and the pool's member
//! nodes and GPUs are worked out here once, so no later pass matches selectors again.

use crate::diag::{Code, Diagnostic};
use crate::lower::context::Cx;
use crate::lower::names::{Names, Tables, lower_kind};
use crate::lower::reader::{NodeReader, Optional};
use crate::lower::schema;
use crate::lower::values;
use crate::model::{Arch, CapacityKind, DomainId, Model, NodeId, Pool, PoolId, Selector};
use crate::name::Name;
use crate::span::Spanned;

pub(super) fn lower(cx: &mut Cx, model: &mut Model, tables: &mut Tables, nodes: &[NodeReader<'_>]) {
    let mut pools = Vec::new();
    lower_kind(cx, "pool", nodes, &mut tables.pools, &mut pools, PoolId::from_index, |cx, node, name| {
        lower_pool(cx, model, &tables.domains, node, name)
    });
    model.pools = pools;
}

fn lower_pool(cx: &mut Cx, model: &Model, domains: &Names<DomainId>, node: &NodeReader<'_>, name: Spanned<Name>) -> Option<Pool> {
    node.props(cx, schema::POOL.properties);
    let children = node.children(cx, schema::POOL.children);
    if children.is_empty() {
        cx.error(
            Diagnostic::error(Code::MissingValue, node.name_span(), format!("pool `{}` selects nothing", name.value))
                .label("no `select`")
                .help("add `select nvlink-domain=\"...\"`, `select arch=\"x86_64\" capacity=\"spot\"` or similar"),
        );
        return None;
    }
    let mut selectors = Vec::new();
    let mut ok = true;
    for child in &children {
        match lower_selector(cx, domains, child) {
            Some(selector) => selectors.push(selector),
            None => ok = false,
        }
    }
    // With a faulty selector the pool's nodes are unknown (the others select only some of
    // them): it is kept without any (see `Pool::recovered`).
    let nodes: Vec<NodeId> = if ok {
        (0..model.nodes.len())
            .map(NodeId::from_index)
            .filter(|id| selectors.iter().any(|selector| selector_matches(model, selector, *id)))
            .collect()
    } else {
        Vec::new()
    };
    let gpus = nodes.iter().map(|id| model.node(*id).gpu_count()).sum();
    Some(Pool { name: name.value, span: name.span, selectors, nodes, gpus, recovered: !ok })
}

fn lower_selector(cx: &mut Cx, domains: &Names<DomainId>, node: &NodeReader<'_>) -> Option<Selector> {
    let props = node.props(cx, schema::POOL_SELECT.properties);
    let labels_nodes = node.children(cx, schema::POOL_SELECT.children);
    let arch = props
        .get("arch")
        .map(|value| value.keyword(cx, &[("riscv64", Arch::Riscv64), ("x86_64", Arch::X86_64), ("aarch64", Arch::Aarch64)]));
    let domain = props.get("nvlink-domain").map(|value| value.name(cx).and_then(|name| domains.resolve(cx, &name)).map(|id| id.value));
    let rack = props.get("rack").map(|value| value.name(cx));
    let chassis = props.get("chassis").map(|value| value.name(cx));
    let capacity = props.get("capacity").map(|value| {
        value.keyword(cx, &[("reserved", CapacityKind::Reserved), ("on-demand", CapacityKind::OnDemand), ("spot", CapacityKind::Spot)])
    });
    let gpu_model = props.get("gpu-model").map(|value| value.name(cx));
    let mut labels = Vec::new();
    for label in &labels_nodes {
        let args = label.leaf_args(cx, 2, 2, "a label key and value")?;
        let (key, value) = (args[0].string(cx)?, args[1].string(cx)?);
        labels.push(values::label(cx, &key, &value)?);
    }
    if props_empty(&[arch.is_some(), domain.is_some(), rack.is_some(), chassis.is_some(), capacity.is_some(), gpu_model.is_some()])
        && labels.is_empty()
    {
        cx.error(
            Diagnostic::error(Code::MissingValue, node.name_span(), "`select` without conditions would select every node")
                .label("no condition")
                .help("give at least one of arch=, nvlink-domain=, rack=, chassis=, capacity=, gpu-model= or a `label` child"),
        );
        return None;
    }
    Some(Selector {
        span: node.name_span(),
        arch: arch.lowered()?,
        domain: domain.lowered()?,
        rack: rack.lowered()?,
        chassis: chassis.lowered()?,
        capacity: capacity.lowered()?,
        gpu_model: gpu_model.lowered()?,
        labels,
    })
}

fn props_empty(present: &[bool]) -> bool {
    present.iter().all(|present| !present)
}

/// Whether node `id` satisfies every condition of `selector`.
fn selector_matches(model: &Model, selector: &Selector, id: NodeId) -> bool {
    let node = model.node(id);
    selector.arch.is_none_or(|arch| node.arch == arch)
        && selector.domain.is_none_or(|domain| node.domain == Some(domain))
        && selector.rack.as_ref().is_none_or(|rack| node.rack.is_some_and(|own| model.rack(own).name == rack.value))
        && selector.chassis.as_ref().is_none_or(|chassis| node.chassis.as_ref() == Some(&chassis.value))
        && selector.capacity.is_none_or(|capacity| node.capacity == capacity)
        && selector
            .gpu_model
            .as_ref()
            .is_none_or(|model_name| !node.gpus.is_empty() && node.gpus.iter().all(|gpu| gpu.model == model_name.value))
        && selector.labels.iter().all(|(key, value)| node.labels.get(key) == Some(value))
}
