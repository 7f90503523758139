//! Ends, docs/semantics.md §8: a job ends at its start plus its remaining run (cut at its
//! limit). What it held is released at that instant, before the pass, so the pass at the same
//! instant can use it, and the jobs that run after it enter the queue then.

use super::{JobState, Simulation};
use crate::event::EventKind;
use crate::job::JobId;
use crate::rank::Ranker;

impl<'m, R: Ranker> Simulation<'m, R> {
    /// The end of run `epoch` of `id`; an end left over from a run that was preempted (an
    /// earlier epoch, or a job no longer running) is ignored.
    pub(super) fn end(&mut self, id: JobId, epoch: u32) {
        let record = &self.records[id.index()];
        if record.epoch != epoch || !matches!(record.state, JobState::Running(_) | JobState::Draining(_)) {
            return;
        }
        self.release(id);
        self.records[id.index()].state = JobState::Finished;
        self.emit(id, EventKind::Finished);
        for dependent in self.dependents[id.index()].clone() {
            let record = &mut self.records[dependent.index()];
            record.waiting_on = record.waiting_on.saturating_sub(1);
            if record.waiting_on == 0 && record.state == JobState::Waiting {
                self.enqueue(dependent);
            }
        }
        self.check_promotions();
    }
}
