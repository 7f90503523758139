//! Job classes (`class` with `nvlink`, `locality`, `comm`, `mig` and `platforms`, and what its
//! stages run by default, [`super::launch`]): what a kind of job needs from the hardware, with
//! the defaults a class that says nothing gets (locality follows the NVLink need).

use crate::diag::{Code, Diagnostic};
use crate::lower::context::Cx;
use crate::lower::launch;
use crate::lower::names::{Tables, lower_kind};
use crate::lower::reader::{NodeReader, Optional};
use crate::lower::schema;
use crate::model::{Arch, Class, ClassId, CommLevel, Locality, Model, NvlinkNeed};
use crate::name::Name;
use crate::span::Spanned;

pub(super) fn lower(cx: &mut Cx, model: &mut Model, tables: &mut Tables, nodes: &[NodeReader<'_>]) {
    let mut classes = Vec::new();
    lower_kind(cx, "class", nodes, &mut tables.classes, &mut classes, ClassId::from_index, lower_class);
    model.classes = classes;
}

fn lower_class(cx: &mut Cx, node: &NodeReader<'_>, name: Spanned<Name>) -> Option<Class> {
    node.props(cx, schema::CLASS.properties);
    let children = node.children(cx, schema::CLASS.children);
    let mut ok = true;
    let (mut nvlink, mut min_bandwidth, mut lanes, mut min_bisection) = (NvlinkNeed::None, None, None, None);
    if let Some(child) = NodeReader::single(cx, &children, "nvlink") {
        let props = child.props(cx, schema::CLASS_NVLINK.properties);
        child.children(cx, &[]);
        let need = child.expect_args(cx, 1, 1, "required, preferred or none").and_then(|args| {
            args[0].keyword(cx, &[("required", NvlinkNeed::Required), ("preferred", NvlinkNeed::Preferred), ("none", NvlinkNeed::None)])
        });
        let bandwidth = props.get("min-bandwidth").map(|value| value.bandwidth(cx));
        let lane_count = props.get("lanes").map(|value| value.positive(cx).map(|count| Spanned::new(count, value.span)));
        let bisection = props.get("min-bisection").map(|value| value.bandwidth(cx).map(|bandwidth| Spanned::new(bandwidth, value.span)));
        match (need, bandwidth.lowered(), lane_count.lowered(), bisection.lowered()) {
            (Some(need), Some(bandwidth), Some(lane_count), Some(bisection)) => {
                (nvlink, min_bandwidth, lanes, min_bisection) = (need, bandwidth, lane_count, bisection);
            }
            // A faulty `nvlink` recovers as absent: no NVLink requirement to check.
            _ => ok = false,
        }
    }
    let locality = match NodeReader::single(cx, &children, "locality") {
        Some(child) => child.leaf_args(cx, 1, 1, "node, chassis, nvlink-domain, rack or any").and_then(|args| {
            args[0].keyword(
                cx,
                &[
                    ("node", Locality::Node),
                    ("chassis", Locality::Chassis),
                    ("nvlink-domain", Locality::NvlinkDomain),
                    ("rack", Locality::Rack),
                    ("any", Locality::Any),
                ],
            )
        }),
        None => Some(if nvlink == NvlinkNeed::Required { Locality::NvlinkDomain } else { Locality::Any }),
    };
    let comm = match NodeReader::single(cx, &children, "comm") {
        Some(child) => child
            .leaf_args(cx, 1, 1, "low, medium or high")
            .and_then(|args| args[0].keyword(cx, &[("low", CommLevel::Low), ("medium", CommLevel::Medium), ("high", CommLevel::High)])),
        None => Some(CommLevel::Low),
    };
    let mig = NodeReader::single(cx, &children, "mig")
        .map(|child| child.leaf_args(cx, 1, 1, "a MIG profile such as \"1g.18gb\"").and_then(|args| args[0].name(cx)));
    let launch = launch::lower(cx, &children);
    let mut platforms = Vec::new();
    let mut platforms_ok = true;
    if let Some(child) = NodeReader::single(cx, &children, "platforms") {
        for arg in child.leaf_args(cx, 1, 8, "OCI platforms such as \"linux/amd64\" \"linux/riscv64\"").unwrap_or_default() {
            let Some(text) = arg.string(cx) else {
                platforms_ok = false;
                continue;
            };
            match Arch::parse_oci_platform(&text.value) {
                Some(arch) if !platforms.contains(&arch) => platforms.push(arch),
                Some(_) => {}
                None => {
                    cx.error(
                        Diagnostic::error(
                            Code::InvalidValue,
                            arg.span,
                            format!("`{}` is not a platform placid knows", text.value.escape_debug()),
                        )
                        .label("unknown platform")
                        .maybe_help(crate::suggest::help_for(&text.value, Arch::ALL.iter().map(|arch| arch.oci_platform()))),
                    );
                    platforms_ok = false;
                }
            }
        }
        platforms.sort();
    }
    // Every other faulty setting recovers as absent too (see `Class::recovered`), the least
    // a class can ask of a pool, so no check fires on a stand-in; a platform list with a
    // faulty entry as undeclared, since the rest of it would claim a platform is missing.
    if !platforms_ok {
        platforms.clear();
    }
    ok &= platforms_ok && locality.is_some() && comm.is_some() && mig.as_ref().is_none_or(Option::is_some) && launch.is_some();
    Some(Class {
        name: name.value,
        span: name.span,
        nvlink,
        min_bandwidth,
        lanes,
        min_bisection,
        locality: locality.unwrap_or(Locality::Any),
        comm: comm.unwrap_or(CommLevel::Low),
        mig: mig.flatten(),
        launch: launch.unwrap_or_default(),
        platforms,
        recovered: !ok,
    })
}
