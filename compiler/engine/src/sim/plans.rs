//! Plans at run time, docs/semantics.md §9 (`crate::plan` makes the stages' jobs): a job that
//! can never run cancels the jobs waiting for it, as Slurm's `kill_invalid_depend` does, and a
//! Pattern C promotion is reported once all its trials have ended.

use super::{JobState, Simulation};
use crate::event::EventKind;
use crate::job::JobId;
use crate::rank::Ranker;

impl<'m, R: Ranker> Simulation<'m, R> {
    /// Cancels the jobs that wait, directly or through others, for `id`, which can never
    /// finish now (rejected or cancelled).
    pub(super) fn cancel_dependents(&mut self, id: JobId) {
        let mut stack = self.dependents[id.index()].clone();
        while let Some(dependent) = stack.pop() {
            let record = &mut self.records[dependent.index()];
            if matches!(record.state, JobState::Waiting | JobState::Future) {
                record.state = JobState::Cancelled;
                self.emit(dependent, EventKind::Cancelled);
                stack.extend(self.dependents[dependent.index()].iter().copied());
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
