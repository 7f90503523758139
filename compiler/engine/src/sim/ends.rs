//! Ends, docs/semantics.md §8: a job ends at its start plus its remaining run (cut at its
//! limit). What it held is released at that instant, before the pass, so the pass at the same
//! instant can use it, and the jobs that run after it enter the queue then (or are cancelled,
//! when they needed it to succeed and it was cut at its limit).

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
        let record = &mut self.records[id.index()];
        record.state = JobState::Finished;
        let succeeded = !record.job.times_out(self.model.tier(record.job.tier));
        self.emit(id, EventKind::Finished);
        self.release_dependents(id, succeeded);
    }
}
