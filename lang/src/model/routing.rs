//! Tag-based tier routing (`route tag= tier= [class=]`): the one resolution every target and
//! the engine call, so a tag means the same tier, class and refusal everywhere. Slurm's
//! job_submit.lua holds its results per team account; the engine applies them at submission.

use crate::model::{ClassId, Model, TeamId, TierId};
use crate::name::Name;
use crate::span::{Span, Spanned};

/// `route tag="prod-sla" tier="P0" [class="model-parallel"]`: a job carrying the tag runs at
/// the tier (and as the class, when given).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// Where it is declared.
    pub span: Span,
    /// The tag jobs carry (unique among routes).
    pub tag: Spanned<Name>,
    /// The tier the tag routes to.
    pub tier: Spanned<TierId>,
    /// The class the tag sets, if any.
    pub class: Option<Spanned<ClassId>>,
}

/// What a tag means for one team's job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Routing {
    /// No route names the tag: the job keeps the tier and class it asked for.
    Unrouted,
    /// The job runs at this tier, as this class when given.
    Routed {
        /// The routed tier.
        tier: TierId,
        /// The routed class.
        class: Option<ClassId>,
    },
    /// The team may not use the routed tier: the job is refused with this message.
    Refused {
        /// The tier the tag routes to.
        tier: TierId,
        /// The policy's message, the same in every target.
        message: String,
    },
}

impl Model {
    /// The route of `tag`, if any (tags are unique: lowering refuses a repeated one).
    pub fn route_of(&self, tag: &str) -> Option<&Route> {
        self.routes.iter().find(|route| route.tag.value.as_str() == tag)
    }

    /// What `tag` means for a job of `team`.
    pub fn routing(&self, tag: &str, team: TeamId) -> Routing {
        let Some(route) = self.route_of(tag) else {
            return Routing::Unrouted;
        };
        let tier = route.tier.value;
        let team = self.team(team);
        if team.tiers.iter().any(|allowed| allowed.value == tier) {
            Routing::Routed { tier, class: route.class.as_ref().map(|class| class.value) }
        } else {
            let message =
                format!("team {} may not use tier {}, where tag {} routes its jobs", team.name, self.tier(tier).name, route.tag.value);
            Routing::Refused { tier, message }
        }
    }
}
