//! Routes: a tag's tier must be one some team may use (E163), or the route could only refuse
//! jobs. Teams that may not use it are refused at submission by [`Model::routing`]'s message;
//! that is the policy working, not an error.

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::Model;

pub(super) fn check(model: &Model, diagnostics: &mut Diagnostics) {
    for route in &model.routes {
        let tier = route.tier.value;
        if !model.teams.iter().any(|team| team.tiers.iter().any(|allowed| allowed.value == tier)) {
            diagnostics.push(
                Diagnostic::error(
                    Code::RouteToNoTeam,
                    route.tier.span,
                    format!("tag `{}` routes to tier `{}`, which no team may use", route.tag.value, model.tier(tier).name),
                )
                .label("no team lists this tier")
                .help("route the tag to a tier the teams use, or add the tier to a team's `tiers`"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use placid_lang::diag::Code;
    use placid_lang::model::{Model, Routing};

    const POLICY: &str = r#"pool "all" { select arch="x86_64" }
tier "P0" { priority 1000; preemption "never" }
tier "P2" { priority 100; preemption window="1m" mode="cancel" }
tier "P9" { priority 1; preemption window="1m" mode="cancel" }
class "data-parallel" { comm "low" }
cost-center "cc"
team "prod" { share 1; cost-center "cc"; tiers "P0" "P2" }
team "research" { share 1; cost-center "cc"; tiers "P2" }
route tag="prod-sla" tier="P0"
route tag="sweep" tier="P2" class="data-parallel"
"#;

    fn load(extra: &str) -> (Model, Vec<Code>) {
        let (verdict, diagnostics) =
            crate::testing::check_project("", "node \"n\" arch=\"x86_64\" {\n    gpu 0 model=\"H200\"\n}\n", &format!("{POLICY}{extra}"));
        let codes = diagnostics.iter().map(|diagnostic| diagnostic.code).collect();
        (std::ops::Deref::deref(&verdict).clone(), codes)
    }

    #[test]
    fn a_tag_routes_each_team_to_its_tier_or_refuses_it() {
        let (model, codes) = load("");
        assert_eq!(codes, []);
        let team = |name: &str| {
            placid_lang::model::TeamId::from_index(model.teams.iter().position(|team| team.name.as_str() == name).unwrap_or(0))
        };
        let tier = |name: &str| {
            placid_lang::model::TierId::from_index(model.tiers.iter().position(|tier| tier.name.as_str() == name).unwrap_or(0))
        };
        assert_eq!(model.routing("prod-sla", team("prod")), Routing::Routed { tier: tier("P0"), class: None });
        assert_eq!(
            model.routing("prod-sla", team("research")),
            Routing::Refused { tier: tier("P0"), message: "team research may not use tier P0, where tag prod-sla routes its jobs".into() }
        );
        assert!(matches!(model.routing("sweep", team("research")), Routing::Routed { class: Some(_), .. }));
        assert_eq!(model.routing("other", team("prod")), Routing::Unrouted);
    }

    #[test]
    fn a_repeated_tag_and_a_route_no_team_may_take_are_errors() {
        assert_eq!(load("route tag=\"sweep\" tier=\"P0\"\n").1, [Code::RouteTagOverlap]);
        assert_eq!(load("route tag=\"idle\" tier=\"P9\"\n").1, [Code::RouteToNoTeam]);
    }
}
