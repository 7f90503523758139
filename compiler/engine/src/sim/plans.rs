//! Plans at run time, docs/semantics.md §9 (`crate::plan` makes the stages' jobs): a job that
//! ends without succeeding cancels the jobs waiting for its success, as Slurm's `afterok` with
//! `kill_invalid_depend` does, and releases those waiting for it to end however (`afterany`);
//! a Pattern C promotion is reported once all its trials have ended.

use placid_lang::model::Dependency;

use super::{JobState, Simulation};
use crate::event::EventKind;
use crate::job::JobId;
use crate::rank::Ranker;

impl<'m, R: Ranker> Simulation<'m, R> {
    /// `id` has ended, `succeeded` (finished within its time limit) or not (cut at its limit,
    /// rejected, cancelled): the jobs waiting for it to end, however, wait for one job less and
    /// enter the queue when none is left; those waiting for its success are cancelled, and so
    /// in turn are the jobs waiting for theirs.
    pub(super) fn release_dependents(&mut self, id: JobId, succeeded: bool) {
        let mut stack = vec![(id, succeeded)];
        while let Some((ended, succeeded)) = stack.pop() {
            for (dependent, dependency) in self.dependents[ended.index()].clone() {
                let record = &mut self.records[dependent.index()];
                if !matches!(record.state, JobState::Waiting | JobState::Future) {
                    continue;
                }
                if succeeded || dependency == Dependency::Ended {
                    record.waiting_on = record.waiting_on.saturating_sub(1);
                    if record.waiting_on == 0 && record.state == JobState::Waiting {
                        self.enqueue(dependent);
                    }
                } else {
                    record.state = JobState::Cancelled;
                    self.emit(dependent, EventKind::Cancelled);
                    stack.push((dependent, false));
                }
            }
        }
        self.check_promotions();
    }

    /// Reports the promotions whose trials have all ended.
    pub(super) fn check_promotions(&mut self) {
        let done = |state: &JobState| matches!(state, JobState::Finished | JobState::Cancelled | JobState::Rejected(_));
        let mut index = 0;
        while index < self.promotions.len() {
            let promotion = &self.promotions[index];
            if promotion.trials.iter().all(|trial| self.records.get(trial.index()).is_some_and(|record| done(&record.state))) {
                let promotion = self.promotions.swap_remove(index);
                let finished: Vec<(JobId, Option<f64>)> = promotion
                    .trials
                    .iter()
                    .filter(|trial| self.records[trial.index()].state == JobState::Finished)
                    .map(|trial| (*trial, self.records[trial.index()].job.metric))
                    .collect();
                for id in promotion.best(&finished) {
                    self.emit(id, EventKind::Promoted);
                }
            } else {
                index += 1;
            }
        }
    }
}
