//! The queue, docs/semantics.md §7: pending jobs kept by tier priority, team and submission;
//! the queue order of a pass (priority, then fair share between teams, then submission); and
//! the scheduling pass that walks it, holds what cannot start and makes the first job held
//! for capacity or quota the head (its reservation is `backfill`'s).

use std::cmp::Reverse;
use std::collections::BTreeSet;

use super::admission::Wait;
use super::{Carry, JobState, PASS_DEPTH, Simulation};
use crate::event::{EventKind, Hold};
use crate::job::JobId;
use crate::quota::DAY;
use crate::rank::Ranker;

impl<'m, R: Ranker> Simulation<'m, R> {
    /// Puts `id` in the queue, pending with no hold yet.
    pub(super) fn enqueue(&mut self, id: JobId) {
        let record = &mut self.records[id.index()];
        record.state = JobState::Pending(None);
        let priority = self.model.tier(record.job.tier).priority.value;
        let teams = self.model.teams.len();
        let level = self.pending.entry(Reverse(priority)).or_insert_with(|| vec![BTreeSet::new(); teams]);
        level[record.job.team.index()].insert((record.job.submit, id));
    }

    /// Takes `id` out of the queue as it starts; a priority level left empty goes, so the
    /// pass walks no empty levels.
    pub(super) fn dequeue(&mut self, id: JobId) {
        let record = &self.records[id.index()];
        let priority = self.model.tier(record.job.tier).priority.value;
        if let Some(level) = self.pending.get_mut(&Reverse(priority)) {
            level[record.job.team.index()].remove(&(record.job.submit, id));
            if level.iter().all(BTreeSet::is_empty) {
                self.pending.remove(&Reverse(priority));
            }
        }
    }

    /// The pending jobs of this pass in queue order: by tier priority, highest first; within
    /// a priority, the team whose GPUs held (counting the jobs already ordered in this pass)
    /// per unit of share is lowest goes next, ties to the team declared first; within a team,
    /// by submission. At most [`PASS_DEPTH`].
    fn order(&self) -> Vec<JobId> {
        let mut order = Vec::new();
        let mut used = self.team_used.clone();
        for level in self.pending.values() {
            let mut cursors: Vec<_> = level.iter().map(|jobs| jobs.iter().peekable()).collect();
            while order.len() < PASS_DEPTH {
                let mut best: Option<usize> = None;
                for (team, cursor) in cursors.iter_mut().enumerate() {
                    if cursor.peek().is_none() {
                        continue;
                    }
                    best = match best {
                        Some(other) if !self.fairer(team, other, &used) => Some(other),
                        _ => Some(team),
                    };
                }
                let Some(team) = best else { break };
                let Some((_, id)) = cursors[team].next() else { break };
                let job = &self.records[id.index()].job;
                used[team] += job.quota_milli(false);
                order.push(*id);
            }
        }
        order
    }

    /// Whether `team` goes before `other`: a lower usage per share (cross-multiplied, exact),
    /// ties to the lower index. A team with share 0 goes last.
    fn fairer(&self, team: usize, other: usize, used: &[u64]) -> bool {
        let share = |index: usize| u128::from(self.model.teams[index].share.value);
        let (left, right) = (u128::from(used[team]) * share(other), u128::from(used[other]) * share(team));
        match (share(team), share(other)) {
            (0, 0) => team < other,
            (0, _) => false,
            (_, 0) => true,
            _ => left < right || (left == right && team < other),
        }
    }

    /// One scheduling pass. When the last pass started and signalled nothing, and since then
    /// only jobs arrived, on the same day, this one carries on where it stopped, provided its
    /// order begins with the jobs the last one examined: each of those would get the verdict
    /// it got then, with no side effect, since everything a verdict reads is as it was (the
    /// free capacity, the quotas and budgets, the running jobs, who is exempt from preemption
    /// (a retry wakes the pass when an exemption it saw ends), the head's reservation, built
    /// from estimated ends still ahead) except the time, which a verdict reads only through
    /// the day of the budgets and whether a job would end by the head's start. It starts from
    /// the last pass's head, strict-tier block and placement memo. Telemetry (the run's, or a
    /// ranker's that [`Ranker::varies_with_time`]) changes placements with time, so a run
    /// with it never carries on.
    pub(super) fn pass(&mut self) {
        let order = self.order();
        let day = self.now / DAY;
        let carried = self.carry.take().filter(|carry| {
            !self.changed
                && self.telemetry.is_none()
                && !self.ranker.varies_with_time()
                && carry.day == day
                && carry.head.as_ref().is_none_or(|head| self.now <= head.steady_until)
                && order.starts_with(&carry.order)
        });
        self.changed = false;
        let (from, mut head, mut blocked_ahead) = match carried {
            Some(carry) => (carry.order.len(), carry.head, carry.blocked_ahead),
            None => {
                self.full.clear();
                (0, None, false)
            }
        };
        self.verdicts += (order.len() - from) as u64;
        for &id in &order[from..] {
            let mut furthest: Option<Wait> = None;
            let mut started = false;
            // By index: the pools are the record's, which a start borrows mutably.
            for at in 0..self.records[id.index()].pools.len() {
                let pool = self.records[id.index()].pools[at];
                match self.try_start(id, pool, head.as_mut(), blocked_ahead) {
                    Ok(()) => {
                        started = true;
                        break;
                    }
                    Err(wait) => furthest = furthest.max(Some(wait)),
                }
            }
            if started {
                continue;
            }
            let Wait { hold, reservable } = furthest.unwrap_or(Wait { hold: Hold::Capacity, reservable: true });
            if reservable || hold == Hold::Priority {
                if head.is_none() && reservable {
                    head = self.reserve(id);
                }
                blocked_ahead = true;
            }
            if hold == Hold::Budget {
                self.retry_at((self.now / DAY + 1) * DAY);
            }
            let record = &mut self.records[id.index()];
            if record.state != JobState::Pending(Some(hold)) {
                record.state = JobState::Pending(Some(hold));
                self.emit(id, EventKind::Held(hold));
            }
        }
        self.carry = (!self.changed).then_some(Carry { order, head, blocked_ahead, day });
    }
}
