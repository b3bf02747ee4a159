-- calculate-pnl is bounded per account (app/jobrunner, adapters/postgres JobStore.Insert): a request
-- whose work (work_key = domain/job.PnLKey: chain, wallet, token set) matches one of the
-- account's unfinished jobs is answered with that job, and an account has at most
-- JOB_MAX_RUNNING unfinished jobs. Inserts of one account are serialised by an advisory lock;
-- this index makes two unfinished jobs of one account with one key impossible whatever the code
-- does. Rows written before this migration have no key and match nothing.
ALTER TABLE jobs ADD COLUMN work_key TEXT;
CREATE UNIQUE INDEX jobs_unfinished_work_key_idx ON jobs (account_id, work_key)
    WHERE status NOT IN ('completed', 'failed');

-- Counting an account's unfinished jobs reads only those.
CREATE INDEX jobs_unfinished_account_idx ON jobs (account_id)
    WHERE status NOT IN ('completed', 'failed');
