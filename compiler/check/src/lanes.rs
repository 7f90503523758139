//! NVLink lanes and bisection: a class's `lanes` and `min-bisection` must be offered by some
//! node (its `Node::nvlink_lanes`) and some NVLink domain (`Model::domain_bisection`) of the
//! inventory, since the engine and the Slurm constraint only place the class there. A class
//! no hardware can hold is an error naming the largest figure there is.

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{ClassId, DomainId, Locality, Model};

/// Reports the classes whose lanes or bisection no hardware offers, and returns them: no
/// stage of theirs can be placed, which the plans pass need not say again.
pub(super) fn check(model: &Model, diagnostics: &mut Diagnostics) -> Vec<ClassId> {
    let most_lanes = model.nodes.iter().filter_map(|node| node.nvlink_lanes()).max();
    let most_bisection = (0..model.domains.len()).map(|index| model.domain_bisection(DomainId::from_index(index))).max();
    let mut unmet = Vec::new();
    for (index, class) in model.classes.iter().enumerate() {
        let errors = diagnostics.error_count();
        if let Some(lanes) = &class.lanes
            && most_lanes.is_none_or(|most| most < lanes.value)
        {
            let available = most_lanes.map_or_else(|| "no node has NVLink".to_owned(), |most| format!("the most any node has is {most}"));
            diagnostics.push(
                Diagnostic::error(
                    Code::LanesUnavailable,
                    lanes.span,
                    format!("class `{}` asks for {} NVLink lanes per GPU pair, but {available}", class.name, lanes.value),
                )
                .label("more than the inventory's links")
                .help(match most_lanes {
                    Some(most) => format!("lower `lanes` to at most {most}, or add nodes with more NVLink links per GPU pair"),
                    None => "drop `lanes`, or add nodes with NVLink".to_owned(),
                }),
            );
        }
        if let Some(bisection) = &class.min_bisection
            && class.locality != Locality::NvlinkDomain
        {
            diagnostics.push(
                Diagnostic::error(
                    Code::BisectionOutsideDomain,
                    bisection.span,
                    format!(
                        "class `{}` asks for an NVLink bisection, but its jobs run at {} locality",
                        class.name,
                        class.locality.as_str()
                    ),
                )
                .label("a domain's figure")
                .help("set `locality \"nvlink-domain\"`, or ask for `min-bandwidth` per GPU instead"),
            );
        } else if let Some(bisection) = &class.min_bisection
            && most_bisection.is_none_or(|most| most < bisection.value)
        {
            let available = most_bisection
                .map_or_else(|| "the inventory has no NVLink domain".to_owned(), |most| format!("the most any domain has is {most}"));
            diagnostics.push(
                Diagnostic::error(
                    Code::BisectionUnavailable,
                    bisection.span,
                    format!("class `{}` asks for an NVLink bisection of {}, but {available}", class.name, bisection.value),
                )
                .label("more than any NVLink domain")
                .help(match most_bisection {
                    Some(most) => format!("lower `min-bisection` to at most {most}, or join more NVLink GPUs into a domain"),
                    None => "drop `min-bisection`, or give NVLink nodes an `nvlink-domain`".to_owned(),
                }),
            );
        }
        if diagnostics.error_count() > errors {
            unmet.push(ClassId::from_index(index));
        }
    }
    unmet
}

#[cfg(test)]
mod tests {
    use placid_lang::diag::Code;

    use crate::testing::check_project;

    /// Every code `check` reports, and the messages, for one NVLink domain of two 2-GPU nodes
    /// whose GPUs each have 6 links of 300GB/s to their peer (a bisection of 600GB/s: two of
    /// the four GPUs at 300GB/s), and a class with `nvlink` properties `props`.
    fn report(props: &str) -> Vec<(Code, String)> {
        let gpu = |index: u32, peer: u32| {
            format!("    gpu {index} model=\"H200\" {{\n        nvlink peer={peer} links=6 bandwidth=\"300GB/s\"\n    }}\n")
        };
        let nodes: String = ["a", "b"]
            .iter()
            .map(|name| format!("node \"{name}\" arch=\"x86_64\" nvlink-domain=\"d\" {{\n{}{}}}\n", gpu(0, 1), gpu(1, 0)))
            .collect();
        let (_, diagnostics) = check_project(
            "",
            &nodes,
            &format!(
                "pool \"all\" {{ select arch=\"x86_64\" }}\ncost-center \"cc\"\ntier \"p0\" {{\n    priority 1\n    preemption \"never\"\n}}\nteam \"t\" {{\n    share 1\n    cost-center \"cc\"\n    tiers \"p0\"\n}}\nclass \"c\" {{\n    nvlink \"required\" {props}\n}}\n"
            ),
        );
        diagnostics.iter().map(|diagnostic| (diagnostic.code, diagnostic.message.clone())).collect()
    }

    #[test]
    fn lanes_above_every_node_are_an_error_naming_the_most_there_is() {
        assert_eq!(
            report("lanes=7"),
            [(Code::LanesUnavailable, "class `c` asks for 7 NVLink lanes per GPU pair, but the most any node has is 6".to_owned())]
        );
        assert_eq!(report("lanes=6"), []);
    }

    #[test]
    fn a_bisection_above_every_domain_is_an_error_naming_the_most_there_is() {
        assert_eq!(
            report("min-bisection=\"601GB/s\""),
            [(
                Code::BisectionUnavailable,
                "class `c` asks for an NVLink bisection of 601GB/s, but the most any domain has is 600GB/s".to_owned()
            )]
        );
        assert_eq!(report("min-bisection=\"600GB/s\""), []);
    }

    #[test]
    fn a_bisection_outside_nvlink_domain_locality_is_an_error() {
        let codes: Vec<Code> = report("min-bisection=\"600GB/s\"\n    locality \"node\"").into_iter().map(|(code, _)| code).collect();
        assert_eq!(codes, [Code::BisectionOutsideDomain]);
    }
}
