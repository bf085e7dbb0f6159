//! Batch runs carried out by the server itself, for an engine that has no batches of its own (embedded
//! `serve`): a session per repository, each prompt started when one of the batch's `concurrency` places and
//! one of the server's turns (`--max-turns`) are free, its end known when the engine lets the prompt go (a
//! run with its retries, fallbacks and correction), its answer the session file's last. The batches
//! are kept in memory: a restarted server has none (the sessions and their files stay).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Semaphore;

use super::api_error::ApiError;
use super::batches::{
    BatchAnswer, BatchItemStatus, BatchRequest, BatchSessionRef, BatchSessionStatus, BatchStarted, BatchStatus,
    batch_not_found,
};
use super::engine::{PromptRequest, SessionEngine};
use super::registry::NewSession;
use crate::session::new_session_id;

/// The batches this server runs.
#[derive(Default)]
pub struct LocalBatches {
    batches: Mutex<HashMap<String, Arc<Mutex<LocalBatch>>>>,
}

struct LocalBatch {
    prompt: String,
    concurrency: u32,
    sessions: Vec<BatchSessionStatus>,
}

impl LocalBatches {
    /// Creates the batch's sessions on `engine` and starts its prompts; `turns` are the server's.
    pub async fn start(
        &self,
        engine: Arc<dyn SessionEngine>,
        turns: Arc<Semaphore>,
        request: BatchRequest,
        concurrency: u32,
    ) -> Result<BatchStarted, ApiError> {
        let mut sessions = Vec::with_capacity(request.repos.len());
        for repo in &request.repos {
            let cwd = Some(repo.to_string_lossy().into_owned());
            let id = engine.create(NewSession { cwd, ..NewSession::default() }).await?;
            sessions.push(BatchSessionRef { id, repo: repo.to_string_lossy().into_owned() });
        }
        let id = format!("batch-{}", new_session_id());
        let statuses = sessions
            .iter()
            .map(|session| BatchSessionStatus {
                id: session.id.clone(),
                repo: session.repo.clone(),
                status: BatchItemStatus::Queued,
                answer: None,
                error: None,
            })
            .collect();
        let batch =
            Arc::new(Mutex::new(LocalBatch { prompt: request.prompt.clone(), concurrency, sessions: statuses }));
        lock(&self.batches).insert(id.clone(), batch.clone());
        let places = Arc::new(Semaphore::new(concurrency as usize));
        for (index, session) in sessions.iter().enumerate() {
            let run = SessionRun {
                engine: engine.clone(),
                turns: turns.clone(),
                places: places.clone(),
                batch: batch.clone(),
                index,
                session: session.id.clone(),
                prompt: request.prompt.clone(),
            };
            tokio::spawn(run.run());
        }
        Ok(BatchStarted { id, sessions })
    }

    /// Batch `id`'s progress and answers.
    pub fn status(&self, id: &str) -> Result<BatchStatus, ApiError> {
        let batch = lock(&self.batches).get(id).cloned().ok_or_else(|| batch_not_found(id))?;
        let batch = lock(&batch);
        Ok(BatchStatus::new(id.to_owned(), batch.prompt.clone(), batch.concurrency, batch.sessions.clone()))
    }
}

/// One session's turn of a batch.
struct SessionRun {
    engine: Arc<dyn SessionEngine>,
    turns: Arc<Semaphore>,
    places: Arc<Semaphore>,
    batch: Arc<Mutex<LocalBatch>>,
    index: usize,
    session: String,
    prompt: String,
}

impl SessionRun {
    async fn run(self) {
        let outcome = self.turn().await;
        let mut batch = lock(&self.batch);
        if let Some(status) = batch.sessions.get_mut(self.index) {
            match outcome {
                Ok(answer) => {
                    status.status = BatchItemStatus::Done;
                    status.answer = answer;
                }
                Err(error) => {
                    status.status = BatchItemStatus::Failed;
                    status.error = Some(error);
                }
            }
        }
    }

    /// Waits for a place and a turn, runs the prompt until the engine lets it go (a run with its retries,
    /// fallbacks and output correction: one prompt), then reads the session's last answer.
    async fn turn(&self) -> Result<Option<BatchAnswer>, String> {
        let closed = |_| "the server is stopping".to_owned();
        let _place = self.places.clone().acquire_owned().await.map_err(closed)?;
        let _turn = self.turns.clone().acquire_owned().await.map_err(closed)?;
        self.set_status(BatchItemStatus::Running);
        // The engine holds this permit while the prompt lasts; having it back means the prompt is over.
        let prompt_over = Arc::new(Semaphore::new(1));
        let permit = prompt_over.clone().acquire_owned().await.map_err(closed)?;
        let request = PromptRequest {
            message: self.prompt.clone(),
            images: Vec::new(),
            idempotency_key: Some(format!("batch:{}", self.session)),
            permit,
        };
        self.engine.prompt(&self.session, request).await.map_err(|error| error.message)?;
        let _over = prompt_over.acquire().await.map_err(closed)?;
        let file = self.engine.export_jsonl(&self.session).await.map_err(|error| error.message)?;
        Ok(BatchAnswer::last_in(&String::from_utf8_lossy(&file)))
    }

    fn set_status(&self, status: BatchItemStatus) {
        if let Some(session) = lock(&self.batch).sessions.get_mut(self.index) {
            session.status = status;
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
